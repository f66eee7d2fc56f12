package gitstore_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
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
	var release func()
	if editing {
		release = memdtest.RebaseInEditor(t, dir)
	} else {
		cmd := exec.Command("git", "-c", "user.name=p", "-c", "user.email=p@x", "rebase", "-i", "HEAD~1")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=sed -i 1s/^pick/edit/")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git rebase: %v\n%s", err, out)
		}
	}
	packs := packFiles(t, sh)
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
	// A refused write leaves no pack behind: an agent retrying in the same
	// second would write one of the same name again, which a git gc under
	// way may be deleting.
	if now := packFiles(t, sh); !slices.Equal(now, packs) {
		t.Errorf("pack files after the refused write: %d, want the %d before it", len(now), len(packs))
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

// storeOfTwo opens a store in a folder of its own with shard agent/erin
// holding two facts. The test closes it, and may open dir again with opts.
func storeOfTwo(t *testing.T) (dir string, opts gitstore.Options, s *gitstore.Store, sh *gitstore.Shard) {
	t.Helper()
	dir = t.TempDir()
	opts = gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage}
	s, err := gitstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	sh = createShard(t, s, "agent/erin")
	remember(t, sh, "Erin one", memd.TierProfile, "m1")
	remember(t, sh, "Erin two", memd.TierProfile, "m2")
	return dir, opts, s, sh
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
	dir, opts, s, sh := storeOfTwo(t)
	shardDir := sh.Dir()
	s.Close()
	git(t, shardDir, "checkout", "-q", "HEAD~1")
	looked := read(t, filepath.Join(shardDir, "profile.md"))

	s, err := gitstore.Open(dir, opts)
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

// A shard's folder whose .git has no HEAD (what a removal of the folder
// while memd ran can leave) holds no repository: it is not listed, so the
// shards beside it are served, and naming it says what to do. A shard
// whose folder goes while it is open refuses writes, leaving no .git
// behind.
func TestStore_AFolderWithoutARepositoryIsNoShard(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Alice one", memd.TierProfile, "m1")
	broken := filepath.Join(filepath.Dir(sh.Dir()), "bob")
	if err := os.MkdirAll(filepath.Join(broken, ".git", "objects", "pack"), 0o755); err != nil {
		t.Fatal(err)
	}
	ids, err := s.Shards()
	if err != nil || len(ids) != 1 || ids[0] != memd.AgentShard("alice") {
		t.Errorf("shards beside a .git without HEAD: %v %v, want agent/alice alone", ids, err)
	}
	if _, err := s.Shard(memd.AgentShard("bob")); memd.ErrorCode(err) != memd.ENOTFOUND {
		t.Errorf("the broken folder read as a shard: %v, want not_found", err)
	}
	if _, err := s.CreateShard(memd.AgentShard("bob")); memd.ErrorCode(err) != memd.ECONFLICT || !strings.Contains(err.Error(), "move") {
		t.Errorf("the broken folder written as a shard: %v, want conflict saying to move it", err)
	}

	if err := os.RemoveAll(sh.Dir()); err != nil {
		t.Fatal(err)
	}
	d, _ := memd.ParseDate("2026-11-03")
	_, err = sh.Apply(gitstore.Change{Author: alice, Message: "remember: after the removal",
		Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "After the removal", Date: d, Tier: memd.TierProfile}}}})
	if memd.ErrorCode(err) != memd.EUNAVAILABLE {
		t.Errorf("a write into a shard whose folder was removed: %v, want unavailable", err)
	}
	if _, err := os.Stat(sh.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the write left %s behind: %v", sh.Dir(), err)
	}
}

// linkedWorktreeOfMain detaches the shard's own checkout and checks main
// out in a linked worktree beside it (git worktree add), a person's way to
// work on main elsewhere; it returns the worktree's folder.
func linkedWorktreeOfMain(t *testing.T, sh *gitstore.Shard) string {
	t.Helper()
	git(t, sh.Dir(), "switch", "-q", "--detach")
	wt := filepath.Join(filepath.Dir(sh.Dir()), filepath.Base(sh.Dir())+"-main")
	git(t, sh.Dir(), "worktree", "add", "-q", wt, "main")
	return wt
}

// A commit made on main from a linked worktree (git worktree add) is
// checked as one made in the shard itself: its objects and main are in the
// shard's own git directory, not the worktree's.
func TestCheckStaged_FromALinkedWorktreeOfMain(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Alice one", memd.TierProfile, "m1")
	wt := linkedWorktreeOfMain(t, sh)
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

// A checkout of main that raced memd's move of it (above) holds main's
// files a version behind: a person who edits and stages before memd brings
// it forward, or commits at once, would take back with their commit what
// memd wrote while HEAD was away. The hook refuses such a commit, naming
// those facts, until what is committed holds them again; other commits go
// through as ever, and once memd finds the checkout in step it stops
// looking.
func TestCheckStaged_RefusesACommitTakingBackWhatMemdWroteWhileAway(t *testing.T) {
	dir, opts, s, sh := storeOfTwo(t)
	shardDir, gitDir := sh.Dir(), filepath.Join(sh.Dir(), ".git")
	git(t, shardDir, "checkout", "-q", "HEAD~1")
	before := strings.TrimSpace(git(t, shardDir, "rev-parse", "main"))
	remember(t, sh, "Erin three while away", memd.TierProfile, "m3")
	rememberOn(t, sh, "2026-12-05", "Erin logged while away")
	s.Close() // nothing brings the checkout forward now
	// The checkout as it lands when it read main before those moves, and
	// the person's edit staged on it.
	git(t, shardDir, "checkout", "-q", before)
	git(t, shardDir, "symbolic-ref", "HEAD", "refs/heads/main")
	appendTo(t, filepath.Join(shardDir, "profile.md"), "- (2026-12-01) Erin by hand\n")
	git(t, shardDir, "add", "profile.md")

	wantTakenBack(t, gitDir, "- (2026-12-05) Erin logged while away", "- (2026-11-03) Erin three while away")

	// memd starts: the day's log, missing from the checkout, is brought
	// forward; the staged profile.md is the person's, and still lacks the
	// fact until they put it back.
	var err error
	if s, err = gitstore.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if sh, err = s.Shard(memd.AgentShard("erin")); err != nil {
		t.Fatal(err)
	}
	wantTakenBack(t, gitDir, "- (2026-11-03) Erin three while away")
	appendTo(t, filepath.Join(shardDir, "profile.md"), "- (2026-11-03) Erin three while away\n")
	git(t, shardDir, "add", "profile.md")
	wantTakenBack(t, gitDir)
	git(t, shardDir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "hand")
	if got := texts(t, sh); len(got) != 5 {
		t.Errorf("facts after the person's commit: %q, want all five", got)
	}

	// In step again: memd's next write stops looking, and a person's
	// removal of a fact memd wrote while away goes through.
	remember(t, sh, "Erin four", memd.TierProfile, "m4")
	if _, err := os.Stat(filepath.Join(gitDir, gitstore.AwayBaseMark)); err == nil {
		t.Errorf("%s still there with the checkout in step", gitstore.AwayBaseMark)
	}
	profile := read(t, filepath.Join(shardDir, "profile.md"))
	os.WriteFile(filepath.Join(shardDir, "profile.md"), []byte(strings.Replace(profile, "- (2026-11-03) Erin three while away\n", "", 1)), 0o644)
	git(t, shardDir, "add", "profile.md")
	wantTakenBack(t, gitDir)
}

// wantTakenBack checks that CheckStaged names, in the shard whose git
// directory is gitDir, want as the lines the staged commit takes back.
func wantTakenBack(t *testing.T, gitDir string, want ...string) {
	t.Helper()
	staged, err := gitstore.CheckStaged(gitDir, filepath.Join(gitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range staged.TakenBack {
		got = append(got, l.Line)
	}
	if !slices.Equal(got, want) {
		t.Errorf("CheckStaged found the commit takes back\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if len(staged.Problems) > 0 {
		t.Errorf("CheckStaged named problems: %v", staged.Problems)
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// A git checkout away from main writes the files and the index under the
// index lock, lets it go, and names the new HEAD last. A write of memd's
// while git holds the lock (made to the working files alone), or in the
// moment between, finds HEAD on main and merges its change into what git
// just wrote; once HEAD names the checkout, that change shows as the
// person's own edit, and their `git checkout main` is refused (the ref
// watcher sees HEAD change, or memd's next write finds it away). memd puts
// back what the checkout held where its write is still there: whether git
// wrote the file before memd's write or after it, whether memd's retry
// took the index lock the moment git let it go, and however many writes
// of memd's came in the window.
func TestShard_AWriteRacingACheckoutAwayIsTakenOutOfIt(t *testing.T) {
	for _, moment := range []struct {
		name string
		// locked: memd's write comes while git holds the index lock;
		// overwritten: git writes the file after it (it looked at the
		// file first); caughtUp: memd's retry takes the lock the moment
		// git lets it go, HEAD still naming main; again: memd writes once
		// more before HEAD names the checkout.
		locked, overwritten, caughtUp, again bool
	}{
		{name: "while git holds the index", locked: true},
		{name: "while git holds the index, caught up as it lets go", locked: true, caughtUp: true},
		{name: "while git holds the index, then again", locked: true, again: true},
		{name: "while git holds the index, caught up, then again", locked: true, caughtUp: true, again: true},
		{name: "while git holds the index, written over", locked: true, overwritten: true},
		{name: "while git holds the index, written over, caught up", locked: true, overwritten: true, caughtUp: true},
		{name: "between the index and HEAD"},
		{name: "between the index and HEAD, twice", again: true},
	} {
		t.Run(moment.name, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			gitDir := filepath.Join(dir, ".git")
			old := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD~1"))
			looked := git(t, dir, "show", old+":profile.md")
			if moment.locked {
				// git has taken the lock, and has written profile.md
				// (or, overwritten, is yet to).
				lock := filepath.Join(gitDir, "index.lock")
				if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
					t.Fatal(err)
				}
				if !moment.overwritten {
					os.WriteFile(filepath.Join(dir, "profile.md"), []byte(looked), 0o644)
				}
				remember(t, sh, "Erin three while checking out", memd.TierProfile, "m3")
				if moment.overwritten {
					os.WriteFile(filepath.Join(dir, "profile.md"), []byte(looked), 0o644)
				}
				checkoutLetsGo(t, dir, old)
				if moment.caughtUp {
					sh.SyncWorktree(time.Second)
				}
			} else {
				// git has written the files and index, and let go.
				git(t, dir, "read-tree", "-u", "--reset", old)
				remember(t, sh, "Erin three while checking out", memd.TierProfile, "m3")
			}
			if moment.again {
				remember(t, sh, "Erin three again, HEAD still on main", memd.TierProfile, "m3b")
			}
			git(t, dir, "update-ref", "--no-deref", "HEAD", old) // names the checkout

			remember(t, sh, "Erin four while away", memd.TierProfile, "m4")
			wantCheckoutOf(t, dir, old) // as checked out
			git(t, dir, "checkout", "-q", "main")
			wantCheckoutOf(t, dir, "main")
		})
	}
}

// A git command holding the index may write back a working file as it was
// when the command began (git merge putting the tree back after a failed
// strategy, git stash), and one restoring it from an index memd had yet to
// bring forward (git checkout -- file) writes a version behind: memd's
// write of the file meanwhile, made without the index lock, is gone from
// it. The file holds a version memd wrote or main committed, not a
// person's edit, and memd brings it forward rather than keep its missing
// lines as the person's deletion, which their next `git commit -a` would
// commit.
func TestShard_AFileAGitCommandPutBackIsBroughtForward(t *testing.T) {
	for _, how := range []string{"as it began", "from the index, after a commit by hand"} {
		t.Run(how, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			file := filepath.Join(dir, "profile.md")
			if how != "as it began" {
				appendTo(t, file, "- (2026-12-01) Erin by hand\n")
				git(t, dir, "commit", "-qam", "by hand")
			}
			began := read(t, file)
			lock := filepath.Join(dir, ".git", "index.lock")
			if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
				t.Fatal(err)
			}
			remember(t, sh, "Erin three while git works", memd.TierProfile, "m3")
			if how == "as it began" {
				os.WriteFile(file, []byte(began), 0o644)
				os.Remove(lock)
			} else {
				os.Remove(lock)
				git(t, dir, "checkout", "--", "profile.md")
			}
			if !sh.SyncWorktree(time.Second) {
				t.Fatal("the working tree is not in step once git let go of the index")
			}
			wantCheckoutOf(t, dir, "main")
		})
	}
}

// The other way round: a branch made from main as memd moves it (git
// switch -c) can name memd's new commit while git writes back the index
// it read before memd's write, the file with it. The checkout is then a
// version behind its own commit, and the person's next commit on the
// branch would take memd's fact back (and, merged, off main). memd
// brings such a file forward to the checkout's commit.
func TestShard_ABranchMadeAsMemdWritesIsBroughtToItsCommit(t *testing.T) {
	sh, dir := shardOfTwo(t, "erin")
	gitDir := filepath.Join(dir, ".git")
	readIndex := read(t, filepath.Join(gitDir, "index"))
	readFile := read(t, filepath.Join(dir, "profile.md"))
	remember(t, sh, "Erin three as the branch is made", memd.TierProfile, "m3")
	writeBackIndex(t, gitDir, readIndex)
	os.WriteFile(filepath.Join(dir, "profile.md"), []byte(readFile), 0o644)
	git(t, dir, "branch", "side", "main")
	git(t, dir, "symbolic-ref", "HEAD", "refs/heads/side")

	remember(t, sh, "Erin four while away", memd.TierProfile, "m4")
	wantCheckoutOf(t, dir, "side")
}

// writeBackIndex writes data over the shard's index, as a git command
// writes back the index it read.
func writeBackIndex(t *testing.T, gitDir, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(gitDir, "index.new"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(gitDir, "index.new"), filepath.Join(gitDir, "index")); err != nil {
		t.Fatal(err)
	}
}

// wantCheckoutOf checks that the shard in dir holds profile.md as rev does,
// with nothing to commit.
func wantCheckoutOf(t *testing.T, dir, rev string) {
	t.Helper()
	if got, want := read(t, filepath.Join(dir, "profile.md")), git(t, dir, "show", rev+":profile.md"); got != want {
		t.Errorf("profile.md:\n%s\nwant %s's:\n%s", got, rev, want)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q, want clean", st)
	}
}

// git writes back the index it read (git status, git add), and one that
// read it just before memd's update leaves it a version behind main for a
// fact file the person never touched: their next commit would take memd's
// fact back. The hook refuses it, naming the fact, until the file is
// staged again; a fact the person deletes from the file goes through.
func TestCheckStaged_RefusesACommitFromAnIndexWrittenBack(t *testing.T) {
	sh, dir := shardOfTwo(t, "erin")
	gitDir := filepath.Join(dir, ".git")
	readIndex := read(t, filepath.Join(gitDir, "index"))
	remember(t, sh, "Erin three as git status runs", memd.TierProfile, "m3")
	writeBackIndex(t, gitDir, readIndex)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x\n"), 0o644)
	git(t, dir, "add", "notes.txt")
	wantTakenBack(t, gitDir, "- (2026-11-03) Erin three as git status runs")

	git(t, dir, "add", "profile.md") // the working file holds it
	wantTakenBack(t, gitDir)
	// Deleting it from the file is the person's to do.
	profile := read(t, filepath.Join(dir, "profile.md"))
	os.WriteFile(filepath.Join(dir, "profile.md"), []byte(strings.Replace(profile, "- (2026-11-03) Erin three as git status runs\n", "", 1)), 0o644)
	git(t, dir, "add", "profile.md")
	wantTakenBack(t, gitDir)
}

// A person who deletes memd's newest fact from the file leaves it exactly
// as it was a commit before: their deletion, which memd's next write keeps
// once moments have passed since memd wrote it (until then it is taken for
// a git command putting the file back, above).
func TestShard_APersonsDeletionOfTheNewestFactIsKept(t *testing.T) {
	sh, file, two := twoDeletedLater(t)
	remember(t, sh, "Erin three", memd.TierProfile, "m3")
	if got := read(t, file); strings.Contains(got, two) || !strings.Contains(got, "Erin three") {
		t.Errorf("profile.md after memd's write:\n%s\nwant Erin two deleted, Erin three in", got)
	}
}

// A checkout made well after memd's last write is the person's: a branch
// made for a deletion they staged keeps it.
func TestShard_ABranchMadeLaterKeepsAStagedDeletion(t *testing.T) {
	sh, file, two := twoDeletedLater(t)
	dir := sh.Dir()
	git(t, dir, "add", "profile.md")
	git(t, dir, "switch", "-q", "-c", "fix")
	sh.SyncWorktree(indexWaitForTests) // as when the ref watcher sees HEAD change
	remember(t, sh, "Erin three while away", memd.TierProfile, "m3")
	if got := read(t, file); strings.Contains(got, two) {
		t.Errorf("the staged deletion was undone on the new branch:\n%s", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "M  profile.md\n" {
		t.Errorf("git status: %q, want the deletion still staged", st)
	}
}

const indexWaitForTests = 20 * time.Millisecond

// twoDeletedLater returns a shard of two facts whose second line a person
// deleted from profile.md (file) well after memd wrote it.
func twoDeletedLater(t *testing.T) (sh *gitstore.Shard, file, two string) {
	t.Helper()
	*gitstore.StepsKeptFor = 0 // memd's write long past
	t.Cleanup(func() { *gitstore.StepsKeptFor = 5 * time.Second })
	sh, dir := shardOfTwo(t, "erin")
	file, two = filepath.Join(dir, "profile.md"), "- (2026-11-03) Erin two\n"
	if err := os.WriteFile(file, []byte(strings.Replace(read(t, file), two, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return sh, file, two
}

// git merge reads HEAD, merges, and only then marks the merge under way
// (MERGE_HEAD), when memd's writes into a file in conflict are refused: a
// commit of memd's in between is on main but in neither side of the merge,
// and settling the conflict with the person's side (git checkout --ours)
// and committing the merge on main as it is would take it back. The hook
// refuses that commit, naming the fact.
func TestCheckStaged_RefusesAMergeTakingBackWhatMemdWroteAsItBegan(t *testing.T) {
	sh, dir := shardOfTwo(t, "erin")
	gitDir := filepath.Join(dir, ".git")
	git(t, dir, "switch", "-q", "-c", "side")
	appendTo(t, filepath.Join(dir, "profile.md"), "- (2026-12-02) Erin on the side\n")
	git(t, dir, "commit", "-qam", "side")
	git(t, dir, "switch", "-q", "main")
	appendTo(t, filepath.Join(dir, "profile.md"), "- (2026-12-03) Erin on main\n")
	git(t, dir, "commit", "-qam", "main")
	if out, err := memdtest.GitOut(dir, "merge", "--no-edit", "side"); err == nil {
		t.Fatalf("the merge went through without a conflict:\n%s", out)
	}
	// memd's commit as git began, before it marked the merge under way.
	os.Rename(filepath.Join(gitDir, "MERGE_HEAD"), filepath.Join(gitDir, "MERGE_HEAD.away"))
	remember(t, sh, "Erin three as the merge began", memd.TierProfile, "m3")
	os.Rename(filepath.Join(gitDir, "MERGE_HEAD.away"), filepath.Join(gitDir, "MERGE_HEAD"))

	git(t, dir, "checkout", "--ours", "profile.md")
	git(t, dir, "add", "profile.md")
	wantTakenBack(t, gitDir, "- (2026-11-03) Erin three as the merge began")
}

// A checkout racing several of memd's writes, in each order they can
// come: before git lets go of the index, "w" is a write of memd's (to the
// file alone) and "o" git writing the checkout's version of the file,
// which differs from main's (before or after memd's write); after, "c" is
// memd's retry catching the index up and "W" a write, all before git
// names HEAD. However many writes, the checkout is put back as git made
// it. (A checkout whose version of the file is main's carries the file
// and entry over: TestShard_ABranchRacingTwoWritesIsTakenOutOfThem and
// the test after it.)
func TestShard_ACheckoutRacingSeveralWritesIsTakenOutOfThem(t *testing.T) {
	for _, seq := range []struct{ locked, after string }{
		{"ow", "cWW"}, {"wo", "cW"}, {"wow", "c"}, {"wow", "cW"}, {"", "WWW"}, {"oww", "cW"}, {"ow", "WcW"},
	} {
		t.Run(seq.locked+"|"+seq.after, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			gitDir := filepath.Join(dir, ".git")
			old := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD~1"))
			looked := git(t, dir, "show", old+":profile.md")
			n := 0
			write := func() {
				n++
				remember(t, sh, fmt.Sprintf("Erin's write %d", n), memd.TierProfile, "m")
			}
			if seq.locked != "" {
				lock := filepath.Join(gitDir, "index.lock")
				if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, step := range seq.locked {
					if step == 'w' {
						write()
					} else {
						os.WriteFile(filepath.Join(dir, "profile.md"), []byte(looked), 0o644)
					}
				}
				checkoutLetsGo(t, dir, old)
			} else {
				git(t, dir, "read-tree", "-u", "--reset", old)
			}
			for _, step := range seq.after {
				if step == 'c' {
					sh.SyncWorktree(time.Second)
				} else {
					write()
				}
			}
			git(t, dir, "update-ref", "--no-deref", "HEAD", old) // names the checkout
			sh.SyncWorktree(time.Second)                         // the ref watcher sees it
			wantCheckoutOf(t, dir, old)
			git(t, dir, "checkout", "-q", "main")
			wantCheckoutOf(t, dir, "main")
		})
	}
}

// No race: memd wrote while a git command held the index (git status
// from a prompt, an editor's git integration) and caught the index up
// once it was let go; moments later the person makes a branch of main as
// it is. The branch is clean, memd's fact in it.
func TestShard_ABranchMadeAfterACatchUpIsLeftAsItIs(t *testing.T) {
	for _, how := range [][]string{
		{"switch", "-q", "-c", "fix"},
		{"checkout", "-q", "-b", "fix"},
		{"switch", "-q", "--detach"},
	} {
		t.Run(strings.Join(how, " "), func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			lock := filepath.Join(dir, ".git", "index.lock")
			if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
				t.Fatal(err)
			}
			remember(t, sh, "Erin three while git status runs", memd.TierProfile, "m3")
			os.Remove(lock)
			if !sh.SyncWorktree(time.Second) { // memd's retry
				t.Fatal("the working tree is not in step once git let go of the index")
			}
			wantCheckoutOf(t, dir, "main")
			git(t, dir, how...)
			sh.SyncWorktree(time.Second) // the ref watcher sees HEAD change
			wantCheckoutOf(t, dir, "HEAD")
			remember(t, sh, "Erin four on main", memd.TierProfile, "m4")
			wantCheckoutOf(t, dir, "HEAD")
		})
	}
}

// No race either: moments after memd's writes, the person stages a file
// as it was some commits back (or its removal) on purpose and makes a
// branch to work on it. What they staged stays staged. (Staging the
// version memd's last write found, HEAD~1 here, or HEAD~k where memd's
// retry indexed k writes to the file alone at once, looks exactly like a
// branch made as memd wrote, whose index git wrote back as it read it:
// that one is brought forward.)
func TestShard_AChangeStagedBeforeABranchIsKept(t *testing.T) {
	for _, back := range []string{"HEAD~2", "HEAD~3", "removed", "removed, memd's new file"} {
		t.Run(back, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin") // memd made profile.md, and wrote it again
			file := filepath.Join(dir, "profile.md")
			if back != "removed, memd's new file" {
				appendTo(t, file, "- (2026-12-01) Erin by hand\n")
				git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qam", "by hand")
				for _, n := range []string{"three", "four", "five"} {
					remember(t, sh, "Erin "+n, memd.TierProfile, "m-"+n)
				}
			}
			wantStatus := "M  profile.md\n"
			if strings.HasPrefix(back, "removed") {
				git(t, dir, "rm", "-q", "profile.md")
				wantStatus = "D  profile.md\n"
			} else {
				git(t, dir, "checkout", back, "--", "profile.md")
			}
			staged, _ := os.ReadFile(file)
			git(t, dir, "switch", "-q", "-c", "fix")
			sh.SyncWorktree(time.Second) // the ref watcher sees HEAD change
			if got, _ := os.ReadFile(file); string(got) != string(staged) {
				t.Errorf("profile.md:\n%s\nwant as staged:\n%s", got, staged)
			}
			if st := git(t, dir, "status", "--porcelain"); st != wantStatus {
				t.Errorf("git status: %q, want %q", st, wantStatus)
			}
		})
	}
}

// handCommit has the person change profile.md and commit it: memd's next
// write finds the file as the person left it, which starts its run anew.
func handCommit(t *testing.T, dir string) {
	t.Helper()
	appendTo(t, filepath.Join(dir, "profile.md"), "- (2026-12-01) Erin by hand\n")
	git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qam", "by hand")
}

// git switch -c resolves HEAD; memd writes profile.md twice (with the
// index: git has yet to take it, or never does); git names the new branch
// at the commit it resolved and leaves file and index alone, main's
// version and the branch's being one. The branch would show memd's two
// writes as the person's staged change. Both are taken out of it, after
// earlier writes of memd's moments before or not.
func TestShard_ABranchRacingTwoWritesIsTakenOutOfThem(t *testing.T) {
	for _, before := range []string{"memd wrote the file just before", "the person committed the file just before"} {
		t.Run(before, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin") // memd's two writes of profile.md, moments ago
			if before == "the person committed the file just before" {
				handCommit(t, dir)
			}
			start := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")) // git resolves HEAD
			remember(t, sh, "Erin three as the branch is made", memd.TierProfile, "m3")
			remember(t, sh, "Erin four as the branch is made", memd.TierProfile, "m4")
			git(t, dir, "branch", "fix", start)
			git(t, dir, "symbolic-ref", "HEAD", "refs/heads/fix") // names it
			sh.SyncWorktree(time.Second)                          // the ref watcher sees it
			wantCheckoutOf(t, dir, "fix")
			git(t, dir, "checkout", "-q", "main")
			wantCheckoutOf(t, dir, "main")
		})
	}
}

// git checkout side, side holding profile.md as main did when git read
// HEAD: memd writes before git takes the index lock, then once while git
// holds it (to the file alone); git writes back the index it read (the
// entry carried over) and lets go; then memd's retry takes the lock, or
// memd writes once more, before HEAD names side. The writes are taken out
// of the checkout.
func TestShard_ACheckoutRacingALockedThenAnUnlockedWriteIsTakenOutOfThem(t *testing.T) {
	for _, then := range []string{"nothing", "memd's retry", "another write"} {
		t.Run(then, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			handCommit(t, dir)
			gitDir := filepath.Join(dir, ".git")
			git(t, dir, "branch", "side")
			remember(t, sh, "Erin three before git takes the lock", memd.TierProfile, "m3")
			lock := filepath.Join(gitDir, "index.lock")
			if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
				t.Fatal(err)
			}
			readIndex := read(t, filepath.Join(gitDir, "index"))
			remember(t, sh, "Erin four while git holds the index", memd.TierProfile, "m4")
			writeBackIndex(t, gitDir, readIndex)
			os.Remove(lock)
			switch then {
			case "memd's retry":
				sh.SyncWorktree(time.Second)
			case "another write":
				remember(t, sh, "Erin five before HEAD is named", memd.TierProfile, "m5")
			}
			git(t, dir, "symbolic-ref", "HEAD", "refs/heads/side")
			sh.SyncWorktree(time.Second) // the ref watcher sees it
			wantCheckoutOf(t, dir, "side")
			git(t, dir, "checkout", "-q", "main")
			wantCheckoutOf(t, dir, "main")
		})
	}
}

// checkoutLetsGo plays the end of a git checkout of rev in the shard in
// dir that holds its index lock: the index written as rev's, put in place,
// and the lock let go. HEAD is still to be named.
func checkoutLetsGo(t *testing.T, dir, rev string) {
	t.Helper()
	gitDir := filepath.Join(dir, ".git")
	tmp := filepath.Join(gitDir, "index.checkout")
	readTree := exec.Command("git", "read-tree", rev)
	readTree.Dir, readTree.Env = dir, append(os.Environ(), "GIT_INDEX_FILE="+tmp)
	if out, err := readTree.CombinedOutput(); err != nil {
		t.Fatalf("git read-tree: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, filepath.Join(gitDir, "index")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(gitDir, "index.lock"))
}

// A write that checked for a rebase of main a moment before one began,
// and moved main after the rebase had read it, is answered; the rebase
// then cannot finish (it moves main only from where it read it), and its
// abort sets main back to where the rebase began, taking the answered
// write off main. memd puts it back before its next write, the person's
// own commits of the rebase gone with the abort as they meant.
func TestShard_AnAbortedRebaseGivesBackWhatMemdWroteMeanwhile(t *testing.T) {
	sh, dir := abortedOverAWrite(t)
	remember(t, sh, "Dave after the abort", memd.TierProfile, "m4")
	want := []string{"Dave after the abort", "Dave during the rebase", "Dave one", "Dave two"}
	if got := texts(t, sh); !slices.Equal(got, want) {
		t.Errorf("facts after the abort: %q, want %q", got, want)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q, want clean", st)
	}
	for _, text := range want {
		if !strings.Contains(read(t, filepath.Join(dir, "profile.md")), text) {
			t.Errorf("profile.md lacks %q", text)
		}
	}
	if log := git(t, dir, "reflog", "-3", "--format=%gs", "main"); !strings.Contains(log, "git rebase --abort") {
		t.Errorf("main's reflog does not say memd put back what the abort took:\n%s", log)
	}
}

// A person who resets main after the abort (git reset: meaning to drop
// what it drops) has main as they left it: memd puts nothing back.
func TestShard_AResetAfterAnAbortedRebaseIsLeftAlone(t *testing.T) {
	sh, dir := abortedOverAWrite(t)
	git(t, dir, "reset", "-q", "--hard", "HEAD~1")
	remember(t, sh, "Dave after the reset", memd.TierProfile, "m4")
	want := []string{"Dave after the reset", "Dave one"}
	if got := texts(t, sh); !slices.Equal(got, want) {
		t.Errorf("facts after the reset: %q, want %q", got, want)
	}
}

// abortedOverAWrite makes dave's shard of two facts, a third memd wrote
// in the moment a person's git rebase -i had read main, and the rebase,
// unable to finish, aborted: main is back where the rebase began.
func abortedOverAWrite(t *testing.T) (*gitstore.Shard, string) {
	t.Helper()
	sh, dir := shardOfTwo(t, "dave")
	finish := memdtest.RebaseInEditor(t, dir)
	state := filepath.Join(dir, ".git", "rebase-merge")
	began := git(t, dir, "rev-parse", "main")
	// The rebase has read main; memd's write checked before its state
	// was written: the state is out of memd's sight for the write alone.
	hidden := state + ".hidden"
	if err := os.Rename(state, hidden); err != nil {
		t.Fatal(err)
	}
	remember(t, sh, "Dave during the rebase", memd.TierProfile, "m3")
	if err := os.Rename(hidden, state); err != nil {
		t.Fatal(err)
	}
	finish()
	if main := git(t, dir, "rev-parse", "main"); main == began {
		t.Fatal("the rebase finished over memd's write; the race this test stands for did not happen")
	}
	git(t, dir, "rebase", "--abort")
	if main := git(t, dir, "rev-parse", "main"); main != began {
		t.Fatalf("git rebase --abort left main at %s, want %s where the rebase began", main, began)
	}
	return sh, dir
}

// Integrating with ForwardOnly moves main only forward: to a commit
// beside main it merges nothing (what the put-back of an aborted rebase
// asks, so that a person's move of main in the meantime stays).
func TestShard_IntegrateForwardOnly(t *testing.T) {
	sh, dir := shardOfTwo(t, "dave")
	main := git(t, dir, "rev-parse", "main")
	beside := strings.TrimSpace(git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit-tree", "-p", "HEAD~1", "-m", "beside", "HEAD^{tree}"))
	in, err := sh.Integrate(gitstore.NewHash(beside), gitstore.IntegrateOptions{From: "a test", ForwardOnly: true})
	if err != nil || in.Kind != gitstore.IntegrateNone {
		t.Fatalf("integrate beside main, forward only: %+v, %v; want nothing done", in, err)
	}
	if now := git(t, dir, "rev-parse", "main"); now != main {
		t.Errorf("main moved to %s", now)
	}
}
