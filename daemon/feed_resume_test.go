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
	"github.com/memd/memd/daemon"
)

// eventsUntil reads events until one for commit last arrives (or the feed
// ends, or the deadline passes), and returns what it read and whether last
// came.
func eventsUntil(sub memd.Subscription, last string, wait time.Duration) ([]memd.FeedEvent, bool) {
	var got []memd.FeedEvent
	deadline := time.After(wait)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return got, false
			}
			got = append(got, ev)
			if ev.Commit == last {
				return got, true
			}
		case <-deadline:
			return got, false
		}
	}
}

func short7(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		if len(h) > 7 {
			h = h[:7]
		}
		out[i] = h
	}
	return out
}

// A person merges a side branch into main by hand while memd wrote on main
// meanwhile. The live feed sends B (memd's), then the branch's R1, R2, then
// the merge M. A subscriber cut off after R1 resumes with since=R1, "the
// last commit it took", as the README says: it must get R2 and M, and not B
// again.
func TestFeed_ResumeFromAMergedBranchsCommitReplaysWhatFollowedIt(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	remember(t, alice, "agent/alice", "Base fact", memd.TierProfile, memd.Source{})
	dir := e.d.Store.ShardDir(s)

	// The side branch, made in a clone (the shard's working tree stays on main).
	clone := t.TempDir()
	gitIn(t, clone, "clone", "-q", dir, ".")
	os.MkdirAll(filepath.Join(clone, "notes"), 0o755)
	os.WriteFile(filepath.Join(clone, "notes", "side.md"), []byte("# Side\n\nfirst\n"), 0o644)
	gitIn(t, clone, "add", "notes")
	gitIn(t, clone, "commit", "-qm", "side one")
	r1 := gitIn(t, clone, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(clone, "notes", "side.md"), []byte("# Side\n\nfirst\nsecond\n"), 0o644)
	gitIn(t, clone, "commit", "-qam", "side two")
	r2 := gitIn(t, clone, "rev-parse", "HEAD")

	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	b := remember(t, alice, "agent/alice", "Written on main meanwhile", memd.TierProfile, memd.Source{}).Commit
	if evs := collect(t, sub, b); len(evs) != 1 {
		t.Fatalf("before the merge: %v", commits(evs))
	}
	gitIn(t, dir, "fetch", "-q", clone, "main:side")
	gitIn(t, dir, "merge", "-q", "--no-edit", "side")
	m := gitIn(t, dir, "rev-parse", "HEAD")
	live := commits(collect(t, sub, m))
	t.Logf("live after B: %v (R1 %.7s, R2 %.7s, M %.7s)", short7(live), r1, r2, m)
	if strings.Join(live, ",") != strings.Join([]string{r1, r2, m}, ",") {
		t.Fatalf("live events of the merge: %v", short7(live))
	}

	// The subscriber took B and R1, then dropped; it resumes after R1.
	resumed, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: r1}})
	if err != nil {
		t.Fatalf("resume after R1: %v", err)
	}
	defer resumed.Close()
	got := commits(collect(t, resumed, m))
	for _, h := range got {
		if h == b {
			t.Errorf("resuming after R1 delivered B (%.7s) a second time: got %v, want [R2 M] = %v", b, short7(got), short7([]string{r2, m}))
		}
	}
	if strings.Join(got, ",") != strings.Join([]string{r2, m}, ",") {
		t.Errorf("resume after R1: got %v, want %v", short7(got), short7([]string{r2, m}))
	}
}

// An agent's shard is created by agent add (an empty repository). A person
// seeds it by hand with git. The README: "Commits made with git reach
// subscribers within half a second". The daemon here polls as memd serve
// does, every 30 s; the watch on refs must find it.
func TestFeed_GitCommitInNewAgentShardReachesSubscribers(t *testing.T) {
	e := startQuiet(t, daemon.Config{PollInterval: 30 * time.Second})
	ctx := context.Background()
	alice := e.agent(t, "alice") // after the start: its shard is new
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	dir := e.d.Store.ShardDir(memd.AgentShard("alice"))
	date := memd.DateOf(time.Now())
	os.WriteFile(filepath.Join(dir, "profile.md"), []byte(fmt.Sprintf("- (%s) Seeded by hand\n", date)), 0o644)
	gitIn(t, dir, "add", "profile.md")
	gitIn(t, dir, "commit", "-qm", "seed alice by hand")
	head := gitIn(t, dir, "rev-parse", "HEAD")
	// Half a second promised; five allowed.
	got, ok := eventsUntil(sub, head, 5*time.Second)
	if !ok {
		t.Fatalf("a person's git commit in agent/alice (created after the start) did not reach the feed within 5 s (got %d events)", len(got))
	}
}

// A shard cloned by hand into the data directory (memory moved from
// another machine "the way code does") is found by memd's poll. A
// subscriber that saw that shard's commits elsewhere resumes with since=B,
// its last one. Whatever happens, it must not then receive A and B (commits
// at or before its since) as new.
func TestFeed_ResumeOnAShardNotYetPublishedSendsNoHistoryAgain(t *testing.T) {
	e := startQuiet(t, daemon.Config{PollInterval: time.Hour})
	ctx := context.Background()
	// Another machine's shard: two commits.
	src := t.TempDir()
	gitIn(t, src, "init", "-q", "-b", "main")
	date := memd.DateOf(time.Now())
	os.WriteFile(filepath.Join(src, "profile.md"), []byte(fmt.Sprintf("- (%s) Fact A\n", date)), 0o644)
	gitIn(t, src, "add", "profile.md")
	gitIn(t, src, "commit", "-qm", "A")
	a := gitIn(t, src, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(src, "profile.md"), []byte(fmt.Sprintf("- (%s) Fact A\n- (%s) Fact B\n", date, date)), 0o644)
	gitIn(t, src, "commit", "-qam", "B")
	b := gitIn(t, src, "rev-parse", "HEAD")
	dst := filepath.Join(e.dir, "shards", "project", "moved")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	gitIn(t, filepath.Dir(dst), "clone", "-q", src, "moved")

	p := memd.ProjectShard("moved")
	sub, err := e.admin.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{p}, Since: map[memd.ShardID]string{p: b}})
	if err != nil {
		t.Fatalf("resume since B: %v", err)
	}
	defer sub.Close()
	c := remember(t, e.admin, "project/moved", "Fact C, by memd", memd.TierProfile, memd.Source{}).Commit
	got := commits(collect(t, sub, c))
	if strings.Join(got, ",") != c {
		t.Errorf("resumed after B (%.7s), then memd wrote C (%.7s): got %v; A is %.7s", b, c, short7(got), a)
	}
}

// An agent writes, is answered with its commit, and follows its shard from
// there: since=<the commit it was just answered with>. That commit is on
// main (memd said so); the resume must be accepted and must not send that
// commit again. Tried 100 times: memd publishes its own commits on a
// worker of its own, so the answer can come before the feed has it.
func TestFeed_ResumeFromOwnJustAnsweredCommit(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	var refused, dup int
	var firstErr error
	for i := 0; i < 100; i++ {
		c := remember(t, alice, "agent/alice", fmt.Sprintf("Own fact %d", i), memd.TierLog, memd.Source{}).Commit
		sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: c}})
		if err != nil {
			refused++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		next := remember(t, alice, "agent/alice", fmt.Sprintf("Next fact %d", i), memd.TierLog, memd.Source{}).Commit
		for _, ev := range collect(t, sub, next) {
			if ev.Commit == c {
				dup++
			}
		}
		sub.Close()
	}
	if refused > 0 || dup > 0 {
		t.Errorf("of 100 resumes from the commit a remember had just answered: %d refused (first: %v), %d sent that commit again", refused, firstErr, dup)
	}
}

// firstParents returns main's commits after from up to head, oldest first.
func firstParents(t *testing.T, dir, from, head string) []string {
	t.Helper()
	out := gitIn(t, dir, "rev-list", "--reverse", "--first-parent", from+".."+head)
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// A subscriber took C1 and went away; memd wrote C2, the daemon stopped, a
// person committed D with git while it was down, the daemon started again
// and memd wrote E. Resuming with since=C1 gives C2, D, E, once each, in
// order.
func TestFeed_ResumeAcrossRestartWithCommitWhileDown(t *testing.T) {
	dir := t.TempDir()
	e := startQuietIn(t, dir, daemon.Config{})
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	c1 := remember(t, alice, "agent/alice", "First", memd.TierLog, memd.Source{}).Commit
	collect(t, sub, c1)
	sub.Close()
	remember(t, alice, "agent/alice", "Second", memd.TierLog, memd.Source{})
	if err := e.d.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	sdir := e.d.Store.ShardDir(s)
	date := memd.DateOf(time.Now())
	f, err := os.OpenFile(filepath.Join(sdir, "log", date.Month()+".md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "- (%s) Added by hand while memd was down\n", date)
	f.Close()
	gitIn(t, sdir, "commit", "-qam", "by hand, memd down")

	e2 := startQuietIn(t, dir, daemon.Config{})
	alice.BaseURL = e2.d.URL()
	eLast := remember(t, alice, "agent/alice", "After the restart", memd.TierLog, memd.Source{}).Commit
	resumed, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: c1}})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	got := commits(collect(t, resumed, eLast))
	want := firstParents(t, sdir, c1, eLast)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("resume across a restart: got %v, want %v", short7(got), short7(want))
	}
}

// Writers keep writing while a subscriber resumes: the commits it gets are
// exactly main's after since, once each, in order, across the switch from
// replay to live.
func TestFeed_WritesDuringCatchUp(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	first := remember(t, alice, "agent/alice", "Start", memd.TierLog, memd.Source{}).Commit
	done := make(chan string)
	started := make(chan struct{})
	go func() {
		var last string
		for i := 0; i < 150; i++ {
			res, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: fmt.Sprintf("during catch-up %d", i), Tier: memd.TierLog})
			if err != nil {
				t.Error(err)
				break
			}
			last = res.Commit
			if i == 60 {
				close(started)
			}
		}
		done <- last
	}()
	<-started
	var subs []memd.Subscription
	for i := 0; i < 5; i++ { // several resumes at different points of the stream
		sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: first}})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		subs = append(subs, sub)
	}
	last := <-done
	want := firstParents(t, e.d.Store.ShardDir(s), first, last)
	for i, sub := range subs {
		got := commits(collect(t, sub, last))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("subscriber %d: %d commits, want %d", i, len(got), len(want))
		}
	}
}

// A person amends memd's last commit, then resets main back one: each is a
// reset event naming the new head, and memd's next commit follows it.
func TestFeed_AmendAndResetByHand(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	remember(t, alice, "agent/alice", "One", memd.TierLog, memd.Source{})
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	two := remember(t, alice, "agent/alice", "Two", memd.TierLog, memd.Source{}).Commit
	collect(t, sub, two)
	dir := e.d.Store.ShardDir(s)
	gitIn(t, dir, "commit", "-q", "--amend", "-m", "two, reworded by pat")
	amended := gitIn(t, dir, "rev-parse", "HEAD")
	evs := collect(t, sub, amended)
	if ev := evs[len(evs)-1]; ev.Type != memd.EventReset {
		t.Errorf("amend: %+v", ev)
	}
	gitIn(t, dir, "reset", "-q", "--hard", "HEAD~1")
	back := gitIn(t, dir, "rev-parse", "HEAD")
	evs = collect(t, sub, back)
	if ev := evs[len(evs)-1]; ev.Type != memd.EventReset {
		t.Errorf("reset: %+v", ev)
	}
	three := remember(t, alice, "agent/alice", "Three", memd.TierLog, memd.Source{}).Commit
	evs = collect(t, sub, three)
	for _, ev := range evs {
		t.Logf("%s %.7s parent %.7s %+v", ev.Type, ev.Commit, ev.Parent, ev.Changes)
	}
	if ev := evs[len(evs)-1]; ev.Parent != back {
		t.Errorf("after the reset memd's commit names parent %.7s, want %.7s", ev.Parent, back)
	}
	// Resuming from the amended commit, no longer on main, is refused.
	_, err = alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: amended}})
	wantCode(t, err, memd.ENOTFOUND)
}

// A person brings in, with one move of main, a history holding two merged
// branches and commits between them. Whatever commit of it a subscriber
// took last, resuming from it replays exactly what the live feed sent
// after it.
func TestFeed_ResumeFromAnyCommitOfAMovedHistoryReplaysTheLiveSuffix(t *testing.T) {
	ctx := context.Background()
	alice, s, base, dir, clone, note := aliceAndAClone(t, startFeed(t))
	for _, branch := range []string{"one", "two"} {
		gitIn(t, clone, "checkout", "-q", "-b", branch, "main")
		note(branch+".md", "first")
		note(branch+".md", "second")
		gitIn(t, clone, "checkout", "-q", "main")
		note("main.md", "before "+branch)
		gitIn(t, clone, "merge", "-q", "--no-edit", branch)
	}
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	head := pushedToMain(t, dir, clone)
	live := commits(collect(t, sub, head))
	if len(live) != 8 {
		t.Fatalf("the live feed sent %d commits of the moved history, want 8", len(live))
	}
	resumesReplayTheLiveSuffix(t, alice, s, base, live)
}
