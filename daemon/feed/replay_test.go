package feed

import (
	"context"
	"testing"

	"github.com/memd/memd"
)

// Agents reconnecting after a restart resume from the same commit: the
// second is given the first's listing of what to replay, not a walk of
// the history of its own; one resuming from elsewhere walks its own.
func TestHub_ResumesFromOneCommitShareTheirListing(t *testing.T) {
	data := t.TempDir()
	store, id, dir := aliceStore(t, data)
	defer store.Close()
	base := gitCommitIn(t, dir, "base")
	h, err := New(store, quiet(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
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
