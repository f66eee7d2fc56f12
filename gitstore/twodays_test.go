package gitstore_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// A fact a person wrote on two days is the fact of the newer day, as the
// facts list shows it: Fact gives that day, and an edit keeps it (one
// line holds the new text, the other goes).
func TestShard_AFactOnTwoDaysIsItsNewestLine(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/erin")
	dir := sh.Dir()
	remember(t, sh, "Erin one", memd.TierProfile, "m1")
	appendTo(t, filepath.Join(dir, "profile.md"), "- (2026-11-20) Goes swimming\n- (2026-12-03) Goes swimming\n")
	git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qam", "recurring")
	id := memd.FactID("Goes swimming")
	got, err := sh.Fact(id)
	if err != nil || got.Date.String() != "2026-12-03" {
		t.Fatalf("Fact of a fact on two days: %+v %v, want the 2026-12-03 line's", got, err)
	}
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "edit: swimming",
		Edits: []gitstore.Edit{{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: id}, With: memd.Fact{Text: "Goes swimming on Sundays"}}}}); err != nil {
		t.Fatal(err)
	}
	data := read(t, filepath.Join(dir, "profile.md"))
	if !strings.Contains(data, "- (2026-12-03) Goes swimming on Sundays\n") || strings.Contains(data, "Goes swimming\n") {
		t.Errorf("profile.md after the edit:\n%s", data)
	}
}

// A fact file a person removed (rm, git rm, git mv) and has not committed
// that is not written back by memd's next fact for it: the write is
// refused with conflict, as a note's is, and commits nothing; once the
// person commits the removal, memd's next write starts the file anew.
func TestShard_FactFileAPersonRemovedIsNotWrittenBack(t *testing.T) {
	for _, remove := range [][]string{{"rm"}, {"git", "rm", "-q", "profile.md"}, {"git", "mv", "profile.md", "Profile.md"}} {
		t.Run(remove[0]+" "+remove[len(remove)-1], func(t *testing.T) {
			s := openStore(t)
			sh := createShard(t, s, "agent/alice")
			dir := sh.Dir()
			remember(t, sh, "Alice one", memd.TierProfile, "m1")
			if remove[0] == "rm" {
				os.Remove(filepath.Join(dir, "profile.md"))
			} else {
				git(t, dir, remove[1:]...)
			}
			status := git(t, dir, "status", "--porcelain")
			d, _ := memd.ParseDate("2026-11-04")
			_, err := sh.Apply(gitstore.Change{Author: alice, Message: "remember: two",
				Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Alice two", Date: d, Tier: memd.TierProfile}}}})
			if memd.ErrorCode(err) != memd.ECONFLICT || !strings.Contains(err.Error(), "profile.md") {
				t.Fatalf("write into a fact file a person removed: %v, want conflict naming it", err)
			}
			if got := git(t, dir, "status", "--porcelain"); got != status {
				t.Errorf("git status went %q -> %q", status, got)
			}
			if got := texts(t, sh); len(got) != 1 {
				t.Errorf("facts: %q, want the first alone", got)
			}
		})
	}
}

// In two files, the newest line's file and tier keep the fact: the new
// text goes where that line stands.
func TestShard_AFactInTwoFilesIsEditedWhereItsNewestLineIs(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/erin")
	dir := sh.Dir()
	remember(t, sh, "Erin one", memd.TierProfile, "m1")
	os.MkdirAll(filepath.Join(dir, "log"), 0o755)
	os.WriteFile(filepath.Join(dir, "log", "2026-10.md"), []byte("- (2026-10-01) Goes swimming\n"), 0o644)
	appendTo(t, filepath.Join(dir, "profile.md"), "- (2026-11-05) Goes swimming\n")
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "in two files")
	id := memd.FactID("Goes swimming")
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "edit: swimming",
		Edits: []gitstore.Edit{{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: id}, With: memd.Fact{Text: "Goes swimming on Sundays"}}}}); err != nil {
		t.Fatal(err)
	}
	if profile := read(t, filepath.Join(dir, "profile.md")); !strings.Contains(profile, "- (2026-11-05) Goes swimming on Sundays\n") {
		t.Errorf("profile.md after the edit:\n%s", profile)
	}
	if log := read(t, filepath.Join(dir, "log", "2026-10.md")); strings.Contains(log, "swimming") {
		t.Errorf("log/2026-10.md after the edit:\n%s", log)
	}
	got, err := sh.Fact(memd.FactID("Goes swimming on Sundays"))
	if err != nil || got.Tier != memd.TierProfile || got.Date.String() != "2026-11-05" {
		t.Errorf("the edited fact: %+v %v, want profile, 2026-11-05", got, err)
	}
}

// A fact file in conflict in a person's git merge is not written: git kept
// their side as it was when the merge began, and a resolution taking it
// (git checkout --ours) would drop what memd wrote into the file since. The
// change is refused with conflict and commits nothing; one into another
// file goes on; every fact acknowledged is in main after the merge.
func TestShard_AFactFileInConflictInAPersonsMergeIsNotWritten(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	dir := sh.Dir()
	remember(t, sh, "Alice one", memd.TierProfile, "m1")
	git(t, dir, "switch", "-q", "-c", "mine")
	appendTo(t, filepath.Join(dir, "profile.md"), "- (2026-12-01) A person's fact\n")
	git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qam", "person")
	git(t, dir, "switch", "-q", "main")
	remember(t, sh, "Before the merge", memd.TierProfile, "m2")
	merge := exec.Command("git", "-c", "user.name=p", "-c", "user.email=p@x", "merge", "--no-edit", "mine")
	merge.Dir = dir
	if out, err := merge.CombinedOutput(); err == nil {
		t.Fatalf("the merge went through without a conflict:\n%s", out)
	}
	before := git(t, dir, "rev-parse", "main")
	d, _ := memd.ParseDate("2026-11-04")
	_, err := sh.Apply(gitstore.Change{Author: alice, Message: "remember: during",
		Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "During the merge", Date: d, Tier: memd.TierProfile}}}})
	if memd.ErrorCode(err) != memd.ECONFLICT || !strings.Contains(err.Error(), "profile.md") {
		t.Fatalf("write into a fact file in conflict: %v, want conflict naming it", err)
	}
	if after := git(t, dir, "rev-parse", "main"); after != before {
		t.Errorf("main moved: %s -> %s", before, after)
	}
	remember(t, sh, "A log fact during the merge", memd.TierLog, "m3")
	git(t, dir, "checkout", "--ours", "profile.md")
	git(t, dir, "add", "profile.md")
	git(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "--no-edit")
	want := []string{"A log fact during the merge", "Alice one", "Before the merge"}
	if got := texts(t, sh); !slices.Equal(got, want) {
		t.Errorf("facts after the person's merge: %q, want %q", got, want)
	}
}
