package gitstore

// The merge of a fact file both sides changed since a common version
// (mergeFactFiles): what a person wrote on the other side stays, and
// nothing comes back that either side took out.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

const profileHead = "# Profile\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Prefers tea\n"

// holdsLine reports whether data holds line as a whole line.
func holdsLine(data []byte, line string) bool {
	return strings.HasPrefix(string(data), line+"\n") || strings.Contains(string(data), "\n"+line+"\n")
}

// Their person rewords the file's last line of prose while our agent
// appends a fact after it: the union keeps our (= base's) copy of the
// line and their new one, the old text comes back, and no conflict is
// named, as our side never changed a prose line there.
func TestMergeFactFiles_ALineTheyRewordedIsNotBroughtBack(t *testing.T) {
	base := profileHead + "\nSee the runbook.\n"
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := profileHead + "\nSee the travel runbook.\n"
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	var err error
	if err != nil {
		t.Fatal(err)
	}
	if holdsLine(out, "See the runbook.") || !holdsLine(out, "See the travel runbook.") || !holdsLine(out, "- (2026-11-03) Has a cat called Miso") || conflict {
		t.Fatalf("want their wording alone, our fact, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// Their person deletes the last line of prose while our agent appends a
// fact: the deletion is undone, no conflict named.
func TestMergeFactFiles_ALineTheyDeletedIsNotBroughtBack(t *testing.T) {
	base := profileHead + "\nOutdated: ask Sam about visas.\n"
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := profileHead + "\n"
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	var err error
	if err != nil {
		t.Fatal(err)
	}
	if holdsLine(out, "Outdated: ask Sam about visas.") || !holdsLine(out, "- (2026-11-03) Has a cat called Miso") || conflict {
		t.Fatalf("want the line gone, our fact kept, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// Our person reworded a day's heading; their agent rewrites the fact
// under it (a forget and a learn: rewrites()). No person on their side
// wrote anything, yet the union brings base's heading back beside ours,
// no conflict named.
func TestMergeFactFiles_OurHeadingStaysWhenTheirAgentRewritesAFact(t *testing.T) {
	p := "log/2026-11.md"
	top := "# Log 2026-11\n\n"
	base := top + "## Monday\n- (2026-11-02) Flew to Porto\n"
	ours := top + "## Monday, in Porto\n- (2026-11-02) Flew to Porto\n"
	theirs := top + "## Monday\n- (2026-11-02) Flew to Porto with Ana\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	var err error
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != top+"## Monday, in Porto\n- (2026-11-02) Flew to Porto with Ana\n" || conflict {
		t.Fatalf("want our heading over their rewritten fact, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// A line of exactly forty '=' (a Markdown setext underline) is taken for
// git's middle marker: it is dropped, and every line after it up to the
// next real conflict, or to the end of the file, goes with it or moves.
func TestMergeFactFiles_ALineOfEqualsSignsIsNoMarker(t *testing.T) {
	eq := strings.Repeat("=", markerSize)
	base := profileHead + "\nTravel\n" + eq + "\nWindow seat.\n"
	ours := profileHead + "- (2026-11-03) Has a cat called Miso\n\nTravel\n" + eq + "\nWindow seat.\n"
	theirs := profileHead + "Prose here.\n\nTravel\n" + eq + "\nWindow seat.\n"
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	var err error
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"Travel", eq, "Window seat.", "Prose here.", "- (2026-11-03) Has a cat called Miso"} {
		if !holdsLine(out, line) {
			t.Errorf("lost %q, a line %s", line, map[bool]string{true: "all three versions hold", false: "one side wrote"}[strings.Contains(base, line)])
		}
	}
	if t.Failed() {
		t.Logf("merged (conflict %v):\n%s", conflict, out)
	}
}

// Their person's editor wrote the file with CRLF line ends and they added
// a line; our agent appended a fact. The whole file is one conflict hunk;
// the union is ours then theirs: every line of prose is there twice, in
// two line-end styles, and no conflict is named.
func TestMergeFactFiles_TheirFileTurnedCRLF(t *testing.T) {
	base := profileHead
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := strings.ReplaceAll(profileHead+"\nAsk before booking travel.\n", "\n", "\r\n")
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	var err error
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "# Profile"); n != 1 || !strings.Contains(string(out), "Ask before booking travel.\r\n") || !holdsLine(out, "- (2026-11-03) Has a cat called Miso") || conflict {
		t.Fatalf("want their file with our fact, the title once (%d), no conflict (conflict %v):\n%q", n, conflict, out)
	}
}

// A fact reworded differently on both sides is two new facts and one
// removed: by the rules of facts, both new ones are kept and the old one
// goes, as the fact merge does, and no line of prose is in question.
func TestMergeFactFiles_AFactRewordedOnBothSidesKeepsBoth(t *testing.T) {
	base := profileHead
	ours := strings.Replace(base, "Lives in Lisbon", "Lives in Lisbon, Alfama", 1)
	theirs := strings.Replace(base, "Lives in Lisbon", "Lives in Porto now", 1)
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	if !holdsLine(out, "- (2026-11-03) Lives in Lisbon, Alfama") || !holdsLine(out, "- (2026-11-03) Lives in Porto now") || holdsLine(out, "- (2026-11-03) Lives in Lisbon") || conflict {
		t.Fatalf("want both rewordings, the old line gone, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// A fact corrected in place on their side without changing its text (its
// date, its tier tag, its case) keeps its ID: changesOtherLines sees no
// change, and the fact merge keeps our old line. The correction leaves
// main silently.
func TestMergeFactFiles_AFactsDateOrTagCorrectedInPlace(t *testing.T) {
	for name, theirs := range map[string]string{
		"date": strings.Replace(profileHead, "(2026-11-03) Lives in Lisbon", "(2026-11-01) Lives in Lisbon", 1),
		"tag":  strings.Replace("# Log 2026-11\n\n- (2026-11-03) Shipped it\n", ") Shipped", ") [episode] Shipped", 1),
		"case": strings.Replace(profileHead, "Lives in Lisbon", "lives in Lisbon", 1),
	} {
		t.Run(name, func(t *testing.T) {
			p, base := ProfileFile, profileHead
			if name == "tag" {
				p, base = "log/2026-11.md", "# Log 2026-11\n\n- (2026-11-03) Shipped it\n"
			}
			ours := base + "- (2026-11-03) Has a cat called Miso\n"
			out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
			var err error
			if err != nil {
				t.Fatal(err)
			}
			changed := strings.Split(theirs, "\n")[2]
			if !holdsLine(out, changed) || !holdsLine(out, "- (2026-11-03) Has a cat called Miso") || conflict {
				t.Fatalf("want their line %q and our fact, no conflict (conflict %v):\n%s", changed, conflict, out)
			}
		})
	}
}

// README: the fact merge stands (their other lines not kept) "where a
// version is binary to git". It also stands where their side corrects a
// fact's date in place beside a prose edit: sameFacts compares whole
// facts, the fact merge compares IDs, so the union never matches, and
// their heading leaves main.
func TestMergeFactFiles_AFactsDateCorrectedBesideAHeading(t *testing.T) {
	base := profileHead
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := strings.Replace(strings.Replace(base, "# Profile\n", "# Profile of Pat\n", 1), "(2026-11-03) Lives in Lisbon", "(2026-10-01) Lives in Lisbon", 1)
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	var err error
	if err != nil {
		t.Fatal(err)
	}
	if !holdsLine(out, "# Profile of Pat") || !holdsLine(out, "- (2026-10-01) Lives in Lisbon") || conflict {
		t.Fatalf("want their heading and their date, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// Their person moves a fact under another heading (and writes nothing
// else): which facts the file holds is unchanged and no prose line
// changed, so changesOtherLines is false and the fact merge keeps our
// order. The move leaves main, no conflict named.
func TestMergeFactFiles_AFactMovedUnderAnotherHeading(t *testing.T) {
	p := "log/2026-11.md"
	base := "# Log 2026-11\n\n## Work\n- (2026-11-02) Shipped the importer\n- (2026-11-02) Bought a bike\n\n## Home\n- (2026-11-02) Fixed the sink\n"
	ours := base + "- (2026-11-03) Met Ana\n"
	theirs := "# Log 2026-11\n\n## Work\n- (2026-11-02) Shipped the importer\n\n## Home\n- (2026-11-02) Bought a bike\n- (2026-11-02) Fixed the sink\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	var err error
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "## Home\n- (2026-11-02) Bought a bike\n") || strings.Count(string(out), "Bought a bike") != 1 || !holdsLine(out, "- (2026-11-03) Met Ana") || conflict {
		t.Fatalf("want their move, our fact, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// Before 218516b a fact file both sides changed was merged without git;
// now a git merge-file that cannot run (no room for its temp files in
// TMPDIR, which is not the shard's disk) fails the whole merge, where
// the fact merge it falls back to on a binary version would do.
func TestMergeFactFiles_WithoutGitMergeFileTheFactMergeStands(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	base := profileHead
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := strings.Replace(base, "# Profile\n", "# Profile of Pat\n", 1)
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	if !conflict || !holdsLine(out, "- (2026-11-03) Has a cat called Miso") {
		t.Fatalf("without git merge-file, the fact merge with the file named (conflict %v):\n%s", conflict, out)
	}
}

// FuzzMergeFactFiles merges three versions of a fact file: the merge holds
// the facts the fact merge holds, none more often, is the same run twice,
// and is ours when their side changed nothing.
func FuzzMergeFactFiles(f *testing.F) {
	eq := strings.Repeat("=", markerSize)
	f.Add(profileHead, profileHead+"- (2026-11-03) Has a cat called Miso\n", profileHead+"\nSee the runbook.\n")
	f.Add(profileHead+"\nSee the runbook.\n", profileHead+"\nSee the runbook.\n- (2026-11-03) Met Ana\n", profileHead+"\nSee the travel runbook.\n")
	f.Add(profileHead, "# Pat\n"+profileHead[10:], strings.ReplaceAll("# Profile of Pat\n"+profileHead[10:], "\n", "\r\n"))
	f.Add(profileHead+eq+"\n", profileHead+eq+"\n"+eq+"\n- (2026-11-03) x\n", profileHead+"<<<\n"+eq+"\n")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
		byFacts := splitThree(ProfileFile, [3][]byte{[]byte(base), []byte(theirs), []byte(ours)}, nil).mergeFactLines()
		got, want := keyCounts(parseFactFile(ProfileFile, out)), keyCounts(parseFactFile(ProfileFile, byFacts))
		for key, n := range got {
			if n > want[key] {
				t.Fatalf("the merge holds %v %d times, the fact merge %d:\n%q\nfact merge:\n%q", key, n, want[key], out, byFacts)
			}
		}
		if !sameKeys(got, want) {
			t.Fatalf("the merge holds other facts than the fact merge:\n%q\nfact merge:\n%q", out, byFacts)
		}
		again, conflictAgain := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
		if !bytes.Equal(out, again) || conflict != conflictAgain {
			t.Fatalf("two runs differ:\n%q\n%q", out, again)
		}
		if theirs == base && (ours != string(out) || conflict) {
			t.Fatalf("their side changed nothing, yet the merge is not ours (conflict %v):\n%q", conflict, out)
		}
	})
}

const logTop = "# Log 2026-11\n\n"

// A month's log holds the same text on two days (a recurring entry: one
// fact ID, two lines). Their person adds a line of prose; our agent
// appends a fact. Both entries keep their dates: a fact held on two lines
// is not taken for one corrected where it stands.
func TestMergeFactFiles_ARecurringEntryKeepsItsDates(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "- (2026-11-02) Went running by the river\n- (2026-11-03) Shipped the importer\n- (2026-11-09) Went running by the river\n"
	ours := base + "- (2026-11-10) Met Ana\n"
	theirs := strings.Replace(base, logTop, logTop+"Training plan in notes/run.md.\n\n", 1)
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if !holdsLine(out, "- (2026-11-02) Went running by the river") || !holdsLine(out, "- (2026-11-09) Went running by the river") || !holdsLine(out, "Training plan in notes/run.md.") || conflict {
		t.Fatalf("want both dated entries as all three sides have them, their line, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// Same, tiers: a [note] and an [episode] line of the same text stay so.
func TestMergeFactFiles_TheSameTextInTwoTiersKeepsBoth(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "- (2026-11-02) [episode] Reviewed the importer\n- (2026-11-03) [note] Reviewed the importer\n"
	ours := base + "- (2026-11-10) Met Ana\n"
	theirs := base + "\nSee notes/importer.md.\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if !holdsLine(out, "- (2026-11-02) [episode] Reviewed the importer") || !holdsLine(out, "- (2026-11-03) [note] Reviewed the importer") {
		t.Fatalf("a line no side changed was rewritten (conflict %v):\n%s", conflict, out)
	}
}

// Their person moves a fact under another heading; our agent appends a
// fact right there (the same place). Their move stands (or, at least,
// the file is named).
func TestMergeFactFiles_TheirMoveBesideOurAppend(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "## Work\n- (2026-11-02) Shipped the importer\n- (2026-11-02) Bought a bike\n## Home\n- (2026-11-02) Fixed the sink\n"
	ours := strings.Replace(base, "Bought a bike\n", "Bought a bike\n- (2026-11-03) Paid the invoice\n", 1)
	theirs := logTop + "## Work\n- (2026-11-02) Shipped the importer\n## Home\n- (2026-11-02) Bought a bike\n- (2026-11-02) Fixed the sink\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	moved := strings.Contains(string(out), "## Home\n- (2026-11-02) Bought a bike\n")
	if !moved && !conflict {
		t.Fatalf("their move left main and no conflict is named:\n%s", out)
	}
}

// Their person removes a duplicated fact line (the profile held it
// twice) and writes a heading; our agent appends a fact far below. The
// line merge holds the fact once where the fact merge (by ID) holds it
// twice: it is still the same facts, and their heading stays.
func TestMergeFactFiles_TheirDedupeBesideTheirHeading(t *testing.T) {
	base := "# Profile\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Prefers tea\n\n## Work\n- (2026-11-03) Works at Acme\n"
	ours := base + "- (2026-11-04) Has a cat called Miso\n"
	theirs := strings.Replace(strings.Replace(base, "- (2026-11-03) Lives in Lisbon\n", "", 1), "# Profile\n", "# Profile of Pat\n", 1)
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	if !holdsLine(out, "# Profile of Pat") || conflict {
		t.Fatalf("want their heading, no conflict (conflict %v):\n%s", conflict, out)
	}
}

// Their person adds a fact under the right heading (and nothing else);
// our agent appends a fact. Their fact stays where they put it: a fact
// added anywhere but at the end is more than a change of facts.
func TestMergeFactFiles_TheirFactStaysUnderTheirHeading(t *testing.T) {
	base := "# Profile\n\n## Food\n- (2026-11-03) Likes figs\n\n## Travel\n- (2026-11-03) Window seat\n"
	ours := base + "- (2026-11-04) Prefers night trains\n"
	theirs := strings.Replace(base, "Likes figs\n", "Likes figs\n- (2026-11-04) Allergic to peanuts\n", 1)
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	if !strings.Contains(string(out), "## Food\n- (2026-11-03) Likes figs\n- (2026-11-04) Allergic to peanuts\n") {
		t.Fatalf("their fact left the heading they put it under (conflict %v):\n%s", conflict, out)
	}
}

// BenchmarkMergeFactFiles_AMonthsLog merges a month's log of 20,000 fact
// lines that their side changed more than the facts of (a heading, every
// heading, every line end) while ours appended, or wrote a fact under
// each heading they renamed; beside it, the fact merge alone. The merge
// runs with the shard's lock held.
//
//	go test -run X -bench MergeFactFiles_AMonthsLog ./gitstore
func BenchmarkMergeFactFiles_AMonthsLog(b *testing.B) {
	p := "log/2026-11.md"
	var sb strings.Builder
	sb.WriteString(logTop)
	for i := range 20000 {
		if i%50 == 0 {
			fmt.Fprintf(&sb, "\n## Block %d\n", i/50)
		}
		fmt.Fprintf(&sb, "- (2026-11-%02d) Entry number %d of the month about work item %d\n", 1+i%28, i, i*7)
	}
	base := sb.String()
	appended := base + "- (2026-11-29) Met Ana\n"
	underEach := base
	for i := range 400 {
		underEach = strings.Replace(underEach, fmt.Sprintf("## Block %d\n", i), fmt.Sprintf("## Block %d\n- (2026-11-29) Under block %d\n", i, i), 1)
	}
	for _, c := range []struct{ name, ours, theirs string }{
		{"a-heading", appended, strings.Replace(base, "## Block 7\n", "## Block seven\n", 1)},
		{"every-heading", appended, strings.ReplaceAll(base, "## Block", "## Part")},
		{"crlf", appended, strings.ReplaceAll(base, "\n", "\r\n")},
		{"every-heading-ours-under-each", underEach, strings.ReplaceAll(base, "## Block", "## Part")},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				mergeFactFiles(p, []byte(base), []byte(c.ours), []byte(c.theirs))
			}
		})
		b.Run(c.name+"-facts-alone", func(b *testing.B) {
			for b.Loop() {
				splitThree(p, [3][]byte{[]byte(base), []byte(c.theirs), []byte(c.ours)}, nil).mergeFactLines()
			}
		})
	}
}

// aliceRemembering is a shard of one agent, and a helper that remembers a fact
// of a tier on a date there.
func aliceRemembering(t *testing.T) (*Shard, func(text string, tier memd.Tier, day string)) {
	t.Helper()
	sh, who, _ := aliceOn(t, t.TempDir())
	return sh, func(text string, tier memd.Tier, day string) {
		t.Helper()
		d, _ := memd.ParseDate(day)
		if _, err := sh.Apply(Change{Author: who, Message: "remember\n", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: tier}}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// peerWrites has a peer's person rewrite a file with edit and commit,
// and fetches it: the commit to integrate.
func peerWrites(t *testing.T, sh *Shard, path string, edit func(old string) string) Hash {
	t.Helper()
	return fromPeer(t, sh, func(peer string) {
		full := filepath.Join(peer, path)
		old, _ := os.ReadFile(full)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(edit(string(old))), 0o644); err != nil {
			t.Fatal(err)
		}
		asPat(t, peer, "add", "-A")
		asPat(t, peer, "commit", "-q", "-m", "by hand")
	})
}

func integrateFrom(t *testing.T, sh *Shard, theirs Hash) Integration {
	t.Helper()
	in, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// End to end: a person keeps a recurring entry in the month's log (the
// same text on two days); later their person adds a line of prose while
// our agent remembers. The merge keeps both dates.
func TestShard_IntegrateKeepsARecurringEntrysDates(t *testing.T) {
	sh, remember := aliceRemembering(t)
	remember("Shipped the importer", memd.TierLog, "2026-11-03")
	p := "log/2026-11.md"
	first := peerWrites(t, sh, p, func(s string) string {
		return s + "- (2026-11-02) Went running by the river\n- (2026-11-09) Went running by the river\n"
	})
	if in := integrateFrom(t, sh, first); in.Kind != IntegrateFastForward {
		t.Fatalf("%+v", in)
	}
	theirs := peerWrites(t, sh, p, func(s string) string { return strings.Replace(s, "\n\n", "\n\nTraining plan in notes/run.md.\n\n", 1) })
	remember("Met Ana", memd.TierLog, "2026-11-10")
	in := integrateFrom(t, sh, theirs)
	log := memdtest.Git(t, sh.Dir(), "show", "HEAD:"+p)
	if in.Kind != IntegrateMerge || !strings.Contains(log, "- (2026-11-02) Went running by the river\n") || !strings.Contains(log, "Training plan") {
		t.Fatalf("%+v: the 2026-11-02 entry is gone:\n%s", in, log)
	}
}

// Both sides start the same month's log; our person writes a line in
// ours, their agent only remembers. Every line of theirs (memd's header,
// their fact) is in the merge: the log is not named.
func TestShard_IntegrateNamesNoLogBothStartedWhereNothingOfTheirsIsLost(t *testing.T) {
	sh, remember := aliceRemembering(t)
	remember("Lives in Lisbon", memd.TierProfile, "2026-11-03")
	p := "log/2026-11.md"
	theirs := peerWrites(t, sh, p, func(string) string { return header(p) + "- (2026-11-03) Met Ana about the budget\n" })
	remember("Shipped the importer", memd.TierLog, "2026-11-03")
	if !sh.SyncWorktree(time.Second) {
		t.Fatal("working tree behind")
	}
	personAppends(t, sh, p, "Budget notes are in notes/budget.md.\n")
	personCommits(t, sh)
	in := integrateFrom(t, sh, theirs)
	log := memdtest.Git(t, sh.Dir(), "show", "HEAD:"+p)
	if !strings.Contains(log, "Met Ana about the budget") || !strings.Contains(log, "Budget notes") || !strings.HasPrefix(log, header(p)) {
		t.Fatalf("%+v:\n%s", in, log)
	}
	if len(in.Conflicts) != 0 {
		t.Fatalf("nothing of theirs is lost, yet %q is named:\n%s", in.Conflicts, log)
	}
}

// README: a fact both sides added is kept once, "where this side has
// it". Their person adds it (as an episode, dated the 4th) with a line
// of prose above the facts; our agent has it at the end (the 3rd, a log
// fact). Ours stays, and their prose.
func TestMergeFactFiles_AFactBothAddedStaysWhereOursHasIt(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "- (2026-11-02) Flew to Porto\n- (2026-11-02) Shipped the importer\n"
	ours := base + "- (2026-11-03) Met Ana about the budget\n"
	theirs := strings.Replace(base, logTop, logTop+"Budget week.\n- (2026-11-04) [episode] Met Ana about the budget\n\n", 1)
	out, conflict := mergeFactFiles(p, []byte(base), []byte(ours), []byte(theirs))
	if !holdsLine(out, "- (2026-11-03) Met Ana about the budget") || !holdsLine(out, "Budget week.") {
		t.Fatalf("want our line of the fact both added, and their prose (conflict %v):\n%s", conflict, out)
	}
}

// Our person deletes an outdated line; their person moves the fact below
// it up above it (git reads that as the line moved down). Both "delete"
// the line where it stood, cleanly, and their copy of it comes back
// below the fact: the file is named.
func TestMergeFactFiles_TheirMoveOfALineOurPersonDeletedIsNamed(t *testing.T) {
	base := "# Profile\n\n## Travel\nOutdated: ask Sam about visas.\n- (2026-11-03) Prefers the window seat\n## Food\n- (2026-11-03) Likes figs\n"
	ours := strings.Replace(base, "Outdated: ask Sam about visas.\n", "", 1) + "- (2026-11-04) Has a cat called Miso\n"
	theirs := strings.Replace(base, "Outdated: ask Sam about visas.\n- (2026-11-03) Prefers the window seat\n", "- (2026-11-03) Prefers the window seat\nOutdated: ask Sam about visas.\n", 1)
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	if holdsLine(out, "Outdated: ask Sam about visas.") && !conflict {
		t.Fatalf("the line our person deleted is back, no conflict named:\n%s", out)
	}
}
