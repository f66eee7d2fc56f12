package gitstore_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

// What a person stages by hand in a shard is checked as a push is: each
// case writes files in the working tree of a shard whose profile.md memd
// wrote (a heading, a comment, two facts), stages everything, and lists
// what CheckStaged names, "path line N" or "path" and why.
func TestCheckStaged_NamesWhatMemdWouldNotRead(t *testing.T) {
	long := "- (2026-11-04) " + strings.Repeat("x", memd.MaxFactLen+1)
	var many strings.Builder
	for range 25 {
		many.WriteString("- (2026-13-01) A month that is not\n")
	}
	for _, c := range []struct {
		name  string
		files map[string]string // appended to profile.md; written whole elsewhere
		want  []string
	}{
		{"facts, prose, a heading's underline", map[string]string{
			gitstore.ProfileFile: "- (2026-11-04) Has a cat called Miso\n\nTrips\n=======\nSee notes/trips.md\n",
			"log/2026-11.md":     "- (2026-11-05) Booked the flight\n",
			"notes/trips.md":     "# Trips\n<<<<<<< a note may hold anything\n",
			"log/README.md":      "One file a month.\n- (optional) a chart\n",
		}, nil},
		{"a date not in the calendar", map[string]string{gitstore.ProfileFile: "- (2026-02-30) Moved to Berlin\n"},
			[]string{`profile.md line 8: date "2026-02-30" is not a calendar date`}},
		{"a fact line without its space or its bracket", map[string]string{"log/2026-11.md": "- (2026-11-05)Booked\n- (2026-11-05 Booked\n"},
			[]string{"log/2026-11.md line 1: a fact line has a space after its date", `log/2026-11.md line 2: a fact line is "- (YYYY-MM-DD) text"`}},
		{"facts written as Markdown allows but memd does not read", map[string]string{gitstore.ProfileFile: "* (2026-11-04) Likes tea\n  - (2026-11-04) Lives in Lisbon\n- Undated, prose\n"},
			[]string{`profile.md line 8: "* (2026-11-04) Likes tea" is not read as a fact`, `profile.md line 9: "  - (2026-11-04) Lives in Lisbon" is not read as a fact`}},
		{"a fact behind a byte-order mark", map[string]string{"log/2026-11.md": "\ufeff- (2026-11-05) Hidden\n"},
			[]string{"log/2026-11.md line 1: the line starts with a byte-order mark"}},
		{"a text memd refuses", map[string]string{gitstore.ProfileFile: long + "\n"},
			[]string{"profile.md line 8: fact text is 501 characters"}},
		{"conflict markers", map[string]string{gitstore.ProfileFile: "<<<<<<< HEAD\n- (2026-11-04) Tea\n||||||| base\n=======\n- (2026-11-04) Coffee\n>>>>>>> theirs\n"},
			[]string{`profile.md line 8: "<<<<<<< HEAD" is a conflict marker`, `profile.md line 10: "||||||| base" is a conflict marker`, `profile.md line 13: ">>>>>>> theirs" is a conflict marker`}},
		{"a note with a NUL byte", map[string]string{"notes/plan.md": "one\x00\n"},
			[]string{"notes/plan.md: a note may not contain NUL bytes"}},
		{"a note named as memd reads none", map[string]string{"notes/Trip Plan.md": "# Trip\n"},
			[]string{"notes/Trip Plan.md: memd would not read it as a note"}},
		{"facts in a log file named as memd reads none", map[string]string{"log/2026-11-05.md": "# Thursday\n- (2026-11-05) Lost\n"},
			[]string{"log/2026-11-05.md line 2: a fact, but memd reads facts only from"}},
		{"facts and notes in a name in other letters", map[string]string{"Profile.md": "- (2026-11-05) Lost\n", "Log/2026-11.md": "- (2026-11-05) Lost too\n", "Notes/deploy.md": "# Deploy\n"},
			[]string{"Log/2026-11.md line 1: a fact, but memd reads facts only from", "Notes/deploy.md: memd would not read it as a note (memd reads notes only under notes/, in lower case)", "Profile.md line 1: a fact, but memd reads facts only from"}},
		{"a note's name holding a terminal's escape", map[string]string{"notes/\x1b[2Jplan.md": "# Plan\n"},
			[]string{`"notes/\x1b[2Jplan.md": memd would not read it as a note`}},
		{"more than twenty, the first twenty", map[string]string{"log/2026-11.md": many.String()},
			repeatLines("log/2026-11.md line %d: date \"2026-13-01\" is not a calendar date", 20)},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh := shardWithProfile(t, openStore(t))
			for path, text := range c.files {
				writeWorking(t, sh, path, text, path == gitstore.ProfileFile)
			}
			git(t, sh.Dir(), "add", "-A")
			wantStaged(t, sh, c.want)
		})
	}
}

// List items without a date that a commit adds to a fact file are said,
// not refused: memd keeps them as prose, and a person may have meant
// them as facts. A rule, a heading, a fact, a line named as a problem, a
// note's list and an item main holds already are not said.
func TestCheckStaged_SaysListItemsWithoutADateAreProse(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	writeWorking(t, sh, gitstore.ProfileFile, "- Already there\n", true)
	git(t, sh.Dir(), "commit", "-qam", "by hand", "--no-verify")
	writeWorking(t, sh, gitstore.ProfileFile, "## Likes\n- Likes tea\n  * Allergic to nuts\r\n- - -\n- (2026-11-04) A fact\n* (2026-11-04) Misplaced\n- [ ] 2 tickets\n1. Plays the cello\n- (optional) an umbrella\n*2026-11-04 was the day*\n", true)
	writeWorking(t, sh, "notes/plan.md", "- An item of a note\n", false)
	git(t, sh.Dir(), "add", "-A")
	gitDir := filepath.Join(sh.Dir(), ".git")
	staged, err := gitstore.CheckStaged(gitDir, filepath.Join(gitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	var prose, problems []string
	for _, p := range staged.Prose {
		prose = append(prose, p.String())
	}
	for _, p := range staged.Problems {
		problems = append(problems, p.String())
	}
	want := []string{
		`profile.md line 10: "- Likes tea" is a list item, not a fact line: memd keeps it as prose`,
		`profile.md line 11: "  * Allergic to nuts" is a list item, not a fact line: memd keeps it as prose`,
		`profile.md line 15: "- [ ] 2 tickets" is a list item, not a fact line: memd keeps it as prose`,
		`profile.md line 16: "1. Plays the cello" is a list item, not a fact line: memd keeps it as prose`,
		`profile.md line 17: "- (optional) an umbrella" is a list item, not a fact line: memd keeps it as prose`,
	}
	if !slices.Equal(prose, want) {
		t.Errorf("said as prose:\n\t%s\nwant\n\t%s", strings.Join(prose, "\n\t"), strings.Join(want, "\n\t"))
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0], `profile.md line 14: "* (2026-11-04) Misplaced" is not read as a fact`) {
		t.Errorf("problems: %q", problems)
	}
}

// A push of a merge of main into a clone's work is not refused for a line
// main holds (kept as prose with --no-verify, or there before memd named
// such lines): the merge brings it in against the clone's own commit.
// Nor is a push moving such a line to another file, as the hook is not.
func TestCheckPushed_AMergeBringsInALineMainHolds(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	clone := t.TempDir()
	git(t, sh.Dir(), "clone", "-q", "--branch", "main", sh.Dir(), clone)
	me := []string{"-c", "user.name=pat", "-c", "user.email=pat@example.com"}
	writeWorking(t, sh, gitstore.ProfileFile, "* (2026-03-02) Plays chess, kept as prose\n", true)
	git(t, sh.Dir(), append(me, "commit", "-qam", "prose", "--no-verify")...)
	if err := os.MkdirAll(filepath.Join(clone, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "log", "2026-11.md"), []byte("- (2026-11-05) Booked the flight\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, clone, "add", "-A")
	git(t, clone, append(me, "commit", "-qm", "mine")...)
	git(t, clone, append(me, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")...)
	push := func() error {
		git(t, sh.Dir(), "fetch", "--quiet", clone, "+refs/heads/main:refs/remotes/peer/main")
		theirs, err := sh.Ref("refs/remotes/peer/main")
		if err != nil {
			t.Fatal(err)
		}
		return sh.CheckPushed(theirs)
	}
	if err := push(); err != nil {
		t.Errorf("push of the merge refused: %v", err)
	}
	// Nor for one main holds that the clone's work moves to another file.
	if err := os.MkdirAll(filepath.Join(clone, "log", "2026-11"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(clone, "log", "2026-11", "05.md"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("* (2026-03-02) Plays chess, kept as prose\n")
	f.Close()
	git(t, clone, "add", "-A")
	git(t, clone, append(me, "commit", "-qm", "moved")...)
	if err := push(); err != nil {
		t.Errorf("push of a line main holds, moved: %v", err)
	}
	// A line of the clone's own in the same file is still checked.
	f, err = os.OpenFile(filepath.Join(clone, gitstore.ProfileFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("* (2026-03-03) Plays go\n")
	f.Close()
	git(t, clone, append(me, "commit", "-qam", "mine too")...)
	if err := push(); err == nil || !strings.Contains(err.Error(), `"* (2026-03-03) Plays go" is not read as a fact`) {
		t.Errorf("push of a misplaced fact: %v", err)
	}
}

// A line already on main is not named again, whatever it holds (a person
// committed it with --no-verify), in the same file saved with CRLF or
// moved to another; lines taken away are not named; a commit on a branch
// of the person's own is left to its merge.
func TestCheckStaged_NamesOnlyWhatTheCommitAdds(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	writeWorking(t, sh, gitstore.ProfileFile, "- (2026-02-30) Kept as prose on purpose\n", true)
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, []string{"profile.md line 8"})
	git(t, sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-q", "--no-verify", "-m", "prose")
	writeWorking(t, sh, gitstore.ProfileFile, "- (2026-11-04) Has a cat called Miso\n", true)
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, nil)
	// Saved again with CRLF line ends by an editor.
	crlf := strings.ReplaceAll(readWorking(t, sh, gitstore.ProfileFile), "\n", "\r\n")
	writeWorking(t, sh, gitstore.ProfileFile, crlf, false)
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, nil)
	// Moved to another fact file, as a month's log split into days.
	git(t, sh.Dir(), "checkout", "-q", gitstore.ProfileFile)
	git(t, sh.Dir(), "reset", "-q")
	if err := os.MkdirAll(filepath.Join(sh.Dir(), "log", "2026-11"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "mv", gitstore.ProfileFile, "log/2026-11/05.md")
	wantStaged(t, sh, nil)
	git(t, sh.Dir(), "reset", "-q", "--hard")
	git(t, sh.Dir(), "rm", "-q", "-f", gitstore.ProfileFile)
	wantStaged(t, sh, nil)

	git(t, sh.Dir(), "checkout", "-q", "-b", "mine")
	writeWorking(t, sh, "log/2026-11.md", "- (2026-02-30) On a branch\n", false)
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, nil)
}

// A file a push would refuse whatever it holds is named too: one over a
// push's 64 MiB, a symbolic link, an executable.
func TestCheckStaged_NamesFilesAPushRefuses(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	big := make([]byte, 64<<20+1)
	if err := os.WriteFile(filepath.Join(sh.Dir(), "scan.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("profile.md", filepath.Join(sh.Dir(), "me.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sh.Dir(), "sync.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, []string{"me.md: a symbolic link", "scan.bin: 64 MiB; a file in a shard may be at most 64 MiB", "sync.sh: an executable file"})

	// Staged without git looking at the file, its size in the index is
	// none: the blob's is read.
	git(t, sh.Dir(), "reset", "-q")
	os.Remove(filepath.Join(sh.Dir(), "me.md"))
	os.Remove(filepath.Join(sh.Dir(), "sync.sh"))
	os.Rename(filepath.Join(sh.Dir(), "scan.bin"), filepath.Join(sh.Dir(), "big"))
	blob := strings.TrimSpace(git(t, sh.Dir(), "hash-object", "-w", "big"))
	git(t, sh.Dir(), "update-index", "--add", "--cacheinfo", "100644,"+blob+",scan.bin")
	wantStaged(t, sh, []string{"scan.bin: 64 MiB; a file in a shard may be at most 64 MiB"})
}

// git reads the index for the check, whatever its format: split
// (core.splitIndex), sparse (a sparse checkout leaving log/ out), or
// without its closing checksum (index.skipHash, which git 2.40's
// feature.manyFiles turns on; given here by hand).
func TestCheckStaged_ReadsTheIndexInAnyFormat(t *testing.T) {
	for _, c := range []struct {
		name  string
		stage func(t *testing.T, sh *gitstore.Shard)
	}{
		{"split", func(t *testing.T, sh *gitstore.Shard) {
			git(t, sh.Dir(), "-c", "core.splitIndex=true", "add", "-A")
		}},
		{"sparse", func(t *testing.T, sh *gitstore.Shard) {
			git(t, sh.Dir(), "sparse-checkout", "init", "--cone", "--sparse-index")
			git(t, sh.Dir(), "sparse-checkout", "set", "notes")
			git(t, sh.Dir(), "add", gitstore.ProfileFile)
		}},
		{"without its checksum", func(t *testing.T, sh *gitstore.Shard) {
			git(t, sh.Dir(), "add", "-A")
			path := filepath.Join(sh.Dir(), ".git", "index")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copy(b[len(b)-20:], make([]byte, 20))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh := shardWithProfile(t, openStore(t))
			remember(t, sh, "Booked the flight", memd.TierLog, "m3")
			writeWorking(t, sh, gitstore.ProfileFile, "- (2026-02-30) Moved to Berlin\n", true)
			c.stage(t, sh)
			wantStaged(t, sh, []string{`profile.md line 8: date "2026-02-30" is not a calendar date`})
		})
	}
}

// What git will not commit is not named: a path added with --intent-to-add
// (git add -N). A submodule is named, whatever a .gitmodules in the
// working tree, not staged, says to ignore.
func TestCheckStaged_NamesWhatGitCommits(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	writeWorking(t, sh, "notes/Trip Plan.md", "# Trip\n", false)
	if err := os.WriteFile(filepath.Join(sh.Dir(), "sync.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "add", "-N", "notes/Trip Plan.md", "sync.sh")
	writeWorking(t, sh, gitstore.ProfileFile, "- (2026-11-04) Has a cat called Miso\n", true)
	git(t, sh.Dir(), "add", gitstore.ProfileFile)
	wantStaged(t, sh, nil)

	writeWorking(t, sh, ".gitmodules", "[submodule \"vendor\"]\n\tpath = vendor\n\turl = ./vendor\n\tignore = all\n", false)
	git(t, sh.Dir(), "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor")
	t.Chdir(sh.Dir()) // where git runs its hooks
	wantStaged(t, sh, []string{"vendor: a submodule"})
}

// A shard memd has made no commit in yet is checked against nothing.
func TestCheckStaged_BeforeTheFirstCommit(t *testing.T) {
	sh := createShard(t, openStore(t), "agent/x")
	writeWorking(t, sh, gitstore.ProfileFile, "# Profile\n- (2026-02-30) First\n", false)
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, []string{`profile.md line 2: date "2026-02-30"`})
}

// shardWithProfile returns a shard whose profile.md memd wrote with two
// facts: seven lines.
func shardWithProfile(t *testing.T, s *gitstore.Store) *gitstore.Shard {
	t.Helper()
	sh := createShard(t, s, "agent/x")
	remember(t, sh, "Lives in Lisbon", memd.TierProfile, "m1")
	remember(t, sh, "Prefers window seats", memd.TierProfile, "m2")
	if n := strings.Count(readWorking(t, sh, gitstore.ProfileFile), "\n"); n != 7 {
		t.Fatalf("profile.md has %d lines; the cases count on 7", n)
	}
	return sh
}

func readWorking(t *testing.T, sh *gitstore.Shard, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sh.Dir(), path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeWorking writes text to a file of the shard's working tree, or
// appends it.
func writeWorking(t *testing.T, sh *gitstore.Shard, path, text string, appended bool) {
	t.Helper()
	full := filepath.Join(sh.Dir(), path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appended {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(full, flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// wantStaged checks that CheckStaged names, in order, a problem starting
// with each of want, and nothing else.
func wantStaged(t *testing.T, sh *gitstore.Shard, want []string) {
	t.Helper()
	gitDir := filepath.Join(sh.Dir(), ".git")
	staged, err := gitstore.CheckStaged(gitDir, filepath.Join(gitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range staged.Problems {
		got = append(got, p.String())
	}
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(got[i], want[i])
	}
	if !ok {
		t.Errorf("CheckStaged named\n\t%s\nwant what starts with\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func repeatLines(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i+1)
	}
	return out
}

// A store given the memd binary writes each shard a pre-commit hook that
// git runs: a commit by hand runs `memd hook pre-commit` and fails when it
// refuses (1). A binary failing otherwise, or gone, lets commits through.
func TestStore_WritesAPreCommitHookGitRuns(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pat's memd") // a quote and a space for the hook's shell
	ran := filepath.Join(dir, "ran")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\" >"+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := gitstore.Open(filepath.Join(dir, "data"), gitstore.Options{NoSync: true, RepackAt: -1, PreCommit: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := shardWithProfile(t, s)
	writeWorking(t, sh, gitstore.ProfileFile, "- (2026-11-04) Has a cat called Miso\n", true)
	if out, err := memdtest.GitOut(sh.Dir(), "commit", "-q", "-a", "-m", "hand edit"); err == nil {
		t.Fatalf("the commit went through a hook that refused it:\n%s", out)
	}
	if b, err := os.ReadFile(ran); err != nil || string(b) != "hook pre-commit\n" {
		t.Fatalf("the hook ran the binary with %q (%v), want \"hook pre-commit\"", b, err)
	}
	// An older memd put back at the path, without this command, fails
	// otherwise (2, its usage error): memd's failure, not the commit's.
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'memd: unknown command \"hook\"' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-q", "-a", "-m", "hand edit")
	// So under a shell exiting at the first error (a /bin/sh that is bash,
	// with errexit in SHELLOPTS).
	if bash, err := exec.LookPath("bash"); err == nil {
		hook := exec.Command(bash, filepath.Join(sh.Dir(), ".git", "hooks", "pre-commit"))
		hook.Dir, hook.Env = sh.Dir(), append(os.Environ(), "SHELLOPTS=errexit")
		if out, err := hook.CombinedOutput(); err != nil {
			t.Errorf("memd's own failure (2) refused the commit under errexit: %v\n%s", err, out)
		}
	}
	os.Remove(bin)
	writeWorking(t, sh, gitstore.ProfileFile, "- (2026-11-05) Has a dog called Rex\n", true)
	git(t, sh.Dir(), "commit", "-q", "-a", "-m", "hand edit")
}

// A hook a person wrote stays theirs; memd's own follows the binary it is
// given at the next start; a store given none writes none.
func TestStore_KeepsAPersonsOwnHook(t *testing.T) {
	dir := t.TempDir()
	open := func(bin string) (*gitstore.Store, *gitstore.Shard) {
		t.Helper()
		s, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1, PreCommit: bin})
		if err != nil {
			t.Fatal(err)
		}
		return s, createShard(t, s, "agent/x")
	}
	s, sh := open("")
	hook := filepath.Join(sh.Dir(), ".git", "hooks", "pre-commit")
	if _, err := os.Stat(hook); !os.IsNotExist(err) {
		t.Fatalf("a store given no binary wrote a hook (%v)", err)
	}
	s.Close()

	s, _ = open("/opt/memd/1/memd")
	s.Close()
	s, _ = open("/opt/memd/2/memd")
	for _, name := range gitstore.Hooks {
		b, _ := os.ReadFile(filepath.Join(sh.Dir(), ".git", "hooks", name))
		if !strings.Contains(string(b), "memd='/opt/memd/2/memd'\n") || !strings.Contains(string(b), "\"$memd\" hook "+name+" ||") {
			t.Errorf("memd's %s hook after a start with another binary:\n%s", name, b)
		}
	}
	s.Close()

	own := "#!/bin/sh\nexec make lint\n"
	if err := os.WriteFile(hook, []byte(own), 0o755); err != nil {
		t.Fatal(err)
	}
	s, _ = open("/opt/memd/3/memd")
	s.Close()
	if b, _ := os.ReadFile(hook); string(b) != own {
		t.Errorf("a person's own hook became:\n%s", b)
	}
	// A link to a script kept elsewhere, on a drive not mounted now.
	os.Remove(hook)
	if err := os.Symlink("/mnt/team-hooks/pre-commit", hook); err != nil {
		t.Fatal(err)
	}
	s, _ = open("/opt/memd/3/memd")
	defer s.Close()
	if to, err := os.Readlink(hook); err != nil || to != "/mnt/team-hooks/pre-commit" {
		b, _ := os.ReadFile(hook)
		t.Errorf("a person's own hook, a link, became (%v):\n%s", err, b)
	}
}

// memd serve --no-commit-hook removes the hooks an earlier start wrote,
// and leaves a person's; a store given neither (memd reindex) leaves
// memd's too.
func TestStore_RemovesTheHooksItWrote(t *testing.T) {
	dir := t.TempDir()
	open := func(opts gitstore.Options) *gitstore.Shard {
		t.Helper()
		opts.NoSync, opts.RepackAt = true, -1
		s, err := gitstore.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		sh := createShard(t, s, "agent/x")
		s.Close()
		return sh
	}
	sh := open(gitstore.Options{PreCommit: "/opt/memd/memd"})
	hooks := filepath.Join(sh.Dir(), ".git", "hooks")
	own := "#!/bin/sh\nexec make lint\n"
	if err := os.WriteFile(filepath.Join(hooks, "pre-merge-commit"), []byte(own), 0o755); err != nil {
		t.Fatal(err)
	}
	open(gitstore.Options{})
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); err != nil {
		t.Errorf("a store given no binary, and not asked to remove hooks, removed memd's: %v", err)
	}
	open(gitstore.Options{RemoveHooks: true})
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); !os.IsNotExist(err) {
		t.Errorf("memd's hook after a start with RemoveHooks: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(hooks, "pre-merge-commit")); string(b) != own {
		t.Errorf("a person's own hook after a start with RemoveHooks:\n%s", b)
	}
}

// A commit made by hand reads main before its hooks run: memd's writes
// wait while the hook's mark names main as it is, so that the commit goes
// in, then follow it. A mark older than a second (a commit refused or left
// in an editor) is passed over.
func TestShard_AWriteWaitsForACommitMadeByHand(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	gitDir := filepath.Join(sh.Dir(), ".git")
	mark := filepath.Join(gitDir, gitstore.HandCommitMark)
	markMain := func() {
		t.Helper()
		if err := os.WriteFile(mark, []byte(git(t, sh.Dir(), "rev-parse", "main")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waiting := make(chan struct{})
	var once sync.Once
	*gitstore.HandCommitWaited = func() { once.Do(func() { close(waiting) }) }
	t.Cleanup(func() { *gitstore.HandCommitWaited = func() {} })

	markMain()
	before := git(t, sh.Dir(), "rev-parse", "main")
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		day, _ := memd.ParseDate("2026-11-03")
		_, err = sh.Apply(gitstore.Change{Author: alice, Message: "remember: a flight\n",
			Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Booked a flight to Lisbon", Date: day, Tier: memd.TierLog}}}})
	}()
	select {
	case <-waiting:
	case <-done:
		t.Fatal("memd's write did not wait for the commit made by hand")
	}
	if now := git(t, sh.Dir(), "rev-parse", "main"); now != before {
		t.Fatalf("main moved from %s to %s while the commit by hand was being made", before, now)
	}
	writeWorking(t, sh, gitstore.ProfileFile, "- (2026-11-04) Has a cat called Miso\n", true)
	git(t, sh.Dir(), "commit", "-q", "--no-verify", "-a", "-m", "hand edit")
	<-done
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{gitstore.ProfileFile: "Has a cat called Miso", "log/2026-11.md": "Booked a flight to Lisbon"} {
		if !strings.Contains(git(t, sh.Dir(), "show", "main:"+path), text) {
			t.Errorf("main's %s lacks %q", path, text)
		}
	}
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Errorf("the mark is still there once the commit went in (%v)", err)
	}

	// A mark left a second and more ago holds nothing up.
	markMain()
	old := time.Now().Add(-2 * time.Second)
	os.Chtimes(mark, old, old)
	*gitstore.HandCommitWaited = func() { t.Error("memd's write waited for a mark two seconds old") }
	remember(t, sh, "Packed a raincoat", memd.TierLog, "m4")
}

// The lists CheckStaged returns hold twenty lines each, and say when a
// commit holds more: one of twenty-one lines is not left out unsaid.
func TestCheckStaged_SaysWhenMoreWereLeftOut(t *testing.T) {
	for _, n := range []int{20, 21, 60} {
		sh := shardWithProfile(t, openStore(t))
		var bad, prose strings.Builder
		for k := range n {
			fmt.Fprintf(&bad, "- (2026-13-%02d) A month that is not\n", 1+k%28)
			fmt.Fprintf(&prose, "- Undated item %d\n", k)
		}
		writeWorking(t, sh, "log/2026-11.md", bad.String(), false)
		writeWorking(t, sh, "log/2026-10.md", prose.String(), false)
		git(t, sh.Dir(), "add", "-A")
		gitDir := filepath.Join(sh.Dir(), ".git")
		staged, err := gitstore.CheckStaged(gitDir, filepath.Join(gitDir, "index"))
		if err != nil {
			t.Fatal(err)
		}
		if len(staged.Problems) != 20 || staged.MoreProblems != (n > 20) {
			t.Errorf("%d bad lines: %d named, more %v", n, len(staged.Problems), staged.MoreProblems)
		}
		if len(staged.Prose) != 20 || staged.MoreProse != (n > 20) {
			t.Errorf("%d prose lines: %d said, more %v", n, len(staged.Prose), staged.MoreProse)
		}
	}
}
