package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Recall returns the same hits whatever order facts were indexed in (a
// first start, a restart's snapshot, facts put one by one as they are
// learned), over random stores with many ties, tiers, chats and words of
// like meaning, with and without explain.
func TestSearch_HitsTheSameInAnyIndexOrder(t *testing.T) {
	vocab := []string{"invoice", "paid", "bill", "payment", "vendor", "car", "automobile", "buy", "purchase", "bought", "meeting", "postgres", "cluster", "database", "deploy"}
	tiers := []memd.Tier{memd.TierLog, memd.TierNote, memd.TierEpisode, memd.TierProfile}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	queries := []string{"invoice paid", "invoice", "postgres cluster", "buy car", "payment", "paid vendor", "meeting database deploy", "purchase automobile"}
	bad := 0
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 77))
		n := 300 + rng.IntN(1200)
		days := 1 + rng.IntN(60)
		var docs []Doc
		offsets := map[string]int{}
		for i := range n {
			shard := []memd.ShardID{memd.AgentShard("alice"), memd.UserShard("pat")}[rng.IntN(2)]
			d := start.AddDate(0, 0, rng.IntN(days))
			tier := tiers[0]
			if rng.IntN(4) == 0 {
				tier = tiers[rng.IntN(len(tiers))]
			}
			// Few shapes of text: many facts tie exactly.
			tmpl := rng.IntN(6)
			var ws []string
			for w := range 2 + tmpl%3 {
				ws = append(ws, vocab[(tmpl*5+w*3)%len(vocab)])
			}
			text := strings.Join(ws, " ") + fmt.Sprintf(" item%05d", i)
			file := "log/" + memd.DateOf(d).Month() + ".md"
			if tier == memd.TierProfile {
				file = "profile.md"
			}
			key := shard.String() + file
			offsets[key] += 40
			doc := Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: memd.DateOf(d), Tier: tier, Text: text, File: file}, Offset: offsets[key]}
			if rng.IntN(3) == 0 {
				doc.Chat = fmt.Sprintf("chat%d", rng.IntN(3))
				doc.When = d.Unix() + int64(i)
			}
			docs = append(docs, doc)
		}
		orders := map[string][]Doc{"given": docs}
		r := slices.Clone(docs)
		slices.Reverse(r)
		orders["reversed"] = r
		s := slices.Clone(docs)
		rng.Shuffle(len(s), func(a, b int) { s[a], s[b] = s[b], s[a] })
		orders["shuffled"] = s
		// Put one by one too, as facts learned are, shuffled.
		engines := map[string]*Engine{}
		for name, ds := range orders {
			x := New()
			x.PutAll(ds)
			engines[name] = x
		}
		x1 := New()
		for _, d := range s {
			x1.Put(d)
		}
		engines["one by one"] = x1
		names := []string{"given", "reversed", "shuffled", "one by one"}
		for _, q := range queries {
			for _, k := range []int{5, 20, 50} {
				var want []string
				for _, explain := range []bool{false, true} {
					for _, name := range names {
						res := engines[name].Search(Query{Text: q, Shards: []memd.ShardID{memd.AgentShard("alice"), memd.UserShard("pat")}, K: k, Now: now, Explain: explain})
						var got []string
						for _, h := range res.Hits {
							got = append(got, h.Text)
						}
						if want == nil {
							want = got
						} else if !slices.Equal(got, want) {
							bad++
							if bad < 6 {
								t.Errorf("seed %d (n %d, days %d) %q k %d explain %v: %s differs from given\n got %v\nwant %v", seed, n, days, q, k, explain, name, got, want)
							}
						}
					}
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d differences", bad)
	}
}

// A shard's facts walk in one order whatever order they were indexed in,
// ties of one day split over two files included (memd starts a day's
// file when the month's grows large): by file, and in one file the later
// line first. An order that went by line within a file and by ID across
// files ran in circles, and sorting left such a day in any order.
func TestWalk_TiesTheSameInAnyIndexOrder(t *testing.T) {
	shard := memd.AgentShard("alice")
	day := memd.DateOf(time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC))
	var docs []Doc
	offsets := map[string]int{}
	for n := range 600 {
		file := []string{"log/2026-11.md", "log/2026-11/14.md"}[n%2]
		text := fmt.Sprintf("Checked backup %d", n)
		docs = append(docs, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: day, Tier: memd.TierLog, Text: text, File: file}, Offset: offsets[file]})
		offsets[file] += 40
	}
	walk := func(x *Engine) []string {
		var out []string
		x.Walk(shard, false, func(d Doc) bool {
			out = append(out, fmt.Sprintf("%s@%d", d.File, d.Offset))
			return true
		})
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var want []string
	for _, order := range []string{"in order", "backwards", "shuffled", "one by one"} {
		in := slices.Clone(docs)
		switch order {
		case "backwards":
			slices.Reverse(in)
		case "shuffled":
			rng.Shuffle(len(in), func(a, b int) { in[a], in[b] = in[b], in[a] })
		}
		x := New()
		if order == "one by one" {
			for _, d := range in {
				x.Put(d)
			}
		} else {
			x.PutAll(in)
		}
		got := walk(x)
		if want == nil {
			want = got
			if first, last := want[0], want[len(want)-1]; first != "log/2026-11.md@11960" || last != "log/2026-11/14.md@0" {
				t.Fatalf("walked from %s to %s, want from the month's last line to the day file's first", first, last)
			}
		} else if !slices.Equal(got, want) {
			t.Fatalf("indexed %s: walked %v…, want %v…", order, got[:6], want[:6])
		}
	}
}
