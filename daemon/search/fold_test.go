package search

import "testing"

// The index keeps no folded copy of a plain ASCII text and folds it again
// when a phrase or substring is looked for: that must be the folded text
// analyze gives.
func FuzzFoldASCII(f *testing.F) {
	for _, s := range []string{"Booked a flight to Lisbon", "  ref #4242, Q3--budget!! ", "", "...", "NYC/SQL\tServer\n2026-11-03"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !isASCII(s) {
			return
		}
		want, _ := analyze(s)
		if got := string(foldASCII(nil, s)); got != want {
			t.Fatalf("foldASCII(%q) = %q, analyze folds it to %q", s, got, want)
		}
	})
}
