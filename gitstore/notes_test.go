package gitstore_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

func setNote(text string) gitstore.NoteUpdate {
	return func([]byte, bool) ([]byte, bool, error) { return []byte(text), false, nil }
}

func appendNote(line string) gitstore.NoteUpdate {
	return func(cur []byte, exists bool) ([]byte, bool, error) {
		if !exists {
			return nil, false, memd.Errorf(memd.ENOTFOUND, "no note")
		}
		return append(append([]byte{}, cur...), line...), false, nil
	}
}

// createPlan has memd create the note notes/plan.md holding text, and
// returns the path of its working file.
func createPlan(t *testing.T, sh *gitstore.Shard, text string) string {
	t.Helper()
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: create", setNote(text))); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(sh.Dir(), "notes", "plan.md")
}

func noteChange(path, msg string, u gitstore.NoteUpdate) gitstore.Change {
	return gitstore.Change{Author: alice, Message: msg, Note: &gitstore.NoteChange{Path: path, Update: u}}
}

func TestShard_NotesAreFilesGitReads(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	dir := sh.Dir()
	res, err := sh.Apply(noteChange("notes/runbooks/deploy.md", "note-edit: create runbooks/deploy.md", setNote("# Deploy\n\n1. Build.\n")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Apply(noteChange("notes/runbooks/deploy.md", "note-edit: runbooks/deploy.md", appendNote("2. Ship.\n"))); err != nil {
		t.Fatal(err)
	}
	want := "# Deploy\n\n1. Build.\n2. Ship.\n"
	if b, _ := os.ReadFile(filepath.Join(dir, "notes", "runbooks", "deploy.md")); string(b) != want {
		t.Errorf("working file: %q", b)
	}
	if got := git(t, dir, "show", "HEAD:notes/runbooks/deploy.md"); got != want {
		t.Errorf("HEAD: %q", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
	if n := strings.Count(git(t, dir, "log", "--format=%s"), "note-edit"); n != 2 {
		t.Errorf("%d note commits, want 2", n)
	}
	notes, _, err := sh.Notes(gitstore.Hash{})
	if err != nil || len(notes) != 1 || notes[0].Path != "notes/runbooks/deploy.md" || string(notes[0].Data) != want {
		t.Errorf("Notes: %+v, %v", notes, err)
	}
	old, ok, _, err := sh.Note(res.Commit, "notes/runbooks/deploy.md")
	if err != nil || !ok || string(old) != "# Deploy\n\n1. Build.\n" {
		t.Errorf("the note at its first commit: %q, %v, %v", old, ok, err)
	}

	// Deleting it removes the file too.
	del := func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }
	if _, err := sh.Apply(noteChange("notes/runbooks/deploy.md", "note-edit: delete runbooks/deploy.md", del)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes", "runbooks", "deploy.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the working file is still there: %v", err)
	}
	if _, err := sh.Apply(noteChange("notes/runbooks/deploy.md", "note-edit: delete again", del)); memd.ErrorCode(err) != memd.ENOTFOUND {
		t.Errorf("deleting a missing note: %v", err)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
	git(t, dir, "fsck", "--strict")
}

// Updates queued together see each other: each runs against the note as
// the commits before it in the group leave it, and a refused one is left
// out without failing the others.
func TestShard_NoteUpdatesInOneGroup(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	if _, err := sh.Apply(noteChange("notes/log.md", "note-edit: create", setNote("start\n"))); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			u := appendNote("line\n")
			if i%5 == 0 {
				u = func([]byte, bool) ([]byte, bool, error) { return nil, false, memd.Errorf(memd.ECONFLICT, "refused") }
			}
			_, errs[i] = sh.Apply(noteChange("notes/log.md", "note-edit: append", u))
		}(i)
	}
	wg.Wait()
	refused := 0
	for _, err := range errs {
		if memd.ErrorCode(err) == memd.ECONFLICT {
			refused++
		} else if err != nil {
			t.Error(err)
		}
	}
	data, _, _, _ := sh.Note(gitstore.Hash{}, "notes/log.md")
	if refused != 4 || strings.Count(string(data), "line\n") != 16 {
		t.Errorf("refused %d, note:\n%s", refused, data)
	}
	if st := git(t, sh.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
}

// A note a person is editing keeps their edits, and memd's change is
// merged into them where the two are apart: both add lines at the end
// (memd's first, as HEAD holds them), or change other lines. The
// person's next commit, of the working file (commit -a) or of what they
// staged, then keeps memd's change. Where the two change the same lines,
// memd refuses its change: the person's commit would take it away.
func TestShard_NoteBeingEditedByAPerson(t *testing.T) {
	const start = "# Plan\nbuy milk\ncall Bob\nbook flights\n"
	replace := func(old, new string) gitstore.NoteUpdate {
		return func(cur []byte, _ bool) ([]byte, bool, error) {
			return []byte(strings.Replace(string(cur), old, new, 1)), false, nil
		}
	}
	for _, tc := range []struct {
		name          string
		person        string // the person's version of the note
		stage         bool   // git add, then git commit; else git commit -a
		memd          gitstore.NoteUpdate
		refused       bool
		says          string // in the refusal's message
		file, settled string // the working file after memd's change, and HEAD after the person's commit
	}{
		{name: "both add at the end", person: start + "my draft\n", memd: appendNote("agent line\n"),
			file: start + "agent line\nmy draft\n", settled: start + "agent line\nmy draft\n"},
		{name: "other lines", person: strings.Replace(start, "buy milk", "buy oat milk", 1), memd: replace("book flights", "book trains"),
			file: "# Plan\nbuy oat milk\ncall Bob\nbook trains\n", settled: "# Plan\nbuy oat milk\ncall Bob\nbook trains\n"},
		{name: "other lines, staged", person: strings.Replace(start, "buy milk", "buy oat milk", 1), stage: true, memd: replace("book flights", "book trains"),
			file: "# Plan\nbuy oat milk\ncall Bob\nbook trains\n", settled: "# Plan\nbuy oat milk\ncall Bob\nbook trains\n"},
		{name: "the same line", person: strings.Replace(start, "call Bob", "call Bob at 5", 1), memd: replace("call Bob", "email Bob"), refused: true,
			file: strings.Replace(start, "call Bob", "call Bob at 5", 1), settled: strings.Replace(start, "call Bob", "call Bob at 5", 1)},
		{name: "the same line, staged", person: strings.Replace(start, "call Bob", "call Bob at 5", 1), stage: true, memd: replace("call Bob", "email Bob"), refused: true,
			file: strings.Replace(start, "call Bob", "call Bob at 5", 1), settled: strings.Replace(start, "call Bob", "call Bob at 5", 1)},
		{name: "a line the person added where memd adds", person: strings.Replace(start, "call Bob\n", "call Bob\nwater plants\n", 1), memd: replace("call Bob\n", "call Bob\nfeed cat\n"), refused: true,
			file: strings.Replace(start, "call Bob\n", "call Bob\nwater plants\n", 1), settled: strings.Replace(start, "call Bob\n", "call Bob\nwater plants\n", 1)},
		// A NUL byte makes the file binary to git, whose line merge then
		// refuses it: a conflict the person can settle, not memd's error.
		{name: "a NUL byte in the person's version", person: strings.Replace(start, "buy milk", "buy\x00milk", 1), memd: replace("book flights", "book trains"), refused: true, says: "NUL",
			file: strings.Replace(start, "buy milk", "buy\x00milk", 1), settled: strings.Replace(start, "buy milk", "buy\x00milk", 1)},
		{name: "a NUL byte in the person's version, staged", person: strings.Replace(start, "buy milk", "buy\x00milk", 1), stage: true, memd: replace("book flights", "book trains"), refused: true, says: "NUL",
			file: strings.Replace(start, "buy milk", "buy\x00milk", 1), settled: strings.Replace(start, "buy milk", "buy\x00milk", 1)},
		{name: "a NUL byte in the person's lines at the end", person: start + "my\x00draft\n", memd: appendNote("agent line\n"),
			file: start + "agent line\nmy\x00draft\n", settled: start + "agent line\nmy\x00draft\n"},
		{name: "memd deletes it", person: start + "my draft\n", memd: func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }, refused: true,
			file: start + "my draft\n", settled: start + "my draft\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			sh := createShard(t, s, "agent/alice")
			file := createPlan(t, sh, start)
			if err := os.WriteFile(file, []byte(tc.person), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.stage {
				git(t, sh.Dir(), "add", "notes/plan.md")
			}
			before := git(t, sh.Dir(), "rev-parse", "HEAD")
			_, err := sh.Apply(noteChange("notes/plan.md", "note-edit: agent", tc.memd))
			switch {
			case tc.refused && memd.ErrorCode(err) != memd.ECONFLICT:
				t.Fatalf("memd's change over the person's: %v, want a conflict", err)
			case tc.refused && git(t, sh.Dir(), "rev-parse", "HEAD") != before:
				t.Errorf("refused, yet main moved")
			case tc.refused && !strings.Contains(memd.ErrorMessage(err), tc.says):
				t.Errorf("the refusal says %q, want it to say %q", memd.ErrorMessage(err), tc.says)
			case !tc.refused && err != nil:
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(file); string(b) != tc.file {
				t.Errorf("working file:\n%s\nwant\n%s", b, tc.file)
			}
			if tc.stage {
				git(t, sh.Dir(), "commit", "-q", "-m", "my plan")
			} else {
				git(t, sh.Dir(), "commit", "-q", "-a", "-m", "my plan")
			}
			if got := git(t, sh.Dir(), "show", "HEAD:notes/plan.md"); got != tc.settled {
				t.Errorf("HEAD after the person's commit:\n%s\nwant\n%s", got, tc.settled)
			}
			if st := git(t, sh.Dir(), "status", "--porcelain"); st != "" {
				t.Errorf("git status after the person's commit: %s", st)
			}
		})
	}
}

// A note change refused over a person's edit, in a group whose other
// changes commit, leaves the note as it was: in the index, in the working
// tree and, after the person's commit, at HEAD. Refused once, it counted
// as a change to the note with no new version: a deletion.
func TestShard_ANoteChangeRefusedInAGroup(t *testing.T) {
	const start = "# Plan\nbuy milk\ncall Bob\n"
	const theirs = "# Plan\nbuy milk\ncall Bob at 5\n"
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged %v", staged), func(t *testing.T) {
			s := openStore(t)
			sh := createShard(t, s, "agent/alice")
			file := createPlan(t, sh, start)
			if err := os.WriteFile(file, []byte(theirs), 0o644); err != nil {
				t.Fatal(err)
			}
			wantStatus := " M notes/plan.md\n"
			if staged {
				git(t, sh.Dir(), "add", "notes/plan.md")
				os.WriteFile(file, []byte(start), 0o644) // as git restore --worktree leaves it
				wantStatus = "MM notes/plan.md\n"
			}
			errs := sh.ApplyTogether(
				noteChange("notes/plan.md", "note-edit: agent", func(cur []byte, _ bool) ([]byte, bool, error) {
					return []byte(strings.Replace(string(cur), "call Bob", "email Bob", 1)), false, nil
				}),
				noteChange("notes/other.md", "note-edit: other", setNote("other\n")))
			if memd.ErrorCode(errs[0]) != memd.ECONFLICT || errs[1] != nil {
				t.Fatalf("the note change: %v, the other: %v", errs[0], errs[1])
			}
			if st := git(t, sh.Dir(), "status", "--porcelain"); st != wantStatus {
				t.Errorf("git status:\n%swant\n%s", st, wantStatus)
			}
			if b, err := os.ReadFile(file); err != nil || staged && string(b) != start || !staged && string(b) != theirs {
				t.Errorf("working file: %q, %v", b, err)
			}
			if staged {
				git(t, sh.Dir(), "commit", "-q", "-m", "my plan")
			} else {
				git(t, sh.Dir(), "commit", "-q", "-a", "-m", "my plan")
			}
			if got := git(t, sh.Dir(), "show", "HEAD:notes/plan.md"); got != theirs {
				t.Errorf("the note after the person's commit: %q, want %q", got, theirs)
			}
		})
	}
}

// While git holds the index's lock, memd's note changes reach the working
// file and the index waits at the version before them: that version is
// not one a person staged, and memd's next change is not refused for it.
// Once the index catches up after the person committed memd's lines with
// their own, neither the index nor the file has memd's lines twice.
func TestShard_NoteChangesWhileTheIndexWaits(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	os.MkdirAll(filepath.Join(sh.Dir(), "notes"), 0o755)
	file := filepath.Join(sh.Dir(), "notes", "plan.md")
	os.WriteFile(file, []byte("# Plan\nv1\n"), 0o644)
	git(t, sh.Dir(), "add", "notes/plan.md")
	git(t, sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@x", "commit", "-qm", "my note")
	lock := filepath.Join(sh.Dir(), ".git", "index.lock")
	if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"a\n", "b\n"} {
		if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: "+line, appendNote(line))); err != nil {
			t.Fatalf("appending %q while the index waits: %v", line, err)
		}
	}
	os.Remove(lock)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("my line\n")
	f.Close()
	git(t, sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@x", "commit", "-qam", "mine")
	sh.SyncWorktree(time.Second)
	const want = "# Plan\nv1\na\nb\nmy line\n"
	if got := git(t, sh.Dir(), "show", "HEAD:notes/plan.md"); got != want {
		t.Errorf("HEAD:\n%s\nwant\n%s", got, want)
	}
	if st := git(t, sh.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q\nstaged:\n%s", st, git(t, sh.Dir(), "show", ":notes/plan.md"))
	}
	if b, _ := os.ReadFile(file); string(b) != want {
		t.Errorf("working file:\n%s", b)
	}
}

// A person's save of a note after memd checked it, and before memd wrote
// its change, is seen before any file of the move is written: the move is
// built again, and the change refused, the others of its group made.
func TestShard_ANoteSavedOverBetweenCheckAndWrite(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	const start = "# Plan\nbuy milk\ncall Bob\n"
	const theirs = "# Plan\nbuy milk\ncall Bob at 5\n"
	file := createPlan(t, sh, start)
	errs := sh.ApplyTogether(
		noteChange("notes/plan.md", "note-edit: agent", func(cur []byte, _ bool) ([]byte, bool, error) {
			return []byte(strings.Replace(string(cur), "call Bob", "email Bob", 1)), false, nil
		}),
		noteChange("notes/other.md", "note-edit: other", func([]byte, bool) ([]byte, bool, error) {
			// The person's editor saves while the group is built.
			if err := os.WriteFile(file, []byte(theirs), 0o644); err != nil {
				return nil, false, err
			}
			return []byte("other\n"), false, nil
		}))
	if memd.ErrorCode(errs[0]) != memd.ECONFLICT || errs[1] != nil {
		t.Fatalf("the note change: %v, the other: %v", errs[0], errs[1])
	}
	git(t, sh.Dir(), "commit", "-q", "-a", "-m", "mine")
	if got := git(t, sh.Dir(), "show", "HEAD:notes/plan.md"); got != theirs {
		t.Errorf("the note after the person's commit: %q", got)
	}
	if got := git(t, sh.Dir(), "show", "HEAD:notes/other.md"); got != "other\n" {
		t.Errorf("the other note: %q", got)
	}
}

// A person who deleted a note and has not committed the deletion (rm, or
// git rm) keeps it deleted: memd refuses to change the note under them.
// The working file and the version staged take the same merge of memd's
// change where the person staged the start of memd's own addition.
func TestShard_ANoteAPersonDeletedOrStaged(t *testing.T) {
	for _, how := range [][]string{{"rm"}, {"git", "rm", "-q"}, {"git", "rm", "-q", "--cached"}} {
		t.Run(strings.Join(how, " "), func(t *testing.T) {
			s := openStore(t)
			sh := createShard(t, s, "agent/alice")
			createPlan(t, sh, "# Plan\n")
			if how[0] == "rm" {
				os.Remove(filepath.Join(sh.Dir(), "notes", "plan.md"))
			} else {
				git(t, sh.Dir(), append(how[1:], "notes/plan.md")...)
			}
			status := git(t, sh.Dir(), "status", "--porcelain")
			if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: agent", appendNote("x\n"))); memd.ErrorCode(err) != memd.ECONFLICT {
				t.Errorf("a change of the note the person deleted: %v", err)
			}
			if st := git(t, sh.Dir(), "status", "--porcelain"); st != status {
				t.Errorf("git status %q, was %q", st, status)
			}
		})
	}
	t.Run("staged the start of memd's addition", func(t *testing.T) {
		s := openStore(t)
		sh := createShard(t, s, "agent/alice")
		file := createPlan(t, sh, "# Plan\n")
		os.WriteFile(file, []byte("# Plan\n- call Bob\n"), 0o644)
		git(t, sh.Dir(), "add", "notes/plan.md")
		if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: agent", appendNote("- call Bob\n- book flights\n"))); err != nil {
			t.Fatal(err)
		}
		w, _ := os.ReadFile(file)
		if staged := git(t, sh.Dir(), "show", ":notes/plan.md"); string(w) != staged || staged != "# Plan\n- call Bob\n- book flights\n" {
			t.Errorf("working file %q, staged %q", w, staged)
		}
	})
}

// Cases no person's edit is in, or one memd must not write over, that
// the refusal of a note change over a person's edit once got wrong.
func TestShard_NoteChangesAndThePersonsTree(t *testing.T) {
	d, _ := memd.ParseDate("2026-11-03")
	fact := gitstore.Change{Author: alice, Message: "remember: Likes tea", Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Likes tea", Date: d, Tier: memd.TierLog}}}}
	del := func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }

	t.Run("a note and a folder of its name swap in one group", func(t *testing.T) {
		s := openStore(t)
		sh := createShard(t, s, "agent/alice")
		if _, err := sh.Apply(noteChange("notes/trip.md", "note-edit: create", setNote("Lisbon\n"))); err != nil {
			t.Fatal(err)
		}
		for i, err := range sh.ApplyTogether(noteChange("notes/trip.md", "note-edit: delete", del),
			noteChange("notes/trip.md/day-one.md", "note-edit: create", setNote("Lisbon\n")), fact) {
			if err != nil {
				t.Errorf("change %d: %v", i, err)
			}
		}
	})
	for _, how := range []string{"core.autocrlf", ".gitattributes"} {
		t.Run("checked out with CRLF by "+how, func(t *testing.T) {
			s := openStore(t)
			sh := createShard(t, s, "agent/alice")
			if how == "core.autocrlf" {
				git(t, sh.Dir(), "config", "core.autocrlf", "true")
			} else {
				os.WriteFile(filepath.Join(sh.Dir(), ".gitattributes"), []byte("* text=auto eol=crlf\n"), 0o644)
			}
			createPlan(t, sh, "# Plan\nbuy milk\n")
			os.Remove(filepath.Join(sh.Dir(), "notes", "plan.md"))
			git(t, sh.Dir(), "checkout", "--", "notes/plan.md")
			if st := git(t, sh.Dir(), "status", "--porcelain", "notes"); st != "" {
				t.Fatalf("git status after the checkout: %q", st)
			}
			if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: agent", appendNote("call Bob\n"))); err != nil {
				t.Fatalf("a change with no person's edit: %v", err)
			}
			if st := git(t, sh.Dir(), "status", "--porcelain", "notes"); st != "" {
				t.Errorf("git status: %q", st)
			}
		})
	}
	t.Run("a folder a person made where memd creates a note", func(t *testing.T) {
		s := openStore(t)
		sh := createShard(t, s, "agent/alice")
		draft := filepath.Join(sh.Dir(), "notes", "x.md", "draft.md")
		os.MkdirAll(filepath.Dir(draft), 0o755)
		os.WriteFile(draft, []byte("mine\n"), 0o644)
		if _, err := sh.Apply(noteChange("notes/x.md", "note-edit: create", setNote("memd\n"))); memd.ErrorCode(err) != memd.ECONFLICT {
			t.Errorf("creating a note over a person's folder: %v", err)
		}
		if b, _ := os.ReadFile(draft); string(b) != "mine\n" {
			t.Errorf("the person's draft: %q", b)
		}
	})
	for _, how := range []string{"git add", "git rm"} {
		t.Run(how+" between memd's check and its write", func(t *testing.T) {
			s := openStore(t)
			sh := createShard(t, s, "agent/alice")
			const start = "# Plan\nbuy milk\ncall Bob\n"
			file := createPlan(t, sh, start)
			var status string
			errs := sh.ApplyTogether(
				noteChange("notes/plan.md", "note-edit: agent", func(cur []byte, _ bool) ([]byte, bool, error) {
					return []byte(strings.Replace(string(cur), "call Bob", "email Bob", 1)), false, nil
				}),
				noteChange("notes/other.md", "note-edit: other", func([]byte, bool) ([]byte, bool, error) {
					if status == "" { // the person, once, while the group is built
						if how == "git add" {
							os.WriteFile(file, []byte("# Plan\nbuy milk\ncall Bob at 5\n"), 0o644)
							git(t, sh.Dir(), "add", "notes/plan.md")
							os.WriteFile(file, []byte(start), 0o644)
						} else {
							git(t, sh.Dir(), "rm", "-q", "notes/plan.md")
						}
						status = git(t, sh.Dir(), "status", "--porcelain", "notes/plan.md")
					}
					return []byte("other\n"), false, nil
				}))
			if memd.ErrorCode(errs[0]) != memd.ECONFLICT || errs[1] != nil {
				t.Fatalf("the note change: %v, the other: %v", errs[0], errs[1])
			}
			if st := git(t, sh.Dir(), "status", "--porcelain", "notes/plan.md"); st != status {
				t.Errorf("git status %q, the person left it %q", st, status)
			}
		})
	}
	t.Run("staged from a working file ahead of the index", func(t *testing.T) {
		sh, file := a1WhileTheIndexWaits(t)
		appendTo(t, file, "draft\n")
		git(t, sh.Dir(), "add", "notes/plan.md") // before memd's index caught up
		if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: a2", appendNote("a2\n"))); err != nil {
			t.Fatal(err)
		}
		const want = "# Plan\na1\na2\ndraft\n"
		if w, staged := readFile(t, file), git(t, sh.Dir(), "show", ":notes/plan.md"); w != want || staged != want {
			t.Errorf("working file %q, staged %q, want %q", w, staged, want)
		}
	})
}

// More cases where a note change meets a person's tree: what stands in
// the note's way, a version staged from a working file ahead of the index
// with the person's line above memd's, and CRLF line ends git did not
// write (a person's edit, then).
func TestShard_NoteChangesAndThePersonsTreeMore(t *testing.T) {
	del := func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }
	t.Run("a person's file where the note's folder goes", func(t *testing.T) {
		s := openStore(t)
		sh := createShard(t, s, "agent/alice")
		os.MkdirAll(filepath.Join(sh.Dir(), "notes"), 0o755)
		os.WriteFile(filepath.Join(sh.Dir(), "notes", "proj"), []byte("scratch\n"), 0o644)
		if _, err := sh.Apply(noteChange("notes/proj/plan.md", "note-edit: create", setNote("memd\n"))); memd.ErrorCode(err) != memd.ECONFLICT {
			t.Errorf("creating a note under a person's file: %v", err)
		}
	})
	t.Run("a person's file in the folder a note replaces", func(t *testing.T) {
		s := openStore(t)
		sh := createShard(t, s, "agent/alice")
		if _, err := sh.Apply(noteChange("notes/trip.md/day-one.md", "note-edit: create", setNote("Lisbon\n"))); err != nil {
			t.Fatal(err)
		}
		scratch := filepath.Join(sh.Dir(), "notes", "trip.md", "scratch.txt")
		os.WriteFile(scratch, []byte("mine\n"), 0o644)
		errs := sh.ApplyTogether(noteChange("notes/trip.md/day-one.md", "note-edit: delete", del),
			noteChange("notes/trip.md", "note-edit: create", setNote("Lisbon\n")))
		if errs[0] != nil || memd.ErrorCode(errs[1]) != memd.ECONFLICT {
			t.Errorf("the delete: %v, the note over the person's folder: %v", errs[0], errs[1])
		}
		if got := readFile(t, scratch); got != "mine\n" {
			t.Errorf("the person's file: %q", got)
		}
	})
	t.Run("staged with the person's line above memd's, the index behind", func(t *testing.T) {
		sh, file := a1WhileTheIndexWaits(t)
		os.WriteFile(file, []byte("# Plan\ndraft\na1\n"), 0o644)
		git(t, sh.Dir(), "add", "notes/plan.md")
		if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: a2", appendNote("a2\n"))); err != nil {
			t.Fatal(err)
		}
		const want = "# Plan\ndraft\na1\na2\n"
		if w, staged := readFile(t, file), git(t, sh.Dir(), "show", ":notes/plan.md"); w != want || staged != want {
			t.Errorf("working file %q, staged %q, want %q", w, staged, want)
		}
	})
	t.Run("CRLF line ends a person wrote", func(t *testing.T) {
		s := openStore(t)
		sh := createShard(t, s, "agent/alice")
		file := createPlan(t, sh, "# Plan\nbuy milk\n")
		os.WriteFile(file, []byte("# Plan\r\nbuy milk\r\n"), 0o644)
		if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: agent", appendNote("a2\n"))); err == nil && !strings.Contains(readFile(t, file), "\r\n") {
			t.Errorf("the person's line ends are gone: %q", readFile(t, file))
		}
	})
}

// a1WhileTheIndexWaits makes notes/plan.md, then appends a1 to it while
// git holds the index's lock, so that the working file goes ahead of the
// index; it returns the shard and the note's working file.
func a1WhileTheIndexWaits(t *testing.T) (*gitstore.Shard, string) {
	t.Helper()
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	createPlan(t, sh, "# Plan\n")
	lock := filepath.Join(sh.Dir(), ".git", "index.lock")
	if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: a1", appendNote("a1\n"))); err != nil {
		t.Fatal(err)
	}
	os.Remove(lock)
	return sh, filepath.Join(sh.Dir(), "notes", "plan.md")
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reopenable returns a function that opens a store in a directory of the
// test's, as memd's start does, and its shard agent/alice (made the first
// time); the caller closes the store.
func reopenable(t *testing.T) func() (*gitstore.Store, *gitstore.Shard) {
	return reopenableAt(t, t.TempDir())
}

// reopenableAt is reopenable with the store in dir.
func reopenableAt(t *testing.T, dir string) func() (*gitstore.Store, *gitstore.Shard) {
	return func() (*gitstore.Store, *gitstore.Shard) {
		t.Helper()
		s, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage})
		if err != nil {
			t.Fatal(err)
		}
		sh, err := s.Shard(memd.AgentShard("alice"))
		if err != nil {
			sh = createShard(t, s, "agent/alice")
		}
		return s, sh
	}
}

// memd makes a note the index does not get: git held .git/index.lock at
// that moment, or a git command that read the index before wrote it back
// after. The person's next `git commit -a` builds its tree from that index,
// without the note: memd restores it, at once and, when memd stopped
// before it looked, at the next start.
func TestShard_APersonsCommitKeepsANoteTheIndexLacked(t *testing.T) {
	open := reopenable(t)
	s, sh := open()
	remember(t, sh, "Likes green tea", memd.TierLog, "m1")
	os.WriteFile(filepath.Join(sh.Dir(), "log", "hand.md"), []byte("x\n"), 0o644) // untracked: not in the commits
	// noteThenStaleCommit makes the note and then the person's commit from
	// the index as it was before the note.
	noteThenStaleCommit := func(path, text string) {
		t.Helper()
		index := filepath.Join(sh.Dir(), ".git", "index")
		stale := filepath.Join(t.TempDir(), "index")
		copyFile(t, index, stale)
		if _, err := sh.Apply(noteChange(path, "note-edit: create", setNote(text))); err != nil {
			t.Fatal(err)
		}
		copyFile(t, stale, index)
		if out, err := exec.Command("git", "-C", sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@x", "commit", "-qam", "by hand", "--allow-empty").CombinedOutput(); err != nil {
			t.Fatalf("git commit: %v %s", err, out)
		}
		if got := git(t, sh.Dir(), "ls-tree", "--name-only", "-r", "HEAD", "notes/"); strings.Contains(got, path) {
			t.Fatalf("the person's commit kept %s; the test did not make the stale index it means to: %s", path, got)
		}
	}

	noteThenStaleCommit("notes/plan.md", "v1\n")
	if err := sh.Refresh(); err != nil { // as the daemon does when main moves
		t.Fatal(err)
	}
	if data, ok, _, err := sh.Note(gitstore.Hash{}, "notes/plan.md"); err != nil || !ok || string(data) != "v1\n" {
		t.Errorf("after the person's commit the note reads %q, %v, %v", data, ok, err)
	}

	noteThenStaleCommit("notes/later.md", "v2\n")
	s.Close() // before memd looked at the person's commit
	s, sh = open()
	defer s.Close()
	if err := sh.Refresh(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"notes/plan.md": "v1\n", "notes/later.md": "v2\n"} {
		if data, ok, _, err := sh.Note(gitstore.Hash{}, path); err != nil || !ok || string(data) != want {
			t.Errorf("after a restart %s reads %q, %v, %v", path, data, ok, err)
		}
	}
	if st := git(t, sh.Dir(), "status", "--porcelain"); st != "?? log/hand.md\n" {
		t.Errorf("git status: %q", st)
	}
}

// What a person means to change in a note stays changed: a note removed
// with git rm, and one taken back to an earlier version with git checkout,
// are not restored, at once or after a restart.
func TestShard_APersonsNoteChangesAreNotUndone(t *testing.T) {
	open := reopenable(t)
	s, sh := open()
	for _, c := range []gitstore.Change{
		noteChange("notes/gone.md", "note-edit: create", setNote("gone\n")),
		noteChange("notes/back.md", "note-edit: create", setNote("v1\n")),
		noteChange("notes/back.md", "note-edit: edit", setNote("v2\n")),
		noteChange("notes/own.md", "note-edit: create", setNote("memd's\n")),
	} {
		if _, err := sh.Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	person := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@x"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	// A note the person rewrote and then took back through the index
	// alone: their own version went, not memd's.
	os.WriteFile(filepath.Join(sh.Dir(), "notes", "own.md"), []byte("mine\n"), 0o644)
	person("commit", "-qam", "my version")
	person("reset", "-q", "HEAD~1", "--", "notes/own.md")
	person("commit", "-qm", "not my version after all")
	person("rm", "-q", "notes/gone.md")
	v1 := strings.TrimSpace(git(t, sh.Dir(), "log", "--format=%H", "--diff-filter=A", "--", "notes/back.md"))
	person("checkout", v1, "--", "notes/back.md")
	person("commit", "-qm", "tidy notes")
	check := func(when string) {
		t.Helper()
		if err := sh.Refresh(); err != nil {
			t.Fatal(err)
		}
		if _, ok, _, _ := sh.Note(gitstore.Hash{}, "notes/gone.md"); ok {
			t.Errorf("%s: the note the person removed is back", when)
		}
		if data, _, _, _ := sh.Note(gitstore.Hash{}, "notes/back.md"); string(data) != "v1\n" {
			t.Errorf("%s: the note the person took back reads %q", when, data)
		}
		if data, _, _, _ := sh.Note(gitstore.Hash{}, "notes/own.md"); string(data) != "memd's\n" {
			t.Errorf("%s: the note the person took back through the index reads %q", when, data)
		}
	}
	check("at once")
	// The person drafts in the note they took back; a start does not judge
	// their commit again against the draft.
	os.WriteFile(filepath.Join(sh.Dir(), "notes", "back.md"), []byte("v1\nmy draft\n"), 0o644)
	s.Close()
	s, sh = open()
	check("after a restart")
	if b, _ := os.ReadFile(filepath.Join(sh.Dir(), "notes", "back.md")); string(b) != "v1\nmy draft\n" {
		t.Errorf("the person's draft: %q", b)
	}

	// memd restores a note a stale index dropped; the person undoes the
	// restore with git reset, and it stays undone.
	index := filepath.Join(sh.Dir(), ".git", "index")
	stale := filepath.Join(t.TempDir(), "index")
	copyFile(t, index, stale)
	if _, err := sh.Apply(noteChange("notes/undo.md", "note-edit: create", setNote("restored\n"))); err != nil {
		t.Fatal(err)
	}
	copyFile(t, stale, index)
	person("commit", "-qm", "from a stale index")
	if err := sh.Refresh(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, _ := sh.Note(gitstore.Hash{}, "notes/undo.md"); !ok {
		t.Fatal("the note a stale index dropped was not restored; the rest of this test shows nothing")
	}
	person("reset", "-q", "HEAD~1")
	undone := git(t, sh.Dir(), "rev-parse", "HEAD")
	for _, when := range []string{"at once", "after a restart"} {
		if when == "after a restart" {
			s.Close()
			s, sh = open()
		}
		if err := sh.Refresh(); err != nil {
			t.Fatal(err)
		}
		if now := git(t, sh.Dir(), "rev-parse", "HEAD"); now != undone {
			t.Errorf("%s: memd moved main after the person undid its restore: %s", when, git(t, sh.Dir(), "log", "-3", "--format=%an %s"))
		}
	}
	s.Close()
}

// A note cannot take the place of a folder of notes, nor a folder the
// place of a note: git holds one or the other, and writing the note would
// drop every note in the folder. Either way the change is refused, and
// nothing is lost or left half written.
func TestShard_ANoteAndAFolderOfOneName(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	dir := sh.Dir()
	mustApply := func(path, text string) {
		t.Helper()
		if _, err := sh.Apply(noteChange(path, "note-edit: create", setNote(text))); err != nil {
			t.Fatal(err)
		}
	}
	mustApply("notes/plan.md/steps.md", "step one\n")
	mustApply("notes/trip.md", "Lisbon\n")

	for _, path := range []string{"notes/plan.md", "notes/trip.md/day-one.md"} {
		_, err := sh.Apply(noteChange(path, "note-edit: create", setNote("overview\n")))
		if memd.ErrorCode(err) != memd.ECONFLICT {
			t.Errorf("creating %s: %v, want a conflict", path, err)
		}
	}
	notes, _, err := sh.Notes(gitstore.Hash{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range notes {
		paths = append(paths, n.Path)
	}
	if strings.Join(paths, " ") != "notes/plan.md/steps.md notes/trip.md" {
		t.Errorf("notes after the refusals: %v", paths)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}

	// Once the folder's last note goes, its name is free for a note.
	del := func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }
	if _, err := sh.Apply(noteChange("notes/plan.md/steps.md", "note-edit: delete", del)); err != nil {
		t.Fatal(err)
	}
	mustApply("notes/plan.md", "overview\n")
	if got := git(t, dir, "show", "HEAD:notes/plan.md"); got != "overview\n" {
		t.Errorf("HEAD:notes/plan.md = %q", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
	git(t, dir, "fsck", "--strict")
}

// Undoing a commit's change of a note takes back what it changed and keeps
// what changed elsewhere in the note since; a later change of the same
// lines, or the note removed since, refuses the undo.
func TestUndoNote(t *testing.T) {
	note := func(s string) gitstore.NoteState { return gitstore.NoteState{Data: []byte(s), Exists: true} }
	none := gitstore.NoteState{}
	const a, b = "# Plan\n\nBook the flight\nFind a flat\n\nPack\n", "# Plan\n\nBook the flight to LISBON\nFind a flat\n\nPack\n"
	for _, tc := range []struct {
		name          string
		before, after gitstore.NoteState
		now           gitstore.NoteState
		want          string // "" with remove: the note goes
		remove        bool
		conflict      bool
	}{
		{"as the commit left it", note(a), note(b), note(b), a, false, false},
		{"changed elsewhere since", note(a), note(b), note(b + "Passport\n"), a + "Passport\n", false, false},
		{"the same lines changed since", note(a), note(b), note(strings.Replace(b, "LISBON", "Porto", 1)), "", false, true},
		{"removed since", note(a), note(b), none, "", false, true},
		{"a note the commit made", none, note(a), note(a), "", true, false},
		{"a note the commit made, added to since", none, note(a), note(a + "Passport\n"), "", false, true},
		{"a note the commit removed", note(a), none, none, a, false, false},
		{"a NUL byte added elsewhere since", note(a), note(b), note(b + "Pass\x00port\n"), "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, remove, err := gitstore.UndoNote("notes/plan.md", tc.before, tc.after)(tc.now.Data, tc.now.Exists)
			switch {
			case tc.conflict:
				if memd.ErrorCode(err) != memd.ECONFLICT {
					t.Errorf("%q, remove %v, %v; want a conflict", next, remove, err)
				}
			case err != nil:
				t.Fatal(err)
			case remove != tc.remove || !remove && string(next) != tc.want:
				t.Errorf("%q, remove %v; want %q, remove %v", next, remove, tc.want, tc.remove)
			}
		})
	}
}

// A person's git commit -a made while memd's last edit of a note waited
// for the index (git held its lock) becomes the base memd merges its next
// edit into: a line the person added at the end, and memd's own line at
// the top, both stay. Merged from what memd last wrote instead, both
// sides had added the person's committed line at the end, the merge
// failed, memd's line never reached the file, and the person's next
// commit took it away from main.
func TestShard_APersonsCommitWhileTheIndexWaitedKeepsMemdsNextEdit(t *testing.T) {
	s, sh := reopenable(t)()
	defer s.Close()
	const path = "notes/race.md"
	if _, err := sh.Apply(noteChange(path, "note-edit: create", setNote("# Race\n\nTOP\n\nmiddle\n\n"))); err != nil {
		t.Fatal(err)
	}
	below := func(line string) gitstore.NoteUpdate {
		return func(cur []byte, _ bool) ([]byte, bool, error) {
			return []byte(strings.Replace(string(cur), "TOP\n", "TOP\n"+line, 1)), false, nil
		}
	}
	file := filepath.Join(sh.Dir(), filepath.FromSlash(path))
	person := func(line string, commit bool) {
		t.Helper()
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
		if commit {
			git(t, sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@x", "commit", "-qam", "person")
		}
	}
	// git holds the index while memd writes M1: the working file gets it,
	// the index waits.
	lock := filepath.Join(sh.Dir(), ".git", "index.lock")
	if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Apply(noteChange(path, "note-edit: M1", below("M1\n"))); err != nil {
		t.Fatal(err)
	}
	os.Remove(lock)
	person("P1\n", true) // commits M1 with P1
	person("P2\n", false)
	if _, err := sh.Apply(noteChange(path, "note-edit: M2", below("M2\n"))); err != nil {
		t.Fatal(err)
	}
	person("", true)
	want := "# Race\n\nTOP\nM2\nM1\n\nmiddle\n\nP1\nP2\n"
	if got := git(t, sh.Dir(), "show", "HEAD:"+path); got != want {
		t.Errorf("the note after the person's commits:\n%s\nwant\n%s", got, want)
	}
	if st := git(t, sh.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q", st)
	}
}

// A write of memd's into a file a person's git merge left in conflict is
// refused (a resolution taking their side would drop it; see
// TestShard_AFactFileInConflictInAPersonsMergeIsNotWritten) and leaves the
// conflicted path's index entries as git made them, one a side: the person
// settles it with git add and commits, and memd's fact, written again
// after, is in main. Written as one entry beside the sides, the index was
// one git cannot use: git add refused, and git merge --abort could not
// reset it.
func TestShard_AWriteDuringAPersonsConflictedMerge(t *testing.T) {
	s, sh := reopenable(t)()
	defer s.Close()
	dir := sh.Dir()
	person := []string{"-c", "user.name=pat", "-c", "user.email=pat@x"}
	remember(t, sh, "Lives in Lisbon", memd.TierProfile, "m1")
	git(t, dir, "checkout", "-q", "-b", "side")
	appendTo(t, filepath.Join(dir, "profile.md"), "- (2026-12-01) Written on a side branch\n")
	git(t, dir, append(person, "commit", "-qam", "side")...)
	git(t, dir, "checkout", "-q", "main")
	remember(t, sh, "Likes green tea", memd.TierProfile, "m2")
	if out, err := exec.Command("git", append(append([]string{"-C", dir}, person...), "merge", "-q", "side")...).CombinedOutput(); err == nil {
		t.Fatalf("the merge did not conflict: %s", out)
	}
	d, _ := memd.ParseDate("2026-11-03")
	train := gitstore.Change{Author: alice, Message: "remember: Takes the night train\n\nSource-Message: m3",
		Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Takes the night train", Date: d, Tier: memd.TierProfile}}}}
	if _, err := sh.Apply(train); memd.ErrorCode(err) != memd.ECONFLICT {
		t.Fatalf("a write into the file in conflict: %v, want conflict", err)
	}

	if stages := git(t, dir, "ls-files", "-s", "profile.md"); strings.Count(stages, "\n") != 3 || strings.Contains(stages, " 0\tprofile.md") {
		t.Fatalf("the conflicted path's index entries:\n%s", stages)
	}
	// The person keeps both sides and commits the merge.
	data, err := os.ReadFile(filepath.Join(dir, "profile.md"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if !strings.HasPrefix(line, "<<<<<<<") && !strings.HasPrefix(line, "=======") && !strings.HasPrefix(line, ">>>>>>>") {
			kept = append(kept, line)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "profile.md"), []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "profile.md")
	git(t, dir, append(person, "commit", "-q", "--no-edit")...)
	if _, err := sh.Apply(train); err != nil {
		t.Fatalf("the write again once the merge is settled: %v", err)
	}
	head := git(t, dir, "show", "HEAD:profile.md")
	for _, fact := range []string{"Lives in Lisbon", "Likes green tea", "Written on a side branch", "Takes the night train"} {
		if !strings.Contains(head, fact) {
			t.Errorf("the merge lacks %q:\n%s", fact, head)
		}
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %q", st)
	}
}
