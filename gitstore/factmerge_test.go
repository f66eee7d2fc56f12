package gitstore

// The merge of a fact file both sides changed since a common version
// (mergeFactFiles): what a person wrote on the other side stays, and
// nothing comes back that either side took out.

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

const reviewHead = "# Profile\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Prefers tea\n"

// line reports whether data holds line as a whole line.
func holdsLine(data []byte, line string) bool {
	return strings.HasPrefix(string(data), line+"\n") || strings.Contains(string(data), "\n"+line+"\n")
}

// Their person rewords the file's last line of prose while our agent
// appends a fact after it: the union keeps our (= base's) copy of the
// line and their new one, the old text comes back, and no conflict is
// named, as our side never changed a prose line there.
func TestMergeFactFiles_ALineTheyRewordedIsNotBroughtBack(t *testing.T) {
	base := reviewHead + "\nSee the runbook.\n"
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := reviewHead + "\nSee the travel runbook.\n"
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
	base := reviewHead + "\nOutdated: ask Sam about visas.\n"
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := reviewHead + "\n"
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
	base := reviewHead + "\nTravel\n" + eq + "\nWindow seat.\n"
	ours := reviewHead + "- (2026-11-03) Has a cat called Miso\n\nTravel\n" + eq + "\nWindow seat.\n"
	theirs := reviewHead + "Prose here.\n\nTravel\n" + eq + "\nWindow seat.\n"
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
	base := reviewHead
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := strings.ReplaceAll(reviewHead+"\nAsk before booking travel.\n", "\n", "\r\n")
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
	base := reviewHead
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
		"date": strings.Replace(reviewHead, "(2026-11-03) Lives in Lisbon", "(2026-11-01) Lives in Lisbon", 1),
		"tag":  strings.Replace("# Log 2026-11\n\n- (2026-11-03) Shipped it\n", ") Shipped", ") [episode] Shipped", 1),
		"case": strings.Replace(reviewHead, "Lives in Lisbon", "lives in Lisbon", 1),
	} {
		t.Run(name, func(t *testing.T) {
			p, base := ProfileFile, reviewHead
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
	base := reviewHead
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
	base := reviewHead
	ours := base + "- (2026-11-03) Has a cat called Miso\n"
	theirs := strings.Replace(base, "# Profile\n", "# Profile of Pat\n", 1)
	out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
	if !conflict || !holdsLine(out, "- (2026-11-03) Has a cat called Miso") {
		t.Fatalf("without git merge-file, the fact merge with the file named (conflict %v):\n%s", conflict, out)
	}
}

// FuzzMergeFactFiles merges three versions of a fact file: the merge holds
// the facts the fact merge holds, each as often, is the same run twice,
// and is ours when their side changed nothing.
func FuzzMergeFactFiles(f *testing.F) {
	eq := strings.Repeat("=", markerSize)
	f.Add(reviewHead, reviewHead+"- (2026-11-03) Has a cat called Miso\n", reviewHead+"\nSee the runbook.\n")
	f.Add(reviewHead+"\nSee the runbook.\n", reviewHead+"\nSee the runbook.\n- (2026-11-03) Met Ana\n", reviewHead+"\nSee the travel runbook.\n")
	f.Add(reviewHead, "# Pat\n"+reviewHead[10:], strings.ReplaceAll("# Profile of Pat\n"+reviewHead[10:], "\n", "\r\n"))
	f.Add(reviewHead+eq+"\n", reviewHead+eq+"\n"+eq+"\n- (2026-11-03) x\n", reviewHead+"<<<\n"+eq+"\n")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		out, conflict := mergeFactFiles(ProfileFile, []byte(base), []byte(ours), []byte(theirs))
		byFacts := splitThree(ProfileFile, [3][]byte{[]byte(base), []byte(theirs), []byte(ours)}, nil).mergeFactLines()
		if !sameCounts(factCounts(ProfileFile, out), factCounts(ProfileFile, byFacts)) {
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
