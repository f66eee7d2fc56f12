package feed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// Agents reconnecting after a restart resume from the same commit: the
// second is given the first's listing of what to replay, not a walk of
// the history of its own; one resuming from elsewhere walks its own.
func TestHub_ResumesFromOneCommitShareTheirListing(t *testing.T) {
	h, id, dir, base := hubOfOneCommit(t)
	second := gitCommitIn(t, dir, "two")
	for _, msg := range []string{"three", "four"} {
		gitCommitIn(t, dir, msg)
	}
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	all := func(memd.ShardID) bool { return true }
	resume := func(from Since) *Subscriber {
		s, err := h.Subscribe(context.Background(), "", all, map[memd.ShardID]Since{id: from})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Unsubscribe(s) })
		return s
	}
	a, b := resume(Since{Commit: base}), resume(Since{Commit: base})
	if len(a.replay) != 1 || len(a.replay[0].commits) != 3 || &a.replay[0].commits[0] != &b.replay[0].commits[0] {
		t.Fatalf("two resumes from the same commit: replays %v and %v, want one listing of 3 commits shared", a.replay, b.replay)
	}
	c := resume(Since{Commit: second})
	if got := hashes(replayOf(t, c)); got != hashes(replayOf(t, a)[1:]) {
		t.Errorf("a resume from the second commit replayed %s, want %s", got, hashes(replayOf(t, a)[1:]))
	}
}

// A subscriber waiting for its turn to list a replay as memd stops is
// refused as unavailable, not kept waiting past the shutdown; one whose
// client left is refused with its context's error.
func TestHub_AWaitingResumeGivesUp(t *testing.T) {
	h, id, dir, base := hubOfOneCommit(t)
	gitCommitIn(t, dir, "two")
	h.listing <- struct{}{} // another listing is under way
	all := func(memd.ShardID) bool { return true }
	since := map[memd.ShardID]Since{id: {Commit: base}}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Subscribe(ctx, "", all, since); !errors.Is(err, context.Canceled) {
		t.Errorf("a resume whose client left: %v, want its context's end", err)
	}
	refused := make(chan error)
	go func() {
		_, err := h.Subscribe(context.Background(), "", all, since)
		refused <- err
	}()
	h.Close()
	if err := <-refused; memd.ErrorCode(err) != memd.EUNAVAILABLE {
		t.Errorf("a resume waiting as memd stops: %v, want unavailable", err)
	}
	if n := h.Subscribers(); n != 0 {
		t.Errorf("%d subscribers left registered", n)
	}
}

// hubOfOneCommit starts a hub on alice's shard, holding one commit, base,
// made by a person; dir is the shard's folder.
func hubOfOneCommit(t *testing.T) (h *Hub, id memd.ShardID, dir string, base gitstore.Hash) {
	t.Helper()
	store, id, dir := aliceStore(t, t.TempDir())
	t.Cleanup(func() { store.Close() })
	base = gitCommitIn(t, dir, "base")
	h, err := New(store, quiet(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	return h, id, dir, base
}

// A replay waiting for its turn to read the next commit as memd stops
// ends with memd's stopping, rather than waiting for turns that replays
// of other subscribers hold.
func TestHub_AReplayWaitingForATurnEndsAsMemdStops(t *testing.T) {
	h, id, dir, base := hubOfOneCommit(t)
	gitCommitIn(t, dir, "two")
	s, err := h.Subscribe(context.Background(), "", func(memd.ShardID) bool { return true }, map[memd.ShardID]Since{id: {Commit: base}})
	if err != nil {
		t.Fatal(err)
	}
	for range cap(h.replaying) { // other replays hold every turn
		h.replaying <- struct{}{}
	}
	ended := make(chan error)
	go func() {
		for _, err := range s.Replay() {
			ended <- err
			return
		}
		ended <- nil
	}()
	h.Close()
	if err := <-ended; memd.ErrorCode(err) != memd.EUNAVAILABLE {
		t.Errorf("a replay waiting for its turn as memd stops: %v, want unavailable", err)
	}
}

// An agent reconnecting from the last commit it was sent, the common
// case, has nothing to replay and waits for no other's listing.
func TestHub_AResumeFromTheHeadWaitsForNoListing(t *testing.T) {
	h, id, dir, _ := hubOfOneCommit(t)
	head := gitCommitIn(t, dir, "two")
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	h.listing <- struct{}{} // a long listing is under way
	for range cap(h.replaying) {
		h.replaying <- struct{}{}
	}
	s, err := h.Subscribe(context.Background(), "", func(memd.ShardID) bool { return true }, map[memd.ShardID]Since{id: {Commit: head}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(replayOf(t, s)); n != 0 {
		t.Errorf("a resume from the head replayed %d commits", n)
	}
}

// One agent's many resumes from far back wait behind each other for the
// listing turn, not in front of every other agent's: another agent
// resuming after them lists after the first of them, not after all.
func TestHub_AnAgentsManyResumesHoldOnePlaceInTheQueue(t *testing.T) {
	h, id, dir, base := hubOfOneCommit(t)
	gitCommitIn(t, dir, "two")
	steps := make(chan string, 16)
	testHookListing = func(step, agent string) { steps <- agent + " " + step }
	t.Cleanup(func() { testHookListing = func(string, string) {} })
	waitFor := func(want ...string) {
		t.Helper()
		for _, w := range want {
			if got := <-steps; got != w {
				t.Fatalf("step %q, want %q", got, w)
			}
		}
	}
	all := func(memd.ShardID) bool { return true }
	since := map[memd.ShardID]Since{id: {Commit: base}}
	errs := make(chan error, 4)
	resume := func(agent string) {
		go func() {
			s, err := h.Subscribe(context.Background(), agent, all, since)
			if err == nil {
				h.Unsubscribe(s)
			}
			errs <- err
		}()
	}
	h.listing <- struct{}{} // another listing is under way
	resume("bob")
	waitFor("bob waits behind its own", "bob waits")
	resume("bob")
	waitFor("bob waits behind its own")
	resume("bob")
	waitFor("bob waits behind its own")
	resume("carol")
	waitFor("carol waits behind its own", "carol waits")
	<-h.listing
	// The first of bob's resumes takes the turn, then carol's, then bob's
	// others (which find the listing made).
	var order []string
	for len(order) < 4 {
		if step := <-steps; strings.HasSuffix(step, " lists") {
			order = append(order, strings.TrimSuffix(step, " lists"))
		}
	}
	if want := []string{"bob", "carol", "bob", "bob"}; !slices.Equal(order, want) {
		t.Errorf("the listing turn went to %v, want %v", order, want)
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	h.listersMu.Lock()
	defer h.listersMu.Unlock()
	if len(h.listers) != 0 {
		t.Errorf("%d agents' places kept after their resumes", len(h.listers))
	}
}
