package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/memd/memd"
)

// Entries keep their numbers and their places as pages are added: an
// entry held while more arrive is the one the index reads.
func TestEntries_GrowWithoutMoving(t *testing.T) {
	var es entries
	first := es.at(es.add(entry{when: 0}))
	const n = 3<<entryPageBits + 5
	for i := 1; i < n; i++ {
		if got := es.add(entry{when: int64(i)}); got != int32(i) {
			t.Fatalf("entry %d numbered %d", i, got)
		}
	}
	if es.len() != n {
		t.Fatalf("len %d, want %d", es.len(), n)
	}
	for _, i := range []int32{0, 1, 1<<entryPageBits - 1, 1 << entryPageBits, n - 1} {
		if got := es.at(i).when; got != int64(i) {
			t.Errorf("entry %d holds %d", i, got)
		}
	}
	if first != es.at(0) {
		t.Error("the first entry moved as others were added")
	}
}

// A posting keeps the entry's number whole and the times a term is held,
// up to maxTF.
func TestPosting_PacksDocAndTF(t *testing.T) {
	for _, c := range []struct {
		doc      int32
		tf, want int
	}{{0, 1, 1}, {1<<postingDocBits - 1, 1, 1}, {123456, maxTF, maxTF}, {7, maxTF + 9, maxTF}} {
		p := newPosting(c.doc, c.tf)
		if p.doc() != c.doc || p.tf() != c.want {
			t.Errorf("newPosting(%d, %d) = doc %d tf %d, want tf %d", c.doc, c.tf, p.doc(), p.tf(), c.want)
		}
		if q, ok := singleRef(p).single(); !ok || q != p {
			t.Errorf("a term's single posting %v reads back as %v", p, q)
		}
	}
}

// An entry is what the index holds for every fact beyond its text and
// postings: at a million facts each byte of it is a megabyte.
func TestEntry_StaysSmall(t *testing.T) {
	if size := unsafe.Sizeof(entry{}); size > 48 {
		t.Errorf("an entry takes %d bytes, more than 48", size)
	}
}

// An entry's rank, taken from its day and tier, is Rank of its date and
// tier exactly: the lists of the memory section are ordered by it.
func TestRankOf_IsRank(t *testing.T) {
	x := New()
	shard := memd.AgentShard("alice")
	var want []float64
	for n, tier := range []memd.Tier{memd.TierLog, memd.TierProfile, memd.TierNote, memd.TierEpisode, memd.TierLog} {
		date := memd.DateOf(time.Date(2026, 11, 1+n*7, 0, 0, 0, 0, time.UTC))
		if n == 4 {
			date = memd.Date{} // undated
		}
		text := fmt.Sprintf("fact %d", n)
		x.Put(Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: date, Tier: tier, Text: text, File: "log/2026-11.md"}})
		want = append(want, Rank(date, tier))
	}
	for i, w := range want {
		if got := x.rankOf(int32(i)); got != w {
			t.Errorf("entry %d ranks %v, Rank gives %v", i, got, w)
		}
	}
}

// A list in order with entries appended is put in order, as sorting it
// whole would: the appended entries after all, before all (a shard's newer
// files read after its older), among them, or none.
func TestSortAppended_SortsAsAWholeSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		name     string
		old, add int
		keys     func(j int) int // the key of the j-th appended entry; the old ones' are 0, 10, 20, ...
	}{
		{"after all", 50, 20, func(j int) int { return 1000 + j }},
		{"before all", 50, 20, func(j int) int { return -1000 - j }},
		{"among them", 50, 20, func(j int) int { return rng.IntN(500)*10 + 5 }},
		{"none appended", 50, 0, nil},
		{"none before", 0, 20, func(j int) int { return rng.IntN(1000) }},
		{"one before all", 50, 1, func(j int) int { return -1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var keys []int
			var list []int32
			for i := range c.old {
				keys = append(keys, i*10)
				list = append(list, int32(i))
			}
			rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
			cmp := func(a, b int32) int { return keys[a] - keys[b] }
			slices.SortFunc(list, cmp)
			for j := range c.add {
				keys = append(keys, c.keys(j))
				list = append(list, int32(c.old+j))
			}
			want := slices.Clone(list)
			slices.SortStableFunc(want, cmp)
			got := sortAppended(list, int32(c.old), cmp)
			if !slices.Equal(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
}

// largest gives the k-th largest value whatever the order of the values,
// ties and all, and leaves them as they were.
func TestLargest_IsTheKthOfTheSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var heap []float64
	for _, c := range []struct {
		name string
		make func(n int) []float64
	}{
		{"random", func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = rng.Float64()
			}
			return vs
		}},
		{"ascending", func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = float64(i)
			}
			return vs
		}},
		{"descending", func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = float64(n - i)
			}
			return vs
		}},
		{"few values", func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = float64(rng.IntN(3))
			}
			return vs
		}},
	} {
		for _, n := range []int{1, 2, 7, 300, 1000} {
			vs := c.make(n)
			kept := slices.Clone(vs)
			sorted := slices.Clone(vs)
			slices.Sort(sorted)
			for _, k := range []int{1, 2, n / 2, n - 1, n} {
				if k < 1 || k > n {
					continue
				}
				var got float64
				got, heap = largest(vs, k, heap)
				if want := sorted[n-k]; got != want {
					t.Errorf("%s, %d values: the %d-th largest is %v, want %v", c.name, n, k, got, want)
				}
			}
			if !slices.Equal(vs, kept) {
				t.Errorf("%s: the values were changed", c.name)
			}
		}
	}
}
