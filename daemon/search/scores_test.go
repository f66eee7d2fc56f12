package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Candidates of one search are gone in the next, whether a search's
// marks are cleared one by one (few candidates for the entries) or all at
// once. Each candidate of a search is alone in its word of marks (64
// entries).
func TestScores_CandidatesGoneInTheNextSearch(t *testing.T) {
	shard := memd.AgentShard("alice")
	x := New()
	var docs []Doc
	for n := range 640 {
		text := fmt.Sprintf("Xylophone %d tuned", n)
		switch n % 64 {
		case 0:
			text = fmt.Sprintf("Alice booked flight %d to Lisbon", n)
		case 32:
			text = fmt.Sprintf("The budget of quarter %d is approved", n)
		}
		d := novemberDoc(shard, text)
		d.File = fmt.Sprintf("notes-%d.md", n) // no neighbours to lend to
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
	for name, room := range map[string]int{"all at once": int(x.entries.len()), "one by one": 200000} {
		sc := new(scores)
		sc.size(room)
		for range 3 {
			if got := ids(sc, "budget approved"); !slices.Equal(got, budget) {
				t.Fatalf("cleared %s: budget search found %v, want %v", name, got, budget)
			}
			if got := ids(sc, "flight Lisbon"); !slices.Equal(got, flights) {
				t.Fatalf("cleared %s: flight search found %v, want %v", name, got, flights)
			}
		}
		if slices.ContainsFunc(sc.member, func(w uint64) bool { return w != 0 }) {
			t.Errorf("cleared %s: candidates still marked after the search", name)
		}
	}
}

// The first term of a search fills the candidates in one pass, and a
// later one is merged into them with room made once for its list;
// explaining a search adds every term posting by posting. Both give the
// same hits with the same scores to the bit, with removed facts among the
// postings and several shards searched.
func TestScores_FilledAsAdded(t *testing.T) {
	alice, pat := memd.AgentShard("alice"), memd.UserShard("pat")
	x := New()
	var docs []Doc
	for n := range 900 {
		shard := alice
		if n%3 == 0 {
			shard = pat
		}
		text := fmt.Sprintf("Fact %d: the %s budget for %s", n, []string{"travel", "hardware", "hiring"}[n%3], []string{"Lisbon", "Porto", "Oslo", "Tokyo"}[n%4]) +
			strings.Repeat(" and more", n%7) // of several lengths
		d := novemberDoc(shard, text)
		d.File = fmt.Sprintf("log/f%d.md", n%5)
		d.Offset = n * 40
		docs = append(docs, d)
	}
	x.PutAll(docs)
	x.Apply(Update{Shard: alice, Delete: []string{docs[1].ID, docs[2].ID}}) // alice's part now has dead postings
	// "Tokyo travel" over pat: Tokyo's facts are candidates when travel,
	// which every one of pat's facts holds, is merged in, so its list
	// mixes candidates and facts not yet ones.
	for _, q := range []string{"budget", "hiring budget Tokyo", "travel Lisbon", "Fact 42", "Tokyo travel", "Oslo hiring budget"} {
		for _, shards := range [][]memd.ShardID{{pat}, {alice}, {alice, pat}} {
			query := Query{Text: q, Shards: shards, K: 40, Now: time.Now()}
			filled := x.Search(query).Hits
			query.Explain = true
			added := x.Search(query).Hits
			if len(filled) == 0 || !slices.EqualFunc(filled, added, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
				t.Errorf("%q over %v: filled\n%v\nadded\n%v", q, shards, texts(filled), texts(added))
			}
		}
	}
}
