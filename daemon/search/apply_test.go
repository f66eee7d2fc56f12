package search

import (
	"testing"
	"time"

	"github.com/memd/memd"
)

// Postings read with a shard's snapshot are installed in that shard's
// part: an update whose facts are not all the shard's is analysed from
// its texts instead, so no fact is searched as another shard's.
func TestApply_PostingsOfAnotherShardsFactsAreNotInstalled(t *testing.T) {
	alice, bob := memd.UserShard("alice"), memd.UserShard("bob")
	day := memd.DateOf(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	doc := func(s memd.ShardID, text string) Doc {
		return Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: s, Date: day, Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}}
	}
	y := New()
	y.PutAll([]Doc{doc(alice, "Alice likes tea"), doc(alice, "Secret salary figure")})
	var docs []Doc
	postings := string(y.ExportShard(alice, func(d Doc) { docs = append(docs, d) }))
	for k := range docs {
		if docs[k].Text == "Secret salary figure" {
			docs[k].Shard = bob
		}
	}
	x := New()
	if used := x.Apply(Update{Shard: alice, Replace: true, Put: docs, Postings: postings}); used {
		t.Error("the postings were used")
	}
	for shard, want := range map[memd.ShardID]int{alice: 0, bob: 1} {
		if hits := x.Search(Query{Text: "salary", Shards: []memd.ShardID{shard}, K: 5}).Hits; len(hits) != want {
			t.Errorf("%s's search for salary: %d hits, want %d", shard, len(hits), want)
		}
	}
}
