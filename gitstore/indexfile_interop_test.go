package gitstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
)

// memd keeps the index it wrote, to skip reading it back with the next
// write; a person's git changing the index in between must not be
// undone. Each round the person stages a file with git, then memd writes
// twice (the second on its own index): every file staged is still staged,
// and git reads an index whose entries are all where HEAD and the
// person's staging put them.
func TestShard_APersonsStagingSurvivesMemdsNextWrites(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Lives in Lisbon", memd.TierProfile, "m0")
	dir := sh.Dir()
	var staged []string
	for round := range 4 {
		name := fmt.Sprintf("todo-%d.txt", round)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("a person's list\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", name)
		staged = append(staged, name)
		remember(t, sh, fmt.Sprintf("Booked flight %d to Porto", round), memd.TierLog, fmt.Sprintf("m%d-a", round))
		remember(t, sh, fmt.Sprintf("Paid invoice %d", round), memd.TierLog, fmt.Sprintf("m%d-b", round))
		if got := strings.Fields(git(t, dir, "diff", "--cached", "--name-only")); strings.Join(got, " ") != strings.Join(staged, " ") {
			t.Fatalf("round %d: staged %v, want %v", round, got, staged)
		}
		if st := git(t, dir, "status", "--porcelain"); strings.Count(st, "\n") != len(staged) || strings.Contains(st, "log/") || strings.Contains(st, "profile.md") {
			t.Fatalf("round %d: git status shows more than the person's staging:\n%s", round, st)
		}
	}
	git(t, dir, "commit", "-q", "-m", "the person's lists")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("after the person's commit, git status:\n%s", st)
	}
	if got := len(texts(t, sh)); got != 9 {
		t.Errorf("%d facts after the person's commit, want 9", got)
	}
}
