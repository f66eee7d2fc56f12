package search

import (
	"testing"
	"time"

	"github.com/memd/memd"
)

// Of two facts that lend a neighbour the same context, explain names the
// same one whatever order the three were indexed in.
func TestSearch_TheSameLenderInAnyIndexOrder(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	alice := memd.AgentShard("alice")
	day := memd.DateOf(now.AddDate(0, 0, -1))
	fact := func(text string, offset int) Doc {
		return Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: alice, Date: day, Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}, Offset: offset}
	}
	// The middle line borrows from the lines either side, equally.
	before, middle, after := fact("alpha beta one", 0), fact("gamma delta", 40), fact("alpha beta two", 80)
	lender := func(docs ...Doc) string {
		x := New()
		x.PutAll(docs)
		for _, h := range x.Search(Query{Text: "alpha beta", Shards: []memd.ShardID{alice}, K: 5, Now: now, Explain: true}).Hits {
			if h.ID == middle.ID {
				if len(h.Explain.ContextFrom) != 1 {
					t.Fatalf("the middle line borrowed from %d facts, want 1", len(h.Explain.ContextFrom))
				}
				return h.Explain.ContextFrom[0].ID
			}
		}
		t.Fatal("the middle line is no hit")
		return ""
	}
	if forwards, backwards := lender(before, middle, after), lender(after, middle, before); forwards != backwards {
		t.Errorf("the lender named: %s indexed in line order, %s indexed backwards", forwards, backwards)
	}
}
