package search_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

var (
	alice = memd.AgentShard("alice")
	pat   = memd.UserShard("pat")
	now   = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
)

func doc(shard memd.ShardID, date, text string, offset int) search.Doc {
	d, err := memd.ParseDate(date)
	if err != nil {
		panic(err)
	}
	return search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: "log/" + d.Month() + ".md"}, Offset: offset}
}

func index(docs ...search.Doc) *search.Engine {
	x := search.New()
	x.PutAll(docs)
	return x
}

func texts(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Text)
	}
	return out
}

func first(t *testing.T, x *search.Engine, q string, shards ...memd.ShardID) string {
	t.Helper()
	if len(shards) == 0 {
		shards = []memd.ShardID{alice}
	}
	hits := x.Search(search.Query{Text: q, Shards: shards, K: 5, Now: now}).Hits
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Text
}

func TestSearch_WordsOfAnyLengthAndInflections(t *testing.T) {
	x := index(
		doc(alice, "2026-10-01", "Migrated the reports to SQL Server", 0),
		doc(alice, "2026-10-02", "Booked a flight to Lisbon", 100),
		doc(alice, "2026-10-03", "Moved to NYC", 200),
		doc(alice, "2026-10-04", "Prefers aisle seats on long trips", 300),
		doc(alice, "2026-10-05", "The quarterly report goes to the board", 400),
		doc(alice, "2026-10-06", "Café on the corner serves the best espresso", 500),
	)
	cases := map[string]string{
		"SQL":                       "Migrated the reports to SQL Server",
		"flights":                   "Booked a flight to Lisbon",
		"NYC":                       "Moved to NYC",
		"where did I move?":         "Moved to NYC",
		"booking flights to lisbon": "Booked a flight to Lisbon",
		"seat preference":           "Prefers aisle seats on long trips",
		"migration":                 "Migrated the reports to SQL Server",
		"cafe":                      "Café on the corner serves the best espresso",
		"lisb":                      "Booked a flight to Lisbon", // substring fallback
	}
	for q, want := range cases {
		if got := first(t, x, q); got != want {
			t.Errorf("%q: first hit %q, want %q", q, got, want)
		}
	}
}

func TestSearch_OnlyAllowedShards(t *testing.T) {
	x := index(doc(alice, "2026-10-01", "Team offsite in Lisbon", 0), doc(pat, "2026-10-01", "Pat lives in Lisbon", 0))
	hits := x.Search(search.Query{Text: "Lisbon", Shards: []memd.ShardID{alice}, K: 10, Now: now}).Hits
	if got := texts(hits); len(got) != 1 || got[0] != "Team offsite in Lisbon" {
		t.Errorf("hits outside the allowed shards: %v", got)
	}
	if hits := x.Search(search.Query{Text: "Lisbon", K: 10, Now: now}).Hits; hits != nil {
		t.Errorf("no shards allowed, yet hits: %v", texts(hits))
	}
}

func TestSearch_RecencyBreaksTies(t *testing.T) {
	x := index(doc(alice, "2026-01-01", "Lives in Austin", 0), doc(alice, "2026-06-01", "Lives in Lisbon", 0))
	if got := first(t, x, "lives"); got != "Lives in Lisbon" {
		t.Errorf("tie went to %q, want the newer fact", got)
	}
}

// Facts that tie on score come back newest first, the same hits whatever
// order they were indexed in (a first start indexes a shard's files oldest
// first, a restart reads its snapshot). With two words, the phrase lifts
// only the strongest candidates; among the tied, those must be the newest
// too, or recall answers with last year's facts until memd restarts.
func TestSearch_TiesTheSameInAnyIndexOrder(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var rising []search.Doc
	for i := range 1500 {
		date := start.AddDate(0, 0, i/3).Format(time.DateOnly)
		shard := []memd.ShardID{alice, pat}[i%2]
		rising = append(rising, doc(shard, date, fmt.Sprintf("Invoice paid for vendor %04d", i), (i%3)*40))
	}
	orders := map[string][]search.Doc{
		"rising":       rising,
		"falling":      reversed(rising),
		"oldest last":  append(slices.Clone(rising[1:]), rising[0]),
		"newest first": append([]search.Doc{rising[len(rising)-1]}, rising[:len(rising)-1]...),
		"shuffled":     shuffled(rising),
	}

	indexed := map[string]*search.Engine{}
	for name, docs := range orders {
		indexed[name] = index(docs...)
	}
	for _, q := range []string{"invoice", "invoice paid"} {
		for _, k := range []int{5, len(rising)} {
			var want []string
			for _, name := range []string{"rising", "falling", "oldest last", "newest first", "shuffled"} {
				hits := indexed[name].Search(search.Query{Text: q, Shards: []memd.ShardID{alice, pat}, K: k, Now: now}).Hits
				if len(hits) != k {
					t.Fatalf("%q, k %d, %s: %d hits", q, k, name, len(hits))
				}
				for j := 1; j < len(hits); j++ {
					if hits[j-1].Date.Before(hits[j].Date) {
						t.Fatalf("%q, k %d, %s: hit %d of %s after one of %s", q, k, name, j, hits[j].Date, hits[j-1].Date)
					}
				}
				if got := texts(hits); want == nil {
					want = got
				} else if !slices.Equal(got, want) {
					t.Fatalf("%q, k %d, %s: hits %v, want %v as indexed rising", q, k, name, got[:min(len(got), 8)], want[:min(len(want), 8)])
				}
			}
			if newest := rising[len(rising)-1].Text; !slices.Contains(want[:3], newest) {
				t.Errorf("%q, k %d: the newest fact is not among the first three hits: %v", q, k, want[:3])
			}
		}
	}
}

// Facts of one shard and day that tie on score come back in the order of
// their IDs, the last thing recall orders ties by: more of them than the
// hits and the strongest are chosen from, in either index order.
func TestSearch_TiesOfOneDayGoByID(t *testing.T) {
	var docs []search.Doc
	var ids []string
	for i := range 3000 {
		d := doc(alice, "2026-11-27", fmt.Sprintf("Paid the invoice of vendor %06d", i), i*40)
		docs = append(docs, d)
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	for name, order := range map[string][]search.Doc{"in line order": docs, "backwards": reversed(docs)} {
		var got []string
		for _, h := range index(order...).Search(search.Query{Text: "invoice", Shards: []memd.ShardID{alice}, K: 5, Now: now}).Hits {
			got = append(got, h.ID)
		}
		if !slices.Equal(got, ids[:5]) {
			t.Errorf("indexed %s: hits %v, want the first IDs %v", name, got, ids[:5])
		}
	}
}

func reversed(docs []search.Doc) []search.Doc {
	out := slices.Clone(docs)
	slices.Reverse(out)
	return out
}

func shuffled(docs []search.Doc) []search.Doc {
	out := slices.Clone(docs)
	rng := rand.New(rand.NewPCG(7, 11))
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

func TestSearch_DatesInTheQuery(t *testing.T) {
	x := index(
		doc(alice, "2026-03-14", "Signed the venue contract", 0),
		doc(alice, "2026-05-20", "Signed the catering contract", 0),
		doc(alice, "2026-05-20", "Paid the deposit", 60),
	)
	for q, want := range map[string]string{
		"what did we sign on 2026-03-14": "Signed the venue contract",
		"contract signed March 14":       "Signed the venue contract",
		"contract from 20 May":           "Signed the catering contract",
	} {
		if got := first(t, x, q); got != want {
			t.Errorf("%q: %q, want %q", q, got, want)
		}
	}
	// With no word to match, the date alone finds the day's facts.
	hits := x.Search(search.Query{Text: "what happened on May 20th?", Shards: []memd.ShardID{alice}, K: 5, Now: now}).Hits
	if len(hits) != 2 || hits[0].Date.String() != "2026-05-20" || hits[1].Date.String() != "2026-05-20" {
		t.Errorf("May 20th: %v", texts(hits))
	}
}

// A reply on the next line of the same day is found through its question.
func TestSearch_NeighboursLendContext(t *testing.T) {
	x := index(
		doc(alice, "2026-10-02", "Pat asked which hotel we booked for the offsite", 0),
		doc(alice, "2026-10-02", "The Memmo Alfama, three nights", 60),
		doc(alice, "2026-10-09", "Pat likes quiet rooms", 120),
		doc(alice, "2026-10-09", "Unrelated note about invoices", 180),
	)
	hits := x.Search(search.Query{Text: "which hotel for the offsite", Shards: []memd.ShardID{alice}, K: 3, Now: now}).Hits
	got := texts(hits)
	if len(got) < 2 || got[1] != "The Memmo Alfama, three nights" {
		t.Errorf("the answer on the neighbouring line should come second: %v", got)
	}
}

func TestSearch_KAndBudget(t *testing.T) {
	var docs []search.Doc
	for i := 0; i < 100; i++ {
		docs = append(docs, doc(alice, "2026-10-01", fmt.Sprintf("budget line %d %s", i, strings.Repeat("x", 190)), i*300))
	}
	x := index(docs...)
	hits := x.Search(search.Query{Text: "budget", Shards: []memd.ShardID{alice}, K: 50, Budget: 4000, Now: now}).Hits
	used := 0
	for _, h := range hits {
		used += len(h.Text)
	}
	if used > 4000 || len(hits) != 19 {
		t.Errorf("%d hits using %d characters; want 19 within 4000", len(hits), used)
	}
}

func TestIndex_PutReplacesAndDelete(t *testing.T) {
	x := index(doc(alice, "2026-10-01", "Lives in Austin", 0))
	d := doc(alice, "2026-10-05", "Lives in Austin", 0)
	x.Put(d)
	if x.Len() != 1 {
		t.Fatalf("len %d after replacing", x.Len())
	}
	got, _ := x.Get(alice, d.ID)
	if got.Date.String() != "2026-10-05" {
		t.Errorf("replaced fact has date %s", got.Date)
	}
	x.Delete(alice, d.ID)
	if first(t, x, "Austin") != "" || x.Len() != 0 {
		t.Error("deleted fact still found")
	}
}

func TestIndex_WalkInRankOrder(t *testing.T) {
	note := doc(alice, "2026-10-20", "a minor detail", 0)
	note.Tier = memd.TierNote
	episode := doc(alice, "2026-09-20", "worked on the budget", 0)
	episode.Tier = memd.TierEpisode
	x := index(doc(alice, "2026-10-01", "older", 0), doc(alice, "2026-10-10", "newer", 0), note, episode)
	var order []string
	n := x.Walk(alice, false, func(d search.Doc) bool { order = append(order, d.Text); return true })
	// Ranks: newer 10-10; the note is 30 days lighter (ranks as 09-20);
	// the episode is ~18 days heavier (as 10-08); older 10-01.
	want := []string{"newer", "worked on the budget", "older", "a minor detail"}
	if n != 4 || strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("walk order %v (n=%d), want %v", order, n, want)
	}
}

// chatDoc is a fact learned in a chat, committed at second when.
func chatDoc(shard memd.ShardID, date, text, chat string, offset int, when int64) search.Doc {
	d := doc(shard, date, text, offset)
	d.Chat, d.When = chat, when
	return d
}

// A reply borrows from the turn before it in its chat, whatever other
// shards remember of the same (group) chat and whatever lines of other
// files the chat's day has.
func TestSearch_ContextFromTheChatInThisShard(t *testing.T) {
	bob := memd.AgentShard("bob")
	docs := []search.Doc{
		chatDoc(alice, "2026-10-02", "Pat asked which hotel we booked for the offsite", "g1", 0, 100),
		chatDoc(alice, "2026-10-02", "The Memmo Alfama, three nights", "g1", 60, 110),
		chatDoc(alice, "2026-10-02", "Pat said good night", "g1", 120, 120),
	}
	// Bob remembers the same group chat, between alice's turns in time.
	for i := 0; i < 6; i++ {
		docs = append(docs, chatDoc(bob, "2026-10-02", fmt.Sprintf("Bob noted item %d of the offsite", i), "g1", i*50, 101+int64(i)))
	}
	x := index(docs...)
	got := texts(x.Search(search.Query{Text: "which hotel for the offsite", Shards: []memd.ShardID{alice}, K: 3, Now: now}).Hits)
	if len(got) < 2 || got[1] != "The Memmo Alfama, three nights" {
		t.Errorf("the reply should come second, borrowing from the question: %v", got)
	}
	// A lasting fact learned in the chat sits in the conversation by its
	// commit's time, not after every log line of the day.
	x = index(
		chatDoc(alice, "2026-10-02", "Pat asked which hotel we booked for the offsite", "c1", 0, 100),
		chatDoc(alice, "2026-10-02", "See you tomorrow", "c1", 60, 300),
		search.Doc{Fact: memd.Fact{ID: memd.FactID("Pat is vegetarian"), Shard: alice, Date: memd.DateOf(time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)), Tier: memd.TierProfile, Text: "Pat is vegetarian", File: "profile.md"}, Chat: "c1", When: 110},
	)
	hits := x.Search(search.Query{Text: "hotel offsite", Shards: []memd.ShardID{alice}, K: 3, Now: now, Explain: true}).Hits
	found := false
	for _, h := range hits {
		if h.Text == "See you tomorrow" {
			found = true
			if len(h.Explain.ContextFrom) != 1 || h.Explain.ContextFrom[0].Distance != 2 {
				t.Errorf("the goodbye is two turns from the question: %+v", h.Explain.ContextFrom)
			}
		}
	}
	if !found {
		t.Errorf("the goodbye borrows nothing: %v", texts(hits))
	}
}

// A fact alone in its chat's day gets no lift for having a chat.
func TestSearch_ChatDayLiftNeedsOtherFacts(t *testing.T) {
	lone := chatDoc(alice, "2026-10-02", "Lisbon hotel booked", "c1", 0, 100)
	plain := doc(alice, "2026-10-03", "Lisbon hotel booked again", 0)
	x := index(lone, plain)
	for _, h := range x.Search(search.Query{Text: "Lisbon hotel", Shards: []memd.ShardID{alice}, K: 2, Now: now, Explain: true}).Hits {
		if h.Explain.ChatDay != 0 {
			t.Errorf("%q lifted %.3f by a day with nothing else in it", h.Text, h.Explain.ChatDay)
		}
	}
}

// What a search finds and how it scores it depend only on the shards it
// reads: another agent's memory, or facts removed, change nothing.
func TestSearch_ScoresDependOnTheShardsSearched(t *testing.T) {
	mine := []search.Doc{
		doc(alice, "2026-10-01", "Lisbon offsite agenda", 0),
		doc(alice, "2026-10-02", "Lisbon hotel shortlist", 60),
		doc(alice, "2026-10-03", "Offsite budget approved", 120),
	}
	q := search.Query{Text: "Lisbon offsite", Shards: []memd.ShardID{alice}, K: 3, Now: now}
	want := index(mine...).Search(q).Hits
	var others []search.Doc
	for i := 0; i < 300; i++ {
		others = append(others, doc(memd.AgentShard("bob"), "2026-10-01", fmt.Sprintf("Lisbon note %d", i), i*40))
	}
	x := index(append(slices.Clone(mine), others...)...)
	for i := 0; i < 50; i++ {
		x.Delete(memd.AgentShard("bob"), others[i].ID)
	}
	got := x.Search(q).Hits
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", texts(got), texts(want))
	}
	for i := range got {
		if got[i].Text != want[i].Text || math.Abs(got[i].Score-want[i].Score) > 1e-12 {
			t.Errorf("hit %d: %q %.6f, alone %q %.6f", i, got[i].Text, got[i].Score, want[i].Text, want[i].Score)
		}
	}
}

// A query of a word repeated finds what the word finds, by substring too.
func TestSearch_RepeatedWordsAreOneNeedle(t *testing.T) {
	x := index(doc(alice, "2026-10-01", "Booked a flight to Lisbon", 0), doc(alice, "2026-10-02", "Paid the invoice", 60))
	once := texts(x.Search(search.Query{Text: "lisb", Shards: []memd.ShardID{alice}, K: 5, Now: now}).Hits)
	many := texts(x.Search(search.Query{Text: strings.Repeat("lisb ", 199), Shards: []memd.ShardID{alice}, K: 5, Now: now}).Hits)
	if !slices.Equal(once, many) || len(once) != 1 {
		t.Errorf("lisb: %v; lisb ×199: %v", once, many)
	}
}

// A reference no fact holds as a word finds the facts that hold it inside
// one, not every fact that shares the query's commonplace word; only when
// none does, the commonplace word is all the query has.
func TestSearch_AbsentReferenceFindsOnlyWhatHoldsIt(t *testing.T) {
	var docs []search.Doc
	for i := 0; i < 200; i++ {
		docs = append(docs, doc(alice, "2026-10-01", fmt.Sprintf("Booked the lease in Oslo, ref %d", i), i*60))
	}
	docs = append(docs, doc(alice, "2026-10-01", "Paid the invoice", 200*60))
	q := search.Query{Text: "ref 99999", Shards: []memd.ShardID{alice}, K: 5, Now: now}
	got := texts(index(docs...).Search(q).Hits)
	if len(got) != 5 || slices.ContainsFunc(got, func(s string) bool { return !strings.Contains(s, "ref") }) {
		t.Errorf("ref 99999 with no such fact: %v, want 5 facts with a ref", got)
	}
	docs = append(docs, doc(alice, "2026-10-02", "Invoice INV99999 is paid", 201*60))
	if got := texts(index(docs...).Search(q).Hits); !slices.Equal(got, []string{"Invoice INV99999 is paid"}) {
		t.Errorf("ref 99999: %v, want the invoice alone", got)
	}
}

// BenchmarkSearch_CostlyQueries times the queries of at most 1,000 bytes
// that cost the most over 100,000 facts: 200 words none holds (the
// substring fallback), and one word 199 times.
func BenchmarkSearch_CostlyQueries(b *testing.B) {
	var docs []search.Doc
	for i := 0; i < 100000; i++ {
		docs = append(docs, doc(alice, "2026-10-01", fmt.Sprintf("Alice booked the flight to Lisbon number %d for the team offsite", i), i*80))
	}
	x := index(docs...)
	var absent []string
	for i := 0; len(strings.Join(absent, " ")) < 990; i++ {
		absent = append(absent, fmt.Sprintf("zq%d", i))
	}
	for name, q := range map[string]string{"absent-words": strings.Join(absent, " "), "repeated-word": strings.Repeat("lisb ", 199)} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				x.Search(search.Query{Text: q, Shards: []memd.ShardID{alice}, K: 20, Now: now})
			}
		})
	}
}

// BenchmarkSearch_TiedOldestFirst times a word that 100,000 facts of one
// length hold, so that all tie on score and are told apart by day: once
// with the facts put in oldest first, once newest first, and once all of
// one day (an import), told apart by ID alone.
func BenchmarkSearch_TiedOldestFirst(b *testing.B) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, order := range []string{"oldest-first", "newest-first", "one-day"} {
		var docs []search.Doc
		for i := 0; i < 100000; i++ {
			day := i / 200
			switch order {
			case "newest-first":
				day = 499 - day
			case "one-day":
				day = 0
			}
			date := start.AddDate(0, 0, day).Format(time.DateOnly)
			docs = append(docs, doc(alice, date, fmt.Sprintf("Paid the invoice of vendor %06d", i), (i%200)*40))
		}
		x := index(docs...)
		b.Run(order, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				x.Search(search.Query{Text: "invoice", Shards: []memd.ShardID{alice}, K: 20, Now: now})
			}
		})
	}
}

// BenchmarkSearch_ShardsOfAStore times recall in a store of 100 shards of
// 3,000 facts each, for an agent that reads 5 of them (its own, its
// user's and three projects') and for an admin that reads all 100: the
// first should cost what 15,000 facts cost, not what 300,000 do.
func BenchmarkSearch_ShardsOfAStore(b *testing.B) {
	const shards, perShard = 100, 3000
	people := strings.Fields("Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Marta Pat Sam Lena Omar Priya")
	things := strings.Fields("flight invoice budget cluster database lease contract dinner review pipeline keys forecast")
	places := strings.Fields("Lisbon Porto Madrid Berlin Paris London Dublin Oslo Tokyo Sydney")
	var all []memd.ShardID
	var docs []search.Doc
	for s := 0; s < shards; s++ {
		id := memd.ProjectShard(fmt.Sprintf("p%03d", s))
		all = append(all, id)
		for i := 0; i < perShard; i++ {
			n := s*perShard + i
			text := fmt.Sprintf("%s booked the %s in %s, ref %d", people[n%len(people)], things[(n/7)%len(things)], places[(n/3)%len(places)], n)
			docs = append(docs, doc(id, fmt.Sprintf("2026-%02d-%02d", 1+n%11, 1+n%28), text, i*60))
		}
	}
	x := index(docs...)
	queries := []string{"Marta flight", "budget Lisbon", "who booked the lease in Oslo", "ref 4242", "Berlin"}
	for _, c := range []struct {
		name   string
		shards []memd.ShardID
	}{{"reads-5-of-100", all[:5]}, {"reads-100-of-100", all}} {
		// Literal: without the thesaurus's relatives, for their cost.
		for _, literal := range []bool{false, true} {
			name := c.name
			if literal {
				name += "-literal"
			}
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					x.Search(search.Query{Text: queries[i%len(queries)], Shards: c.shards, K: 20, Now: now, Literal: literal})
				}
			})
		}
	}
	// A reference no readable fact holds matches no word, so recall looks
	// for it inside every fact the agent reads: the slowest common query.
	b.Run("reads-5-of-100-absent-ref", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x.Search(search.Query{Text: "ref 99999", Shards: all[:5], K: 20, Now: now})
		}
	})
}

// Facts tied on score and date come in the order of their shards' names,
// whatever order the shards came into the index in.
func TestSearch_TiesFollowShardNames(t *testing.T) {
	var names []string
	for _, n := range []string{"delta", "alpha", "echo", "charlie", "bravo"} {
		names = append(names, "project/"+n)
	}
	var docs []search.Doc
	var shards []memd.ShardID
	for _, n := range names {
		id, _ := memd.ParseShardID(n)
		shards = append(shards, id)
		docs = append(docs, doc(id, "2026-10-01", "Booked the venue", 0))
	}
	x := search.New()
	for _, d := range docs {
		x.Put(d) // one shard at a time
	}
	var got []string
	for _, h := range x.Search(search.Query{Text: "venue", Shards: shards, K: 10, Now: now}).Hits {
		got = append(got, h.Shard.String())
	}
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Errorf("tied facts came in shard order %v, want %v", got, want)
	}
}

// A query naming a day, a word no fact holds and a word nearly every fact
// holds finds the facts of that day, not every fact holding the common word.
func TestSearch_DateQueriesLeaveCommonWordsAlone(t *testing.T) {
	var docs []search.Doc
	for i := 0; i < 40; i++ {
		docs = append(docs, doc(alice, fmt.Sprintf("2026-01-%02d", 1+i%28), fmt.Sprintf("Pat reviewed item %d", i), i*40))
	}
	docs = append(docs, doc(alice, "2026-03-04", "Quarterly numbers were shared", 40*40))
	hits := index(docs...).Search(search.Query{Text: "pat standup 2026-03-03", Shards: []memd.ShardID{alice}, K: 5, Now: now}).Hits
	if got := texts(hits); !slices.Equal(got, []string{"Quarterly numbers were shared"}) {
		t.Errorf("hits %v, want the fact of the day after", got)
	}
}

// A phrase's first and last words may start or end a longer word: "lisbon
// air" is in "Lisbon airport" and favours it.
func TestSearch_PhraseAtTheEdgesOfWords(t *testing.T) {
	docs := []search.Doc{
		doc(alice, "2026-10-01", "Air quality report for Lisbon", 0),
		doc(alice, "2026-10-01", "Landed at Lisbon airport", 40),
	}
	for i, text := range []string{"Paid the invoice", "Renewed the lease", "Booked the venue", "Reviewed the budget"} {
		docs = append(docs, doc(alice, "2026-09-01", text, 80+40*i))
	}
	hits := index(docs...).Search(search.Query{Text: "lisbon air", Shards: []memd.ShardID{alice}, K: 2, Now: now, Explain: true}).Hits
	i := slices.IndexFunc(hits, func(h search.Hit) bool { return h.Text == "Landed at Lisbon airport" })
	if i < 0 || hits[i].Explain.Phrase == 0 {
		t.Errorf("hits %v; want the airport among them, favoured by the phrase", texts(hits))
	}
}

// With no model, words of like meaning find a fact that shares no word
// with the query, and explain names them after the query's word.
func TestSearch_FindsWordsOfLikeMeaning(t *testing.T) {
	docs := []search.Doc{
		doc(alice, "2026-05-09", "Adopted a puppy named Rex from the shelter", 0),
		doc(alice, "2026-05-10", "Signed the office lease for two years", 60),
		doc(alice, "2026-05-11", "Paid the invoice for the conference", 120),
	}
	x := index(docs...)
	hits := x.Search(search.Query{Text: "new dog", Shards: []memd.ShardID{alice}, K: 3, Now: now, Explain: true}).Hits
	if len(hits) == 0 || hits[0].Text != docs[0].Text {
		t.Fatalf("new dog: %v, want the puppy first", texts(hits))
	}
	if terms := hits[0].Explain.Terms; len(terms) != 1 || terms[0].Term != "~dog" {
		t.Errorf("explain terms %+v, want the words related to dog", terms)
	}
	if got := texts(x.Search(search.Query{Text: "new dog", Shards: []memd.ShardID{alice}, K: 3, Now: now, Literal: true}).Hits); len(got) != 0 {
		t.Errorf("literal search found %v", got)
	}
	// A part of a word the query names comes first: "kube" of "kubecorp".
	x = index(append(docs, doc(alice, "2026-05-12", "Signed the kubecorp contract", 180))...)
	if got := texts(x.Search(search.Query{Text: "kube dog", Shards: []memd.ShardID{alice}, K: 3, Now: now}).Hits); len(got) == 0 || got[0] != "Signed the kubecorp contract" {
		t.Errorf("kube dog: %v, want kubecorp first", got)
	}
}

// Relatives do not outrank the word itself: a long fact holding "start"
// comes before a short one holding three of its synonyms.
func TestSearch_RelativesNeverOutrankTheWord(t *testing.T) {
	docs := []search.Doc{
		doc(alice, "2026-05-09", "Kickoff to begin and commence", 0),
		doc(alice, "2026-05-09", "We agreed to start the rollout of the new billing system for every customer in the spring", 60),
		doc(alice, "2026-05-10", "Paid the invoice for the conference", 120),
	}
	hits := index(docs...).Search(search.Query{Text: "start", Shards: []memd.ShardID{alice}, K: 3, Now: now}).Hits
	if len(hits) < 2 || hits[0].Text != docs[1].Text || hits[1].Text != docs[0].Text {
		t.Errorf("start: %v, want the fact saying it first, then its synonyms", texts(hits))
	}
}

// FactsSince tells a shard's facts gained and lost since a mark, in order,
// stops where its caller says, and starts over once the index was emptied
// or compacted since.
func TestEngine_FactsSince(t *testing.T) {
	x := index(doc(alice, "2026-05-01", "Paid the invoice", 0), doc(alice, "2026-05-02", "Signed the lease", 40))
	since := func(m search.Mark, most int) (gained, lost []string, next search.Mark, restarted bool) {
		next, restarted = x.FactsSince(alice, m, func(id string) { lost = append(lost, id) }, func(_, text string) bool {
			if len(gained) == most {
				return false
			}
			gained = append(gained, text)
			return true
		})
		return gained, lost, next, restarted
	}
	got, _, mark, restarted := since(search.Mark{}, 10)
	if !slices.Equal(got, []string{"Paid the invoice", "Signed the lease"}) || !restarted {
		t.Fatalf("all: %v (restarted %v)", got, restarted)
	}
	x.Put(doc(alice, "2026-05-03", "Booked the venue", 80))
	x.Put(doc(alice, "2026-05-04", "Renewed the domain", 120))
	if got, _, mark, restarted = since(mark, 1); !slices.Equal(got, []string{"Booked the venue"}) || restarted {
		t.Fatalf("since, one at most: %v", got)
	}
	if got, _, mark, _ = since(mark, 10); !slices.Equal(got, []string{"Renewed the domain"}) {
		t.Fatalf("since, where it stopped: %v", got)
	}
	x.Apply(search.Update{Shard: alice, Delete: []string{memd.FactID("Signed the lease")}})
	if got, lost, next, _ := since(mark, 10); len(got) != 0 || !slices.Equal(lost, []string{memd.FactID("Signed the lease")}) {
		t.Fatalf("after a removal: gained %v, lost %v", got, lost)
	} else {
		mark = next
	}
	x.Reset()
	x.PutAll([]search.Doc{doc(alice, "2026-05-05", "Moved the servers", 0)})
	if got, lost, _, restarted := since(mark, 10); !slices.Equal(got, []string{"Moved the servers"}) || len(lost) != 0 || !restarted {
		t.Errorf("after a reset, from the start: %v, lost %v, restarted %v", got, lost, restarted)
	}
	// Another engine's mark is not taken for this one's.
	y := index(doc(alice, "2026-05-01", "Paid the invoice", 0))
	if _, restarted := y.FactsSince(alice, mark, func(string) {}, func(_, _ string) bool { return true }); !restarted {
		t.Error("a mark of another engine was taken")
	}
}

// A query naming two shards gives the same hits each time it is asked:
// the lasting facts of the shards it names join the candidates in one
// order, and which of them lend context depends on it.
func TestSearch_NamingTwoShardsIsStable(t *testing.T) {
	var docs []search.Doc
	day := memd.DateOf(now)
	for _, shard := range []memd.ShardID{alice, pat} {
		for n := range 300 {
			for _, tier := range []memd.Tier{memd.TierProfile, memd.TierLog} {
				text := fmt.Sprintf("%s line %d of the %s", tier, n, shard.Kind)
				docs = append(docs, search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: day, Tier: tier, Text: text, File: "profile.md"}, Offset: len(docs) * 40})
			}
		}
	}
	x := index(docs...)
	q := search.Query{Text: "alice pat", Shards: []memd.ShardID{alice, pat}, K: 700, Now: now}
	first := x.Search(q).Hits
	for range 12 {
		if got := x.Search(q).Hits; !slices.EqualFunc(got, first, func(a, b search.Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
			t.Fatalf("asked again, the hits differ:\n%v\nfirst:\n%v", texts(got), texts(first))
		}
	}
}

// The first word scored makes candidates of its facts shard after shard
// without a look-up; they score as a search that records each part of
// their scores (and so looks each fact up) scores them.
func TestSearch_FirstWordOverShardsScoresAsExplained(t *testing.T) {
	var docs []search.Doc
	var shards []memd.ShardID
	for s, name := range []string{"alpha", "bravo", "charlie", "delta"} {
		id := memd.ProjectShard(name)
		shards = append(shards, id)
		for n := range 40 + 10*s {
			text := fmt.Sprintf("Fact %d of %s: the %s%s", n, name, []string{"invoice", "receipt"}[n%2], strings.Repeat(" was paid", n%4))
			if n%3 == 0 {
				text += " by Lisbon's vendor"
			}
			docs = append(docs, doc(id, fmt.Sprintf("2026-10-%02d", 1+n%28), text, n*60))
		}
	}
	x := index(docs...)
	// Facts forgotten in one shard: its postings hold dead entries, and
	// its facts are looked up between shards filled without.
	var gone []string
	for _, d := range docs {
		if d.Shard == shards[1] && len(gone) < 12 {
			gone = append(gone, d.ID)
		}
	}
	x.Apply(search.Update{Shard: shards[1], Delete: gone})
	for _, q := range []string{"invoice", "invoice vendor", "vendor invoice paid", "Lisbon", "receipt Lisbon", "charlie receipt", "bravo delta invoice"} {
		query := search.Query{Text: q, Shards: shards, K: 200, Now: now}
		plain := x.Search(query).Hits
		query.Explain = true
		explained := x.Search(query).Hits
		if len(plain) != len(explained) || len(plain) == 0 {
			t.Fatalf("%q: %d hits, explained %d", q, len(plain), len(explained))
		}
		for n := range plain {
			if p, e := plain[n], explained[n]; p.ID != e.ID || math.Abs(p.Score-e.Score) > 1e-12*e.Score {
				t.Errorf("%q: hit %d is %s at %v, explained %s at %v", q, n, p.Text, p.Score, e.Text, e.Score)
			}
		}
	}
}
