package search

import (
	"encoding/binary"
	"testing"
	"time"

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
	f.Add(string(x.ExportShard(id, func(int) {}, func(Doc) {})), 3)
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
				if p.doc() < 0 || int(p.doc()) >= n || p.tf() == 0 || j > 0 && list[j-1].doc() > p.doc() {
					t.Fatalf("term %q: postings %v for %d facts", imp.terms[k], list, n)
				}
			}
		}
	})
}

// The postings given with the facts are what a start searches: their
// texts are not analysed again.
func TestApply_SearchesThePostingsGiven(t *testing.T) {
	id := memd.AgentShard("alice")
	date, _ := memd.ParseDate("2026-10-01")
	d := Doc{Fact: memd.Fact{ID: "a", Shard: id, Text: "Booked the flight", Tier: memd.TierLog, Date: date, File: "log/2026-10.md"}}
	// One fact of one term, "zzzq" (one posting, four bytes), held once.
	postings := string(binary.LittleEndian.AppendUint64(nil, analysis())) + "\x01\x01\x01\x01\x04\x04zzzq\x01\x00\x01"
	x := New()
	if !x.Apply(Update{Shard: id, Head: "h", Replace: true, Put: []Doc{d}, Postings: postings}) {
		t.Fatal("the postings given were not used")
	}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if hits := x.Search(Query{Text: "zzzq", Shards: []memd.ShardID{id}, K: 5, Now: now}).Hits; len(hits) != 1 {
		t.Errorf("zzzq: %v", hits)
	}
	// A word the postings do not hold is found inside the text only.
	hits := x.Search(Query{Text: "flight", Shards: []memd.ShardID{id}, K: 5, Now: now, Explain: true}).Hits
	if len(hits) != 1 || len(hits[0].Explain.Terms) != 0 || hits[0].Explain.Substring == 0 {
		t.Errorf("flight, which the postings do not hold: %+v", hits)
	}
}
