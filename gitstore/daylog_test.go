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
