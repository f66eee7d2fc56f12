package daemon_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
)

// startFeed starts a daemon that checks for git commits every 20ms.
func startFeed(t *testing.T) *env {
	t.Helper()
	return startQuiet(t, daemon.Config{})
}

// startQuiet starts a daemon on cfg in a fresh data directory on loopback,
// without fsync, checking every shard for git commits every 20ms unless
// cfg says otherwise, logging nothing.
func startQuiet(t *testing.T, cfg daemon.Config) *env {
	t.Helper()
	return startQuietIn(t, t.TempDir(), cfg)
}

// startQuietIn is startQuiet on a data directory that may hold a store
// already.
func startQuietIn(t *testing.T, dir string, cfg daemon.Config) *env {
	t.Helper()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 20 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return startIn(t, dir, cfg)
}

// collect reads events until one for commit last arrives, failing after a
// deadline.
func collect(t *testing.T, sub memd.Subscription, last string) []memd.FeedEvent {
	t.Helper()
	var got []memd.FeedEvent
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("feed ended after %d events: %v", len(got), sub.Err())
			}
			got = append(got, ev)
			if ev.Commit == last {
				return got
			}
		case <-deadline:
			t.Fatalf("no event for %s after %d events", last, len(got))
		}
	}
}

func commits(evs []memd.FeedEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Commit)
	}
	return out
}

// Three subscribers; one drops mid-stream and resumes with since, and ends
// with exactly the commits of one that stayed connected.
func TestFeed_ResumeWithSinceHasNoGapAndNoDuplicate(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	q := memd.FeedQuery{Shards: []memd.ShardID{s}}
	stay, err := alice.Subscribe(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer stay.Close()
	other, err := e.admin.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	drop, err := alice.Subscribe(ctx, q)
	if err != nil {
		t.Fatal(err)
	}

	const n = 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := make(map[string]bool) // commits the writers were answered with
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < n/3; i++ {
				res, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: fmt.Sprintf("fact %d by writer %d", i, w), Tier: memd.TierLog})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[res.Commit] = true
				mu.Unlock()
			}
		}(w)
	}
	// The dropping client reads a third of the stream, then hangs up.
	var first []memd.FeedEvent
	for len(first) < n/3 {
		first = append(first, <-drop.Events())
	}
	drop.Close()
	wg.Wait()
	head, _ := e.d.Store.Shard(s)
	h, _ := head.Head()
	// Writers record their answers in no particular order; the newest
	// commit is HEAD, and it must be one of theirs.
	last := h.String()
	if !acked[last] {
		t.Fatalf("head %s is not a commit the writers were answered with", h)
	}

	resumed, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: q.Shards, Since: map[memd.ShardID]string{s: first[len(first)-1].Commit}})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	rest := collect(t, resumed, last)
	want := commits(collect(t, stay, last))
	got := append(commits(first), commits(rest)...)
	if len(want) != n {
		t.Fatalf("the connected subscriber saw %d commits, want %d", len(want), n)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("resumed sequence differs:\n got %v\nwant %v", got, want)
	}
	// Every commit was made before the resume, so all of them are replayed
	// from history.
	for _, ev := range rest {
		if !ev.Replay {
			t.Errorf("commit %s was made before the resume but not marked as replayed", ev.Commit)
		}
	}
	// The admin's feed of every shard saw the same commits in order.
	if all := commits(collect(t, other, last)); strings.Join(all, ",") != strings.Join(want, ",") {
		t.Errorf("admin feed differs: %d commits", len(all))
	}
	ev := rest[len(rest)-1]
	if ev.Shard != s || ev.Author.Name != "alice" || ev.Provenance.Op != memd.OpRemember || len(ev.Changes) != 1 || ev.Changes[0].Op != "+" || ev.Parent == "" {
		t.Errorf("event: %+v", ev)
	}
}

func TestFeed_GitCommitsReachSubscribers(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	remember(t, alice, "agent/alice", "Lives in Austin", memd.TierProfile, memd.Source{})
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	dir := e.d.Store.ShardDir(memd.AgentShard("alice"))
	p := filepath.Join(dir, "profile.md")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "Austin", "Lisbon", 1)), 0o644)
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	os.WriteFile(filepath.Join(dir, "notes", "trip.md"), []byte("# Trip\n\nFlights booked.\n"), 0o644)
	gitIn(t, dir, "add", "notes")
	gitIn(t, dir, "commit", "-qam", "moved, and a note")
	sh, _ := e.d.Store.Shard(memd.AgentShard("alice"))
	head, _ := sh.Head()
	evs := collect(t, sub, head.String())
	ev := evs[len(evs)-1]
	if ev.Author.Name != "pat" || ev.Provenance.LearnedBy != memd.LearnedPerson || len(ev.Changes) != 2 {
		t.Fatalf("event of a git commit: %+v", ev)
	}
	if ev.Changes[0].Op != "-" || ev.Changes[0].Fact.Text != "Lives in Austin" || ev.Changes[1].Op != "+" || ev.Changes[1].Fact.Text != "Lives in Lisbon" {
		t.Errorf("changes: %+v", ev.Changes)
	}
	if len(ev.Notes) != 1 || ev.Notes[0].Path != "notes/trip.md" || ev.Notes[0].Before != "" || len(ev.Notes[0].After) != 64 || !strings.Contains(ev.Notes[0].Diff, "+Flights booked.") {
		t.Errorf("notes: %+v", ev.Notes)
	}
}

func TestFeed_OnlyWhatTheCallerMayRead(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	bob := e.agent(t, "bob")
	alice.ChatKind = memd.ChatGroup
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	e.admin.ChatKind = memd.ChatDirect
	remember(t, e.admin, "user/pat", "Pat's home address", memd.TierProfile, memd.Source{})
	remember(t, bob, "agent/bob", "Bob's secret", memd.TierProfile, memd.Source{})
	own := remember(t, alice, "agent/alice", "Alice's own fact", memd.TierProfile, memd.Source{})
	for _, ev := range collect(t, sub, own.Commit) {
		if ev.Shard != memd.AgentShard("alice") {
			t.Errorf("alice in a group chat received %s: %+v", ev.Shard, ev.Changes)
		}
	}
	// Naming a shard it may not read is refused before the upgrade.
	_, err = alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{memd.UserShard("pat")}})
	wantCode(t, err, memd.EFORBIDDEN)
	_, err = alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{memd.AgentShard("bob")}})
	wantCode(t, err, memd.EFORBIDDEN)
	if memd.ErrorRule(err) != "agent-own-shard" {
		t.Errorf("rule: %q", memd.ErrorRule(err))
	}
	// A commit that is not on main is a clear error.
	_, err = alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{memd.AgentShard("alice")}, Since: map[memd.ShardID]string{memd.AgentShard("alice"): "deadbeefdeadbeef"}})
	wantCode(t, err, memd.ENOTFOUND)
}

// Which shards recall, the memory section and the feed read is the rules
// of access's to say: the service called without them refuses, where it
// once searched nothing and answered as if memory were empty.
func TestService_ReadsNothingWithoutTheRules(t *testing.T) {
	e := startFeed(t)
	ctx := memd.NewContext(context.Background(), memd.Caller{Admin: true})
	if _, err := e.d.Service.Recall(ctx, memd.RecallQuery{Q: "anything"}); memd.ErrorCode(err) != memd.EINTERNAL {
		t.Errorf("Recall without the rules: %v", err)
	}
	if _, err := e.d.Service.Context(ctx, memd.ContextQuery{}); memd.ErrorCode(err) != memd.EINTERNAL {
		t.Errorf("Context without the rules: %v", err)
	}
	if _, err := e.d.Service.Subscribe(ctx, memd.FeedQuery{}); memd.ErrorCode(err) != memd.EINTERNAL {
		t.Errorf("Subscribe without the rules: %v", err)
	}
}

// A subscriber that stops reading is cut off with a reason; the others do
// not slow down and miss nothing.
func TestFeed_StalledSubscriberIsCutOff(t *testing.T) {
	e := startFeed(t)
	ctx := memd.NewContext(context.Background(), memd.Caller{Admin: true})
	wants := func(memd.ShardID) bool { return true }
	stalled, err := e.d.Service.SubscribeAs(ctx, memd.Following{Wants: wants}, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := e.admin.Subscribe(context.Background(), memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	n := 600 // more than a subscriber's buffer
	var last string
	for i := 0; i < n; i++ {
		res := remember(t, e.admin, "project/busy", fmt.Sprintf("busy fact %d", i), memd.TierLog, memd.Source{})
		last = res.Commit
	}
	select {
	case <-stalled.Done():
		if stalled.Err() != memd.ErrOverrun {
			t.Errorf("cut off because %v", stalled.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled subscriber was not cut off")
	}
	if got := collect(t, reader, last); len(got) != n {
		t.Errorf("the reading subscriber got %d events, want %d", len(got), n)
	}
	resp, err := http.Get(e.d.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"memd_feed_drops_total 1", "memd_feed_subscribers 1", `memd_commits_total{op="remember"} 600`, "memd_write_seconds_count 600"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// A browser page from another origin cannot open the feed, even with a
// token; one from the daemon's own origin can.
func TestFeed_RefusesOtherOrigins(t *testing.T) {
	e := startFeed(t)
	url := strings.Replace(e.d.URL(), "http", "ws", 1) + "/v1/feed"
	h := http.Header{"Authorization": {"Bearer " + e.admin.Token}, "Origin": {"https://evil.example"}}
	if c, resp, err := websocket.DefaultDialer.Dial(url, h); err == nil {
		c.Close()
		t.Fatal("a cross-origin page opened the feed")
	} else if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin: %v %v", resp, err)
	}
	h.Set("Origin", e.d.URL())
	c, _, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		t.Fatalf("same origin: %v", err)
	}
	c.Close()
}

// Removing an agent ends its open feeds at once: nothing written after
// reaches it, and the admin's feed goes on.
func TestFeed_RemovedAgentIsCutOff(t *testing.T) {
	e := startFeed(t)
	carol := e.agent(t, "carol")
	ctx := context.Background()
	sub, err := carol.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	admin, err := e.admin.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	remember(t, e.admin, "agent/carol", "Before the removal", memd.TierLog, memd.Source{})
	if ev := <-sub.Events(); ev.Shard != memd.AgentShard("carol") {
		t.Fatalf("event %+v", ev)
	}
	<-admin.Events()
	if err := e.admin.RemoveAgent(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	remember(t, e.admin, "agent/carol", "After the removal", memd.TierLog, memd.Source{})
	if ev := <-admin.Events(); len(ev.Changes) == 0 || ev.Changes[0].Fact.Text != "After the removal" {
		t.Fatalf("the admin's feed: %+v", ev)
	}
	select {
	case ev, ok := <-sub.Events():
		if ok {
			t.Fatalf("a removed agent's feed still streams: %+v", ev)
		}
		<-sub.Done() // the events end as the feed is cut off
	case <-sub.Done():
	}
	if memd.ErrorCode(sub.Err()) != memd.EUNAUTHORIZED && !strings.Contains(fmt.Sprint(sub.Err()), "removed") {
		t.Errorf("cut off with %v", sub.Err())
	}
	// A subscription carol's token opened just before the removal, which
	// registers only after it (a long replay in between), is refused too.
	late, err := e.d.Service.SubscribeAs(ctx, memd.Following{Agent: "carol", Wants: func(memd.ShardID) bool { return true }}, memd.FeedQuery{})
	if err == nil {
		late.Close()
	}
	wantCode(t, err, memd.EUNAUTHORIZED)
	if n := e.d.Service.Feed.Subscribers(); n != 1 {
		t.Errorf("%d subscribers, want the admin's alone", n)
	}
}

// Removing an agent ends its MCP session at once: memd's MCP endpoint keeps
// no session of its own (each call is authenticated anew), so the next
// call of a client connected before the removal is refused.
func TestMCP_RemovedAgentIsCutOff(t *testing.T) {
	e := startFeed(t)
	token := e.agent(t, "carol").Token
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: e.d.URL() + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "carol", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "Carol was here"}})
	}
	if res, err := call(); err != nil || res.IsError {
		t.Fatalf("before the removal: %v %+v", err, res)
	}
	if err := e.admin.RemoveAgent(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	res, err := call()
	if err == nil && !res.IsError {
		t.Fatalf("a removed agent's MCP session still works: %+v", res)
	}
	t.Logf("refused with %v %v", err, res)
}

// A person's git commit reaches the feed through the watch on the shard's
// refs, with no poll to find it: the poll here comes once an hour.
func TestFeed_GitCommitSeenWithoutPolling(t *testing.T) {
	e := startQuiet(t, daemon.Config{PollInterval: time.Hour})
	alice := e.agent(t, "alice")
	ctx := context.Background()
	remember(t, alice, "agent/alice", "Made by memd", memd.TierLog, memd.Source{})
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	dir := e.d.Store.ShardDir(memd.AgentShard("alice"))
	date := memd.DateOf(time.Now())
	f, err := os.OpenFile(filepath.Join(dir, "log", date.Month()+".md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "- (%s) Added by hand\n", date)
	f.Close()
	gitIn(t, dir, "commit", "-qam", "by hand")
	head := gitIn(t, dir, "rev-parse", "HEAD")
	got := collect(t, sub, head)
	if ev := got[len(got)-1]; len(ev.Changes) != 1 || ev.Changes[0].Fact.Text != "Added by hand" {
		t.Errorf("event %+v", ev)
	}
}
