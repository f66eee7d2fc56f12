package gitstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// The states a crash leaves between memd's steps of a write, recreated on
// disk; the next start must leave HEAD holding every acknowledged write,
// the working tree and index in step with it (git status clean), and a
// person's edits where they were.

// stoppableShard opens a store in a directory of its own, for a test to
// close and reopen as a start after a stop would, with shard agent/alice.
func stoppableShard(t *testing.T) (string, *gitstore.Store, *gitstore.Shard) {
	t.Helper()
	dir := t.TempDir()
	s, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage})
	if err != nil {
		t.Fatal(err)
	}
	return dir, s, createShard(t, s, "agent/alice")
}

func reopen(t *testing.T, dir string, s *gitstore.Store) (*gitstore.Store, *gitstore.Shard) {
	t.Helper()
	s.Close()
	s, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sh, err := s.Shard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	return s, sh
}

// A git command held the index lock while memd edited a note, so the
// working file waited; memd stopped before it caught up. The next start
// brings the note's working file to HEAD.
func TestStore_NoteHeldBackByGitCatchesUpAfterAStop(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	shardDir := sh.Dir()
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: create plan.md", setNote("# Plan\n\n1. Book.\n"))); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(shardDir, ".git", "index.lock")
	os.WriteFile(lock, []byte("DIRC\x00\x00\x00\x02"), 0o644) // git holds the index
	for _, line := range []string{"2. Pack.\n", "3. Go.\n"} {
		if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: plan.md", appendNote(line))); err != nil {
			t.Fatal(err)
		}
	}
	s, _ = reopen(t, dir, s) // memd stops; then git lets go of the index
	os.Remove(lock)
	reopen(t, dir, s)

	want := "# Plan\n\n1. Book.\n2. Pack.\n3. Go.\n"
	if b, _ := os.ReadFile(filepath.Join(shardDir, "notes", "plan.md")); string(b) != want {
		t.Errorf("working file: %q, want HEAD's %q", b, want)
	}
	if st := git(t, shardDir, "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s\n%s\n%s", st, git(t, shardDir, "diff"), git(t, shardDir, "diff", "--cached"))
	}
}

// memd stopped after writing a commit's working file but before writing
// the index or moving main: the lock on main names the commit. The next
// start finishes the commit; the working tree keeps nothing HEAD lacks.
func TestStore_StopBetweenWorkingFileAndIndex(t *testing.T) {
	for _, kind := range []string{"fact", "note"} {
		t.Run(kind, func(t *testing.T) {
			dir, s, sh := stoppableShard(t)
			shardDir := sh.Dir()
			gitDir := filepath.Join(shardDir, ".git")
			write := func(i int) gitstore.Result {
				if kind == "fact" {
					return remember(t, sh, "Fact number "+string(rune('A'+i)), memd.TierLog, "m")
				}
				res, err := sh.Apply(noteChange("notes/plan.md", "note-edit: plan.md", func(cur []byte, _ bool) ([]byte, bool, error) {
					return append(append([]byte{}, cur...), "line "+string(rune('A'+i))+"\n"...), false, nil
				}))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			first := write(0)
			saved := filepath.Join(t.TempDir(), "index")
			copyFile(t, filepath.Join(gitDir, "index"), saved)
			second := write(1)
			// On disk: the working file holds the second commit's version;
			// the index and main the first's; the lock names the second.
			copyFile(t, saved, filepath.Join(gitDir, "index"))
			git(t, shardDir, "update-ref", "refs/heads/main", first.Commit.String())
			os.WriteFile(filepath.Join(gitDir, "refs", "heads", "main.lock"), []byte(second.Commit.String()+"\n"), 0o644)

			_, sh = reopen(t, dir, s)
			if head := strings.TrimSpace(git(t, shardDir, "rev-parse", "main")); head != second.Commit.String() {
				t.Errorf("main at %s, want %s", head, second.Commit)
			}
			if st := git(t, shardDir, "status", "--porcelain"); st != "" {
				t.Errorf("git status:\n%s", st)
			}
			write(2)
			if st := git(t, shardDir, "status", "--porcelain"); st != "" {
				t.Errorf("git status after the next write:\n%s", st)
			}
		})
	}
}

// memd stopped while moving main to a pushed commit (not one of its own):
// the lock on main names the person's commit, and memd's mark says the
// lock is memd's. The next start finishes the move instead of leaving main
// locked.
func TestStore_FinishesAPushItStoppedInTheMiddleOf(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	shardDir := sh.Dir()
	first := remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	f, _ := os.OpenFile(filepath.Join(shardDir, "log", "2026-11.md"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("- (2026-11-04) Pushed from a laptop\n")
	f.Close()
	git(t, shardDir, "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qam", "from a laptop")
	pushed := strings.TrimSpace(git(t, shardDir, "rev-parse", "HEAD"))
	s.Close()
	git(t, shardDir, "update-ref", "refs/heads/main", first.Commit.String())
	gitDir := filepath.Join(shardDir, ".git")
	os.WriteFile(filepath.Join(gitDir, "refs", "heads", "main.lock"), []byte(pushed+"\n"), 0o644)
	os.WriteFile(filepath.Join(gitDir, "memd-moving-main"), []byte(pushed+"\n"), 0o644)

	_, sh = reopen(t, dir, s)
	if head := strings.TrimSpace(git(t, shardDir, "rev-parse", "main")); head != pushed {
		t.Errorf("main at %s, want the pushed %s", head, pushed)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "refs", "heads", "main.lock")); !os.IsNotExist(err) {
		t.Errorf("the lock on main is still there: %v", err)
	}
	if st := git(t, shardDir, "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	remember(t, sh, "Took the night train", memd.TierLog, "m3")
	if got := texts(t, sh); len(got) != 3 {
		t.Errorf("facts: %v", got)
	}
}

// memd stopped while fast-forwarding main to a push of many commits (more
// than one group commit writes), after the working tree had been brought
// to it: the start finishes the move, leaving nothing in the working tree
// that HEAD lacks.
func TestStore_FinishesALongPushItStoppedInTheMiddleOf(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	shardDir := sh.Dir()
	gitDir := filepath.Join(shardDir, ".git")
	first := remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	s.Close()
	const path = "log/2026-11.md"
	for i := 0; i < 70; i++ {
		f, _ := os.OpenFile(filepath.Join(shardDir, path), os.O_WRONLY|os.O_APPEND, 0)
		fmt.Fprintf(f, "- (2026-11-04) Pushed fact %d\n", i)
		f.Close()
		git(t, shardDir, "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qam", fmt.Sprintf("laptop %d", i))
	}
	pushed := strings.TrimSpace(git(t, shardDir, "rev-parse", "HEAD"))
	oldBlob := strings.TrimSpace(git(t, shardDir, "rev-parse", first.Commit.String()+":"+path))
	newBlob := strings.TrimSpace(git(t, shardDir, "rev-parse", pushed+":"+path))
	git(t, shardDir, "update-ref", "refs/heads/main", first.Commit.String())
	os.WriteFile(filepath.Join(gitDir, "refs", "heads", "main.lock"), []byte(pushed+"\n"), 0o644)
	os.WriteFile(filepath.Join(gitDir, "memd-moving-main"), []byte(pushed+"\n"), 0o644)
	os.WriteFile(filepath.Join(gitDir, "memd-worktree"), []byte("memd worktree journal 1\ncommit "+pushed+"\n"+
		oldBlob+" \""+path+"\"\nalso "+newBlob+" \""+path+"\"\nend\n"), 0o644)

	reopen(t, dir, s)
	if head := strings.TrimSpace(git(t, shardDir, "rev-parse", "main")); head != pushed {
		t.Errorf("main at %s, want the pushed %s", head, pushed)
	}
	if st := git(t, shardDir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after start:\n%s", st)
	}
}

// A note's working file and index left at the parent's version while main
// names memd's commit, with no lock and no journal (a crash while finishing
// a move at start, or a power cut that took the unsynced journal): the
// start brings the note to HEAD, as it does fact files.
func TestStore_NoteBehindHeadWithoutAJournal(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	shardDir := sh.Dir()
	gitDir := filepath.Join(shardDir, ".git")
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: create plan.md", setNote("# Plan\n\n1. Book.\n"))); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "index")
	copyFile(t, filepath.Join(gitDir, "index"), saved)
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: plan.md", appendNote("2. Pack.\n"))); err != nil {
		t.Fatal(err)
	}
	s.Close()
	copyFile(t, saved, filepath.Join(gitDir, "index"))
	os.WriteFile(filepath.Join(shardDir, "notes", "plan.md"), []byte("# Plan\n\n1. Book.\n"), 0o644)

	reopen(t, dir, s)
	if st := git(t, shardDir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after start:\n%s", st)
	}
	if b, _ := os.ReadFile(filepath.Join(shardDir, "notes", "plan.md")); string(b) != "# Plan\n\n1. Book.\n2. Pack.\n" {
		t.Errorf("working note %q behind HEAD", b)
	}
}

// The journal names a commit main never reached and no lock is left to
// finish it (a power cut took the lock's directory entry): the working
// file memd had already written goes back to HEAD, keeping a line the
// person added since.
func TestStore_UndoesAWriteWhoseCommitNeverLanded(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	shardDir := sh.Dir()
	gitDir := filepath.Join(shardDir, ".git")
	const path = "log/2026-11.md"
	first := remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	saved := filepath.Join(t.TempDir(), "index")
	copyFile(t, filepath.Join(gitDir, "index"), saved)
	second := remember(t, sh, "Packed a raincoat", memd.TierLog, "m2")
	s.Close()
	oldBlob := strings.TrimSpace(git(t, shardDir, "rev-parse", first.Commit.String()+":"+path))
	newBlob := strings.TrimSpace(git(t, shardDir, "rev-parse", second.Commit.String()+":"+path))
	git(t, shardDir, "update-ref", "refs/heads/main", first.Commit.String())
	copyFile(t, saved, filepath.Join(gitDir, "index"))
	f, _ := os.OpenFile(filepath.Join(shardDir, path), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("- (2026-11-05) Written by hand\n")
	f.Close()
	os.WriteFile(filepath.Join(gitDir, "memd-worktree"), []byte("memd worktree journal 1\ncommit "+second.Commit.String()+"\n"+
		oldBlob+" \""+path+"\"\nalso "+newBlob+" \""+path+"\"\nend\n"), 0o644)

	reopen(t, dir, s)
	b, _ := os.ReadFile(filepath.Join(shardDir, path))
	if strings.Contains(string(b), "raincoat") || !strings.Contains(string(b), "Written by hand") || !strings.Contains(string(b), "Lisbon") {
		t.Errorf("working file after start:\n%s", b)
	}
	if st := git(t, shardDir, "status", "--porcelain"); st != " M "+path+"\n" {
		t.Errorf("git status after start: %q, want the person's edit alone", st)
	}
}
