package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/memd/memd"
)

// BenchmarkFeed100 measures commit-to-delivery with 100 websocket
// subscribers while one more subscriber has stopped reading: latency is
// counted from the moment a write is sent until each subscriber has its
// event, so it includes the write itself. Commits come at a steady 200 a
// second (paced) or as fast as four writers can make them (flat out).
func BenchmarkFeed100(b *testing.B) {
	b.Run("paced", func(b *testing.B) { benchFeed(b, 5*time.Millisecond) })
	b.Run("flat-out", func(b *testing.B) { benchFeed(b, 0) })
}

func benchFeed(b *testing.B, pace time.Duration) {
	e := startFeed(&testing.T{})
	defer e.d.Shutdown(context.Background())
	ctx := context.Background()
	const subscribers = 100
	n := max(b.N, 1000)

	sent := make(map[string]time.Time, n)
	var sentMu sync.Mutex
	var lat []time.Duration
	var latMu sync.Mutex
	var done sync.WaitGroup
	for i := 0; i < subscribers; i++ {
		sub, err := e.admin.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{memd.ProjectShard("bench")}})
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Close()
		done.Add(1)
		go func() {
			defer done.Done()
			var mine []time.Duration
			for got := 0; got < n; got++ {
				ev, ok := <-sub.Events()
				if !ok {
					b.Errorf("subscriber ended after %d events: %v", got, sub.Err())
					return
				}
				now := time.Now()
				sentMu.Lock()
				t0, ok := sent[ev.Commit]
				sentMu.Unlock()
				if ok {
					mine = append(mine, now.Sub(t0))
				}
			}
			latMu.Lock()
			lat = append(lat, mine...)
			latMu.Unlock()
		}()
	}
	// A subscriber that connects and never reads, with a small receive
	// buffer so that it falls behind quickly.
	token := e.admin.Token
	dialer := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4096)
		}
		return c, err
	}}
	stalled, _, err := dialer.Dial(strings.Replace(e.d.URL(), "http", "ws", 1)+"/v1/feed?shards=project/bench", http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		b.Fatal(err)
	}
	defer stalled.Close()

	b.ResetTimer()
	start := time.Now()
	writers := 4
	if pace > 0 {
		writers = 1
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			next := time.Now()
			for i := w; i < n; i += writers {
				if pace > 0 {
					time.Sleep(time.Until(next))
					next = next.Add(pace)
				}
				t0 := time.Now()
				res, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: memd.ProjectShard("bench"),
					Text: fmt.Sprintf("fact %d with some words to make the event a realistic size for a feed", i), Tier: memd.TierLog})
				if err != nil {
					b.Error(err)
					return
				}
				sentMu.Lock()
				sent[res.Commit] = t0
				sentMu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	done.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(p/100*float64(len(lat)-1))] }
	resp, err := http.Get(e.d.URL() + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	drops := "0"
	for _, line := range strings.Split(string(metrics), "\n") {
		if v, ok := strings.CutPrefix(line, "memd_feed_drops_total "); ok {
			drops = v
		}
	}
	b.ReportMetric(float64(pct(50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "deliveries/s")
	b.Logf("%d commits to %d subscribers: commit-to-delivery p50 %s, p99 %s; stalled subscribers cut off: %s",
		n, subscribers, pct(50), pct(99), drops)
}
