package search

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/memd/memd"
)

// A part's dictionary answers as a Go map of the same terms does, grown
// from nothing or made at its size, whatever the terms' lengths, and holds
// copies of them, not pieces of the texts they came from.
func TestTermDict_AnswersAsAMap(t *testing.T) {
	for _, reserved := range []int{0, 5000} {
		var d termDict
		d.reserve(reserved)
		want := map[string]termRef{}
		rng := rand.New(rand.NewPCG(uint64(reserved), 2))
		text := strings.Repeat("x", arenaChunk)
		for n := range 20000 {
			term := strconv.Itoa(rng.IntN(8000))
			if n%1000 == 0 {
				term = text[:arenaChunk/8+n/1000] // a block of its own
			}
			r := termRef(n)
			name := term
			if k, slot, tag, found := d.place(term); found {
				d.refs[k] = r
				name = d.name(k)
			} else {
				name = d.add(term, r, slot, tag)
			}
			if name != term || unsafe.StringData(name) == unsafe.StringData(term) {
				t.Fatalf("%q is named %q, a piece of it: %v", term[:min(len(term), 9)], name[:min(len(name), 9)], unsafe.StringData(name) == unsafe.StringData(term))
			}
			want[term] = r
		}
		if d.len() != len(want) {
			t.Fatalf("reserved %d: %d terms, want %d", reserved, d.len(), len(want))
		}
		for term, r := range want {
			if got, ok := d.get(term); !ok || got != r {
				t.Fatalf("reserved %d: get %q = %d %v, want %d", reserved, term[:min(len(term), 9)], got, ok, r)
			}
		}
		if _, ok := d.get("8001"); ok {
			t.Fatal("a term never set is found")
		}
		seen := 0
		d.each(func(term string, r termRef) {
			if want[term] != r {
				t.Fatalf("each: %q %d, want %d", term[:min(len(term), 9)], r, want[term])
			}
			seen++
		})
		if seen != len(want) {
			t.Fatalf("each gave %d terms, want %d", seen, len(want))
		}
	}
}

// Each term of a fact is posted once with how often the fact holds it,
// counted up to maxTF, whether the term is new to the shard, held by one
// fact before, or by many: in one batch, fact by fact, read in parts with
// the terms recorded apart (as a first start reads a shard), or put one
// by one into a shard read back from its saved postings.
func TestPostings_CountEachTermOfAFact(t *testing.T) {
	vocab := strings.Fields("audit audits ledger vendor invoice the a of 4242 kube")
	rng := rand.New(rand.NewPCG(5, 8))
	shard := memd.ProjectShard("alpha")
	var docs []Doc
	for n := range 400 {
		var ws []string
		for range 1 + rng.IntN(12) {
			ws = append(ws, vocab[rng.IntN(len(vocab))])
		}
		if n%50 == 7 {
			ws = append(ws, strings.Fields(strings.Repeat("ledger ", maxTF+9))...) // past the cap
		}
		for range 1 + n%3 {
			ws = append(ws, "fact"+strconv.Itoa(n)) // a term of its own, new to the shard
		}
		docs = append(docs, novemberDoc(shard, strings.Join(ws, " ")))
	}
	for _, how := range []string{"batched", "one by one", "in parts", "after saved postings"} {
		x := New()
		switch how {
		case "batched":
			x.PutAll(docs)
		case "one by one":
			for _, d := range docs {
				x.Put(d)
			}
		case "in parts":
			x.Apply(Update{Shard: shard, Replace: true})
			x.RecordTermsApart(shard)
			for k, part := range slices.Collect(slices.Chunk(docs, 64)) {
				last := k == (len(docs)-1)/64
				u := Update{Shard: shard, Put: part, KeepNewer: true, More: !last}
				if last {
					u.Head = "head"
				}
				x.ApplyPrepared(Prepare(u))
			}
		case "after saved postings":
			saved := New()
			saved.Apply(Update{Shard: shard, Head: "h1", Replace: true, Put: docs[:300]})
			var order []Doc
			postings := string(saved.ExportShard(shard, func(int) {}, func(d Doc) { order = append(order, d) }))
			if !x.Apply(Update{Shard: shard, Head: "h1", Replace: true, Put: order, Postings: postings}) {
				t.Fatal("the saved postings were not used")
			}
			for _, d := range docs[300:] {
				x.Put(d)
			}
		}
		want := map[string]map[int32]int{}
		for _, d := range docs {
			i, ok := x.lookup(d.Shard, d.ID)
			if !ok {
				t.Fatalf("%s: %q not indexed", how, d.Text)
			}
			for _, term := range terms(fold(d.Text)) {
				if want[term] == nil {
					want[term] = map[int32]int{}
				}
				want[term][i] = min(want[term][i]+1, maxTF)
			}
		}
		_, p := x.partOf(shard)
		for term, byDoc := range want {
			var one [1]posting
			got := map[int32]int{}
			for _, ps := range p.postings(term, &one) {
				if _, twice := got[ps.doc()]; twice {
					t.Fatalf("%s: %q posted twice for entry %d", how, term, ps.doc())
				}
				got[ps.doc()] = ps.tf()
			}
			if !maps.Equal(got, byDoc) {
				t.Fatalf("%s: %q posted %v, want %v", how, term, got, byDoc)
			}
		}
	}
}
