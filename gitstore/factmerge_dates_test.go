package gitstore

// Fact lines merged by day, where a person corrected a date, against a
// forget, an edit, a correction on the other side, and a revert.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

const (
	teaLine    = "- (2026-11-03) Prefers tea"
	teaRedated = "- (2026-11-02) Prefers tea" // the person's date correction
)

func runLine(day string) string { return "- (2026-11-" + day + ") Went running by the river\n" }

// Working tree: memd forgets a fact (every line of it) while a person has
// corrected its date in their uncommitted copy: the line goes, so that
// their next commit does not bring the fact back.
func TestMergeFactFile_AForgetTakesALineAPersonRedated(t *testing.T) {
	p := "log/2026-11.md"
	dune := "- (2026-11-07) Read Dune\n"
	for _, c := range []struct {
		name, path, base, ours, theirs, gone string
	}{
		{"profile", ProfileFile, profileHead, "# Profile\n\n- (2026-11-03) Lives in Lisbon\n",
			"# Profile\n\n- (2026-11-03) Lives in Lisbon\n" + teaRedated + "\n", "Prefers tea"},
		{"recurring entry, one of its two lines re-dated", p, logTop + runLine("05") + dune + runLine("13"), logTop + dune,
			logTop + runLine("05") + dune + runLine("12"), "Went running"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, baseFacts := range [][]lineFact{nil, parseFactFile(c.path, []byte(c.base))} {
				got := mergeFactFile(c.path, []byte(c.base), []byte(c.ours), []byte(c.theirs), baseFacts)
				if strings.Contains(string(got), c.gone) {
					t.Fatalf("memd forgot %q, yet the person's working file keeps it after the merge:\n%s", c.gone, got)
				}
			}
		})
	}
}

// Working tree: memd edits a fact in place (ReplaceFact) while the person
// corrected its date: the old text goes.
func TestMergeFactFile_AnEditTakesTheOldTextAPersonRedated(t *testing.T) {
	ours := "# Profile\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Prefers green tea\n"
	theirs := "# Profile\n\n- (2026-11-03) Lives in Lisbon\n" + teaRedated + "\n"
	got := mergeFactFile(ProfileFile, []byte(profileHead), []byte(ours), []byte(theirs), nil)
	if strings.Contains(string(got), "Prefers tea\n") {
		t.Fatalf("memd reworded \"Prefers tea\", yet the merged working file still holds the old text:\n%s", got)
	}
}

// applyAsAlice applies edits as alice, failing the test on an error.
func applyAsAlice(t *testing.T, sh *Shard, edits ...Edit) {
	t.Helper()
	if _, err := sh.Apply(Change{Author: who, Message: "agent\n", Edits: edits}); err != nil {
		t.Fatal(err)
	}
}

// End to end: a person corrects the date of "Prefers tea" in profile.md
// (uncommitted, or staged), an agent forgets the fact or rewords it, the
// person commits: the old text stays gone.
func TestShard_APersonsCommitAfterAForgetOrEditOfAFactTheyRedated(t *testing.T) {
	for _, agent := range []Edit{forgetEdit("Prefers tea"), rewordEdit("Prefers tea", "Prefers green tea")} {
		for _, staged := range []bool{false, true} {
			name := map[bool]string{false: "commit -a", true: "staged, then commit"}[staged]
			t.Run(fmt.Sprintf("op %d, %s", agent.Op, name), func(t *testing.T) {
				_, sh := aliceShard(t)
				applyAsAlice(t, sh, rememberEdit("Lives in Lisbon", memd.TierProfile, "2026-11-03"), rememberEdit("Prefers tea", memd.TierProfile, "2026-11-03"))
				profile := filepath.Join(sh.Dir(), ProfileFile)
				b, err := os.ReadFile(profile)
				if err != nil {
					t.Fatal(err)
				}
				// The date corrected, and a line of prose of the person's own.
				fixed := strings.Replace(string(b), teaLine, teaRedated, 1) + "Ask before booking travel.\n"
				if !strings.Contains(fixed, teaRedated) {
					t.Fatalf("no line to correct:\n%s", b)
				}
				if err := os.WriteFile(profile, []byte(fixed), 0o644); err != nil {
					t.Fatal(err)
				}
				if staged {
					asPat(t, sh.Dir(), "add", ProfileFile)
				}
				applyAsAlice(t, sh, agent)
				if _, err := sh.Fact(memd.FactID("Prefers tea")); memd.ErrorCode(err) != memd.ENOTFOUND {
					t.Fatalf("right after the agent's edit: %v", err)
				}
				if staged {
					asPat(t, sh.Dir(), "commit", "-qm", "fix a date")
				} else {
					asPat(t, sh.Dir(), "commit", "-qam", "fix a date")
				}
				if f, err := sh.Fact(memd.FactID("Prefers tea")); err == nil {
					t.Fatalf("the old text is back after the person's commit: %+v\nHEAD:profile.md:\n%s", f, memdtest.Git(t, sh.Dir(), "show", "HEAD:profile.md"))
				}
			})
		}
	}
}

// Integrate, end to end: our agent forgets "Prefers tea" while a person
// on a peer corrects its date and commits. The fact stays forgotten.
func TestShard_IntegrateKeepsAForgetOfAFactAPeerRedated(t *testing.T) {
	_, sh := aliceShard(t)
	applyAsAlice(t, sh, rememberEdit("Lives in Lisbon", memd.TierProfile, "2026-11-03"), rememberEdit("Prefers tea", memd.TierProfile, "2026-11-03"))
	theirs := fromPeer(t, sh, func(peer string) {
		profile := filepath.Join(peer, ProfileFile)
		b, _ := os.ReadFile(profile)
		os.WriteFile(profile, []byte(strings.Replace(string(b), teaLine, teaRedated, 1)), 0o644)
		asPat(t, peer, "commit", "-qam", "the right date")
	})
	applyAsAlice(t, sh, forgetEdit("Prefers tea"))
	in, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"})
	if err != nil {
		t.Fatal(err)
	}
	if f, err := sh.Fact(memd.FactID("Prefers tea")); err == nil {
		t.Fatalf("forgotten here, the fact is back after the merge (%+v): %+v\nHEAD:profile.md:\n%s", in, f, memdtest.Git(t, sh.Dir(), "show", "HEAD:profile.md"))
	}
}

// Integrate: their person corrects a fact's date under a heading; the
// corrected line stays where the old one stood.
func TestMergeFactFiles_ADateCorrectedStaysInItsSection(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "## Runs\n" + runLine("05") + "## Reading\n- (2026-11-07) Read Dune\n"
	theirs := strings.Replace(base, "2026-11-05", "2026-11-04", 1)
	ours := base + "- (2026-11-20) Met Ana\n"
	out, _ := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if !strings.Contains(string(out), "## Runs\n"+runLine("04")) {
		t.Fatalf("the corrected line left its section:\n%s", out)
	}
}

// Integrate: an agent on the other daemon rewords a fact (ReplaceFact, in
// place) that a person had put under a heading: the new line stays in
// its section.
func TestMergeFactFiles_AnAgentsEditStaysInItsSection(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "## Runs\n" + runLine("05") + "## Reading\n- (2026-11-07) Read Dune\n"
	theirs := strings.Replace(base, "Went running by the river", "Went running by the sea", 1)
	ours := base + "- (2026-11-20) Met Ana\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if !strings.Contains(string(out), "## Runs\n- (2026-11-05) Went running by the sea\n") {
		t.Fatalf("the reworded line left its section (conflict %v):\n%s", conflict, out)
	}
}

// Working tree: a revert of a forget of a recurring entry (RestoreLine of
// each of its lines) while the person has typed one of them back by hand:
// every day memd restored is in the working file.
func TestMergeFactFile_ARevertRestoresEveryDayOfAnEntry(t *testing.T) {
	p := "log/2026-11.md"
	dune := "- (2026-11-07) Read Dune\n"
	base := logTop + dune
	ours := base + runLine("05") + runLine("13")
	theirs := base + runLine("05")
	got := mergeFactFile(p, []byte(base), []byte(ours), []byte(theirs), nil)
	if !strings.Contains(string(got), runLine("13")) {
		t.Fatalf("memd restored the 13th's line; the merged working file lacks it:\n%s", got)
	}
}
