package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
)

// feedHeads is the file in a shard's .git where the feed keeps the heads
// it published.
const feedHeads = "memd-feed-heads"

// The feed's batches outlive a restart. A person's pull made memd's M1 a
// merge's second parent (the live feed sent M1, then P and the merge X);
// memd restarts and writes E. Resumed from any commit the feed sent, before
// or after the restart, the replay is what the live feed sent after it: a
// resume from M1 gets P, which the history's order alone puts before M1.
func TestFeed_ResumeAfterARestartGoesByTheBatchesSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before changes the file of heads while memd is down.
		before func(t *testing.T, path string)
	}{
		{"kept whole", func(*testing.T, string) {}},
		{"last write cut short", func(t *testing.T, path string) {
			appendTo(t, path, "3f2a9c") // a crash in the middle of writing a head
		}},
		{"past the heads kept", func(t *testing.T, path string) {
			// Heads of long ago before the test's, up to as many as are
			// kept: the next two commits let go of the oldest half.
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var old strings.Builder
			for i := range 4096 - strings.Count(string(b), "\n") {
				fmt.Fprintf(&old, "%040x\n", i+1)
			}
			if err := os.WriteFile(path, append([]byte(old.String()), b...), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			e := startQuietIn(t, data, daemon.Config{})
			alice, s, base, dir, clone, note := aliceAndAClone(t, e)
			live := memdsCommitPulled(t, alice, s, dir, clone, note)
			if err := e.d.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, ".git", feedHeads)
			tc.before(t, path)

			e2 := startQuietIn(t, data, daemon.Config{})
			alice.BaseURL = e2.d.URL()
			resumesReplayTheLiveSuffix(t, alice, s, base, live)

			sub, err := alice.Subscribe(context.Background(), memd.FeedQuery{Shards: []memd.ShardID{s}})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			for _, text := range []string{"After the restart", "And one more"} {
				c := remember(t, alice, "agent/alice", text, memd.TierLog, memd.Source{}).Commit
				collect(t, sub, c)
				live = append(live, c)
			}
			resumesReplayTheLiveSuffix(t, alice, s, base, live)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "\n"); n > 4097 || !strings.HasSuffix(string(b), live[len(live)-1]+"\n") {
				t.Errorf("the file of heads holds %d lines, ending %q; want at most 4,097, ending with the head", n, b[max(0, len(b)-42):])
			}
		})
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// A person resets main while memd is down, past commits the feed sent,
// and may have git prune them: a resume from one of those is refused, as
// it would be live; one from a commit still on main goes on from there.
func TestFeed_ResumeAfterAResetWhileDown(t *testing.T) {
	for _, pruned := range []bool{false, true} {
		t.Run(fmt.Sprintf("pruned=%v", pruned), func(t *testing.T) {
			data := t.TempDir()
			e := startQuietIn(t, data, daemon.Config{})
			alice, s, base, dir, _, _ := aliceAndAClone(t, e)
			gone := sentThenStopped(t, e, alice, s, "Reset away")[0]
			gitIn(t, dir, "reset", "-q", "--hard", base)
			if pruned {
				gitIn(t, dir, "reflog", "expire", "--expire=now", "--all")
				gitIn(t, dir, "gc", "-q", "--prune=now")
			}

			e2 := startQuietIn(t, data, daemon.Config{})
			alice.BaseURL = e2.d.URL()
			_, err := alice.Subscribe(context.Background(), memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: gone}})
			wantCode(t, err, memd.ENOTFOUND)
			next := remember(t, alice, "agent/alice", "After the reset", memd.TierLog, memd.Source{}).Commit
			resumed, err := alice.Subscribe(context.Background(), memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: base}})
			if err != nil {
				t.Fatal(err)
			}
			defer resumed.Close()
			if got := commits(collect(t, resumed, next)); len(got) != 1 || got[0] != next {
				t.Errorf("resume from the commit reset to: got %v, want %.7s alone", short7(got), next)
			}
		})
	}
}

// sentThenStopped has alice remember each text in her shard s, each
// commit taken from the live feed, then stops the daemon of e; it returns
// the commits.
func sentThenStopped(t *testing.T, e *env, alice *client.Client, s memd.ShardID, texts ...string) []string {
	t.Helper()
	sub, err := alice.Subscribe(context.Background(), memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var sent []string
	for _, text := range texts {
		c := remember(t, alice, "agent/alice", text, memd.TierLog, memd.Source{}).Commit
		collect(t, sub, c)
		sent = append(sent, c)
	}
	if err := e.d.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sent
}

// A file of heads changed by hand to name an object that is not a commit
// (a commit's tree) costs a resume from before it only the batches: the
// replay is the history's from there, not an error.
func TestFeed_AHeadThatIsNoCommitCostsOnlyTheBatches(t *testing.T) {
	data := t.TempDir()
	e := startQuietIn(t, data, daemon.Config{})
	alice, s, base, dir, _, _ := aliceAndAClone(t, e)
	live := sentThenStopped(t, e, alice, s, "One", "Two", "Three")
	path := filepath.Join(dir, ".git", feedHeads)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	tree := gitIn(t, dir, "rev-parse", live[0]+"^{tree}")
	edited := strings.Join(lines[:2], "") + tree + "\n" + strings.Join(lines[2:], "")
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	e2 := startQuietIn(t, data, daemon.Config{})
	alice.BaseURL = e2.d.URL()
	resumesReplayTheLiveSuffix(t, alice, s, base, live)
}

// A reset by hand while memd runs, then the pulled merge, then two
// restarts in a row with no resume between: each resume from a commit the
// live feed sent after the reset replays what it sent after it.
func TestFeed_ResumeAfterAResetThenTwoRestarts(t *testing.T) {
	data := t.TempDir()
	e := startQuietIn(t, data, daemon.Config{})
	alice, s, base, dir, clone, note := aliceAndAClone(t, e)
	sub, err := alice.Subscribe(context.Background(), memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	gone := remember(t, alice, "agent/alice", "Reset away", memd.TierLog, memd.Source{}).Commit
	collect(t, sub, gone)
	gitIn(t, dir, "reset", "-q", "--hard", base)
	waitForReset(t, sub)
	sub.Close()
	live := memdsCommitPulled(t, alice, s, dir, clone, note)
	for range 2 {
		if err := e.d.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		e = startQuietIn(t, data, daemon.Config{})
	}
	alice.BaseURL = e.d.URL()
	resumesReplayTheLiveSuffix(t, alice, s, base, live)
}

// waitForReset reads events until a reset, failing after a deadline.
func waitForReset(t *testing.T, sub memd.Subscription) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatal("the feed closed before a reset")
			}
			if ev.Type == memd.EventReset {
				return
			}
		case <-deadline:
			t.Fatal("no reset event")
		}
	}
}
