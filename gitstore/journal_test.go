package gitstore

import (
	"testing"
)

// git allows any byte but NUL in a file name, and a push may bring one
// with a newline: the journal memd writes must read back whole.
func TestJournal_OddPathsReadBack(t *testing.T) {
	sh := &Shard{gitDir: t.TempDir()}
	blob := NewHash("1111111111111111111111111111111111111111")
	from := map[string]*factFile{
		"notes/plan.md":     {blob: blob},
		"odd\nname.txt":     {blob: blob},
		"trailing\r":        {blob: blob},
		"with space/and\"q": nil,
	}
	if err := sh.writeJournal(blob, from, from); err != nil {
		t.Fatal(err)
	}
	j, err := sh.readJournal()
	if err != nil {
		t.Fatalf("the journal memd wrote does not read back: %v", err)
	}
	for path, ff := range from {
		if got, ok := j.from[path]; !ok || got != blobOf(ff) {
			t.Errorf("%q: read back %v %v", path, got, ok)
		}
	}
}
