package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memd/memd"
)

// eachIn gives the postings of the entries both lists hold, in order,
// whatever their lengths and wherever the shorter's entries fall.
func TestEachIn_GivesWhatBothHold(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	rising := func(n, span int) []int32 {
		set := map[int32]bool{}
		for len(set) < n {
			set[int32(rng.IntN(span))] = true
		}
		out := make([]int32, 0, n)
		for e := range set {
			out = append(out, e)
		}
		slices.Sort(out)
		return out
	}
	for round := range 400 {
		span := 1 + rng.IntN(5000)
		a := rising(rng.IntN(min(span, 3000)+1), span)
		b := rising(rng.IntN(min(span, 40)+1), span)
		if round%2 == 1 {
			a, b = b, a
		}
		ps := make([]posting, len(a))
		for k, e := range a {
			ps[k] = newPosting(e, 1+k%maxTF)
		}
		var want []posting
		for _, p := range ps {
			if _, found := slices.BinarySearch(b, p.doc()); found {
				want = append(want, p)
			}
		}
		var got []posting
		eachIn(ps, b, func(p posting) { got = append(got, p) })
		if !slices.Equal(got, want) {
			t.Fatalf("%d postings and %d entries of %d: got %d postings, want %d", len(a), len(b), span, len(got), len(want))
		}
	}
}

// postingsRise fails the test when a list of postings is not in rising
// order of entries, as eachIn reads them.
func postingsRise(t *testing.T, x *Engine, stage string) {
	t.Helper()
	for n, p := range x.parts {
		p.terms.each(func(term string, r termRef) {
			var one [1]posting
			ps := p.listOf(r, &one)
			for k := 1; k < len(ps); k++ {
				if ps[k].doc() <= ps[k-1].doc() {
					t.Errorf("%s: part %d, %q: entry %d after %d", stage, n, term, ps[k].doc(), ps[k-1].doc())
					return
				}
			}
		})
	}
}

// Every way facts enter the index keeps each term's postings rising by
// entry: puts one at a time and all at once, a fact put again, removals
// and the compaction they bring, a shard replaced, read back with its
// saved postings, and read in parts with its terms recorded apart.
func TestPostings_RiseHoweverFactsEnter(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	shard := memd.ProjectShard("rise")
	docAt := func(n int) Doc {
		text := fmt.Sprintf("Fact %d on the %s budget of %s", n, []string{"travel", "hiring", "hardware"}[n%3], []string{"Lisbon", "Tokyo", "Oslo", "Berlin"}[rng.IntN(4)])
		d := memd.DateOf(partsNow.AddDate(0, 0, -rng.IntN(400)))
		return Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: "log/" + d.Month() + ".md"}, Offset: n * 60}
	}
	var docs []Doc
	for n := range 3000 {
		docs = append(docs, docAt(n))
	}
	x := New()
	x.PutAll(docs[:1000])
	postingsRise(t, x, "put at once")
	for _, d := range docs[1000:1500] {
		x.Put(d)
	}
	again := docs[10]
	again.Date = memd.DateOf(partsNow)
	x.Put(again)
	postingsRise(t, x, "put one at a time, and again")
	for _, d := range docs[:1400] {
		x.Delete(shard, d.ID)
	}
	if x.dead >= 1024 {
		t.Fatalf("%d dead entries: no compaction", x.dead)
	}
	postingsRise(t, x, "compacted")
	x.Apply(Update{Shard: shard, Replace: true, Put: docs[1500:]})
	postingsRise(t, x, "replaced")
	var order []Doc
	saved := x.ExportShard(shard, func(int) {}, func(d Doc) { order = append(order, d) })
	y := New()
	y.Apply(Update{Shard: shard, Replace: true, Put: docs[:200]})
	if !y.Apply(Update{Shard: shard, Replace: true, Put: order, Postings: string(saved)}) {
		t.Fatal("saved postings not used")
	}
	postingsRise(t, y, "read back with its postings")
	z := New()
	z.Apply(Update{Shard: shard, Replace: true})
	z.RecordTermsApart(shard)
	for k, part := range slices.Collect(slices.Chunk(docs, 700)) {
		z.ApplyPrepared(Prepare(Update{Shard: shard, Put: part, KeepNewer: true, More: k < 4}))
	}
	postingsRise(t, z, "read in parts")
}

// risingEntries gives the entries of the places asked for in rising
// order, whether it sorts them (few) or reads their marks (many).
func TestRisingEntries_SortedEitherWay(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{0, 1, 30, 3000} {
		sc := new(scores)
		sc.size(100_000)
		set := make([]uint64, len(sc.member))
		var places []int32
		for len(sc.touched) < n {
			i := int32(rng.IntN(100_000))
			if sc.place(i) >= 0 {
				continue
			}
			k := sc.add(i, 1)
			if rng.IntN(2) == 0 {
				places = append(places, int32(k))
				set[i>>6] |= 1 << (i & 63)
			}
		}
		var want []int32
		for _, k := range places {
			want = append(want, sc.touched[k])
		}
		slices.Sort(want)
		if got := risingEntries(sc, places, set, nil); !slices.Equal(got, want) {
			t.Errorf("%d candidates, %d asked for: got %d entries, not those asked for, rising", n, len(places), len(got))
		}
	}
}
