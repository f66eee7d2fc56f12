package daemon_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/memd/memd"
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
	fifo := filepath.Join(t.TempDir(), "go")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skip("mkfifo:", err)
	}
	cmd := exec.Command("git", "-c", "user.name=p", "-c", "user.email=p@x", "rebase", "-i", "HEAD~1")
	cmd.Dir = dir
	// The editor says it is open (every state of the rebase written), then
	// waits for the test, as a person's would.
	ready := filepath.Join(filepath.Dir(fifo), "ready")
	cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=touch "+ready+"; read x < "+fifo+"; true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	state := filepath.Join(dir, ".git", "rebase-merge")
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case <-done:
			t.Fatal("git rebase ended before its editor opened")
		default:
			runtime.Gosched()
		}
	}
	// The rebase has read main; the write checked before its state was
	// written (the state out of memd's sight for the write alone).
	if err := os.Rename(state, state+".hidden"); err != nil {
		t.Fatal(err)
	}
	during := remember(t, alice, "agent/alice", "Alice during the rebase", memd.TierProfile, memd.Source{}).Commit
	if err := os.Rename(state+".hidden", state); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(fifo, []byte("\n"), 0o644)
	<-done
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
