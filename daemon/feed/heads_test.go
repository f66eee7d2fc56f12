package feed

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// A start reads the end of each shard's file of heads alone: the heads of
// earlier runs wait for a resume. 200 shards, each with a full file,
// published once as the hub's first check does, hold about one head each
// (read whole, they held 20 MB).
func TestHub_AStartHoldsOneHeadOfAnIdleShard(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	file := oldHeads(maxSent)
	const shards = 200
	var ids []memd.ShardID
	for i := range shards {
		id := memd.AgentShard(fmt.Sprintf("a%03d", i))
		if _, err := store.CreateShard(id); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store.ShardDir(id), ".git", "memd-feed-heads"), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	h, err := New(store, quiet(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	before := heap()
	for _, id := range ids { // as Run's first check does
		if err := h.publish(id); err != nil {
			t.Fatal(err)
		}
	}
	after := heap()
	runtime.KeepAlive(h)
	if per := (int64(after) - int64(before)) / shards; per > 4<<10 {
		t.Errorf("after publishing %d idle shards once, the hub holds %d KB more a shard (%d MB in all)", shards, per>>10, (int64(after)-int64(before))>>20)
	}
}

// openStore opens a store in dir, unsynced.
func openStore(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	store, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// aliceStore opens a store in data and makes alice's shard in it,
// returning the shard and its folder.
func aliceStore(t *testing.T, data string) (*gitstore.Store, memd.ShardID, string) {
	t.Helper()
	store := openStore(t, data)
	id := memd.AgentShard("alice")
	if _, err := store.CreateShard(id); err != nil {
		t.Fatal(err)
	}
	return store, id, store.ShardDir(id)
}

// oldHeads returns a file of n heads of long ago, naming no commit.
func oldHeads(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%040x\n", i+1)
	}
	return b.String()
}

// heap is the bytes the heap holds after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// gitCommitIn makes an empty commit in a shard's worktree with the git
// command, as a person would, and returns its hash.
func gitCommitIn(t *testing.T, dir, msg string) gitstore.Hash {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "commit", "-q", "--allow-empty", "-m", msg)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=pat", "GIT_AUTHOR_EMAIL=pat@example.com",
		"GIT_COMMITTER_NAME=pat", "GIT_COMMITTER_EMAIL=pat@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v: %s", err, out)
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return gitstore.NewHash(strings.TrimSpace(string(out)))
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// A shard that moves only while memd is down (a person's nightly pull,
// memd restarted around it) adds a head to its file at each start; the
// start cuts the file back as a live move does.
func TestHub_RestartsAfterCommitsWhileDownKeepTheFileBounded(t *testing.T) {
	data := t.TempDir()
	store, id, dir := aliceStore(t, data)
	path := filepath.Join(dir, ".git", "memd-feed-heads")
	gitCommitIn(t, dir, "first")
	// A run of memd publishes, as Run's first check does: the file holds
	// its start.
	h, err := New(store, quiet(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	store.Close()
	// The file as full as keepHead leaves it (4,096 heads: the oldest of
	// long ago, the last this run's).
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte(oldHeads(maxSent-1)), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	const restarts = 3
	for i := range restarts {
		gitCommitIn(t, dir, fmt.Sprintf("while down %d", i)) // memd is down
		store := openStore(t, data)
		h, err := New(store, quiet(), Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.publish(id); err != nil { // Run's first check
			t.Fatal(err)
		}
		store.Close()
	}
	if n := countLines(t, path); n > maxSent {
		t.Errorf("after %d restarts, each after a commit made while memd was down, the file of heads holds %d heads; want at most 4,096", restarts, n)
	}
}

// An agent reconnecting from the head it took needs no earlier heads:
// the resume reads none, and the shard holds this run's heads alone.
func TestHub_AResumeFromTheHeadReadsNoEarlierHeads(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	file := oldHeads(maxSent - 1)
	const shards = 100
	var ids []memd.ShardID
	heads := map[memd.ShardID]gitstore.Hash{}
	for i := range shards {
		id := memd.AgentShard(fmt.Sprintf("a%03d", i))
		if _, err := store.CreateShard(id); err != nil {
			t.Fatal(err)
		}
		head := gitCommitIn(t, store.ShardDir(id), "one")
		// The file a previous run left: its heads, ending with the head.
		if err := os.WriteFile(filepath.Join(store.ShardDir(id), ".git", "memd-feed-heads"), []byte(file+head.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		heads[id] = head
	}
	h, err := New(store, quiet(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids { // as Run's first check does
		if err := h.publish(id); err != nil {
			t.Fatal(err)
		}
	}
	before := heap()
	for _, id := range ids { // each agent reconnects from the head it took
		s, err := h.Subscribe(context.Background(), "", func(memd.ShardID) bool { return true }, map[memd.ShardID]Since{id: {Commit: heads[id]}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(replayOf(t, s)); n != 0 {
			t.Fatalf("resume from the head replayed %d", n)
		}
		h.Unsubscribe(s)
	}
	after := heap()
	runtime.KeepAlive(h)
	if per := (int64(after) - int64(before)) / shards; per > 4<<10 {
		t.Errorf("after one resume from the head of each of %d shards (nothing to replay), the hub holds %d KB more a shard (%d MB in all); want about one head each", shards, per>>10, (int64(after)-int64(before))>>20)
	}
}

// gitOut runs git in dir as the person pat and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=pat", "GIT_AUTHOR_EMAIL=pat@example.com",
		"GIT_COMMITTER_NAME=pat", "GIT_COMMITTER_EMAIL=pat@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// pulledMerge builds, in a shard with a hub running, the history where the
// live feed's batches differ from the history's order: the hub publishes
// M1 alone, then a merge X (first parent a person's P, second M1) arrives,
// sent as P, X. It returns M1, P, X.
func pulledMerge(t *testing.T, h *Hub, id memd.ShardID, dir string, base gitstore.Hash) (m1, p, x gitstore.Hash) {
	t.Helper()
	m1 = gitCommitIn(t, dir, "M1")
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	p = gitstore.NewHash(gitOut(t, dir, "commit-tree", base.String()+"^{tree}", "-p", base.String(), "-m", "P"))
	x = gitstore.NewHash(gitOut(t, dir, "commit-tree", m1.String()+"^{tree}", "-p", p.String(), "-p", m1.String(), "-m", "X"))
	gitOut(t, dir, "update-ref", "HEAD", x.String())
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	return m1, p, x
}

// replayOf reads a subscriber's replay whole.
func replayOf(t *testing.T, s *Subscriber) []memd.FeedEvent {
	t.Helper()
	var out []memd.FeedEvent
	for ev, err := range s.Replay() {
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		out = append(out, ev)
	}
	return out
}

// hashes lists the events' commits, short.
func hashes(cs []memd.FeedEvent) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.Commit[:7])
	}
	return strings.Join(s, ",")
}

// A subscriber resumes, after a restart, from M1, a commit of the previous
// run. Subscribe registers it (the shard's feed held) and reads the replay
// with the feed free; a publisher that takes the shard in between (here a
// reset by a person, read at once) rewrites the file of heads. The replay
// goes by the earlier runs' heads as the file held them at registration:
// the live feed sent P, X, Y after M1 (read after, the file's reset lost P).
func TestHub_AResetWhileAReplayIsReadLosesNoBatch(t *testing.T) {
	data := t.TempDir()
	store, id, dir := aliceStore(t, data)
	base := gitCommitIn(t, dir, "base")
	h, err := New(store, quiet(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	_, p, x := pulledMerge(t, h, id, dir, base)
	m1 := gitstore.NewHash(gitOut(t, dir, "rev-parse", x.String()+"^2"))
	store.Close()

	// The restart: one commit published this run.
	store = openStore(t, data)
	defer store.Close()
	h, err = New(store, quiet(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	y := gitCommitIn(t, dir, "Y")
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{p.String()[:7], x.String()[:7], y.String()[:7]}, ",")

	// Without a publisher in between, the replay is the live suffix.
	s0, err := h.Subscribe(context.Background(), "", func(memd.ShardID) bool { return true }, map[memd.ShardID]Since{id: {Commit: m1}})
	if err != nil {
		t.Fatal(err)
	}
	h.Unsubscribe(s0)
	if got := hashes(replayOf(t, s0)); got != want {
		t.Fatalf("control: resume after M1 replayed %s, want %s", got, want)
	}

	// Subscribe, split where it lets go of the shard's feed.
	s := h.newSubscriber("", func(memd.ShardID) bool { return true })
	resumes, err := h.register(s, map[memd.ShardID]Since{id: {Commit: m1}})
	if err != nil {
		t.Fatal(err)
	}
	// A person resets main to a commit of their own; the hub reads it at once.
	z := gitstore.NewHash(gitOut(t, dir, "commit-tree", x.String()+"^{tree}", "-p", x.String(), "-m", "Z"))
	gitOut(t, dir, "update-ref", "HEAD", z.String())
	if err := h.publish(id); err != nil {
		t.Fatal(err)
	}
	if err := s.readReplay(context.Background(), resumes[0]); err != nil {
		t.Fatal(err)
	}
	if got := hashes(replayOf(t, s)); got != want {
		t.Errorf("resume after M1 (a commit of the previous run), a reset published between registering and reading the replay: replayed %s, want what the live feed sent after M1 before the reset: %s", got, want)
	}
	select {
	case ev := <-s.Events():
		if ev.Type != memd.EventReset {
			t.Errorf("first live event %v, want the reset", ev.Type)
		}
	default:
		t.Errorf("no live reset event")
	}
}
