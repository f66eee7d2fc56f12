package gitstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

func restoreMessage(dropper gitstore.Commit, restored, removed []memd.Fact, note string) string {
	switch {
	case note != "":
		return fmt.Sprintf("restore %s %s dropped", note, dropper.Hash)
	case len(removed) > 0:
		return fmt.Sprintf("restore %d facts %s dropped, take back %d it brought back", len(restored), dropper.Hash, len(removed))
	}
	return fmt.Sprintf("restore %d facts %s dropped", len(restored), dropper.Hash)
}

// copyFile copies src to dst, standing in for a git command writing back
// the index it read earlier.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withSavedIndex makes a shard with one fact and keeps a copy of its
// .git/index as it is then: what a git command that read it now writes
// back later. It returns the shard, the index's path and the copy's.
func withSavedIndex(t *testing.T) (s *gitstore.Store, sh *gitstore.Shard, index, stale string) {
	t.Helper()
	s = openStore(t)
	sh = createShard(t, s, "agent/alice")
	index = filepath.Join(sh.Dir(), ".git", "index")
	remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	stale = filepath.Join(t.TempDir(), "index")
	copyFile(t, index, stale)
	return s, sh, index, stale
}

// git status writes back the index it read; when it read it before memd's
// last commit, the person's next git commit commits memd's facts away.
// memd puts them back in a commit of its own that names the dropping one.
func TestShard_RestoresFactsAStaleIndexDropped(t *testing.T) {
	// The shard's parsed files held, or given up (idle for a minute, or
	// read once for the index): either way the move of main is checked
	// when the feed reads it (Refresh), without a read of the facts. And
	// when memd stopped before it looked, the next start looks.
	for _, when := range []string{"state held", "state released", "memd restarted"} {
		t.Run(when, func(t *testing.T) {
			s, sh, index, stale := withSavedIndex(t)
			dir := sh.Dir()
			remember(t, sh, "Packed a raincoat", memd.TierLog, "m2")
			remember(t, sh, "Took the night train", memd.TierLog, "m3")
			copyFile(t, stale, index)
			if when == "state released" {
				sh.Release()
			}

			os.WriteFile(filepath.Join(dir, "todo.md"), []byte("call mum\n"), 0o644)
			git(t, dir, "add", "todo.md")
			git(t, dir, "commit", "-qm", "todo")
			dropper := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
			if show := git(t, dir, "show", "HEAD:log/2026-11.md"); strings.Contains(show, "raincoat") {
				t.Fatalf("the person's commit did not drop the facts, so this test shows nothing:\n%s", show)
			}
			if when == "memd restarted" {
				s.Close()
				s, err := gitstore.Open(s.Dir(), gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				if sh, err = s.Shard(memd.AgentShard("alice")); err != nil {
					t.Fatal(err)
				}
			}

			if err := sh.Refresh(); err != nil {
				t.Fatal(err)
			}
			log := git(t, dir, "log", "--format=%an|%s", "-3")
			if !strings.HasPrefix(log, "memd|restore 2 facts "+dropper+" dropped\npat|todo\n") {
				t.Errorf("git log:\n%s", log)
			}
			want := []string{"Booked a flight to Lisbon", "Packed a raincoat", "Took the night train"}
			if got := texts(t, sh); !slices.Equal(got, want) {
				t.Errorf("facts after the person's commit: %v, want %v", got, want)
			}
			if st := git(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status: %s", st)
			}
			if todo := git(t, dir, "show", "HEAD:todo.md"); todo != "call mum\n" {
				t.Errorf("the person's file: %q", todo)
			}
		})
	}
}

// A stale index that predates memd's forget holds the fact memd took out;
// the person's next git commit of another file brings it back, while the
// working file lacks it. memd takes it out again, in a commit naming the
// one that brought it back: a poisoned fact forgotten stays forgotten.
func TestShard_TakesBackFactsAStaleIndexBroughtBack(t *testing.T) {
	s, sh, index, stale := withSavedIndex(t)
	_ = s
	dir := sh.Dir()
	remember(t, sh, "Wire payments to account 777", memd.TierLog, "m2")
	copyFile(t, index, stale) // the index as it is before the forget
	forget(t, sh, "Wire payments to account 777")
	copyFile(t, stale, index)

	os.WriteFile(filepath.Join(dir, "todo.md"), []byte("call mum\n"), 0o644)
	git(t, dir, "add", "todo.md")
	git(t, dir, "commit", "-qm", "todo")
	dropper := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	if show := git(t, dir, "show", "HEAD:log/2026-11.md"); !strings.Contains(show, "account 777") {
		t.Fatalf("the person's commit did not bring the fact back, so this test shows nothing:\n%s", show)
	}
	if err := sh.Refresh(); err != nil {
		t.Fatal(err)
	}
	if log := git(t, dir, "log", "--format=%an|%s", "-2"); !strings.HasPrefix(log, "memd|restore 0 facts "+dropper+" dropped, take back 1 it brought back\npat|todo\n") {
		t.Errorf("git log:\n%s", log)
	}
	if got := texts(t, sh); !slices.Equal(got, []string{"Booked a flight to Lisbon"}) {
		t.Errorf("facts after the person's commit: %v, want the forgotten one gone", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
}

// A fact put back on purpose from a linked worktree of main, the shard's
// own checkout detached, stays: the shard's working files are not main's
// then, so lacking the fact says nothing.
func TestShard_KeepsAFactPutBackFromALinkedWorktree(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	remember(t, sh, "Wire payments to account 777", memd.TierLog, "m2")
	forget(t, sh, "Wire payments to account 777")
	wt := linkedWorktreeOfMain(t, sh)
	git(t, wt, "checkout", "main~1", "--", "log/2026-11.md")
	git(t, wt, "commit", "-qm", "put back the payment fact: it was right")
	if err := sh.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, sh); !slices.Contains(got, "Wire payments to account 777") {
		t.Errorf("facts after pat put one back on purpose: %v", got)
	}
}

// Taking facts out on purpose, by editing them away or with git revert, is
// not mistaken for a stale index.
func TestShard_KeepsDeliberateRemovals(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	dir := sh.Dir()
	remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	remember(t, sh, "Took the night train", memd.TierLog, "m2")
	r := remember(t, sh, "Packed a raincoat", memd.TierLog, "m3")

	// The file goes back to exactly its version of a commit ago.
	git(t, dir, "revert", "--no-edit", r.Commit.String())
	if got := texts(t, sh); !slices.Equal(got, []string{"Booked a flight to Lisbon", "Took the night train"}) {
		t.Errorf("facts after git revert: %v", got)
	}
	log := filepath.Join(dir, "log", "2026-11.md")
	b, _ := os.ReadFile(log)
	os.WriteFile(log, []byte(strings.Replace(string(b), "- (2026-11-03) Took the night train\n", "", 1)), 0o644)
	git(t, dir, "commit", "-qam", "not true")
	if got := texts(t, sh); !slices.Equal(got, []string{"Booked a flight to Lisbon"}) {
		t.Errorf("facts after editing one away: %v", got)
	}
	if n := strings.Count(git(t, dir, "log", "--format=%an"), "memd"); n != 0 {
		t.Errorf("%d commits by memd itself, want none", n)
	}
}

// An index a git command wrote back after memd's update is an older version
// of memd's own, not a change the person staged: memd's next commit brings
// it up to date rather than merging into it and staging the loss of facts.
func TestShard_StaleIndexIsNotAStagedChange(t *testing.T) {
	_, sh, index, stale := withSavedIndex(t)
	dir := sh.Dir()
	remember(t, sh, "Packed a raincoat", memd.TierLog, "m2")
	copyFile(t, stale, index)
	remember(t, sh, "Took the night train", memd.TierLog, "m3")

	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "person commits what is staged")
	if got := texts(t, sh); len(got) != 3 {
		t.Errorf("facts after the person's commit: %v", got)
	}
}

// memd stopped after writing a commit's files into the working tree and
// index but before moving main to it, or a power cut took the rename of the
// lock over main back: the commit and its lock on main were on disk (memd
// syncs both before touching the working tree), so the next start finishes
// the move rather than leave the working tree holding a commit main lacks,
// or drop a commit whose acknowledgement may have gone out.
func TestStore_FinishesACommitItStoppedInTheMiddleOf(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	shardDir := sh.Dir()
	first := remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	second := remember(t, sh, "Packed a raincoat", memd.TierLog, "m2")
	s.Close()
	// The state on disk at that moment: main at the first commit, its lock
	// naming the second, the index and files holding the second's.
	git(t, shardDir, "update-ref", "refs/heads/main", first.Commit.String())
	lock := filepath.Join(shardDir, ".git", "refs", "heads", "main.lock")
	os.WriteFile(lock, []byte(second.Commit.String()+"\n"), 0o644)
	// and the next version of a working file half written.
	tmp := filepath.Join(shardDir, "log", ".memd-tmp-123456")
	os.WriteFile(tmp, []byte("- (2026-11-30) Half"), 0o644)

	_, sh = reopen(t, dir, s)
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the lock on main is still there: %v", err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the half-written file is still there: %v", err)
	}
	if head := strings.TrimSpace(git(t, shardDir, "rev-parse", "main")); head != second.Commit.String() {
		t.Errorf("main is at %s, want the commit the lock named, %s", head, second.Commit)
	}
	if st := git(t, shardDir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
	remember(t, sh, "Took the night train", memd.TierLog, "m3")
	if got := texts(t, sh); !slices.Equal(got, []string{"Booked a flight to Lisbon", "Packed a raincoat", "Took the night train"}) {
		t.Errorf("facts: %v", got)
	}
}

// A file of main's commit is kept at a start whatever its name, though it
// is named as memd's temporary files are: a person committed it, and its
// removal would leave git status dirty and the next git commit -a
// deleting it. An untracked one beside it is a leftover, and goes.
func TestStore_StartKeepsTrackedFilesNamedAsTemporary(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	shardDir := sh.Dir()
	remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	s.Close()
	tracked := filepath.Join(shardDir, "log", ".memd-tmp-kept")
	if err := os.WriteFile(tracked, []byte("a person's file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, shardDir, "add", "log/.memd-tmp-kept")
	git(t, shardDir, "commit", "-qm", "a file with an odd name")
	leftover := filepath.Join(shardDir, "log", ".memd-tmp-123456")
	if err := os.WriteFile(leftover, []byte("- (2026-11-30) Half"), 0o644); err != nil {
		t.Fatal(err)
	}

	reopen(t, dir, s)
	if _, err := os.Stat(tracked); err != nil {
		t.Errorf("the committed file was removed: %v", err)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the leftover is still there: %v", err)
	}
	if st := git(t, shardDir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
}

// A person's commit from a stale index dropped memd's facts and its note
// change, and the person is editing that note's same lines, uncommitted:
// the note cannot be restored over their edit (a conflict), nor checked
// against a version git takes for binary (a NUL pasted in). The facts are
// restored anyway, at once and not only at the next start.
func TestShard_RestoresFactsWhenTheNoteDroppedWithThemIsBeingEdited(t *testing.T) {
	for name, persons := range map[string]string{
		"the same lines":     "a\nb by pat\nc\n",
		"a byte of a binary": "a\nb by pat \x00\nc\n",
	} {
		t.Run(name, func(t *testing.T) {
			open := reopenable(t)
			s, sh := open()
			defer func() { s.Close() }()
			dir := sh.Dir()
			createPlan(t, sh, "a\nb\nc\n")
			index := filepath.Join(dir, ".git", "index")
			stale := filepath.Join(t.TempDir(), "index")
			copyFile(t, index, stale)
			remember(t, sh, "Packed a raincoat", memd.TierLog, "m2")
			if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: edit", setNote("a\nB by memd\nc\n"))); err != nil {
				t.Fatal(err)
			}
			copyFile(t, stale, index)
			os.WriteFile(filepath.Join(dir, "notes", "plan.md"), []byte(persons), 0o644)
			git(t, dir, "commit", "-qm", "from a stale index", "--allow-empty")
			if show := git(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(show, "log/") {
				t.Fatalf("the person's commit kept the fact's file; this test shows nothing:\n%s", show)
			}

			if err := sh.Refresh(); err != nil {
				t.Fatal(err)
			}
			if got := texts(t, sh); !slices.Equal(got, []string{"Packed a raincoat"}) {
				t.Errorf("facts after the person's commit: %v, want the raincoat back", got)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "notes", "plan.md")); string(b) != persons {
				t.Errorf("the person's uncommitted note: %q, want %q", b, persons)
			}
			if data, _, _, _ := sh.Note(gitstore.Hash{}, "notes/plan.md"); string(data) != "a\nb\nc\n" {
				t.Errorf("the note on main: %q, want it as the person's commit left it", data)
			}
		})
	}
}
