package gitstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// A link a person made where a note's folder goes: memd writes no file
// through it, and their commit -a does not drop memd's note.
func TestShard_ALinkWhereANotesFolderGoes(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	os.MkdirAll(filepath.Join(sh.Dir(), "notes"), 0o755)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(sh.Dir(), "notes", "proj")); err != nil {
		t.Fatal(err)
	}
	_, err := sh.Apply(noteChange("notes/proj/plan.md", "note-edit: create", setNote("memd\n")))
	if memd.ErrorCode(err) == memd.ECONFLICT {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-q", "-a", "-m", "mine")
	if out, _ := os.ReadFile(filepath.Join(sh.Dir(), "notes", "proj", "plan.md")); true {
		t.Logf("file through the link: %q; status: %q", out, git(t, sh.Dir(), "status", "--porcelain"))
	}
	if got := git(t, sh.Dir(), "ls-tree", "-r", "--name-only", "HEAD"); !strings.Contains(got, "notes/proj/plan.md") {
		t.Errorf("memd's note lost at the person's commit -a; HEAD holds %q", got)
	}
}

// A link to a folder a person made at a note's path: memd's note is not
// lost at their next commit.
func TestShard_ALinkAtANotesPath(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	os.MkdirAll(filepath.Join(sh.Dir(), "notes"), 0o755)
	if err := os.Symlink(t.TempDir(), filepath.Join(sh.Dir(), "notes", "x.md")); err != nil {
		t.Fatal(err)
	}
	_, err := sh.Apply(noteChange("notes/x.md", "note-edit: create", setNote("memd\n")))
	refusedOrKept(t, sh, err, "notes/x.md")
}

// An empty folder a person made inside the folder a note replaces keeps
// memd's note from being lost at their next commit.
func TestShard_AnEmptyFolderInTheFolderANoteReplaces(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	del := func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }
	if _, err := sh.Apply(noteChange("notes/trip.md/day-one.md", "note-edit: create", setNote("Lisbon\n"))); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(sh.Dir(), "notes", "trip.md", "later"), 0o755)
	errs := sh.ApplyTogether(noteChange("notes/trip.md/day-one.md", "note-edit: delete", del),
		noteChange("notes/trip.md", "note-edit: create", setNote("Lisbon\n")))
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	refusedOrKept(t, sh, errs[1], "notes/trip.md")
}

// A folder a person makes at a note's path between memd's check and its
// write is seen by the second look.
func TestShard_AFolderMadeBetweenCheckAndWrite(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	draft := filepath.Join(sh.Dir(), "notes", "x.md", "draft.md")
	errs := sh.ApplyTogether(
		noteChange("notes/x.md", "note-edit: create", setNote("memd\n")),
		noteChange("notes/other.md", "note-edit: other", func([]byte, bool) ([]byte, bool, error) {
			os.MkdirAll(filepath.Dir(draft), 0o755)
			os.WriteFile(draft, []byte("mine\n"), 0o644)
			return []byte("other\n"), false, nil
		}))
	if memd.ErrorCode(errs[0]) == memd.ECONFLICT {
		return
	}
	t.Logf("errs %v; status: %q", errs, git(t, sh.Dir(), "status", "--porcelain"))
	git(t, sh.Dir(), "commit", "-q", "-m", "mine", "--allow-empty")
	if got := git(t, sh.Dir(), "ls-tree", "-r", "--name-only", "HEAD"); !strings.Contains(got, "notes/x.md\n") {
		t.Errorf("memd's note lost at the person's commit; HEAD holds %q", got)
	}
}

// CRLF line ends git writes by core.eol or by core.autocrlf spelled yes
// or True are no edit: memd does not refuse for them.
func TestShard_CRLFGitWritesByEveryRule(t *testing.T) {
	for _, cfg := range [][]string{{"core.eol", "crlf"}, {"core.autocrlf", "yes"}, {"core.autocrlf", "True"}} {
		t.Run(strings.Join(cfg, "="), func(t *testing.T) {
			s := openStore(t)
			sh := createShard(t, s, "agent/alice")
			git(t, sh.Dir(), "config", cfg[0], cfg[1])
			if cfg[0] == "core.eol" {
				os.WriteFile(filepath.Join(sh.Dir(), ".gitattributes"), []byte("*.md text\n"), 0o644)
			}
			createPlan(t, sh, "# Plan\nbuy milk\n")
			os.Remove(filepath.Join(sh.Dir(), "notes", "plan.md"))
			git(t, sh.Dir(), "checkout", "--", "notes/plan.md")
			if !strings.Contains(readFile(t, filepath.Join(sh.Dir(), "notes", "plan.md")), "\r\n") {
				t.Fatal("git did not write CRLF")
			}
			if st := git(t, sh.Dir(), "status", "--porcelain", "notes"); st != "" {
				t.Fatalf("git status after the checkout: %q", st)
			}
			if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: agent", appendNote("call Bob\n"))); err != nil {
				t.Errorf("a change with no person's edit: %v", err)
			}
		})
	}
}

// Where an attribute (-text) keeps git from touching line ends, a
// person's CRLF rewrite is their edit, and memd does not write over it.
func TestShard_CRLFAPersonWroteWhereGitLeavesLineEnds(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	git(t, sh.Dir(), "config", "core.autocrlf", "true")
	os.WriteFile(filepath.Join(sh.Dir(), ".gitattributes"), []byte("*.md -text\n"), 0o644)
	file := createPlan(t, sh, "# Plan\nbuy milk\n")
	os.WriteFile(file, []byte("# Plan\r\nbuy milk\r\n"), 0o644)
	if st := git(t, sh.Dir(), "status", "--porcelain", "notes"); st != " M notes/plan.md\n" {
		t.Fatalf("git status: %q (the rewrite should be an edit to git)", st)
	}
	_, err := sh.Apply(noteChange("notes/plan.md", "note-edit: agent", appendNote("call Bob\n")))
	if err == nil && !strings.Contains(readFile(t, file), "\r\n") {
		t.Errorf("the person's CRLF rewrite is gone: %q", readFile(t, file))
	}
}

// A person staged a draft, then memd appended while git held the index:
// the catch-up merges memd's line into the staged copy, against the
// index's version it was staged from, and the person's commit keeps it.
func TestShard_StagedBeforeTheIndexWaited(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	file := filepath.Join(sh.Dir(), "notes", "plan.md")
	createPlan(t, sh, "# Plan\n")
	appendTo(t, file, "draft\n")
	git(t, sh.Dir(), "add", "notes/plan.md")
	lock := filepath.Join(sh.Dir(), ".git", "index.lock")
	os.WriteFile(lock, []byte("DIRC"), 0o644)
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: a1", appendNote("a1\n"))); err != nil {
		t.Fatal(err)
	}
	os.Remove(lock)
	sh.SyncWorktree(time.Second)
	t.Logf("working %q staged %q", readFile(t, file), git(t, sh.Dir(), "show", ":notes/plan.md"))
	git(t, sh.Dir(), "commit", "-q", "-m", "mine")
	if got := git(t, sh.Dir(), "show", "HEAD:notes/plan.md"); !strings.Contains(got, "a1") {
		t.Errorf("memd's a1 lost at the person's git commit: HEAD %q", got)
	}
}

// With no .git/index at all (gone while memd runs), a note change is no
// change over a person's removal of the note from the index.
func TestShard_ANoteChangeWithNoIndex(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	createPlan(t, sh, "a\n")
	os.Remove(filepath.Join(sh.Dir(), ".git", "index"))
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: append", appendNote("b\n"))); err != nil {
		t.Errorf("a change with no index: %v", err)
	}
}

// refusedOrKept checks that memd refused a note change (conflict), or that
// the note it made survives the person's next commit.
func refusedOrKept(t *testing.T, sh *gitstore.Shard, err error, path string) {
	t.Helper()
	if memd.ErrorCode(err) == memd.ECONFLICT {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-q", "-m", "mine", "--allow-empty")
	if got := git(t, sh.Dir(), "ls-tree", "-r", "--name-only", "HEAD"); !strings.Contains(got, path+"\n") {
		t.Errorf("memd's note %s lost at the person's commit; HEAD holds %q", path, got)
	}
}
