package search

import (
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
