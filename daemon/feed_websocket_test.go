package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
)

// fastImport writes n commits on branch side of the repository in dir, on
// top of from, each rewriting one line of notes/big.md (100 lines of 500
// bytes), with git fast-import: a person's history brought in at once.
func fastImport(t *testing.T, dir, from string, n int) {
	t.Helper()
	fastImportWide(t, dir, from, n, 490)
}

// fastImportWide is fastImport with lines of about width bytes.
func fastImportWide(t *testing.T, dir, from string, n, width int) {
	t.Helper()
	lines := make([]string, 100)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %03d %s", i, strings.Repeat("a", width))
	}
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		lines[i%100] = fmt.Sprintf("line %03d v%04d %s", i%100, i, strings.Repeat(string(rune('b'+i%20)), max(width-6, 1)))
		text := strings.Join(lines, "\n") + "\n"
		msg := fmt.Sprintf("hand edit %d", i)
		fmt.Fprintf(&b, "commit refs/heads/side\ncommitter pat <pat@example.com> %d +0000\ndata %d\n%s\n", 1700000000+i, len(msg), msg)
		if i == 0 {
			fmt.Fprintf(&b, "from %s\n", from)
		}
		fmt.Fprintf(&b, "M 100644 inline notes/big.md\ndata %d\n%s\n", len(text), text)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	// Without these, glibc hands memory back to the kernel and takes it
	// again at every object: 10,000 commits took 14 s of system time.
	cmd.Env = append(cmd.Environ(), "MALLOC_TRIM_THRESHOLD_=1000000000", "MALLOC_TOP_PAD_=268435456")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
}

// "Removing an agent ends its open feeds at once." An agent that resumed
// far back is being sent a long replay when the admin removes it: what it
// receives after the removal must be at most what was already on its way
// (the kernel's buffers), not the rest of the replay.
func TestFeed_RemovingAnAgentEndsItsReplay(t *testing.T) {
	dir := t.TempDir()
	e := startQuietIn(t, dir, daemon.Config{})
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	first := remember(t, alice, "agent/alice", "Before the history", memd.TierProfile, memd.Source{}).Commit
	e.d.Shutdown(ctx)
	sdir := e.d.Store.ShardDir(s)
	fastImport(t, sdir, first, 2000)
	gitIn(t, sdir, "merge", "-q", "--ff-only", "side")
	e2 := startQuietIn(t, dir, daemon.Config{})

	conn := dialFeedNarrow(t, e2, alice.Token, "/v1/feed?shards=agent/alice&since=agent/alice:"+first)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, _, err := conn.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	if err := e2.admin.RemoveAgent(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	n, end := readToEnd(t, conn)
	t.Logf("after the removal: %d more events, then %v", n, end)
	if n > 300 {
		t.Errorf("agent alice was removed, yet its open feed went on to send %d more events of agent/alice (ended: %v)", n, end)
	}
}

// A person's push of a thousand commits into one shard holds up no other
// shard's live events: memd's commit in another shard, made once the
// thousand are being sent, reaches a subscriber of both before they are
// all sent.
func TestFeed_ALargeBatchHoldsUpNoOtherShard(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	busy := memd.AgentShard("alice")
	first := remember(t, alice, "agent/alice", "Before the history", memd.TierProfile, memd.Source{}).Commit
	remember(t, e.admin, "project/other", "Other shard exists", memd.TierLog, memd.Source{})
	sub, err := e.admin.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{busy, memd.ProjectShard("other")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	dir := e.d.Store.ShardDir(busy)
	fastImport(t, dir, first, 1000)
	gitIn(t, dir, "merge", "-q", "--ff-only", "side")
	last := gitIn(t, dir, "rev-parse", "HEAD")
	var other string
	for n := 0; ; n++ {
		ev, ok := <-sub.Events()
		if !ok {
			t.Fatalf("the feed ended after %d events: %v", n, sub.Err())
		}
		switch {
		case n == 0: // the thousand are being sent
			other = remember(t, e.admin, "project/other", "Written while the thousand are sent", memd.TierLog, memd.Source{}).Commit
		case ev.Commit == other:
			t.Logf("project/other's commit came after %d of agent/alice's", n)
			return
		case ev.Commit == last:
			t.Fatalf("project/other's commit waited for all %d of agent/alice's commits", n+1)
		}
	}
}

// aliceWithHistory starts memd with agent alice, whose shard holds her
// first fact and then n commits of a person's (notes of lines of about
// width bytes, one line rewritten a commit), brought in at once; it
// returns the first fact's commit and the shard's folder.
func aliceWithHistory(t *testing.T, cfg daemon.Config, n, width int) (e *env, alice *client.Client, first, sdir string) {
	t.Helper()
	e = startQuietIn(t, t.TempDir(), cfg)
	alice = e.agent(t, "alice")
	first = remember(t, alice, "agent/alice", "Before the history", memd.TierProfile, memd.Source{}).Commit
	sdir = e.d.Store.ShardDir(memd.AgentShard("alice"))
	fastImportWide(t, sdir, first, n, width)
	gitIn(t, sdir, "merge", "-q", "--ff-only", "side")
	return e, alice, first, sdir
}

// dialFeed opens a websocket feed for a token, at path (query included).
func dialFeed(t *testing.T, e *env, token, path string) *websocket.Conn {
	t.Helper()
	return dialFeedWith(t, websocket.DefaultDialer, e, token, path)
}

// dialFeedNarrow is dialFeed with a small kernel receive buffer (64 KB), so
// that what memd has sent but the client not read is little: a test can
// tell what memd sent after a moment from what was on its way.
func dialFeedNarrow(t *testing.T, e *env, token, path string) *websocket.Conn {
	t.Helper()
	return dialFeedWith(t, &websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}, e, token, path)
}

func dialFeedWith(t *testing.T, dialer *websocket.Dialer, e *env, token, path string) *websocket.Conn {
	t.Helper()
	url := strings.Replace(e.d.URL(), "http://", "ws://", 1) + path
	conn, resp, err := dialer.Dial(url, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		var body string
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
		}
		t.Fatalf("dial %s: %v %s", path, err, body)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readToEnd reads a feed until it ends, and returns how many messages it
// read and how it ended.
func readToEnd(t *testing.T, conn *websocket.Conn) (n int, end error) {
	t.Helper()
	for {
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, _, err := conn.ReadMessage(); err != nil {
			return n, err
		}
		n++
	}
}

// readReplay reads n events from a feed and returns their commits, each
// checked to be a replayed commit whose parent is the one before.
func readReplay(t *testing.T, conn *websocket.Conn, after string, n int) []string {
	t.Helper()
	var commits []string
	for len(commits) < n {
		var ev memd.FeedEvent
		conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		if err := conn.ReadJSON(&ev); err != nil {
			t.Fatalf("after %d of %d replayed events: %v", len(commits), n, err)
		}
		if !ev.Replay || ev.Type != memd.EventCommit || ev.Parent != after {
			t.Fatalf("event %d: %s %s (replay %v) with parent %.7s, want the replayed commit after %.7s", len(commits), ev.Type, ev.Commit, ev.Replay, ev.Parent, after)
		}
		after = ev.Commit
		commits = append(commits, ev.Commit)
	}
	return commits
}

// An agent cut off in a person's push of more than 10,000 commits resumes
// from the last one it received: memd replays the rest, however many.
func TestFeed_AResumeFarBackReplaysEveryCommit(t *testing.T) {
	const n = 10_050
	e, alice, first, sdir := aliceWithHistory(t, daemon.Config{}, n, 4)
	head := gitIn(t, sdir, "rev-parse", "HEAD")

	conn := dialFeed(t, e, alice.Token, "/v1/feed?shards=agent/alice&since=agent/alice:"+first)
	got := readReplay(t, conn, first, n)
	if got[n-1] != head {
		t.Errorf("the replay of %d commits ended at %.7s, want the head %.7s", n, got[n-1], head)
	}
}

// Agents reconnecting together resume from the same commit far back: memd
// reads each commit of that history once for all of them, and stops
// reading it for one that leaves.
func TestFeed_FarResumesShareTheReadingAndStopWhenLeft(t *testing.T) {
	const n = 2000
	e, alice, first, _ := aliceWithHistory(t, daemon.Config{}, n, 490)
	path := "/v1/feed?shards=agent/alice&since=agent/alice:" + first

	// One reads ten events and leaves.
	leaving := dialFeed(t, e, alice.Token, path)
	readReplay(t, leaving, first, 10)
	leaving.Close()
	for deadline := time.Now().Add(30 * time.Second); metricLine(metricsOf(t, e), "memd_feed_subscribers") != "memd_feed_subscribers 0"; {
		if time.Now().After(deadline) {
			t.Fatal("the subscriber that left is still registered after 30 s")
		}
		time.Sleep(10 * time.Millisecond) // polling the metric, not a synchronisation
	}
	read := replayedCount(t, e)
	if read >= n/2 {
		t.Errorf("a subscriber that left after 10 events of %d had memd read %d commits of the history", n, read)
	}

	// Two more resume from the same commit, one after the other; each
	// gets every commit, and the history is read once in all.
	for range 2 {
		conn := dialFeed(t, e, alice.Token, path)
		readReplay(t, conn, first, n)
		conn.Close()
	}
	if read := replayedCount(t, e); read != n {
		t.Errorf("three subscribers resumed from the same commit, %d commits back: memd read %d commits of the history, want each once (%d)", n, read, n)
	}
}

// replayedCount is memd_feed_replayed_total.
func replayedCount(t *testing.T, e *env) int {
	t.Helper()
	line := metricLine(metricsOf(t, e), "memd_feed_replayed_total")
	var n int
	if _, err := fmt.Sscanf(line, "memd_feed_replayed_total %d", &n); err != nil {
		t.Fatalf("metric %q: %v", line, err)
	}
	return n
}

// A replay that takes longer than a connection may stay silent goes on to
// its end: memd pings the connection while it replays, as it does live,
// and the client's answers keep it open.
func TestFeed_AReplayLongerThanTheSilenceAllowedGoesOn(t *testing.T) {
	const ping = 400 * time.Millisecond // a connection silent for 1.2 s is dropped
	const n = 2000
	e, alice, first, _ := aliceWithHistory(t, daemon.Config{FeedPing: ping}, n, 490)

	start := time.Now()
	conn := dialFeed(t, e, alice.Token, "/v1/feed?shards=agent/alice&since=agent/alice:"+first)
	readReplay(t, conn, first, n)
	took := time.Since(start)
	if took < 3*ping {
		t.Fatalf("the replay took %v, too short to show anything (want more than %v)", took, 3*ping)
	}
	t.Logf("the replay took %v", took)
}

// An agent cut off for falling behind while memd still sends its replay
// is removed: what it receives after the removal is what was already on
// its way, not the rest of the replay.
func TestFeed_RemovingAnAgentEndsTheReplayOfOneCutOff(t *testing.T) {
	ctx := context.Background()
	e, alice, first, sdir := aliceWithHistory(t, daemon.Config{}, 3000, 490)

	conn := dialFeedNarrow(t, e, alice.Token, "/v1/feed?shards=agent/alice&since=agent/alice:"+first)
	readReplay(t, conn, first, 1)
	// While alice reads nothing more, a person's push of 600 commits
	// overruns her buffer.
	fastImport(t, sdir, gitIn(t, sdir, "rev-parse", "HEAD"), 600)
	gitIn(t, sdir, "merge", "-q", "--ff-only", "side")
	for deadline := time.Now().Add(30 * time.Second); metricLine(metricsOf(t, e), "memd_feed_drops_total") != "memd_feed_drops_total 1"; {
		if time.Now().After(deadline) {
			t.Fatal("alice was not cut off for falling behind")
		}
		time.Sleep(10 * time.Millisecond) // polling the metric, not a synchronisation
	}
	if err := e.admin.RemoveAgent(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	n, end := readToEnd(t, conn)
	if n > 300 || !strings.Contains(fmt.Sprint(end), "removed") {
		t.Errorf("agent alice, cut off for falling behind during her replay, was removed; her feed went on to send %d more events and ended with %v, want a few and the removal", n, end)
	}
}
