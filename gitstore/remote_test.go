package gitstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// What git answers a fetch or push comes back as a typed error, read from
// its exit codes and porcelain output: an empty remote, a push the
// remote's history refuses, and a remote git cannot reach are told apart.
func TestShard_FetchAndPushTellWhatGitAnswered(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	first := remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	remote := filepath.Join(t.TempDir(), "alice.git") // made by the first fetch

	if _, err := sh.Fetch(ctx, remote, "refs/remotes/memd/main"); !errors.Is(err, gitstore.ErrRemoteEmpty) {
		t.Fatalf("fetch from a new remote: %v, want ErrRemoteEmpty", err)
	}
	if err := sh.Push(ctx, remote, first.Commit); err != nil {
		t.Fatal(err)
	}
	if has, err := gitstore.RemoteHasMain(ctx, sh.Dir(), remote); err != nil || !has {
		t.Fatalf("after a push, RemoteHasMain = %v, %v", has, err)
	}

	// Someone else pushes first.
	other := filepath.Join(t.TempDir(), "other")
	git(t, "", "clone", "--quiet", remote, other)
	os.WriteFile(filepath.Join(other, "todo.md"), []byte("call mum\n"), 0o644)
	git(t, other, "add", "todo.md")
	git(t, other, "commit", "-qm", "todo")
	git(t, other, "push", "--quiet", "origin", "main")
	theirs := strings.TrimSpace(git(t, other, "rev-parse", "HEAD"))

	mine := remember(t, sh, "Packed a raincoat", memd.TierLog, "m2")
	if err := sh.Push(ctx, remote, mine.Commit); !errors.Is(err, gitstore.ErrPushRejected) {
		t.Fatalf("push behind the remote: %v, want ErrPushRejected", err)
	}
	got, err := sh.Fetch(ctx, remote, "refs/remotes/memd/main")
	if err != nil || got.String() != theirs {
		t.Fatalf("fetch: %s, %v; want %s", got, err, theirs)
	}

	// A remote named by a path relative to the shard, as git remote add
	// takes it, is empty as git in the shard sees it.
	git(t, "", "init", "--quiet", "--bare", "--initial-branch=main", filepath.Join(sh.Dir(), "..", "alice-rel.git"))
	if _, err := sh.Fetch(ctx, "../alice-rel.git", "refs/remotes/memd/main"); !errors.Is(err, gitstore.ErrRemoteEmpty) {
		t.Errorf("fetch from an empty remote named relative to the shard: %v, want ErrRemoteEmpty", err)
	}

	// A remote git cannot reach is neither empty nor a rejection.
	gone := "http://127.0.0.1:1/alice.git"
	if _, err := sh.Fetch(ctx, gone, "refs/remotes/memd/main"); err == nil || errors.Is(err, gitstore.ErrRemoteEmpty) {
		t.Errorf("fetch from a remote that is not there: %v", err)
	}
	if err := sh.Push(ctx, gone, mine.Commit); err == nil || errors.Is(err, gitstore.ErrPushRejected) {
		t.Errorf("push to a remote that is not there: %v", err)
	}
	if has, err := gitstore.RemoteHasMain(ctx, sh.Dir(), gone); err == nil || has {
		t.Errorf("RemoteHasMain of a remote that is not there: %v, %v", has, err)
	}
}

// A shard's own remote is read from its git config as git writes it, and
// read again when the config changes.
func TestStore_RemoteURLFollowsGitConfig(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	if u, err := s.RemoteURL(sh.ID(), "memd"); err != nil || u != "" {
		t.Fatalf("no remote yet: %q, %v", u, err)
	}
	git(t, sh.Dir(), "remote", "add", "memd", "/srv/git/alice.git")
	if u, err := s.RemoteURL(sh.ID(), "memd"); err != nil || u != "/srv/git/alice.git" {
		t.Fatalf("after git remote add: %q, %v", u, err)
	}
	git(t, sh.Dir(), "remote", "set-url", "memd", "https://git.example.com/alice-and-more.git")
	if u, err := s.RemoteURL(sh.ID(), "memd"); err != nil || u != "https://git.example.com/alice-and-more.git" {
		t.Fatalf("after git remote set-url: %q, %v", u, err)
	}
}
