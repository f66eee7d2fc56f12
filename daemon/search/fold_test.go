package search

import (
	"slices"
	"strings"
	"testing"
)

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
		if got, want := words(s), strings.FieldsFunc(s, notInWord); !slices.Equal(got, want) {
			t.Fatalf("words(%q) = %q, read rune by rune %q", s, got, want)
		}
		want, _ := analyze(s)
		if got := string(foldASCII(nil, s)); got != want {
			t.Fatalf("foldASCII(%q) = %q, analyze folds it to %q", s, got, want)
		}
	})
}

// A word is found in an ASCII text, in any case, exactly where it is found
// in the text's folded words.
func FuzzContainsFold(f *testing.F) {
	f.Add("Booked a flight to LISBON", "lisb")
	f.Add("ref #4242, Q3", "q3")
	f.Add("abc", "bcd")
	f.Fuzz(func(t *testing.T, s, n string) {
		if !isASCII(s) {
			return
		}
		w := words(fold(n))
		if len(w) != 1 {
			return
		}
		folded, _ := analyze(s)
		if got, want := containsFold(s, w[0]), strings.Contains(folded, w[0]); got != want {
			t.Fatalf("containsFold(%q, %q) = %v; the folded words %q hold it: %v", s, w[0], got, folded, want)
		}
	})
}

// The stem cache stays bounded however many distinct words queries bring,
// and a word stems the same after the cache starts over.
func TestStemCache_StaysBounded(t *testing.T) {
	before := stem("flights")
	for i := range maxStems + 100 {
		w := []byte("query")
		for n := i; n > 0; n /= 26 {
			w = append(w, byte('a'+n%26)) // letters only: words with digits are not cached
		}
		stem(string(w))
	}
	n := 0
	stems.Range(func(any, any) bool { n++; return true })
	if n > maxStems {
		t.Errorf("the stem cache holds %d words, more than %d", n, maxStems)
	}
	if after := stem("flights"); after != before || after != "flight" {
		t.Errorf("stem(flights) = %q, then %q", before, after)
	}
}
