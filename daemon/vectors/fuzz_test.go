package vectors

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memd/memd"
)

// FuzzOpen reads any file as a vectors file: it never panics, keeps only
// whole records of one dimension, and what it keeps reads back the same
// after a restart.
func FuzzOpen(f *testing.F) {
	var good []byte
	good = append(good, fileMagic+"m\n"...)
	good = appendRecord(good, memd.AgentShard("alice"), "a1", 0.01, []int8{1, -2, 3})
	good = appendRecord(good, memd.AgentShard("alice"), "a2", 0.02, []int8{4, 5, -6})
	good = appendRecord(good, memd.AgentShard("alice"), "a1", 0, nil) // removed
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add([]byte(fileMagic + "other\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "v.bin")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, "m")
		if err != nil {
			t.Fatal(err)
		}
		n, dim := s.Len(), s.Dim()
		if _, err := s.Nearest(make([]float32, max(dim, 1)), []memd.ShardID{memd.AgentShard("alice")}, 5); err != nil {
			t.Fatalf("a file just read could not be searched: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := Open(path, "m")
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		if again.Len() != n || n > 0 && again.Dim() != dim {
			t.Fatalf("read back %d vectors of %d dimensions, first %d of %d", again.Len(), again.Dim(), n, dim)
		}
	})
}
