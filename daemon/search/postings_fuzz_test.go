package search

import (
	"testing"

	"github.com/memd/memd"
)

// Whatever bytes stand where postings should, reading them fails or gives
// postings that name only the facts given with them, in order.
func FuzzReadPostings(f *testing.F) {
	x := New()
	id := memd.AgentShard("alice")
	var docs []Doc
	for i, text := range []string{"Booked the flight to Lisbon", "Paid the café bill, ref 4242", "flight flight back"} {
		docs = append(docs, Doc{Fact: memd.Fact{ID: string(rune('a' + i)), Shard: id, Text: text, Tier: memd.TierLog}})
	}
	x.PutAll(docs)
	f.Add(string(x.ExportShard(id, func(Doc) {})), 3)
	f.Add("", 0)
	f.Add("\x01\x02\x04lisb\x01\x00\x01", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1000 {
			return
		}
		imp, err := readPostings(s, n)
		if err != nil {
			return
		}
		if len(imp.lengths) != n || len(imp.lists) != len(imp.terms) {
			t.Fatalf("%d lengths, %d lists for %d terms, for %d facts", len(imp.lengths), len(imp.lists), len(imp.terms), n)
		}
		for k, list := range imp.lists {
			for j, p := range list {
				if p.doc < 0 || int(p.doc) >= n || p.tf == 0 || j > 0 && list[j-1].doc > p.doc {
					t.Fatalf("term %q: postings %v for %d facts", imp.terms[k], list, n)
				}
			}
		}
	})
}
