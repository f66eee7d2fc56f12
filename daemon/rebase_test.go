package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// A remember memd answered during the moment a person's git rebase -i of
// main had read main but not yet said it was under way, taken off main by
// the person's git rebase --abort, comes back with no write after it: the
// ref watcher sees HEAD return to main and memd puts the commit back.
func TestRebase_AbortGivesBackAnAnsweredWriteUnasked(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	for _, text := range []string{"Alice one", "Alice two"} {
		remember(t, alice, "agent/alice", text, memd.TierProfile, memd.Source{})
	}
	dir := e.d.Store.ShardDir(s)
	finish := memdtest.RebaseInEditor(t, dir)
	state := filepath.Join(dir, ".git", "rebase-merge")
	// The rebase has read main; the write checked before its state was
	// written (the state out of memd's sight for the write alone).
	if err := os.Rename(state, state+".hidden"); err != nil {
		t.Fatal(err)
	}
	during := remember(t, alice, "agent/alice", "Alice during the rebase", memd.TierProfile, memd.Source{}).Commit
	if err := os.Rename(state+".hidden", state); err != nil {
		t.Fatal(err)
	}
	finish()
	gitIn(t, dir, "rebase", "--abort")

	// Nothing is written after the abort: the ref watcher alone brings
	// main back to the answered write.
	deadline := time.Now().Add(10 * time.Second)
	for gitIn(t, dir, "rev-parse", "main") != during {
		if time.Now().After(deadline) {
			t.Fatalf("main is %s after the abort, not put back to %s:\n%s", gitIn(t, dir, "rev-parse", "main"), during, gitIn(t, dir, "reflog", "-4", "main"))
		}
		runtime.Gosched()
	}
	list, err := alice.Facts(ctx, memd.FactsQuery{Shard: s})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(list.Facts); got != 3 {
		t.Errorf("%d facts after the abort, want all three: %+v", got, list.Facts)
	}
	if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q, want clean", st)
	}
}
