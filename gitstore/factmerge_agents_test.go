package gitstore

// Merges of fact files by agents alone, of recurring entries (a text on
// several days), and of fact files created or removed on one side.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// mergeFileCalls puts a git on PATH that records each
// `git merge-file` it runs, and returns how many it has run so far.
func mergeFileCalls(t *testing.T) func() int {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := "#!/bin/sh\n[ \"$1\" = merge-file ] && echo x >>'" + calls + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() int {
		b, _ := os.ReadFile(calls)
		return bytes.Count(b, []byte("x\n"))
	}
}

// twoDaemons is two memd daemons on one shard: a second store takes the
// first one's history, and each has its agent write from there on.
type twoDaemons struct {
	a, b *Shard
}

func newTwoDaemons(t *testing.T) twoDaemons {
	t.Helper()
	_, a := agentShard(t, "x")
	_, b := agentShard(t, "x")
	return twoDaemons{a, b}
}

// integrateFromShard fetches from's main into to and integrates it.
func integrateFromShard(t *testing.T, to, from *Shard) Integration {
	t.Helper()
	asPat(t, to.Dir(), "fetch", "-q", from.Dir(), "+refs/heads/main:refs/remotes/peer/main")
	theirs, err := to.Ref("refs/remotes/peer/main")
	if err != nil {
		t.Fatal(err)
	}
	in, err := to.Integrate(theirs, IntegrateOptions{From: "peer"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func applyEdits(t *testing.T, sh *Shard, edits ...Edit) {
	t.Helper()
	if _, err := sh.Apply(Change{Author: who, Message: "agent\n", Edits: edits}); err != nil {
		t.Fatal(err)
	}
}

func dayOf(day string) memd.Date {
	d, err := memd.ParseDate(day)
	if err != nil {
		panic(err)
	}
	return d
}

func rememberEdit(text string, tier memd.Tier, day string) Edit {
	return Edit{Op: AddFact, Fact: memd.Fact{Text: text, Tier: tier, Date: dayOf(day)}}
}

func forgetEdit(text string) Edit {
	return Edit{Op: RemoveFact, Fact: memd.Fact{ID: memd.FactID(text)}}
}

// restoreDayEdit and takeBackDayEdit put back and take back one day's
// line of a text in November's log, as reverts do (RestoreLine,
// RemoveLine).
func restoreDayEdit(text, day string) Edit {
	return Edit{Op: RestoreLine, Fact: memd.Fact{Text: text, Tier: memd.TierLog, Date: dayOf("2026-11-" + day), File: "log/2026-11.md"}}
}

func takeBackDayEdit(text, day string) Edit {
	return Edit{Op: RemoveLine, Fact: memd.Fact{ID: memd.FactID(text), File: "log/2026-11.md", Date: dayOf("2026-11-" + day)}}
}

func rewordEdit(text, with string) Edit {
	return Edit{Op: ReplaceFact, Fact: memd.Fact{ID: memd.FactID(text)}, With: memd.Fact{Text: with}}
}

// Two daemons whose agents each remember, forget and edit facts in the
// same profile and month's log, with no person editing: the merge is the
// fact merge alone (no git merge-file, seen through a git on PATH that
// counts them), and names no conflict.
func TestShard_IntegrateOfAgentsWritesAloneRunsNoLineMerge(t *testing.T) {
	for _, c := range []struct {
		name  string
		ours  [][]Edit
		their [][]Edit
	}{
		{
			name: "remember and forget",
			ours: [][]Edit{
				{rememberEdit("Learning Portuguese", memd.TierProfile, "2026-11-04")},
				{forgetEdit("Prefers tea")},
				{rememberEdit("Reviewed the merge code", memd.TierLog, "2026-11-04")},
			},
			their: [][]Edit{
				{rememberEdit("Has a cat called Miso", memd.TierProfile, "2026-11-05")},
				{forgetEdit("Works at Acme")},
				{forgetEdit("Shipped the importer")},
				{rememberEdit("Wrote the sync loop", memd.TierLog, "2026-11-05")},
			},
		},
		{
			name: "remember, forget and edit",
			ours: [][]Edit{
				{rememberEdit("Learning Portuguese", memd.TierProfile, "2026-11-04")},
				{rewordEdit("Lives in Lisbon", "Lives in Lisbon, Alfama")},
				{rememberEdit("Reviewed the merge code", memd.TierLog, "2026-11-04")},
			},
			their: [][]Edit{
				{rememberEdit("Has a cat called Miso", memd.TierProfile, "2026-11-05")},
				{rewordEdit("Works at Acme", "Works at Acme as a lead")},
				{rewordEdit("Met Ana about the budget", "Met Ana about the Q1 budget")},
				{rememberEdit("Wrote the sync loop", memd.TierLog, "2026-11-05")},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := mergeFileCalls(t)
			p := newTwoDaemons(t)
			applyEdits(t, p.a, rememberEdit("Lives in Lisbon", memd.TierProfile, "2026-11-01"), rememberEdit("Prefers tea", memd.TierProfile, "2026-11-01"),
				rememberEdit("Works at Acme", memd.TierProfile, "2026-11-01"), rememberEdit("Shipped the importer", memd.TierLog, "2026-11-02"),
				rememberEdit("Met Ana about the budget", memd.TierLog, "2026-11-02"), rememberEdit("Flew to Porto", memd.TierLog, "2026-11-03"))
			if in := integrateFromShard(t, p.b, p.a); in.Kind != IntegrateFastForward {
				t.Fatalf("%+v", in)
			}
			for _, e := range c.ours {
				applyEdits(t, p.a, e...)
			}
			for _, e := range c.their {
				applyEdits(t, p.b, e...)
			}
			before := calls()
			in := integrateFromShard(t, p.a, p.b)
			if in.Kind != IntegrateMerge || len(in.Conflicts) != 0 {
				t.Fatalf("memd-only traffic: %+v, want a merge naming no conflict", in)
			}
			if n := calls() - before; n != 0 {
				t.Errorf("memd-only traffic ran git merge-file %d times (want the fact merge alone)", n)
			}
		})
	}
}

// Where git merge-file cannot run (TMPDIR gone), agents that only
// remembered and forgot still merge, by facts, naming no conflict.
func TestMergeFactFiles_AgentsWritesNeedNoGit(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	base := profileHead
	ours := base + "- (2026-11-04) Learning Portuguese\n"
	theirs := "# Profile\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-05) Has a cat called Miso\n" // forgot "Prefers tea"
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	if conflict {
		t.Fatalf("agents only remembered and forgot, yet the profile is named:\n%s", out)
	}
}

// A file whose last line has no line end (a person saved it so): memd
// puts one before what it appends. Both agents only appending is still a
// change of facts alone: no git merge-file, no conflict.
func TestMergeFactFiles_AppendsToAFileWithoutAFinalLineEnd(t *testing.T) {
	calls := mergeFileCalls(t)
	p := "log/2026-11.md"
	base := logTop + "- (2026-11-02) Flew to Porto\nSee notes/porto.md"
	ours := base + "\n- (2026-11-10) Met Ana\n"
	theirs := base + "\n- (2026-11-11) Shipped the importer\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if n := calls(); n != 0 || conflict {
		t.Fatalf("both agents only appended, yet git merge-file ran %d times (conflict %v):\n%s", n, conflict, out)
	}
}

// A recurring entry (one text on several days: one fact ID, a line a
// day). Our side deleted one of its lines; their person renamed the
// heading and moved that line below another. The lines nobody touched
// stay, and the deleted one does not come back.
func TestMergeFactFiles_ARecurringEntryKeepsTheLinesNobodyTouched(t *testing.T) {
	p := "log/2026-11.md"
	run := func(day string) string { return "- (2026-11-" + day + ") Went running by the river\n" }
	base := logTop + "## Runs\n" + run("05") + run("13") + run("20")
	ours := logTop + "## Runs\n" + run("13") + run("20")
	theirs := logTop + "## Runs, in order\n" + run("13") + run("05") + run("20")
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if !holdsLine(out, strings.TrimSuffix(run("20"), "\n")) {
		t.Errorf("the 20th's entry, in all three versions, is gone (conflict %v)", conflict)
	}
	if holdsLine(out, strings.TrimSuffix(run("05"), "\n")) && !conflict {
		t.Errorf("the 5th's entry, which our side deleted, is back and nothing is named")
	}
	if t.Failed() {
		t.Logf("merged:\n%s", out)
	}
}

// Same, their person sorting the list by date: no line all three hold is
// dropped, and the one ours deleted stays deleted.
func TestMergeFactFiles_ARecurringEntrySortedOnOneSide(t *testing.T) {
	p := "log/2026-11.md"
	run := func(day string) string { return "- (2026-11-" + day + ") Went running by the river\n" }
	base := logTop + "## Runs\n" + run("02") + run("09") + run("05") + run("16")
	ours := logTop + "## Runs\n" + run("02") + run("09") + run("16")
	theirs := logTop + "## Runs, by date\n" + run("02") + run("05") + run("09") + run("16")
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if !holdsLine(out, strings.TrimSuffix(run("16"), "\n")) {
		t.Fatalf("the 16th's entry, in all three versions and outside any conflict, is gone (conflict %v):\n%s", conflict, out)
	}
}

// Their person deletes one dated line of a recurring entry (a wrong
// day); our agent appends a fact. The line stays deleted.
func TestMergeFactFiles_ALineOfARecurringEntryTheyDeleted(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "- (2026-11-02) Went running by the river\n- (2026-11-03) Shipped the importer\n- (2026-11-05) Went running by the river\n\nRuns are logged from the watch.\n"
	ours := base + "- (2026-11-10) Met Ana\n"
	theirs := strings.Replace(base, "- (2026-11-05) Went running by the river\n", "", 1)
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if holdsLine(out, "- (2026-11-05) Went running by the river") && !conflict {
		t.Fatalf("the line their person deleted is back, nothing named:\n%s", out)
	}
}

// Their person adds a dated line to a recurring entry (appended, or under
// its heading); our agent appends a fact. Their line stays.
func TestMergeFactFiles_ALineOfARecurringEntryTheyAdded(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "## Runs\n- (2026-11-02) Went running by the river\n\n## Work\n- (2026-11-03) Shipped the importer\n"
	ours := base + "- (2026-11-10) Met Ana\n"
	for name, theirs := range map[string]string{
		"appended":          base + "- (2026-11-09) Went running by the river\n",
		"under the heading": strings.Replace(base, "river\n", "river\n- (2026-11-09) Went running by the river\n", 1),
	} {
		t.Run(name, func(t *testing.T) {
			out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
			if !holdsLine(out, "- (2026-11-09) Went running by the river") && !conflict {
				t.Fatalf("their new dated line is gone, nothing named:\n%s", out)
			}
		})
	}
}

// Both agents take back one line of a recurring entry (a revert's
// RemoveLine each, different days): both lines go, no conflict.
func TestMergeFactFiles_EachSideTakesBackALineOfARecurringEntry(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "- (2026-11-02) Went running by the river\n- (2026-11-09) Went running by the river\n- (2026-11-03) Shipped the importer\n"
	ours := logTop + "- (2026-11-09) Went running by the river\n- (2026-11-03) Shipped the importer\n"
	theirs := logTop + "- (2026-11-02) Went running by the river\n- (2026-11-03) Shipped the importer\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if conflict {
		t.Fatalf("two agents' RemoveLine named as a conflict:\n%s", out)
	}
}

// End to end of the same with Shard.Apply: a fact written on two days
// (RestoreLine), then each daemon's agent takes back the line of one day
// (RemoveLine). Both go, and nothing is named.
func TestShard_IntegrateOfTwoRevertsOfLinesOfARecurringEntry(t *testing.T) {
	p := newTwoDaemons(t)
	const text = "Went running by the river"
	file := "log/2026-11.md"
	applyEdits(t, p.a, rememberEdit(text, memd.TierLog, "2026-11-02"), rememberEdit("Shipped the importer", memd.TierLog, "2026-11-03"))
	applyEdits(t, p.a, restoreDayEdit(text, "09"))
	integrateFromShard(t, p.b, p.a)
	applyEdits(t, p.a, takeBackDayEdit(text, "02"))
	applyEdits(t, p.b, takeBackDayEdit(text, "09"))
	in := integrateFromShard(t, p.a, p.b)
	if len(in.Conflicts) != 0 {
		t.Fatalf("agents' writes alone, yet %q named:\n%s", in.Conflicts, memdtest.Git(t, p.a.Dir(), "show", "HEAD:"+file))
	}
}

// Their person removes November's log (git rm) while our agent remembers
// into it, or forgets from it. Where it remembered, the log stays for the
// new fact, with the lines they removed, and is named; where it forgot,
// the log goes.
func TestShard_IntegrateNamesALogTheyRemovedThatStaysForOurFacts(t *testing.T) {
	for name, ours := range map[string]Edit{
		"we remember": rememberEdit("Met Ana", memd.TierLog, "2026-11-10"),
		"we forget":   forgetEdit("Flew to Porto"),
	} {
		t.Run(name, func(t *testing.T) {
			sh, remember := aliceRemembering(t)
			remember("Shipped the importer", memd.TierLog, "2026-11-02")
			remember("Flew to Porto", memd.TierLog, "2026-11-03")
			log := "log/2026-11.md"
			first := peerWrites(t, sh, log, func(s string) string {
				return s + "\n## Porto trip\nReceipts are in notes/porto.md.\n"
			})
			if in := integrateFrom(t, sh, first); in.Kind != IntegrateFastForward {
				t.Fatalf("%+v", in)
			}
			theirs := fromPeer(t, sh, func(peer string) {
				asPat(t, peer, "rm", "-q", log)
				asPat(t, peer, "commit", "-q", "-m", "drop November")
			})
			applyEdits(t, sh, ours)
			in := integrateFrom(t, sh, theirs)
			data, err := sh.fileBlobAtHead(log)
			if err != nil {
				t.Fatal(err)
			}
			if data != nil && strings.Contains(string(data), "Receipts are in notes/porto.md.") && !slices.Contains(in.Conflicts, log) {
				t.Fatalf("the log their person removed is back with the prose they deleted, not named (%+v):\n%s", in, data)
			}
		})
	}
}

// fileBlobAtHead reads a file of main, nil where main lacks it.
func (sh *Shard) fileBlobAtHead(path string) ([]byte, error) {
	ls, err := exec.Command("git", "-C", sh.Dir(), "ls-tree", "HEAD", "--", path).Output()
	if err != nil || len(bytes.TrimSpace(ls)) == 0 {
		return nil, err
	}
	return exec.Command("git", "-C", sh.Dir(), "show", "HEAD:"+path).Output()
}

// End to end, memd alone: their daemon restores a line of a fact on
// another day (RestoreLine, as a revert of a RemoveLine does), ours
// remembers into the same month. The restored line stays.
func TestShard_IntegrateKeepsALineTheirRevertRestored(t *testing.T) {
	p := newTwoDaemons(t)
	const text = "Went running by the river"
	file := "log/2026-11.md"
	applyEdits(t, p.a, rememberEdit(text, memd.TierLog, "2026-11-02"), rememberEdit("Shipped the importer", memd.TierLog, "2026-11-03"))
	integrateFromShard(t, p.b, p.a)
	applyEdits(t, p.b, restoreDayEdit(text, "09"))
	applyEdits(t, p.a, rememberEdit("Met Ana", memd.TierLog, "2026-11-10"))
	in := integrateFromShard(t, p.a, p.b)
	log := memdtest.Git(t, p.a.Dir(), "show", "HEAD:"+file)
	if !strings.Contains(log, "- (2026-11-09) "+text+"\n") && len(in.Conflicts) == 0 {
		t.Fatalf("their restored line is gone, nothing named (%+v):\n%s", in, log)
	}
}

// Our person starts November's log by hand (their own title, a fact);
// their agent remembers into November (memd writes its header). Created
// on both sides: merged by facts, and not named, since nothing a person
// wrote there is lost (memd's own header is not a person's).
func TestShard_IntegrateOfALogStartedByHandHereAndByAnAgentThere(t *testing.T) {
	p := newTwoDaemons(t)
	applyEdits(t, p.a, rememberEdit("Lives in Lisbon", memd.TierProfile, "2026-11-01"))
	integrateFromShard(t, p.b, p.a)
	if !p.a.SyncWorktree(5e9) {
		t.Fatal("working tree behind")
	}
	file := "log/2026-11.md"
	os.MkdirAll(filepath.Join(p.a.Dir(), "log"), 0o755)
	if err := os.WriteFile(filepath.Join(p.a.Dir(), file), []byte("# November\n\n- (2026-11-02) Flew to Porto\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asPat(t, p.a.Dir(), "add", file)
	asPat(t, p.a.Dir(), "commit", "-q", "-m", "November by hand")
	applyEdits(t, p.b, rememberEdit("Met Ana", memd.TierLog, "2026-11-10"))
	in := integrateFromShard(t, p.a, p.b)
	log := memdtest.Git(t, p.a.Dir(), "show", "HEAD:"+file)
	if len(in.Conflicts) != 0 {
		t.Fatalf("only memd's boilerplate of theirs is not kept, yet %q is named:\n%s", in.Conflicts, log)
	}
}
