package daemon_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/memd/memd"
)

// Two writers write while subscribers resume from points of the stream
// (and from a date before the first commit: the zero hash, on a shard made
// after the start); each ends with exactly the live stream's suffix.
func TestFeed_ResumesDuringWritesMatchTheLiveStream(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	live, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var wg sync.WaitGroup
	lasts := make(chan string, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var last string
			for i := 0; i < 80; i++ {
				res, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: fmt.Sprintf("fact %d by writer %d", i, w), Tier: memd.TierLog})
				if err != nil {
					t.Error(err)
					return
				}
				last = res.Commit
			}
			lasts <- last
		}(w)
	}
	var seen []string
	type resumed struct {
		since string
		at    int
		sub   memd.Subscription
	}
	var subs []resumed
	for len(seen) < 150 {
		ev := <-live.Events()
		seen = append(seen, ev.Commit)
		if len(seen)%30 == 1 {
			since := ev.Commit
			at := len(seen)
			if len(seen) == 31 {
				since, at = "2000-01-01", 0
			}
			sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: since}})
			if err != nil {
				t.Fatalf("resume from %s: %v", since, err)
			}
			defer sub.Close()
			subs = append(subs, resumed{since, at, sub})
		}
	}
	wg.Wait()
	sh, _ := e.d.Store.Shard(s)
	head, _ := sh.Head()
	for len(seen) == 0 || seen[len(seen)-1] != head.String() {
		seen = append(seen, (<-live.Events()).Commit)
	}
	for _, r := range subs {
		got := commits(collect(t, r.sub, head.String()))
		if want := seen[r.at:]; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("resume from %s: %d events, want %d", r.since, len(got), len(want))
		}
	}
}
