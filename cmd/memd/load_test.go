package main_test

import (
	"context"
	"testing"

	"github.com/memd/memd/internal/loadbench"
)

// The load `memd bench --load` runs, scaled down for every run of the
// suite: concurrent writers over HTTP on
// several shards while recall and feed subscribers run. No request fails,
// every acknowledged fact is in its shard exactly once, and each subscriber
// receives every commit of its shard in order.
func TestLoad_WritersRecallAndSubscribers(t *testing.T) {
	res, err := loadbench.Run(context.Background(), loadbench.Config{Binary: memdBin, Dir: t.TempDir(),
		Shards: 4, Writers: 4, Facts: 40, Subscribers: 20, Recallers: 2, Paced: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Problems {
		t.Error(p)
	}
	if res.Facts != 4*4*40 {
		t.Errorf("%d facts acknowledged, want %d", res.Facts, 4*4*40)
	}
	// Each subscriber follows one shard: 5 per shard, 160 commits each.
	if want := 20 * 4 * 40; res.FeedEvents != want {
		t.Errorf("subscribers received %d commit events, want %d", res.FeedEvents, want)
	}
	if len(res.Recall) == 0 {
		t.Error("no recall ran during the load")
	}
	// Every event is of a commit a writer was answered for, and is timed.
	if len(res.FeedLatency) != res.FeedEvents {
		t.Errorf("%d of %d feed deliveries timed", len(res.FeedLatency), res.FeedEvents)
	}
	// Then every subscriber follows one shard while one writer goes on.
	if want := 20 * 10; len(res.PacedLatency) != want {
		t.Errorf("%d paced deliveries timed, want %d", len(res.PacedLatency), want)
	}
	t.Logf("%d facts in %v with %d recalls, peak memory %d MB", res.Facts, res.Took, len(res.Recall), res.PeakRSS>>20)
}
