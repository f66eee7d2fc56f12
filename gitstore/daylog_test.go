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

func TestIsFactFile(t *testing.T) {
	cases := map[string]bool{
		"profile.md":              true,
		"log/2026-11.md":          true,
		"log/2026-11/30.md":       true,
		"log/2024-02/29.md":       true,
		"log/2026-02/29.md":       false, // not a real day
		"log/2026-13.md":          false,
		"log/2026-11/1.md":        false,
		"log/2026-11/31.md":       false,
		"log/2026-11/30.txt":      false,
		"log/2026-11/30/01.md":    false,
		"log/2026-11-30.md":       false,
		"log/notes.md":            false,
		"notes/log/2026-11.md":    false,
		"log/2026-11/../x.md":     false,
		"log/2026-11\\30.md":      false,
		"other/log/2026-11/30.md": false,
	}
	for path, want := range cases {
		if got := gitstore.IsFactFile(path); got != want {
			t.Errorf("IsFactFile(%q) = %v, want %v", path, got, want)
		}
	}
}

// fillMonth writes one commit of log facts dated in November 2026, of at
// least size bytes, the series making their texts new.
func fillMonth(t *testing.T, sh *gitstore.Shard, series string, size int) {
	t.Helper()
	var edits []gitstore.Edit
	for n, i := 0, 0; n < size; i++ {
		d, _ := memd.ParseDate(fmt.Sprintf("2026-11-%02d", 1+i%28))
		f := memd.Fact{Text: fmt.Sprintf("Earlier history item %d of a busy month (%s)", i, series), Date: d, Tier: memd.TierLog}
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: f})
		n += len(gitstore.FormatLine(f))
	}
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "import: history\n", Edits: edits}); err != nil {
		t.Fatal(err)
	}
}

func rememberOn(t *testing.T, sh *gitstore.Shard, date, text string) memd.Fact {
	t.Helper()
	d, err := memd.ParseDate(date)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sh.Apply(gitstore.Change{
		Author:  alice,
		Message: "remember: " + text + "\n",
		Edits:   []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: memd.TierLog}}},
	})
	if err != nil {
		t.Fatalf("remember %q: %v", text, err)
	}
	return res.Facts[0]
}

// Once a month's log is SplitLogAt long, the month's later facts go into a
// file a day, so a lone writer's commit does not rewrite the whole month.
// Quiet months stay one file.
func TestShard_BusyMonthGoesOnInDayFiles(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	quiet := rememberOn(t, sh, "2026-10-05", "A quiet month's fact")
	if quiet.File != "log/2026-10.md" {
		t.Fatalf("a quiet month's fact went to %s", quiet.File)
	}
	fillMonth(t, sh, "first", gitstore.SplitLogAt-1000) // the header and one line still fit
	under := rememberOn(t, sh, "2026-11-29", "Still fits in the month's log")
	if under.File != "log/2026-11.md" {
		t.Fatalf("a fact of a month under the split went to %s", under.File)
	}
	fillMonth(t, sh, "second", 1000)

	dir := sh.Dir()
	monthBefore := git(t, dir, "rev-parse", "HEAD:log/2026-11.md")
	day := rememberOn(t, sh, "2026-11-30", "Booked a flight to Lisbon")
	if day.File != "log/2026-11/30.md" {
		t.Fatalf("a busy month's new fact went to %s, want log/2026-11/30.md", day.File)
	}
	again := rememberOn(t, sh, "2026-11-30", "Booked a hotel in Lisbon")
	other := rememberOn(t, sh, "2026-11-02", "A late entry for an earlier day")
	if again.File != day.File || other.File != "log/2026-11/02.md" {
		t.Errorf("later facts went to %s and %s", again.File, other.File)
	}
	if got := git(t, dir, "rev-parse", "HEAD:log/2026-11.md"); got != monthBefore {
		t.Error("the month's log changed after it was split")
	}
	if got := quietAfter(t, sh); got != "log/2026-10.md" {
		t.Errorf("a quiet month's next fact went to %s", got)
	}

	// Plain git reads the day's file, with its header, and a clean tree.
	show := git(t, dir, "show", "HEAD:log/2026-11/30.md")
	if !strings.HasPrefix(show, "# Log 2026-11-30\n") || !strings.Contains(show, "- (2026-11-30) Booked a flight to Lisbon\n") {
		t.Errorf("the day's file:\n%s", show)
	}
	git(t, dir, "fsck", "--strict")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after writes to a day's file:\n%s", st)
	}
	if blame := git(t, dir, "blame", "--porcelain", "log/2026-11/30.md"); !strings.Contains(blame, "Booked a hotel in Lisbon") {
		t.Errorf("git blame of the day's file:\n%s", blame)
	}

	// Day files are fact files: read, found, forgotten like any other.
	got, err := sh.Fact(day.ID)
	if err != nil || got.File != day.File || got.Tier != memd.TierLog {
		t.Fatalf("the day's fact reads back as %+v, %v", got, err)
	}
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "forget: flight\n", Edits: []gitstore.Edit{{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: day.ID}}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(git(t, dir, "show", "HEAD:log/2026-11/30.md"), "flight") {
		t.Error("forget left the line in the day's file")
	}
}

func quietAfter(t *testing.T, sh *gitstore.Shard) string {
	t.Helper()
	return rememberOn(t, sh, "2026-10-06", "Another quiet month's fact").File
}

// A day's file a person made, or one left after the month's log was cut
// down by hand, keeps taking that day's facts: the day never moves back.
func TestShard_DayFileKeepsItsDay(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	rememberOn(t, sh, "2026-11-01", "The month's first fact")
	dir := sh.Dir()
	if err := os.MkdirAll(filepath.Join(dir, "log", "2026-11"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log", "2026-11", "30.md"), []byte("# My day\n\n- (2026-11-30) Written by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "log/2026-11/30.md")
	git(t, dir, "commit", "-qm", "a day by hand")

	if got := texts(t, sh); !slices.Equal(got, []string{"The month's first fact", "Written by hand"}) {
		t.Fatalf("facts after a person's day file: %v", got)
	}
	if f := rememberOn(t, sh, "2026-11-30", "Then memd added one"); f.File != "log/2026-11/30.md" {
		t.Errorf("a fact of a day with its own file went to %s", f.File)
	}
	if f := rememberOn(t, sh, "2026-11-29", "And one the day before"); f.File != "log/2026-11.md" {
		t.Errorf("a fact of a day without a file, in a small month, went to %s", f.File)
	}
	if path, err := sh.FileFor(memd.TierLog, mustDate(t, "2026-11-30")); err != nil || path != "log/2026-11/30.md" {
		t.Errorf("FileFor the day = %q, %v", path, err)
	}
	if show := git(t, dir, "show", "HEAD:log/2026-11/30.md"); !strings.HasPrefix(show, "# My day\n") {
		t.Errorf("the person's header is gone:\n%s", show)
	}
}

func mustDate(t *testing.T, s string) memd.Date {
	t.Helper()
	d, err := memd.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A git command that wrote back an index read before memd made a new file
// (a new day's log, or a new month's) makes the person's next commit drop
// the file whole; memd commits its facts back. A person who removes the
// file with git rm meant it, and it stays gone.
func TestShard_RestoresANewFileAStaleIndexDropped(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split %v", split), func(t *testing.T) {
			sh := createShard(t, openStore(t), "agent/alice")
			dir := sh.Dir()
			if split {
				fillMonth(t, sh, "history", gitstore.SplitLogAt)
			} else {
				rememberOn(t, sh, "2026-10-29", "An October fact")
			}
			index := filepath.Join(dir, ".git", "index")
			stale := filepath.Join(t.TempDir(), "index")
			copyFile(t, index, stale)
			f := rememberOn(t, sh, "2026-11-30", "Booked a flight to Lisbon")
			if want := map[bool]string{false: "log/2026-11.md", true: "log/2026-11/30.md"}[split]; f.File != want {
				t.Fatalf("the fact went to %s, want a new file %s", f.File, want)
			}
			copyFile(t, stale, index)
			if err := os.WriteFile(filepath.Join(dir, "todo.md"), []byte("call mum\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, dir, "add", "todo.md")
			git(t, dir, "commit", "-qm", "todo")
			if err := sh.Refresh(); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(texts(t, sh), "Booked a flight to Lisbon") {
				t.Fatalf("the fact of the dropped file is lost; git log:\n%s", git(t, dir, "log", "--format=%an|%s", "-3"))
			}
			if got := git(t, dir, "log", "-1", "--format=%an"); strings.TrimSpace(got) != "memd" {
				t.Errorf("the last commit is by %s, want memd's restore", got)
			}
			if st := git(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status after the restore:\n%s", st)
			}

			git(t, dir, "rm", "-q", f.File)
			git(t, dir, "commit", "-qm", "drop that file")
			if err := sh.Refresh(); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(texts(t, sh), "Booked a flight to Lisbon") {
				t.Error("a file a person removed with git rm came back")
			}
		})
	}
}

// Two copies of a shard on either side of the split both remember the same
// fact, one into the month's log, the other into the day's: the merge keeps
// it once, where the merging side has it.
func TestShard_IntegrateKeepsAFactOnceAcrossMonthAndDay(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	fillMonth(t, a, "first", gitstore.SplitLogAt-2000)
	integrate(t, b, a)
	fillMonth(t, a, "second", 2000)
	fa := rememberOn(t, a, "2026-11-30", "Booked a flight to Lisbon")
	fb := rememberOn(t, b, "2026-11-30", "Booked a flight to Lisbon")
	if fa.File == fb.File {
		t.Fatalf("both sides wrote %s, so this test shows nothing", fa.File)
	}
	only := rememberOn(t, b, "2026-11-30", "Took the night train")
	integrate(t, a, b)
	grep := git(t, a.Dir(), "grep", "-h", "-e", "Booked a flight", "-e", "night train", "HEAD", "--", "log")
	if n := strings.Count(grep, "Booked a flight"); n != 1 {
		t.Errorf("after the merge the fact is on %d lines:\n%s", n, grep)
	}
	if !strings.Contains(grep, "night train") {
		t.Errorf("the merge lost %q, which only b had", only.Text)
	}
	got, err := a.Fact(fa.ID)
	if err != nil || got.File != fa.File {
		t.Errorf("the fact is in %s (%v), want where a had it, %s", got.File, err, fa.File)
	}
	git(t, a.Dir(), "fsck", "--strict")
	if st := git(t, a.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status after the merge:\n%s", st)
	}
}

// A person's file with the name a split month's folder of days would take
// stays; that month's facts go on in its log.
func TestShard_APersonsFileKeepsTheFolderName(t *testing.T) {
	sh := createShard(t, openStore(t), "agent/alice")
	dir := sh.Dir()
	fillMonth(t, sh, "history", gitstore.SplitLogAt)
	if err := os.WriteFile(filepath.Join(dir, "log", "2026-11"), []byte("my own notes on November\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "log/2026-11")
	git(t, dir, "commit", "-qm", "notes")
	if f := rememberOn(t, sh, "2026-11-30", "Booked a flight"); f.File != "log/2026-11.md" {
		t.Errorf("the fact went to %s, want the month's log", f.File)
	}
	if got := git(t, dir, "show", "HEAD:log/2026-11"); got != "my own notes on November\n" {
		t.Errorf("the person's file at HEAD: %q", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// A file a person saved with CRLF line ends keeps them through memd's
// appends, rewrites and removals, and its facts stay facts.
func TestShard_LinesEndAsAPersonsFileDoes(t *testing.T) {
	sh := createShard(t, openStore(t), "agent/alice")
	dir := sh.Dir()
	text := "# Profile\r\n- (2026-11-01) Lives in Lisbon\r\n- (2026-11-01) Likes tea\r\n"
	if err := os.WriteFile(filepath.Join(dir, "profile.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "profile.md")
	git(t, dir, "commit", "-qm", "saved on Windows")
	d, _ := memd.ParseDate("2026-11-02")
	for _, e := range []gitstore.Edit{
		{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Works at Acme", Date: d, Tier: memd.TierProfile}},
		{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: memd.FactID("Likes tea")}, With: memd.Fact{Text: "Likes green tea"}},
		{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: memd.FactID("Lives in Lisbon")}},
		{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Speaks Portuguese", Date: d, Tier: memd.TierProfile}},
	} {
		if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "edit\n", Edits: []gitstore.Edit{e}}); err != nil {
			t.Fatal(err)
		}
	}
	want := "# Profile\r\n- (2026-11-01) Likes green tea\r\n- (2026-11-02) Works at Acme\r\n- (2026-11-02) Speaks Portuguese\r\n"
	if got := git(t, dir, "show", "HEAD:profile.md"); got != want {
		t.Errorf("profile.md at HEAD:\n%q\nwant\n%q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "profile.md")); string(b) != want {
		t.Errorf("the working file:\n%q", b)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	for _, text := range []string{"Likes green tea", "Works at Acme", "Speaks Portuguese"} {
		if f, err := sh.Fact(memd.FactID(text)); err != nil || f.Text != text {
			t.Errorf("fact %q: %+v, %v", text, f, err)
		}
	}
}

// A person appending to a CRLF file, without a final line end as some
// editors save, gets memd's next fact after a CRLF too.
func TestShard_LinesEndAsAPersonsFileDoesWhileTheyEditIt(t *testing.T) {
	sh := createShard(t, openStore(t), "agent/alice")
	dir := sh.Dir()
	if err := os.WriteFile(filepath.Join(dir, "profile.md"), []byte("# Profile\r\n- (2026-11-01) Lives in Lisbon\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "profile.md")
	git(t, dir, "commit", "-qm", "saved on Windows")
	if err := os.WriteFile(filepath.Join(dir, "profile.md"), []byte("# Profile\r\n- (2026-11-01) Lives in Lisbon\r\n- (2026-11-03) Has a cat"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := memd.ParseDate("2026-11-02")
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "remember\n",
		Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Speaks Portuguese", Date: d, Tier: memd.TierProfile}}}}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "profile.md"))
	if want := "# Profile\r\n- (2026-11-01) Lives in Lisbon\r\n- (2026-11-03) Has a cat\r\n- (2026-11-02) Speaks Portuguese\r\n"; string(got) != want {
		t.Errorf("the working file:\n%q\nwant\n%q", got, want)
	}
}

// A person who saved memd's LF file with CRLF line ends, not committed yet,
// gets memd's next fact with a CRLF too.
func TestShard_LinesEndAsAWorkingFileSavedOtherwise(t *testing.T) {
	sh := createShard(t, openStore(t), "agent/alice")
	dir := sh.Dir()
	rememberOn(t, sh, "2026-11-01", "Booked a flight")
	path := filepath.Join(dir, "log", "2026-11.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crlf := strings.ReplaceAll(string(b), "\n", "\r\n") + "- (2026-11-03) Packed a bag\r\n"
	if err := os.WriteFile(path, []byte(crlf), 0o644); err != nil {
		t.Fatal(err)
	}
	rememberOn(t, sh, "2026-11-02", "Checked in")
	got, _ := os.ReadFile(path)
	if want := crlf + "- (2026-11-02) Checked in\r\n"; string(got) != want {
		t.Errorf("the working file:\n%q\nwant\n%q", got, want)
	}
}
