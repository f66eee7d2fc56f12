package gitstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memd/memd/gitstore/internal/odb"
)

// editsFrom's edits, made a delta, turn any base into any next: a wrong
// one would be a wrong file in git.
func FuzzEditsFrom(f *testing.F) {
	log := strings.Repeat("- (2026-10-01) The Lisbon office ordered chairs for the new floor\n", 40)
	f.Add([]byte(log), []byte(log+"- (2026-10-02) Appended\n"))
	f.Add([]byte(log), []byte(strings.Replace(log, "chairs", "desks", 1)+"- (2026-10-02) Appended\n"))
	f.Add([]byte(log), []byte(log[:200]+log[300:]))
	f.Add([]byte(log), []byte(log[len(log)-100:]+log))
	f.Add([]byte("aaaa"), []byte("aaaaaa"))
	f.Add([]byte(""), []byte("x"))
	f.Add([]byte("x"), []byte(""))
	f.Fuzz(func(t *testing.T, base, next []byte) {
		edits := editsFrom(base, next)
		at := 0
		for _, e := range edits {
			if e.Pos < at || e.Del < 0 || e.Pos+e.Del > len(base) {
				t.Fatalf("edits out of order or out of base: %+v (base of %d)", edits, len(base))
			}
			at = e.Pos + e.Del
		}
		got, err := odb.Patch(base, odb.Delta(len(base), edits))
		if err != nil || !bytes.Equal(got, next) {
			t.Fatalf("the delta gives %q (err %v), want %q", got, err, next)
		}
	})
}
