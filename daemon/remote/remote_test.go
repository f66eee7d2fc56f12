package remote_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/remote"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(memdtest.Git(t, dir, args...))
}

// A shard whose own git config names its remote pushes in the background
// after commits, many commits to a push, without being asked.
func TestSyncer_PushesAfterCommitsCoalesced(t *testing.T) {
	var syncer atomic.Pointer[remote.Syncer]
	store, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, RepackAt: -1,
		OnCommit: func(id memd.ShardID) {
			if s := syncer.Load(); s != nil {
				s.Notify(id)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	id := memd.AgentShard("alice")
	sh, err := store.CreateShard(id)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(t.TempDir(), "alice.git")
	git(t, sh.Dir(), "remote", "add", remote.Name, bare)

	pushed := make(chan string, 100)
	s, err := remote.New(store, remote.Config{PushDelay: 50 * time.Millisecond, FetchEvery: -1,
		Hooks: remote.Hooks{Pushed: func(result string) { pushed <- result }}})
	if err != nil {
		t.Fatal(err)
	}
	syncer.Store(s)
	if u, ok := s.URL(id); !ok || u != bare {
		t.Fatalf("URL of the shard: %q %v, want its own remote %s", u, ok, bare)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	const commits = 20
	date, _ := memd.ParseDate("2026-11-03")
	for i := range commits {
		_, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "alice", Email: "alice@agents.memd"},
			Message: fmt.Sprintf("remember: fact %d", i),
			Edits:   []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Fact number %d", i), Date: date, Tier: memd.TierLog}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	head, _ := sh.Head()
	pushes := 0
	deadline := time.After(20 * time.Second)
	for {
		select {
		case r := <-pushed:
			if r != "ok" {
				t.Fatalf("push: %s", r)
			}
			pushes++
		case <-deadline:
			t.Fatalf("the remote did not reach %s after %d pushes", head, pushes)
		}
		if git(t, bare, "rev-parse", "main") == head.String() {
			break
		}
	}
	if pushes >= commits {
		t.Fatalf("%d commits took %d pushes; they should share pushes", commits, pushes)
	}
	t.Logf("%d commits, %d pushes", commits, pushes)
	// The remote may hold head while the push that took it there is still
	// being recorded: its result is the next one heard.
	for {
		st, err := s.Status()
		if err == nil && len(st) == 1 && st[0].Remote == head.String() && st[0].Error == "" {
			break
		}
		select {
		case r := <-pushed:
			if r != "ok" {
				t.Fatalf("push: %s", r)
			}
		case <-deadline:
			t.Fatalf("status: %+v, %v", st, err)
		}
	}
}
