package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Relatives skip the facts that could not reach the strongest candidates
// with them; the hits, their order and their scores are those of scoring
// every fact holding a relative (and of choosing the strongest and the
// hits among every candidate, not only those at the floor or above and
// those that gained since). Each case is a store where a wrong floor
// would show, and where facts are skipped (the test fails if none is), but
// for the one where every fact may reach the hits.
func TestScoreRelated_SkipsOnlyFactsThatCannotReachTheHits(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		docs    func(add func(text string, daysAgo int, file string, offset int))
		queries []Query
		noSkip  bool // every fact holding a relative could reach the hits
		lookUp  bool // the relative's postings are looked up, in one shard
		late    bool // facts are skipped from a later term's relatives on
	}{{
		// Facts holding both words lead; then those of the rarer word,
		// among which the longer ones (a lower BM25) holding a synonym of
		// the other word ("automobile") rise above the shorter ones by
		// their relative alone: the facts a floor too high loses first.
		name: "below the cut",
		docs: func(add func(string, int, string, int)) {
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
			n := 0
			for _, k := range kinds {
				for range k.n {
					add(fmt.Sprintf(k.text, places[n%len(places)], n), n%300, "log/2026-11.md", n*60)
					n++
				}
			}
		},
		queries: queries("car rental", "rental car Lisbon", "automobile", "car",
			"booked the car rental in Lisbon, paid for the train to Porto, parked and sold the automobile in Oslo"),
	}, {
		// The line after the best hit, of the same day and file, says
		// "automobile": it borrows context by the lead the hit has over
		// it, which its relative narrows.
		name: "a neighbour borrowing context",
		docs: func(add func(string, int, string, int)) {
			add("Booked a car rental in Lisbon for the offsite", 1, "log/2026-11.md", 0)
			add("The automobile is a blue Fiat, pick up at the airport desk", 1, "log/2026-11.md", 100)
			for n := range 400 {
				add(fmt.Sprintf("Washed the car after trip %d", n), 2+n%300, fmt.Sprintf("log/x%d.md", n), 0)
			}
			for n := range 40 {
				add(fmt.Sprintf("Rental invoice %d filed", n), 2+n, fmt.Sprintf("log/r%d.md", n), 0)
			}
			for n := range 12 {
				add(fmt.Sprintf("Rental note %d"+strings.Repeat(" w", n), n), 50+n, fmt.Sprintf("log/v%d.md", n), 0)
			}
			for n := range 3000 {
				add(fmt.Sprintf("filler f%d g%d h%d", n, n, n), 400, fmt.Sprintf("log/y%d.md", n), 0)
			}
		},
		queries: queries("car rental Lisbon"),
	}, {
		// The same, the neighbour saying the relative twice: its gain is
		// of a word held twice, however it is found.
		name: "a neighbour holding a relative twice",
		docs: func(add func(string, int, string, int)) {
			add("Booked a car rental in Lisbon for the offsite", 1, "log/2026-11.md", 0)
			add("The automobile is a blue Fiat, the automobile desk at the airport", 1, "log/2026-11.md", 100)
			for n := range 400 {
				add(fmt.Sprintf("Washed the car after trip %d", n), 2+n%300, fmt.Sprintf("log/x%d.md", n), 0)
			}
			for n := range 40 {
				add(fmt.Sprintf("Rental invoice %d filed", n), 2+n, fmt.Sprintf("log/r%d.md", n), 0)
			}
			for n := range 3000 {
				add(fmt.Sprintf("filler f%d g%d h%d", n, n, n), 400, fmt.Sprintf("log/y%d.md", n), 0)
			}
		},
		queries: queries("car rental Lisbon"),
	}, {
		// The neighbour holds the query's first word itself and a
		// relative of it ("lease"), and a relative of a later word
		// ("automobile"): the later word's relative counts, whichever
		// word the query says first.
		name: "a neighbour holding a word, its relative and another's",
		docs: func(add func(string, int, string, int)) {
			add("Booked a car rental in Lisbon and Porto via Oslo", 1, "log/2026-11.md", 0)
			add("The rental is on lease, an automobile, "+unique("q", 0, 60), 1, "log/2026-11.md", 100)
			for n := range 300 {
				add(fmt.Sprintf("car rental %d", n), 2+n%300, fmt.Sprintf("log/x%d.md", n), 0)
			}
			for n := range 3000 {
				add(fmt.Sprintf("filler f%d g%d h%d", n, n, n), 400, fmt.Sprintf("log/y%d.md", n), 0)
			}
		},
		queries: queries("rental car Lisbon Porto Oslo", "car rental Lisbon Porto Oslo"),
	}, {
		// What the first term's relatives could add rules out no fact,
		// what the second's could does once the first's are added: the
		// rarer word first, its relatives scored for every fact, the
		// other's only for the facts that can still reach the hits. A
		// neighbour of the best fact holds a relative of each, and gets
		// each once.
		name: "pruning from the second term",
		docs: func(add func(string, int, string, int)) {
			add("buy car north", 1, "log/2026-11.md", 0)
			add("The purchase of an automobile, signed "+unique("p", 0, 30), 1, "log/2026-11.md", 100)
			for n := range 300 {
				add(fmt.Sprintf("car site %d", n), 2+n%300, fmt.Sprintf("log/x%d.md", n), 0)
			}
			for n := range 10 {
				add(fmt.Sprintf("buy order %d", n), 2+n, fmt.Sprintf("log/b%d.md", n), 0)
			}
			for n := range 60 {
				add(fmt.Sprintf("automobile lot %d", n), 2+n, fmt.Sprintf("log/a%d.md", n), 0)
				add(fmt.Sprintf("purchase slip %d", n), 2+n, fmt.Sprintf("log/p%d.md", n), 0)
			}
			for n := range 5000 {
				add(fmt.Sprintf("other filler %d", n), 60+n%300, fmt.Sprintf("log/y%d.md", n), 0)
			}
		},
		queries: queries("buy car", "buy car north site"),
		late:    true,
	}, {
		// The same, the neighbour holding a query word as well as a
		// relative of it ("car", "automobile"), below the cut.
		name: "a neighbour holding a word and its relative",
		docs: func(add func(string, int, string, int)) {
			add("Booked a car rental in Lisbon for the offsite", 1, "log/2026-11.md", 0)
			add("The car is an automobile, a blue Fiat, pick up at the airport desk", 1, "log/2026-11.md", 100)
			for n := range 400 {
				add(fmt.Sprintf("Washed the car rental after trip %d in Lisbon", n), 2+n%300, fmt.Sprintf("log/x%d.md", n), 0)
			}
			for n := range 40 {
				add(fmt.Sprintf("Automobile invoice %d filed", n), 2+n, fmt.Sprintf("log/r%d.md", n), 0)
			}
			for n := range 3000 {
				add(fmt.Sprintf("filler f%d g%d h%d", n, n, n), 400, fmt.Sprintf("log/y%d.md", n), 0)
			}
		},
		queries: queries("car rental Lisbon"),
	}, {
		// Most candidates far below the floor, holding only a word most
		// facts hold: the strongest and the hits are chosen among the
		// others, and among those that gain later. The line after the best
		// hit holds no query word, and borrows enough context from it to
		// rank second. (The words have no relatives, so the floor is the
		// cut.)
		name: "a neighbour borrowing from far below the floor",
		docs: func(add func(string, int, string, int)) {
			add("zqa zqb zqc zqd zqe north site", 1, "log/2026-11.md", 0)
			add("the report lists seven open findings", 1, "log/2026-11.md", 100)
			// A candidate below the floor, that the loan brings back.
			add("zqb the report names who closed them", 1, "log/2026-11.md", 200)
			for n := range 300 {
				add(fmt.Sprintf("zqa site %d", n), 2+n%300, fmt.Sprintf("log/a%d.md", n), 0)
			}
			for n := range 5000 {
				add(fmt.Sprintf("zqb filler %d", n), 60+n%300, fmt.Sprintf("log/b%d.md", n), 0)
				add(fmt.Sprintf("other filler %d", n), 60+n%300, fmt.Sprintf("log/c%d.md", n), 0)
			}
		},
		// The common word first: the candidates holding it come first in
		// the order scored, before those at the floor.
		queries: queries("zqb zqa zqc zqd zqe"),
	}, {
		// Hits past the strongest 256: a large k, or a budget that skips
		// long texts and reads further down.
		name: "hits past the strongest",
		docs: func(add func(string, int, string, int)) {
			for n := range 256 {
				add(fmt.Sprintf("car c%d ", n)+strings.Repeat("l", 400), n%200, fmt.Sprintf("log/f%d.md", n), 0)
			}
			for n := range 200 {
				add(fmt.Sprintf("automobile a%d", n), (1000+n)%200, fmt.Sprintf("log/f%d.md", 1000+n), 0)
			}
			for n := range 3000 {
				add(fmt.Sprintf("filler f%d g%d h%d", n, n, n), (5000+n)%200, fmt.Sprintf("log/f%d.md", 5000+n), 0)
			}
		},
		queries: []Query{{Text: "car", K: 300}, {Text: "car", K: 60, Budget: 1200}},
		noSkip:  true,
	}, {
		// A relative in thousands of facts, a few hundred candidates at
		// the floor or above (long facts of both words, short ones of the
		// rarer word and the relative; those of the common word alone
		// longer still): each of those is looked up in the relative's
		// postings (lookUp), and the short ones gain.
		name: "a relative of many facts, few candidates above",
		docs: func(add func(string, int, string, int)) {
			for n := range 260 {
				add(fmt.Sprintf("Car rental r%d ", n)+unique("w", n, 16), n%200, fmt.Sprintf("log/r%d.md", n), 0)
			}
			for n := range 100 {
				add(fmt.Sprintf("Automobile rental b%d", n), n%200, fmt.Sprintf("log/r%d.md", n), 60)
			}
			for n := range 4000 {
				add(fmt.Sprintf("The automobile a%d was washed", n), n%300, fmt.Sprintf("log/a%d.md", n), 0)
			}
			for n := range 8000 {
				add(fmt.Sprintf("Car wash c%d with soap water brush sponge towel bucket hose wax polish cloth", n), n%300, fmt.Sprintf("log/c%d.md", n%500), n*60)
			}
			for n := range 30000 {
				add(fmt.Sprintf("filler f%d g%d", n, n), n%300, fmt.Sprintf("log/f%d.md", n%500), n*60)
			}
		},
		queries: queries("car rental"),
		lookUp:  true,
	}}
	// A fact whose score before its relatives is just under the floor, and
	// with them ties the cut: tied, the newer fact comes first. The store
	// sizes are those where the sums meet to the last bit.
	for _, ns := range []int{258, 260, 261} {
		cases = append(cases, struct {
			name    string
			docs    func(add func(text string, daysAgo int, file string, offset int))
			queries []Query
			noSkip  bool
			lookUp  bool
			late    bool
		}{
			name: fmt.Sprintf("a tie at the cut, %d facts", ns),
			docs: func(add func(string, int, string, int)) {
				for n := range ns {
					add("zebra "+unique("s", n, 14)+" bought "+unique("t", n, 15), 10+n%50, fmt.Sprintf("log/f%d.md", n), 0)
				}
				add("zebra buy buy buy "+unique("e", 0, 27), 1, "log/f100000.md", 0)
				for n := range 11 * (ns + 1) { // an average length of 9 terms
					add(unique("f", n, 7), 5, fmt.Sprintf("log/f%d.md", 200000+n), 0)
				}
			},
			queries: queries("bought zebra"),
		})
	}
	defer func() {
		relativesPruned, relativesPrunedFrom, relativesLookedUp, pruneRelatives = func() {}, func(int) {}, func() {}, true
	}()
	// Each case in one shard, and its files dealt between three shards
	// searched together (each its own part of the index).
	for _, shards := range [][]memd.ShardID{
		{memd.ProjectShard("fleet")},
		{memd.ProjectShard("fleet"), memd.ProjectShard("harbour"), memd.AgentShard("pilot")},
	} {
		for _, c := range cases {
			var docs []Doc
			files := map[string]memd.ShardID{}
			c.docs(func(text string, daysAgo int, file string, offset int) {
				shard, ok := files[file]
				if !ok {
					shard = shards[len(files)%len(shards)]
					files[file] = shard
				}
				d := memd.DateOf(now.AddDate(0, 0, -daysAgo))
				docs = append(docs, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: file}, Offset: offset})
			})
			x := New()
			x.PutAll(docs)
			pruned, lookedUp, late := 0, 0, 0
			relativesPruned = func() { pruned++ }
			relativesPrunedFrom = func(term int) {
				if term > 0 {
					late++
				}
			}
			relativesLookedUp = func() { lookedUp++ }
			for _, q := range c.queries {
				q.Shards, q.Now = shards, now
				pruneRelatives = false
				want := x.Search(q).Hits
				pruneRelatives = true
				got := x.Search(q).Hits
				if !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
					t.Errorf("%s, %d shards: %q, k %d, budget %d: hits\n%v\nwant those of scoring every relative\n%v", c.name, len(shards), q.Text, q.K, q.Budget, texts(got), texts(want))
				}
			}
			if skipped := pruned > 0; skipped == c.noSkip && len(shards) == 1 {
				t.Errorf("%s: searches skipping facts: %d", c.name, pruned)
			}
			if c.late && late == 0 && len(shards) == 1 {
				t.Errorf("%s: no search began skipping facts at a later term", c.name)
			}
			if c.lookUp && lookedUp == 0 && len(shards) == 1 {
				t.Errorf("%s: no relative's postings looked up", c.name)
			}
		}
	}
}

// queries asks each text at a few depths, with explanations.
func queries(texts ...string) []Query {
	var out []Query
	for _, text := range texts {
		for _, k := range []int{20, 50, 100} {
			out = append(out, Query{Text: text, K: k, Explain: true})
		}
	}
	return out
}

// unique returns k words unlike any other's: prefix, n and their place.
func unique(prefix string, n, k int) string {
	ws := make([]string, k)
	for j := range ws {
		ws[j] = fmt.Sprintf("%s%dx%d", prefix, n, j)
	}
	return strings.Join(ws, " ")
}

func texts(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%.6f %s", h.Score, h.Text))
	}
	return out
}

// A long query (an agent passing a person's whole message) has the
// relatives of its rarest terms scored, not of all: the commonest words'
// relatives weigh the least. Here each of ten words is held by one fact
// fewer than the one before, and a fact holds a synonym of each: the
// synonyms of the two commonest find nothing, the rarest's do. Words the
// store does not hold, with no relative it holds, take no place among
// the rarest.
func TestScoreRelated_ALongQueryRelatesItsRarestTerms(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	words := strings.Fields("doctor error speak large quick house assist begin purchase car")
	synonyms := map[string]string{"doctor": "physician", "error": "mistake", "speak": "oral", "large": "ample", "quick": "adroit",
		"house": "firm", "assist": "aid", "begin": "commence", "purchase": "buy", "car": "automobile"}
	shard := memd.ProjectShard("fleet")
	var docs []Doc
	add := func(text string) {
		docs = append(docs, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: memd.DateOf(now), Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}, Offset: 60 * len(docs)})
	}
	for k, w := range words {
		for n := range len(words) - k {
			add(fmt.Sprintf("%s noted in report %d-%d", w, k, n))
		}
	}
	for _, w := range words {
		add("The " + synonyms[w] + " came up at the standup")
	}
	x := New()
	x.PutAll(docs)
	related := func(q string) map[string]bool {
		got := map[string]bool{}
		for _, h := range x.Search(Query{Text: q, Shards: []memd.ShardID{shard}, K: 100, Now: now, Explain: true}).Hits {
			for _, ts := range h.Explain.Terms {
				if strings.HasPrefix(ts.Term, "~") {
					got[ts.Term] = true
				}
			}
		}
		return got
	}
	unheld := "banana guitar umbrella violin penguin volcano tulip walrus"
	for _, q := range []string{strings.Join(words, " "), unheld + " " + strings.Join(words, " ")} {
		if got := related(q); !got["~car"] || got["~error"] || got["~doctor"] {
			t.Errorf("%q: relatives scored %v, want ~car, not ~error or ~doctor", q, got)
		}
	}
	if got := related("error doctor " + unheld); !got["~error"] || !got["~doctor"] {
		t.Errorf("two words held: relatives scored %v, want ~error and ~doctor", got)
	}
}
