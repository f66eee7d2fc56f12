package vectors

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/memd/memd"
)

// checkCosines fails unless every vector of want is held, with a cosine
// to q within a hundredth of the exact one, and the nearest found by
// Nearest is the exact nearest.
func checkCosines(t *testing.T, stage string, s *Set, q []float32, want map[memd.ShardID]map[string][]float32) {
	t.Helper()
	var shards []memd.ShardID
	var best Match
	n := 0
	for shard, vs := range want {
		shards = append(shards, shard)
		for id, v := range vs {
			exact := exactCosine(q, v)
			got, ok, err := s.Cosine(q, shard, id)
			if err != nil || !ok || math.Abs(got-exact) > 0.01 {
				t.Fatalf("%s: %s %s has cosine %.4f (held %v, %v), want %.4f", stage, shard, id, got, ok, err, exact)
			}
			if n == 0 || exact > best.Cosine {
				best = Match{Shard: shard, ID: id, Cosine: exact}
			}
			n++
		}
	}
	if s.Len() != n {
		t.Fatalf("%s: %d vectors held, want %d", stage, s.Len(), n)
	}
	if got, err := s.Nearest(q, shards, 1); err != nil || len(got) != 1 || got[0].Shard != best.Shard || got[0].ID != best.ID {
		t.Fatalf("%s: nearest %v (%v), want %s %s", stage, got, err, best.Shard, best.ID)
	}
}

// The codes a search ranks by are read from the file: after puts, a
// vector put again, removals, a restart, a restart that writes the file
// anew, and puts after that, each vector reads back as its latest.
func TestSet_CodesAreReadFromTheFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	path := filepath.Join(t.TempDir(), "v.bin")
	s, err := Open(path, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := map[memd.ShardID]map[string][]float32{alice: {}, bob: {}}
	put := func(shard memd.ShardID, ids ...string) {
		t.Helper()
		var vs []Vector
		for _, id := range ids {
			v := randomVector(rng, 48)
			want[shard][id] = v
			vs = append(vs, Vector{Shard: shard, ID: id, V: v})
		}
		if err := s.Put(vs); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3000 {
		put([]memd.ShardID{alice, bob}[i%2], fmt.Sprint(i))
	}
	put(alice, "0", "2", "4") // new vectors for the same facts
	if err := s.Remove(bob, []string{"1", "3"}); err != nil {
		t.Fatal(err)
	}
	delete(want[bob], "1")
	delete(want[bob], "3")
	q := randomVector(rng, 48)
	checkCosines(t, "after puts", s, q, want)

	s.Close()
	s = open(t, path, "m")
	checkCosines(t, "after a restart", s, q, want)

	// Most gone: the next start writes the file anew.
	if err := s.Prune(bob, func(id string) bool { return len(id) < 3 }); err != nil {
		t.Fatal(err)
	}
	for id := range want[bob] {
		if len(id) >= 3 {
			delete(want[bob], id)
		}
	}
	if err := s.Prune(alice, func(id string) bool { return len(id) < 2 }); err != nil {
		t.Fatal(err)
	}
	for id := range want[alice] {
		if len(id) >= 2 {
			delete(want[alice], id)
		}
	}
	s.Close()
	before, _ := os.Stat(path)
	s = open(t, path, "m")
	if after, _ := os.Stat(path); after.Size() >= before.Size()/4 {
		t.Fatalf("the file went from %d to %d bytes; want it written anew", before.Size(), after.Size())
	}
	checkCosines(t, "after the file was written anew", s, q, want)

	put(bob, "new", "1")
	checkCosines(t, "after puts to the new file", s, q, want)
	s.Close()
	s = open(t, path, "m")
	checkCosines(t, "after a restart on the new file", s, q, want)
}

// A vector's codes are not held in memory: what stays of a vector of 384
// dimensions is its 48 bytes of signs, its scale, where it is in the file
// and its fact ID.
func TestSet_HoldsTheCodesOnDiskNotInMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const n, dim = 20000, 384
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	vs := make([]Vector, n)
	for i := range vs {
		vs[i] = Vector{Shard: alice, ID: fmt.Sprintf("%012x", i), V: randomVector(rng, dim)}
	}
	base := heap()
	s := open(t, filepath.Join(t.TempDir(), "v.bin"), "m")
	if err := s.Put(vs); err != nil {
		t.Fatal(err)
	}
	grew := heap() - base
	runtime.KeepAlive(vs)
	if perVector := float64(grew) / n; perVector > dim/2 {
		t.Errorf("%.0f bytes of heap a vector of %d dimensions, want under %d", perVector, dim, dim/2)
	}
}

// Vectors the file refuses (a full disk) are still found until memd
// stops, and then computed again; what the file takes after is written
// and read back whole.
func TestSet_KeepsWhatTheFileRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	path := filepath.Join(t.TempDir(), "v.bin")
	s := open(t, path, "m")
	want := map[memd.ShardID]map[string][]float32{alice: {"a": randomVector(rng, 32)}}
	if err := s.Put([]Vector{{Shard: alice, ID: "a", V: want[alice]["a"]}}); err != nil {
		t.Fatal(err)
	}
	// The same file, opened for reading only: every write fails.
	readOnly, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer readOnly.Close()
	writable := s.f
	s.f = readOnly
	want[alice]["b"] = randomVector(rng, 32)
	if err := s.Put([]Vector{{Shard: alice, ID: "b", V: want[alice]["b"]}}); err == nil {
		t.Fatal("a put to a file refusing writes succeeded")
	}
	q := randomVector(rng, 32)
	checkCosines(t, "after a refused write", s, q, want)

	s.f = writable
	want[alice]["c"] = randomVector(rng, 32)
	if err := s.Put([]Vector{{Shard: alice, ID: "c", V: want[alice]["c"]}}); err != nil {
		t.Fatal(err)
	}
	checkCosines(t, "after the file took writes again", s, q, want)
	s.Close()
	delete(want[alice], "b")
	checkCosines(t, "after a restart", open(t, path, "m"), q, want)
}

// A write that failed halfway, and could not be cut back, leaves bytes
// past the last whole record: the next record is written over them, read
// back as written, and found after a restart.
func TestSet_WritesOverWhatAFailedWriteLeft(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	path := filepath.Join(t.TempDir(), "v.bin")
	s := open(t, path, "m")
	want := map[memd.ShardID]map[string][]float32{alice: {"a": randomVector(rng, 32)}}
	if err := s.Put([]Vector{{Shard: alice, ID: "a", V: want[alice]["a"]}}); err != nil {
		t.Fatal(err)
	}
	// Half a record, where the file's position is left after it.
	half := appendRecord(nil, alice, "torn", 0.5, make([]int8, 32))[:20]
	if _, err := s.f.Seek(0, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	if _, err := s.f.Write(half); err != nil {
		t.Fatal(err)
	}
	want[alice]["c"] = randomVector(rng, 32)
	if err := s.Put([]Vector{{Shard: alice, ID: "c", V: want[alice]["c"]}}); err != nil {
		t.Fatal(err)
	}
	q := randomVector(rng, 32)
	checkCosines(t, "after the next write", s, q, want)
	s.Close()
	checkCosines(t, "after a restart", open(t, path, "m"), q, want)
}

// A file changed by something else (copied over in place, cut short) or
// closed is never ranked by: the search says why.
func TestSet_SaysWhenItsFileCannotBeRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	var vs []Vector
	for i := range 300 {
		vs = append(vs, Vector{Shard: alice, ID: fmt.Sprint(i), V: randomVector(rng, 32)})
	}
	q := randomVector(rng, 32)
	cases := []struct {
		name   string
		change func(t *testing.T, s *Set, path string)
		want   error
	}{
		{"another file copied over it in place", func(t *testing.T, s *Set, path string) {
			other := append([]byte(fileMagic+"m\n"), appendRecord(nil, bob, "x", 0.1, make([]int8, 32))...)
			for _, v := range vs {
				scale, codes := quantize(v.V)
				other = appendRecord(other, alice, "y"+v.ID, scale, codes) // the same sizes, other IDs
			}
			if err := os.WriteFile(path, other, 0o600); err != nil {
				t.Fatal(err)
			}
		}, ErrChanged},
		{"cut short", func(t *testing.T, s *Set, path string) {
			if err := os.Truncate(path, int64(len(fileMagic)+2)); err != nil {
				t.Fatal(err)
			}
		}, io.EOF},
		{"closed", func(t *testing.T, s *Set, path string) { s.Close() }, os.ErrClosed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v.bin")
			s := open(t, path, "m")
			if err := s.Put(vs); err != nil {
				t.Fatal(err)
			}
			c.change(t, s, path)
			if got, err := s.Nearest(q, []memd.ShardID{alice}, 10); !errors.Is(err, c.want) {
				t.Errorf("Nearest found %d, error %v; want %v", len(got), err, c.want)
			}
			if _, ok, err := s.Cosine(q, alice, "7"); ok || !errors.Is(err, c.want) {
				t.Errorf("Cosine: held %v, error %v; want %v", ok, err, c.want)
			}
		})
	}
}
