package vectors

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memd/memd"
)

var (
	alice = memd.AgentShard("alice")
	bob   = memd.AgentShard("bob")
)

func randomVector(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func exactCosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func open(t *testing.T, path, model string) *Set {
	t.Helper()
	s, err := Open(path, model)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Eight-bit codes keep a cosine within a hundredth of the exact one.
func TestSet_CosineOfQuantizedVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := open(t, filepath.Join(t.TempDir(), "v.bin"), "m")
	var vs []Vector
	for i := range 200 {
		vs = append(vs, Vector{Shard: alice, ID: fmt.Sprint(i), V: randomVector(rng, 384)})
	}
	if err := s.Put(vs); err != nil {
		t.Fatal(err)
	}
	q := randomVector(rng, 384)
	worst := 0.0
	for _, v := range vs {
		got, ok, err := s.Cosine(q, alice, v.ID)
		if err != nil || !ok {
			t.Fatalf("no vector for %s", v.ID)
		}
		worst = math.Max(worst, math.Abs(got-exactCosine(q, v.V)))
	}
	if worst > 0.01 {
		t.Errorf("worst cosine error %.4f, want at most 0.01", worst)
	}
	if _, ok, _ := s.Cosine(q, bob, "0"); ok {
		t.Error("a cosine for a shard with no vectors")
	}
}

// Over many vectors, the first cut by sign bits keeps nearly all of the
// exact nearest: at least 9 of the exact 10, on average over queries.
func TestSet_NearestKeepsTheExactNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := open(t, filepath.Join(t.TempDir(), "v.bin"), "m")
	const dim, n = 256, 20000
	var vs []Vector
	// Clustered, as real embeddings are: each vector near one of 200
	// centres.
	var centres [][]float32
	for range 200 {
		centres = append(centres, randomVector(rng, dim))
	}
	for i := range n {
		c := centres[rng.IntN(len(centres))]
		v := randomVector(rng, dim)
		for j := range v {
			v[j] = c[j] + 0.7*v[j]
		}
		shard := alice
		if i%2 == 1 {
			shard = bob
		}
		vs = append(vs, Vector{Shard: shard, ID: fmt.Sprint(i), V: v})
	}
	if err := s.Put(vs); err != nil {
		t.Fatal(err)
	}
	found, queries := 0, 50
	for range queries {
		q := slices.Clone(centres[rng.IntN(len(centres))])
		for j, x := range randomVector(rng, dim) {
			q[j] += 0.7 * x
		}
		var exact []Match
		for i, v := range vs {
			if i%2 == 0 { // alice's
				exact = append(exact, Match{Shard: alice, ID: v.ID, Cosine: exactCosine(q, v.V)})
			}
		}
		slices.SortFunc(exact, func(a, b Match) int { return -cmp.Compare(a.Cosine, b.Cosine) })
		got, err := s.Nearest(q, []memd.ShardID{alice}, 10)
		if err != nil || len(got) != 10 {
			t.Fatalf("%d matches, want 10", len(got))
		}
		for _, m := range got {
			if m.Shard != alice {
				t.Fatalf("a match of %s, searching alice's", m.Shard)
			}
			if slices.ContainsFunc(exact[:10], func(e Match) bool { return e.ID == m.ID }) {
				found++
			}
		}
	}
	if share := float64(found) / float64(10*queries); share < 0.9 {
		t.Errorf("the nearest 10 hold %.2f of the exact 10, want 0.9 or more", share)
	}
}

// Vectors survive a restart; a record torn by a crash is cut off and the
// ones before it kept; another model's file starts over.
func TestSet_ReopensAndCutsATornRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	path := filepath.Join(t.TempDir(), "v.bin")
	s, err := Open(path, "m")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Put([]Vector{{Shard: alice, ID: fmt.Sprint(i), V: randomVector(rng, 16)}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	fi, _ := os.Stat(path)
	if err := os.Truncate(path, fi.Size()-3); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, "m")
	if s.Len() != 2 || !s.Has(alice, "0") || !s.Has(alice, "1") || s.Has(alice, "2") {
		t.Fatalf("after a torn record: %d vectors", s.Len())
	}
	// What is written after the cut is read back whole.
	if err := s.Put([]Vector{{Shard: alice, ID: "2", V: randomVector(rng, 16)}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s := open(t, path, "m"); s.Len() != 3 {
		t.Errorf("after writing past the cut: %d vectors, want 3", s.Len())
	}
	if s := open(t, path, "other"); s.Len() != 0 {
		t.Errorf("another model's file gave %d vectors", s.Len())
	}
}

// A vector of other dimensions than the set's is refused, not mixed in.
func TestSet_RefusesOtherDimensions(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "v.bin"), "m")
	if err := s.Put([]Vector{{Shard: alice, ID: "a", V: []float32{1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]Vector{{Shard: alice, ID: "b", V: []float32{1, 0}}}); err == nil {
		t.Error("a vector of 2 dimensions among vectors of 3 was kept")
	}
	if got, _ := s.Nearest([]float32{1, 0}, []memd.ShardID{alice}, 5); got != nil {
		t.Errorf("a query of other dimensions found %v", got)
	}
}

// BenchmarkNearest times the nearest 30 among an agent's shards: 5 shards
// of 10,000 facts, of the 1,000,000 a store of 100 shards holds, with
// vectors of 384 dimensions (nomic-embed-text, all-MiniLM) and 1,536
// (text-embedding-3-small).
func BenchmarkNearest(b *testing.B) {
	for _, dim := range []int{384, 1536} {
		rng := rand.New(rand.NewPCG(7, 8))
		s, err := Open(filepath.Join(b.TempDir(), "v.bin"), "m")
		if err != nil {
			b.Fatal(err)
		}
		var shards []memd.ShardID
		for sh := range 5 {
			id := memd.ProjectShard(fmt.Sprintf("p%d", sh))
			shards = append(shards, id)
			var vs []Vector
			for i := range 10000 {
				vs = append(vs, Vector{Shard: id, ID: fmt.Sprint(i), V: randomVector(rng, dim)})
			}
			if err := s.Put(vs); err != nil {
				b.Fatal(err)
			}
		}
		q := randomVector(rng, dim)
		for _, cold := range []bool{false, true} {
			name := fmt.Sprintf("dim-%d-facts-50000", dim)
			if cold {
				// The file out of the page cache before each search, as
				// after memory pressure: every code read from the disk.
				name += "-cold"
				if err := s.f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(name, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					if cold {
						b.StopTimer()
						if err := unix.Fadvise(int(s.f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					start := time.Now()
					if _, err := s.Nearest(q, shards, 31); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
		s.Close()
	}
}

// Pruned vectors stay gone after a restart, and a file mostly of vectors
// gone is written anew, smaller.
func TestSet_PruneSurvivesAndCompacts(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	path := filepath.Join(t.TempDir(), "v.bin")
	s, err := Open(path, "m")
	if err != nil {
		t.Fatal(err)
	}
	var vs []Vector
	for i := range 3000 {
		vs = append(vs, Vector{Shard: alice, ID: fmt.Sprint(i), V: randomVector(rng, 8)})
	}
	if err := s.Put(vs); err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(alice, func(id string) bool { return len(id) < 3 }); err != nil { // keeps 0..99
		t.Fatal(err)
	}
	q := randomVector(rng, 8)
	if got, err := s.Nearest(q, []memd.ShardID{alice}, 500); err != nil || len(got) != 100 || slices.ContainsFunc(got, func(m Match) bool { return len(m.ID) >= 3 }) {
		t.Fatalf("after pruning, %d nearest", len(got))
	}
	s.Close()
	before, _ := os.Stat(path)
	s = open(t, path, "m")
	after, _ := os.Stat(path)
	if s.Len() != 100 || s.Has(alice, "100") || !s.Has(alice, "99") {
		t.Errorf("after a restart: %d vectors", s.Len())
	}
	if after.Size() >= before.Size()/10 {
		t.Errorf("the file went from %d to %d bytes; want it written anew", before.Size(), after.Size())
	}
	if err := s.Put([]Vector{{Shard: bob, ID: "x", V: randomVector(rng, 8)}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s := open(t, path, "m"); s.Len() != 101 {
		t.Errorf("written after the rewrite: %d vectors, want 101", s.Len())
	}
}

// BenchmarkOpen_1M times a start reading the vectors of 1,000,000 facts
// (384 dimensions) written by an earlier run: what recall by meaning adds
// to memd's start. Run it alone: go test -run X -bench Open_1M ./daemon/vectors
func BenchmarkOpen_1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	path := filepath.Join(b.TempDir(), "v.bin")
	s, err := Open(path, "m")
	if err != nil {
		b.Fatal(err)
	}
	for sh := range 100 {
		id := memd.ProjectShard(fmt.Sprintf("p%03d", sh))
		vs := make([]Vector, 10000)
		for i := range vs {
			vs[i] = Vector{Shard: id, ID: fmt.Sprintf("%012x", sh*10000+i), V: randomVector(rng, 384)}
		}
		if err := s.Put(vs); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	fi, _ := os.Stat(path)
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(path, "m")
		if err != nil || s.Len() != 1000000 {
			b.Fatalf("%v, %d vectors", err, s.Len())
		}
		s.Close()
	}
	b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
}
