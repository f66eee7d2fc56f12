package search_test

import (
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// multilingualSets are the judged set of testdata/recall/multilingual.txt,
// its tuning and held-out parts, among the English store's distractors
// too: words of other scripts must not be lost in a store of English.
func multilingualSets(t testing.TB) []qualitySet {
	docs := loadMemoryFrom(t, "../../testdata/recall/multilingual.txt")
	known := map[string]bool{}
	shards := map[memd.ShardID]bool{memd.AgentShard("noise"): true}
	for _, d := range docs {
		known[d.Text] = true
		shards[d.Shard] = true
	}
	tuning, heldOut := loadQueriesFrom(t, "../../testdata/recall/multilingual-queries.txt", known)
	all := append(docs, distractors(3000)...)
	x := search.New()
	x.PutAll(all)
	var ids []memd.ShardID
	for s := range shards {
		ids = append(ids, s)
	}
	return []qualitySet{
		newQualitySet("intl tuning", "facts", tuning, x, ids, all, byText),
		newQualitySet("intl held-out", "facts", heldOut, x, ids, all, byText),
	}
}
