package search

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Candidates of one search are gone in the next, also when the stamps
// that tell them apart run out and the places are wiped, and in an index
// too large for stamps.
func TestScores_StampsRunOut(t *testing.T) {
	shard := memd.AgentShard("alice")
	x := New()
	var docs []Doc
	for n := range 40 {
		text := fmt.Sprintf("Alice booked flight %d to Lisbon", n)
		if n%2 == 0 {
			text = fmt.Sprintf("The budget of quarter %d is approved", n)
		}
		d := novemberDoc(shard, text)
		d.Offset = n * 40
		docs = append(docs, d)
	}
	x.PutAll(docs)
	ids := func(sc *scores, text string) []string {
		hits, _ := x.search(sc, Query{Text: text, Shards: []memd.ShardID{shard}, K: 50, Now: time.Now()}, nil)
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprintf("%s %.9f", h.ID, h.Score))
		}
		return out
	}
	fresh := func(text string) []string { return ids(new(scores), text) }
	flights, budget := fresh("flight Lisbon"), fresh("budget approved")
	if len(flights) == 0 || slices.Equal(flights, budget) {
		t.Fatalf("fresh searches found %v and %v: nothing to tell apart", flights, budget)
	}
	sc := new(scores)
	ids(sc, "flight Lisbon")
	last := uint32(1)<<(32-sc.shift) - 1
	for _, stamp := range []uint32{2, last - 1, last} {
		sc.stamp, sc.cur = stamp, stamp<<sc.shift
		// Each search leaves its candidates' places behind, stamped.
		if got := ids(sc, "budget approved"); !slices.Equal(got, budget) {
			t.Fatalf("at stamp %d: budget search found %v, want %v", stamp, got, budget)
		}
		if got := ids(sc, "flight Lisbon"); !slices.Equal(got, flights) {
			t.Fatalf("after stamp %d: flight search found %v, want %v", stamp, got, flights)
		}
	}
	if sc.stamp >= last {
		t.Errorf("stamp %d after running out at %d: not started over", sc.stamp, last)
	}
	// An index too large for stamps clears each place a search touched.
	sc = new(scores)
	sc.size(int(x.entries.len()))
	sc.stamp, sc.cur = 0, 0
	for range 3 {
		if got := ids(sc, "budget approved"); !slices.Equal(got, budget) {
			t.Fatalf("without stamps: budget search found %v, want %v", got, budget)
		}
		if got := ids(sc, "flight Lisbon"); !slices.Equal(got, flights) {
			t.Fatalf("without stamps: flight search found %v, want %v", got, flights)
		}
	}
}
