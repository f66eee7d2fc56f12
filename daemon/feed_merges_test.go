package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
)

// A person clones the shard, commits in the clone, and meanwhile memd
// writes M1 on main (sent live). The person then runs `git pull` (a merge
// whose first parent is their own commit, M1 its second) and the result
// reaches main (here fetched and fast-forwarded, as a push would). The live
// feed sent M1, then the person's P, then the merge X. A subscriber that
// took M1 (or P) and resumes from it must get what followed it.
func TestFeed_ResumeAfterAPullThatMadeMemdsCommitASecondParent(t *testing.T) {
	alice, s, base, dir, clone, note := aliceAndAClone(t, startFeed(t))
	live := memdsCommitPulled(t, alice, s, dir, clone, note)
	resumesReplayTheLiveSuffix(t, alice, s, base, live)
}

// memdsCommitPulled makes the history of the test above: the person's
// commit P in the clone, memd's M1 on main, then the person's pull (X)
// brought into main. It returns what the live feed sent: M1, P, X.
func memdsCommitPulled(t *testing.T, alice *client.Client, s memd.ShardID, dir, clone string, note func(name, text string)) []string {
	t.Helper()
	ctx := context.Background()
	note("pat.md", "by hand")
	p := gitIn(t, clone, "rev-parse", "HEAD")
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	m1 := remember(t, alice, "agent/alice", "Written by memd meanwhile", memd.TierProfile, memd.Source{}).Commit
	collect(t, sub, m1)

	gitIn(t, clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
	x := gitIn(t, clone, "rev-parse", "HEAD")
	if h := pushedToMain(t, dir, clone); h != x {
		t.Fatalf("head %s, want %s", h, x)
	}
	live := append([]string{m1}, commits(collect(t, sub, x))...)
	t.Logf("live: %v (M1 %.7s P %.7s X %.7s)", short7(live), m1, p, x)
	return live
}

// One ref update brings in an octopus merge of three branches and a
// criss-cross (a branch that merged main in, then was merged back); each
// since the live feed sent replays its live suffix.
func TestFeed_ResumeAcrossOctopusAndCrissCrossMerges(t *testing.T) {
	ctx := context.Background()
	alice, s, base, dir, clone, note := aliceAndAClone(t, startFeed(t))
	for _, b := range []string{"a", "b", "c"} {
		gitIn(t, clone, "checkout", "-q", "-b", b, "main")
		note(b+".md", "one")
	}
	gitIn(t, clone, "checkout", "-q", "main")
	note("main.md", "before octopus")
	gitIn(t, clone, "merge", "-q", "--no-edit", "a", "b", "c")
	// criss-cross: branch d merges main in, main moves, d merged back
	gitIn(t, clone, "checkout", "-q", "-b", "d", "main~1")
	note("d.md", "one")
	gitIn(t, clone, "merge", "-q", "--no-edit", "main")
	note("d.md", "two")
	gitIn(t, clone, "checkout", "-q", "main")
	note("main.md", "after octopus")
	gitIn(t, clone, "merge", "-q", "--no-edit", "d")
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	head := pushedToMain(t, dir, clone)
	live := commits(collect(t, sub, head))
	resumesReplayTheLiveSuffix(t, alice, s, base, live)
}

// since = head: nothing replayed, the next live commit follows.
func TestFeed_ResumeFromTheHead(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	remember(t, alice, "agent/alice", "One", memd.TierProfile, memd.Source{})
	sub0, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	h := remember(t, alice, "agent/alice", "Two", memd.TierProfile, memd.Source{}).Commit
	collect(t, sub0, h)
	sub0.Close()
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: h}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	n := remember(t, alice, "agent/alice", "Three", memd.TierProfile, memd.Source{}).Commit
	if got := commits(collect(t, sub, n)); len(got) != 1 {
		t.Errorf("since=head then one commit: got %v", short7(got))
	}
}

// resumesReplayTheLiveSuffix resumes a shard's feed after base and after
// each commit the live feed sent (live, ending at the head), and checks
// that each replay is what the live feed sent after that commit.
func resumesReplayTheLiveSuffix(t *testing.T, c *client.Client, s memd.ShardID, base string, live []string) {
	t.Helper()
	head := live[len(live)-1]
	for i, since := range append([]string{base}, live[:len(live)-1]...) {
		resumed, err := c.Subscribe(context.Background(), memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: since}})
		if err != nil {
			t.Errorf("resume after %.7s: %v", since, err)
			continue
		}
		got := commits(collect(t, resumed, head))
		resumed.Close()
		if want := live[i:]; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("resume after %.7s replayed %v, want what the live feed sent after it: %v", since, short7(got), short7(want))
		}
	}
}

// pushedToMain brings the clone's main into the shard in dir, as the
// person's push would, and returns the shard's new head.
func pushedToMain(t *testing.T, dir, clone string) string {
	t.Helper()
	gitIn(t, dir, "fetch", "-q", clone, "main:incoming")
	gitIn(t, dir, "merge", "-q", "--ff-only", "incoming")
	return gitIn(t, dir, "rev-parse", "HEAD")
}

// aliceAndAClone has alice, an agent of the daemon of e, write one fact
// (base), and clones alice's shard for a person, pat, to commit in: note
// commits a note there.
func aliceAndAClone(t *testing.T, e *env) (alice *client.Client, s memd.ShardID, base, dir, clone string, note func(name, text string)) {
	t.Helper()
	alice = e.agent(t, "alice")
	s = memd.AgentShard("alice")
	base = remember(t, alice, "agent/alice", "Base fact", memd.TierProfile, memd.Source{}).Commit
	dir = e.d.Store.ShardDir(s)
	clone = t.TempDir()
	gitIn(t, clone, "clone", "-q", dir, ".")
	gitIn(t, clone, "config", "user.name", "pat")
	gitIn(t, clone, "config", "user.email", "pat@example.com")
	note = func(name, text string) {
		os.MkdirAll(filepath.Join(clone, "notes"), 0o755)
		os.WriteFile(filepath.Join(clone, "notes", name), []byte("# "+name+"\n\n"+text+"\n"), 0o644)
		gitIn(t, clone, "add", "notes")
		gitIn(t, clone, "commit", "-qm", name+": "+text)
	}
	return alice, s, base, dir, clone, note
}
