package search

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Relatives skip the facts that could not reach the strongest candidates
// with them; the hits, their order and their scores are those of scoring
// every fact holding a relative.
func TestScoreRelated_SkipsOnlyFactsThatCannotReachTheHits(t *testing.T) {
	shard := memd.ProjectShard("fleet")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Facts holding both words lead; then those of the rarer word, among
	// which the longer ones (a lower BM25) holding a synonym of the other
	// word ("automobile") rise above the shorter ones by their relative
	// alone: the facts a floor too high would lose first.
	kinds := []struct {
		n    int
		text string
	}{
		{30, "Booked a car rental in %s, ref %d"},
		{30, "An automobile rental in %s was paid, ref %d"},
		{300, "The rental in %s is paid, ref %d"},
		{700, "The car is parked in %s, ref %d"},
		{100, "Sold the automobile in %s, ref %d"},
		{1840, "Booked the train to %s, ref %d"},
	}
	places := []string{"Lisbon", "Porto", "Oslo", "Berlin", "Tokyo"}
	x := New()
	var docs []Doc
	for _, k := range kinds {
		for range k.n {
			n := len(docs)
			text := fmt.Sprintf(k.text, places[n%len(places)], n)
			d := memd.DateOf(now.AddDate(0, 0, -n%300))
			docs = append(docs, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: "log/" + d.Month() + ".md"}, Offset: n * 60})
		}
	}
	x.PutAll(docs)
	pruned := 0
	relativesPruned = func() { pruned++ }
	defer func() { relativesPruned, pruneRelatives = func() {}, true }()
	for _, q := range []string{"car rental", "rental car Lisbon", "automobile", "car"} {
		for _, k := range []int{20, 60, 100} {
			query := Query{Text: q, Shards: []memd.ShardID{shard}, K: k, Now: now, Explain: true}
			pruneRelatives = false
			want := x.Search(query).Hits
			pruneRelatives = true
			got := x.Search(query).Hits
			same := slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score })
			if !same || len(got) != k {
				t.Errorf("%q, k %d: %d hits %v, want the %d of scoring every relative %v", q, k, len(got), ids(got), len(want), ids(want))
			}
		}
	}
	if pruned == 0 {
		t.Fatal("no search skipped a fact: the test shows nothing")
	}
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Text)
	}
	return out
}
