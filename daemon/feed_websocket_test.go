package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/memd/memd"
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

	dialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	url := strings.Replace(e2.d.URL(), "http://", "ws://", 1) + "/v1/feed?shards=agent/alice&since=agent/alice:" + first
	conn, _, err := dialer.Dial(url, http.Header{"Authorization": {"Bearer " + alice.Token}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, _, err := conn.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	if err := e2.admin.RemoveAgent(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	n := 0
	var end error
	for {
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, _, err := conn.ReadMessage(); err != nil {
			end = err
			break
		}
		n++
	}
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
