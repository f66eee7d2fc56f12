package provenance_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/provenance"
)

func total(t *testing.T, days []memd.GrowthDay) (a, r int) {
	for _, d := range days {
		a += d.Added
		r += d.Removed
	}
	return
}

// Same fact on both sides of a merge.
func TestReview_GrowthSameFactBothSides(t *testing.T) {
	sh := newShard(t)
	change(t, sh, memd.OpRemember, "Fact A", "m1")
	dir := sh.Dir()
	b0, _ := os.ReadFile(filepath.Join(dir, "profile.md"))
	t.Logf("%q", b0)
	git(t, dir, "checkout", "-q", "-b", "side")
	change2 := func() {
		b, _ := os.ReadFile(filepath.Join(dir, "profile.md"))
		os.WriteFile(filepath.Join(dir, "profile.md"), append(b, []byte("- (2026-10-01) Fact B\n")...), 0o644)
	}
	change2()
	git(t, dir, "commit", "-qam", "person adds B on side")
	git(t, dir, "checkout", "-q", "main")
	change2()
	git(t, dir, "commit", "-qam", "person adds B on main")
	git(t, dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	days, _, _, err := provenance.Growth(sh, plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	facts, _, _ := sh.Facts()
	a, r := total(t, days)
	t.Logf("facts=%d added=%d removed=%d net=%d", len(facts), a, r, a-r)
	if a-r != len(facts) {
		t.Errorf("growth net %d != facts %d", a-r, len(facts))
	}
}

// A merge whose resolution adds a fact.
func TestReview_GrowthEvilMerge(t *testing.T) {
	sh := newShard(t)
	change(t, sh, memd.OpRemember, "Fact A", "m1")
	dir := sh.Dir()
	git(t, dir, "checkout", "-q", "-b", "side")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "side")
	git(t, dir, "checkout", "-q", "main")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "main")
	git(t, dir, "merge", "-q", "--no-ff", "--no-commit", "side")
	b, _ := os.ReadFile(filepath.Join(dir, "profile.md"))
	os.WriteFile(filepath.Join(dir, "profile.md"), append(b, []byte("- (2026-10-01) Fact Z\n")...), 0o644)
	git(t, dir, "commit", "-qam", "merge side with Z")
	days, _, _, err := provenance.Growth(sh, plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	facts, _, _ := sh.Facts()
	a, r := total(t, days)
	t.Logf("facts=%d added=%d removed=%d", len(facts), a, r)
	if a-r != len(facts) {
		t.Errorf("growth net %d != facts %d", a-r, len(facts))
	}
}
