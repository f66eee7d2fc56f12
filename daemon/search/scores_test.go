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
		marked := func(w uint64) bool { return w != 0 }
		if slices.ContainsFunc(sc.member, marked) || slices.ContainsFunc(sc.filled, marked) {
			t.Errorf("cleared %s: candidates still marked after the search", name)
		}
	}
}

// The first term of a search fills the candidates in one pass; any later
// one adds to them posting by posting, as explaining a search does for
// every term. Both give the same hits with the same scores to the bit,
// with removed facts among the postings and several shards searched.
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
	for _, q := range []string{"budget", "hiring budget Tokyo", "travel Lisbon", "Fact 42"} {
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

// A list filled gives each entry the place it was filled at, whether its
// entries rise (the places are counted from the marks) or not (they are
// added one by one), and adding to a filled entry adds to that place.
func TestScores_FilledPlaces(t *testing.T) {
	for name, docs := range map[string][]int32{
		"rising":       {3, 5, 63, 64, 65, 130, 700, 701},
		"out of order": {64, 3, 700, 5, 130, 63},
	} {
		sc := new(scores)
		sc.size(1000)
		ps := make([]posting, len(docs))
		for k, i := range docs {
			ps[k] = newPosting(i, 1)
		}
		sc.fill(ps, func(i int32, _ float64) float64 { return float64(i) }, 1)
		if len(sc.touched) != len(docs) {
			t.Fatalf("%s: %d candidates, want %d", name, len(sc.touched), len(docs))
		}
		for _, i := range docs {
			k := sc.place(i)
			if k < 0 || sc.touched[k] != i || sc.v[k] != float64(i) || sc.terms[k] != 1 {
				t.Errorf("%s: entry %d at place %d (of %v)", name, i, k, sc.touched)
			}
		}
		for _, i := range []int32{0, 4, 62, 66, 699, 999} {
			if k := sc.place(i); k >= 0 {
				t.Errorf("%s: entry %d, never filled, at place %d", name, i, k)
			}
		}
		if k := sc.add(130, 0.5); sc.touched[k] != 130 || sc.v[k] != 130.5 {
			t.Errorf("%s: adding to entry 130 reached place %d, %v", name, k, sc.v[k])
		}
		if k := sc.add(4, 2); k != len(docs) || sc.place(4) != int32(k) || sc.value(4) != 2 {
			t.Errorf("%s: a new candidate took place %d, want %d", name, k, len(docs))
		}
		sc.clear()
		for _, i := range append(docs, 4) {
			if k := sc.place(i); k >= 0 {
				t.Errorf("%s: entry %d still at place %d after clear", name, i, k)
			}
		}
	}
}
