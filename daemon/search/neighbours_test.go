package search

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/memd/memd"
)

// The facts of one chat's day lend to their neighbours in the order they
// were learned, however their commit times bunch: all at one time, at the
// latest time a commit can have (a time git could not read), or apart.
func TestConversationNeighbours_OfOneChatDay(t *testing.T) {
	shard := memd.AgentShard("alice")
	day := memd.DateOf(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	for name, when := range map[string]func(n int) int64{
		"apart":         func(n int) int64 { return 1764500000 + int64(n)*60 },
		"at one time":   func(int) int64 { return 1764500000 },
		"latest time":   func(int) int64 { return math.MaxInt64 },
		"earliest":      func(int) int64 { return math.MinInt64 },
		"two at a time": func(n int) int64 { return 1764500000 + int64(n/2) },
	} {
		t.Run(name, func(t *testing.T) {
			x := New()
			var ids []string
			for n := range 6 {
				text := "fact number " + string(rune('a'+n))
				d := Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: day, Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}, Offset: n * 40, Chat: "c1", When: when(n)}
				x.Put(d)
				ids = append(ids, d.ID)
			}
			for n, id := range ids {
				i, ok := x.lookup(shard, id)
				if !ok {
					t.Fatalf("fact %d not indexed", n)
				}
				var got []string
				x.conversationNeighbours(i, func(j int32, _ int) { got = append(got, x.idOf(j)) })
				var want []string
				for d := 1; d <= contextWindow; d++ {
					if n-d >= 0 {
						want = append(want, ids[n-d])
					}
					if n+d < len(ids) {
						want = append(want, ids[n+d])
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("fact %d: neighbours %q, want %q", n, got, want)
				}
			}
		})
	}
}

// Facts put in an order unlike their conversation's (a person's edit, a
// file read again) still lend to the facts next to them in it.
func TestConversationNeighbours_PutOutOfOrder(t *testing.T) {
	shard := memd.AgentShard("alice")
	order := []int{5, 2, 7, 0, 3, 6, 1, 4}
	for _, chat := range []string{"c1", ""} {
		x := New()
		ids := make([]string, len(order))
		for _, n := range order {
			text := "fact number " + string(rune('a'+n))
			d := novemberDoc(shard, text)
			d.Offset = n * 40
			if chat != "" {
				// The file's order runs the other way: the chat's is by time.
				d.Chat, d.When, d.Offset = chat, 1764500000+int64(n)*60, (len(order)-n)*40
			}
			x.Put(d)
			ids[n] = d.ID
		}
		for n, id := range ids {
			i, ok := x.lookup(shard, id)
			if !ok {
				t.Fatalf("fact %d not indexed", n)
			}
			got := map[string]int{}
			x.conversationNeighbours(i, func(j int32, dist int) { got[x.idOf(j)] = dist })
			want := map[string]int{}
			for d := 1; d <= contextWindow; d++ {
				if n-d >= 0 {
					want[ids[n-d]] = d
				}
				if n+d < len(ids) {
					want[ids[n+d]] = d
				}
			}
			if !maps.Equal(got, want) {
				t.Errorf("chat %q, fact %d: neighbours %v, want %v", chat, n, got, want)
			}
		}
	}
}

// A fact's place in its file is found by its number, without reading
// the offsets of others, both as a first start numbers a shard's facts
// (its files read in order) and as a restart does (its snapshot read,
// highest ranked first: see before).
func TestIndexOf_FileFoundByNumberAtFirstStartAndRestart(t *testing.T) {
	shard := memd.AgentShard("alice")
	var docs []Doc
	for day := 1; day <= 4; day++ {
		date := memd.DateOf(time.Date(2026, 11, day, 0, 0, 0, 0, time.UTC))
		for n := range 30 {
			text := fmt.Sprintf("fact %d of November %d", n, day)
			docs = append(docs, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: date, Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}, Offset: len(docs) * 40})
		}
	}
	first := New()
	first.PutAll(docs)
	var snapshot []Doc
	first.Walk(shard, false, func(d Doc) bool {
		snapshot = append(snapshot, d)
		return true
	})
	restarted := New()
	restarted.PutAll(snapshot)

	for name, x := range map[string]*Engine{"first start": first, "restart": restarted} {
		for _, d := range docs {
			i, ok := x.lookup(shard, d.ID)
			if !ok {
				t.Fatalf("%s: %q not indexed", name, d.Text)
			}
			list := x.files[x.shardFileOf(i)]
			at := indexOf(list, i, func() int {
				t.Fatalf("%s: %q searched for by offset in a list of numbers %v", name, d.Text, list[:min(len(list), 8)])
				return -1
			})
			if at < 0 || list[at] != i {
				t.Fatalf("%s: %q found at %d", name, d.Text, at)
			}
		}
	}
}

// indexOf still finds an entry where the list's order and the numbers'
// part (a fact put again takes a new number), by the list's own order.
func TestIndexOf_WhereTheOrdersPart(t *testing.T) {
	list := []int32{10, 11, 40, 12, 13}
	for at, i := range list {
		got := indexOf(list, i, func() int { return slices.Index(list, i) })
		if got != at {
			t.Errorf("entry %d found at %d, want %d", i, got, at)
		}
	}
	if got := indexOf(list, 99, func() int { return len(list) }); got != -1 {
		t.Errorf("an entry not listed found at %d", got)
	}
}

// Where other facts were numbered between a file's (written while other
// shards were), the place a number suggests holds another entry or none:
// each is still found, in rising and in falling lists, without the
// list's own order searched; an entry not listed is not found.
func TestIndexOf_NumbersWithGaps(t *testing.T) {
	rising := []int32{3, 4, 9, 10, 11, 30, 31, 57}
	falling := slices.Clone(rising)
	slices.Reverse(falling)
	for _, list := range [][]int32{rising, falling} {
		for at, i := range list {
			got := indexOf(list, i, func() int {
				t.Fatalf("%v: %d searched for in the list's order", list, i)
				return -1
			})
			if got != at {
				t.Errorf("%v: entry %d found at %d, want %d", list, i, got, at)
			}
		}
		for _, absent := range []int32{0, 5, 12, 56, 58, 100} {
			if got := indexOf(list, absent, func() int { return len(list) }); got != -1 {
				t.Errorf("%v: entry %d, not listed, found at %d", list, absent, got)
			}
		}
	}
}
