package gitstore_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// A person who checks out another commit or a branch of their own (to look
// at an old version, to bisect, to work apart) has that checkout's working
// tree and index: memd's commits go on main and leave them alone, and when
// the person checks out main again git brings every fact memd wrote
// meanwhile, with nothing shown as deleted for their next commit to take.
func TestShard_WritesLeaveACheckoutAwayFromMainAlone(t *testing.T) {
	for _, away := range [][]string{
		{"checkout", "-q", "HEAD~1"},             // detached, an old commit
		{"switch", "-q", "-c", "look", "HEAD~1"}, // a branch of the person's own
	} {
		t.Run(away[0], func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			git(t, dir, away...)
			looked := read(t, filepath.Join(dir, "profile.md"))

			remember(t, sh, "Erin three while away", memd.TierProfile, "m3")
			if got := read(t, filepath.Join(dir, "profile.md")); got != looked {
				t.Errorf("the checkout away from main was written:\n%s\nwant it as checked out:\n%s", got, looked)
			}
			if st := git(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status away from main: %q, want clean", st)
			}

			git(t, dir, "checkout", "-q", "main")
			if st := git(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status back on main: %q, want clean", st)
			}
			for _, want := range []string{"Erin one", "Erin two", "Erin three while away"} {
				if !strings.Contains(read(t, filepath.Join(dir, "profile.md")), want) {
					t.Errorf("profile.md back on main lacks %q", want)
				}
			}
			// The person's next commit takes nothing of memd's away.
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x\n"), 0o644)
			git(t, dir, "add", "notes.txt")
			git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qam", "hand")
			if got := texts(t, sh); len(got) != 3 {
				t.Errorf("facts after the person's commit: %q, want all three", got)
			}
		})
	}
}

// A rebase of main ends by setting main to what it built, or, aborted, to
// where it began, whatever memd committed meanwhile: while one is under way
// (stopped at a commit, or with its list of commits open in an editor, HEAD
// still on main) a write is refused (unavailable: try again) and commits
// nothing.
func TestShard_WriteDuringARebaseOfMainIsRefused(t *testing.T) {
	for _, editing := range []bool{false, true} {
		name := "stopped at a commit"
		if editing {
			name = "its list in an editor"
		}
		t.Run(name, func(t *testing.T) { writeDuringARebase(t, editing) })
	}
}

func writeDuringARebase(t *testing.T, editing bool) {
	sh, dir := shardOfTwo(t, "dave")
	cmd := exec.Command("git", "-c", "user.name=p", "-c", "user.email=p@x", "rebase", "-i", "HEAD~1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=sed -i 1s/^pick/edit/")
	var release func()
	if editing {
		// The editor waits for the test, as a person's would.
		fifo := filepath.Join(t.TempDir(), "go")
		if err := exec.Command("mkfifo", fifo).Run(); err != nil {
			t.Skip("mkfifo:", err)
		}
		cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=read x < "+fifo+"; true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for {
			if _, err := os.Stat(filepath.Join(dir, ".git", "rebase-merge", "git-rebase-todo")); err == nil {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("git rebase ended before its editor opened: %v", err)
			default:
				runtime.Gosched()
			}
		}
		release = func() {
			os.WriteFile(fifo, []byte("\n"), 0o644)
			<-done
		}
	} else if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git rebase: %v\n%s", err, out)
	}
	before := git(t, dir, "rev-parse", "main")
	d, _ := memd.ParseDate("2026-11-03")
	_, err := sh.Apply(gitstore.Change{Author: alice, Message: "remember: during the rebase",
		Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "During the rebase", Date: d, Tier: memd.TierProfile}}}})
	if memd.ErrorCode(err) != memd.EUNAVAILABLE || !strings.Contains(err.Error(), "rebase") {
		t.Fatalf("write during a rebase of main: %v, want unavailable naming the rebase", err)
	}
	if after := git(t, dir, "rev-parse", "main"); after != before {
		t.Fatalf("main moved during the rebase: %s -> %s", before, after)
	}
	if release != nil {
		release()
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "rebase-merge")); err == nil {
		git(t, dir, "rebase", "--abort")
	}
	remember(t, sh, "After the rebase", memd.TierProfile, "m3")
	if got := texts(t, sh); len(got) != 3 {
		t.Errorf("facts after the abort and a write: %q", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q, want clean", st)
	}
}

// shardOfTwo is agent/name's shard holding two facts, "Name one" and "Name
// two", a commit each, and its working tree.
func shardOfTwo(t *testing.T, name string) (*gitstore.Shard, string) {
	t.Helper()
	sh := createShard(t, openStore(t), "agent/"+name)
	for _, n := range []string{"one", "two"} {
		remember(t, sh, strings.ToUpper(name[:1])+name[1:]+" "+n, memd.TierProfile, "m-"+n)
	}
	return sh, sh.Dir()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A start finds a shard checked out away from main as a person left it: it
// opens, writes go on main, and the checkout is left alone.
func TestStore_StartsWithAShardCheckedOutAwayFromMain(t *testing.T) {
	dir := t.TempDir()
	opts := gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage}
	s, err := gitstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	sh := createShard(t, s, "agent/erin")
	remember(t, sh, "Erin one", memd.TierProfile, "m1")
	remember(t, sh, "Erin two", memd.TierProfile, "m2")
	shardDir := sh.Dir()
	s.Close()
	git(t, shardDir, "checkout", "-q", "HEAD~1")
	looked := read(t, filepath.Join(shardDir, "profile.md"))

	s, err = gitstore.Open(dir, opts)
	if err != nil {
		t.Fatalf("open with a shard checked out away from main: %v", err)
	}
	defer s.Close()
	sh, err = s.Shard(memd.AgentShard("erin"))
	if err != nil {
		t.Fatalf("shard checked out away from main: %v", err)
	}
	remember(t, sh, "Erin three", memd.TierProfile, "m3")
	if got := read(t, filepath.Join(shardDir, "profile.md")); got != looked {
		t.Errorf("the checkout was written:\n%s", got)
	}
	git(t, shardDir, "checkout", "-q", "main")
	if st := git(t, shardDir, "status", "--porcelain"); st != "" {
		t.Errorf("git status back on main: %q, want clean", st)
	}
	if got := texts(t, sh); len(got) != 3 {
		t.Errorf("facts: %q, want three", got)
	}
}

// Every move of main memd makes is in main's reflog, and HEAD's, as a
// person's commits are: after a hand reset (or an aborted rebase) moved
// main away from memd's commit, `git reset main@{1}` finds it again.
func TestShard_ReflogNamesMemdsCommits(t *testing.T) {
	sh, dir := shardOfTwo(t, "erin")
	two := strings.TrimSpace(git(t, dir, "rev-parse", "main"))
	for _, ref := range []string{"main", "HEAD"} {
		log := git(t, dir, "reflog", "--format=%H %gs", ref)
		if first, _, _ := strings.Cut(log, "\n"); first != two+" memd: remember: Erin two" {
			t.Errorf("git reflog %s starts %q, want memd's last commit", ref, first)
		}
	}
	git(t, dir, "reset", "-q", "--hard", "HEAD~1")
	git(t, dir, "reset", "-q", "--hard", "main@{1}")
	if got := texts(t, sh); len(got) != 2 {
		t.Errorf("facts after resetting to main@{1}: %q, want both", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q", st)
	}
}

// Away from main, a note's working file is the checkout's: memd's change of
// the note goes on main, not refused as if the person had edited it.
func TestShard_NoteChangesGoOnMainWhileAway(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/erin")
	dir := sh.Dir()
	write := func(text string) error {
		_, err := sh.Apply(gitstore.Change{Author: alice, Message: "note-edit: plan", Note: &gitstore.NoteChange{Path: "notes/plan.md",
			Update: func([]byte, bool) ([]byte, bool, error) { return []byte(text), false, nil }}})
		return err
	}
	remember(t, sh, "Erin one", memd.TierProfile, "m1")
	if err := write("# Plan\n\n1. Build.\n"); err != nil {
		t.Fatal(err)
	}
	if err := write("# Plan\n\n1. Build.\n2. Ship.\n"); err != nil {
		t.Fatal(err)
	}
	for _, back := range []string{"HEAD~1", "HEAD~2"} { // the note older, then absent
		git(t, dir, "checkout", "-q", back)
		if err := write("# Plan\n\n1. Build.\n2. Ship.\n3. " + back + "\n"); err != nil {
			t.Errorf("note change with %s checked out: %v", back, err)
		}
		git(t, dir, "checkout", "-q", "main")
		if st := git(t, dir, "status", "--porcelain"); st != "" {
			t.Errorf("git status back on main: %q", st)
		}
	}
}

// git checks out main by reading where it points, writing the files and
// index, then naming main in HEAD: a checkout that read main just before
// memd moved it (memd left the working tree alone, HEAD being away) leaves
// the files a version behind. memd brings them forward before its next
// write, so the person's next commit takes nothing of memd's back.
func TestShard_ACheckoutOfMainThatRacedAMoveIsBroughtForward(t *testing.T) {
	sh, dir := shardOfTwo(t, "erin")
	git(t, dir, "checkout", "-q", "HEAD~1")
	before := strings.TrimSpace(git(t, dir, "rev-parse", "main"))
	remember(t, sh, "Erin three while away", memd.TierProfile, "m3")
	// The checkout as it lands when it read main before that move.
	git(t, dir, "checkout", "-q", before)
	git(t, dir, "symbolic-ref", "HEAD", "refs/heads/main")

	remember(t, sh, "Erin four", memd.TierProfile, "m4")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after the next write: %q, want clean", st)
	}
	git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "--allow-empty", "-am", "hand")
	if got := texts(t, sh); len(got) != 4 {
		t.Errorf("facts after the person's commit: %q, want all four", got)
	}
}

// A linked worktree a person adds beside a shard (git worktree add
// ../alice-wt) is no shard: the store's list leaves it out, and naming it
// finds none, rather than failing every listing.
func TestStore_AWorktreeBesideAShardIsNoShard(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Alice one", memd.TierProfile, "m1")
	git(t, sh.Dir(), "worktree", "add", "-q", "../alice-wt", "-b", "wtbranch")
	ids, err := s.Shards()
	if err != nil || len(ids) != 1 || ids[0] != memd.AgentShard("alice") {
		t.Errorf("shards with a worktree beside one: %v %v, want agent/alice alone", ids, err)
	}
	if _, err := s.Shard(memd.AgentShard("alice-wt")); memd.ErrorCode(err) != memd.ENOTFOUND {
		t.Errorf("the worktree named as a shard: %v, want not_found", err)
	}
}

// A commit made on main from a linked worktree (git worktree add) is
// checked as one made in the shard itself: its objects and main are in the
// shard's own git directory, not the worktree's.
func TestCheckStaged_FromALinkedWorktreeOfMain(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Alice one", memd.TierProfile, "m1")
	git(t, sh.Dir(), "switch", "-q", "--detach")
	wt := filepath.Join(filepath.Dir(sh.Dir()), "alice-main")
	git(t, sh.Dir(), "worktree", "add", "-q", wt, "main")
	f, err := os.OpenFile(filepath.Join(wt, "profile.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- (2026-13-40) A date no calendar has\n")
	f.Close()
	git(t, wt, "add", "profile.md")
	gitDir := strings.TrimSpace(git(t, wt, "rev-parse", "--absolute-git-dir"))
	staged, err := gitstore.CheckStaged(gitDir, filepath.Join(gitDir, "index"))
	if err != nil || len(staged.Problems) != 1 {
		t.Errorf("a bad line staged in a worktree of main: %+v %v, want it named", staged, err)
	}
}
