package gitstore

// The merge of a fact file both sides changed since a common version
// (mergeFactFiles): what a person wrote on the other side stays, and
// nothing comes back that either side took out.

import (
	"bytes"
	"cmp"
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

// TestMergeFactFiles merges a fact file both sides changed: their side
// by a person's hand, ours by memd's agent. Each case says what holds.
func TestMergeFactFiles(t *testing.T) {
	const (
		miso  = "- (2026-11-03) Has a cat called Miso"
		month = "log/2026-11.md"
		eq    = "================================================================================================" + "===="
	)
	withMiso := func(base string) string { return base + miso + "\n" }
	cases := []struct {
		name                string
		path                string // profile.md if empty
		base, ours, theirs  string
		holds               []string // whole lines
		lacks               []string // whole lines
		contains            []string // pieces, in this order
		absent              []string // pieces
		conflict, noGitHere bool
	}{{
		name: "a line they reworded: their wording alone, our fact",
		base: profileHead + "\nSee the runbook.\n", ours: withMiso(profileHead + "\nSee the runbook.\n"), theirs: profileHead + "\nSee the travel runbook.\n",
		holds: []string{"See the travel runbook.", miso}, lacks: []string{"See the runbook."},
	}, {
		name: "a line they deleted stays deleted",
		base: profileHead + "\nOutdated: ask Sam about visas.\n", ours: withMiso(profileHead + "\nOutdated: ask Sam about visas.\n"), theirs: profileHead + "\n",
		holds: []string{miso}, lacks: []string{"Outdated: ask Sam about visas."},
	}, {
		name: "our heading stays over the fact their agent rewrote", path: month,
		base: logTop + "## Monday\n- (2026-11-02) Flew to Porto\n", ours: logTop + "## Monday, in Porto\n- (2026-11-02) Flew to Porto\n",
		theirs:   logTop + "## Monday\n- (2026-11-02) Flew to Porto with Ana\n",
		contains: []string{"## Monday, in Porto\n- (2026-11-02) Flew to Porto with Ana\n"}, lacks: []string{"## Monday", "- (2026-11-02) Flew to Porto"},
	}, {
		name: "a line of equals signs as long as git's markers is a line",
		base: profileHead + "\nTravel\n" + eq + "\nWindow seat.\n", ours: profileHead + miso + "\n\nTravel\n" + eq + "\nWindow seat.\n",
		theirs: profileHead + "Prose here.\n\nTravel\n" + eq + "\nWindow seat.\n",
		holds:  []string{"Travel", eq, "Window seat.", "Prose here.", miso},
	}, {
		name: "their file turned CRLF with a line added: theirs, with our fact",
		base: profileHead, ours: withMiso(profileHead), theirs: strings.ReplaceAll(profileHead+"\nAsk before booking travel.\n", "\n", "\r\n"),
		holds: []string{miso}, contains: []string{"# Profile\r\n", "Ask before booking travel.\r\n"},
	}, {
		name: "a fact reworded differently on both sides: both new facts, the old one gone",
		base: profileHead, ours: strings.Replace(profileHead, "Lives in Lisbon", "Lives in Lisbon, Alfama", 1), theirs: strings.Replace(profileHead, "Lives in Lisbon", "Lives in Porto now", 1),
		holds: []string{"- (2026-11-03) Lives in Lisbon, Alfama", "- (2026-11-03) Lives in Porto now"}, lacks: []string{"- (2026-11-03) Lives in Lisbon"},
	}, {
		name: "a date corrected in place",
		base: profileHead, ours: withMiso(profileHead), theirs: strings.Replace(profileHead, "(2026-11-03) Lives in Lisbon", "(2026-11-01) Lives in Lisbon", 1),
		holds: []string{"- (2026-11-01) Lives in Lisbon", miso}, lacks: []string{"- (2026-11-03) Lives in Lisbon"},
	}, {
		name: "a tier tag added in place", path: month,
		base: logTop + "- (2026-11-03) Shipped it\n", ours: withMiso(logTop + "- (2026-11-03) Shipped it\n"), theirs: logTop + "- (2026-11-03) [episode] Shipped it\n",
		holds: []string{"- (2026-11-03) [episode] Shipped it", miso}, lacks: []string{"- (2026-11-03) Shipped it"},
	}, {
		name: "a fact's case corrected in place",
		base: profileHead, ours: withMiso(profileHead), theirs: strings.Replace(profileHead, "Lives in Lisbon", "lives in Lisbon", 1),
		holds: []string{"- (2026-11-03) lives in Lisbon", miso},
	}, {
		name: "a date corrected beside a heading reworded",
		base: profileHead, ours: withMiso(profileHead),
		theirs: strings.Replace(strings.Replace(profileHead, "# Profile\n", "# Profile of Pat\n", 1), "(2026-11-03) Lives in Lisbon", "(2026-10-01) Lives in Lisbon", 1),
		holds:  []string{"# Profile of Pat", "- (2026-10-01) Lives in Lisbon", miso},
	}, {
		name: "a fact they moved under another heading", path: month,
		base:     "# Log 2026-11\n\n## Work\n- (2026-11-02) Shipped the importer\n- (2026-11-02) Bought a bike\n\n## Home\n- (2026-11-02) Fixed the sink\n",
		ours:     "# Log 2026-11\n\n## Work\n- (2026-11-02) Shipped the importer\n- (2026-11-02) Bought a bike\n\n## Home\n- (2026-11-02) Fixed the sink\n- (2026-11-03) Met Ana\n",
		theirs:   "# Log 2026-11\n\n## Work\n- (2026-11-02) Shipped the importer\n\n## Home\n- (2026-11-02) Bought a bike\n- (2026-11-02) Fixed the sink\n",
		contains: []string{"## Work\n- (2026-11-02) Shipped the importer\n\n## Home\n- (2026-11-02) Bought a bike\n", "- (2026-11-03) Met Ana\n"},
	}, {
		name: "a fact they moved where our agent appended one", path: month,
		base:     logTop + "## Work\n- (2026-11-02) Shipped the importer\n- (2026-11-02) Bought a bike\n## Home\n- (2026-11-02) Fixed the sink\n",
		ours:     logTop + "## Work\n- (2026-11-02) Shipped the importer\n- (2026-11-02) Bought a bike\n- (2026-11-03) Paid the invoice\n## Home\n- (2026-11-02) Fixed the sink\n",
		theirs:   logTop + "## Work\n- (2026-11-02) Shipped the importer\n## Home\n- (2026-11-02) Bought a bike\n- (2026-11-02) Fixed the sink\n",
		contains: []string{"## Home\n- (2026-11-02) Bought a bike\n"}, holds: []string{"- (2026-11-03) Paid the invoice"},
	}, {
		name: "without git merge-file, the fact merge, named", noGitHere: true,
		base: profileHead, ours: withMiso(profileHead), theirs: strings.Replace(profileHead, "# Profile\n", "# Profile of Pat\n", 1),
		holds: []string{miso, "# Profile"}, conflict: true,
	}, {
		name: "a recurring entry keeps both days", path: month,
		base:   logTop + "- (2026-11-02) Went running by the river\n- (2026-11-03) Shipped the importer\n- (2026-11-09) Went running by the river\n",
		ours:   logTop + "- (2026-11-02) Went running by the river\n- (2026-11-03) Shipped the importer\n- (2026-11-09) Went running by the river\n- (2026-11-10) Met Ana\n",
		theirs: logTop + "Training plan in notes/run.md.\n\n- (2026-11-02) Went running by the river\n- (2026-11-03) Shipped the importer\n- (2026-11-09) Went running by the river\n",
		holds:  []string{"- (2026-11-02) Went running by the river", "- (2026-11-09) Went running by the river", "Training plan in notes/run.md.", "- (2026-11-10) Met Ana"},
	}, {
		name: "a text in two tiers on two days stays so", path: month,
		base:   logTop + "- (2026-11-02) [episode] Reviewed the importer\n- (2026-11-03) [note] Reviewed the importer\n",
		ours:   logTop + "- (2026-11-02) [episode] Reviewed the importer\n- (2026-11-03) [note] Reviewed the importer\n- (2026-11-10) Met Ana\n",
		theirs: logTop + "- (2026-11-02) [episode] Reviewed the importer\n- (2026-11-03) [note] Reviewed the importer\n\nSee notes/importer.md.\n",
		holds:  []string{"- (2026-11-02) [episode] Reviewed the importer", "- (2026-11-03) [note] Reviewed the importer", "See notes/importer.md."},
	}, {
		name:   "a duplicate line they removed beside a heading they wrote",
		base:   "# Profile\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Prefers tea\n\n## Work\n- (2026-11-03) Works at Acme\n",
		ours:   "# Profile\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Prefers tea\n\n## Work\n- (2026-11-03) Works at Acme\n" + miso + "\n",
		theirs: "# Profile of Pat\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) Prefers tea\n\n## Work\n- (2026-11-03) Works at Acme\n",
		holds:  []string{"# Profile of Pat", miso},
	}, {
		name:     "a fact they put under a heading stays there",
		base:     "# Profile\n\n## Food\n- (2026-11-03) Likes figs\n\n## Travel\n- (2026-11-03) Window seat\n",
		ours:     "# Profile\n\n## Food\n- (2026-11-03) Likes figs\n\n## Travel\n- (2026-11-03) Window seat\n- (2026-11-04) Prefers night trains\n",
		theirs:   "# Profile\n\n## Food\n- (2026-11-03) Likes figs\n- (2026-11-04) Allergic to peanuts\n\n## Travel\n- (2026-11-03) Window seat\n",
		contains: []string{"## Food\n- (2026-11-03) Likes figs\n- (2026-11-04) Allergic to peanuts\n", "- (2026-11-04) Prefers night trains\n"},
	}, {
		name: "we forgot, they corrected the date: forgotten, named",
		base: profileHead, ours: "# Profile\n\n- (2026-11-03) Lives in Lisbon\n", theirs: strings.Replace(profileHead, "(2026-11-03) Prefers tea", "(2026-11-02) Prefers tea", 1),
		absent: []string{"Prefers tea"}, conflict: true,
	}, {
		name: "we corrected the date, they forgot: forgotten, named",
		base: profileHead, ours: strings.Replace(profileHead, "(2026-11-03) Prefers tea", "(2026-11-02) Prefers tea", 1), theirs: "# Profile\n\n- (2026-11-03) Lives in Lisbon\n",
		absent: []string{"Prefers tea"}, conflict: true,
	}, {
		name: "we corrected the date, their agent reworded: the new text alone (the date correction lost: named)",
		base: profileHead, ours: strings.Replace(profileHead, "(2026-11-03) Prefers tea", "(2026-11-04) Prefers tea", 1), theirs: strings.Replace(profileHead, "Prefers tea", "Prefers green tea", 1),
		holds: []string{"- (2026-11-03) Prefers green tea"}, absent: []string{"Prefers tea"}, conflict: true,
	}, {
		name: "our agent reworded, they corrected the date: the new text alone (the date correction lost: named)",
		base: profileHead, ours: strings.Replace(profileHead, "Prefers tea", "Prefers green tea", 1), theirs: strings.Replace(profileHead, "(2026-11-03) Prefers tea", "(2026-11-04) Prefers tea", 1),
		holds: []string{"- (2026-11-03) Prefers green tea"}, absent: []string{"Prefers tea"}, conflict: true,
	}, {
		name: "a date corrected on both sides: ours, named",
		base: profileHead, ours: strings.Replace(profileHead, "(2026-11-03) Prefers tea", "(2026-11-04) Prefers tea", 1), theirs: strings.Replace(profileHead, "(2026-11-03) Prefers tea", "(2026-11-02) Prefers tea", 1),
		holds: []string{"- (2026-11-04) Prefers tea"}, lacks: []string{"- (2026-11-02) Prefers tea", "- (2026-11-03) Prefers tea"}, conflict: true,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.noGitHere {
				t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
			}
			path := cmp.Or(c.path, ProfileFile)
			out, conflict := mergeFactFiles(path, []byte(c.base), []byte(c.ours), []byte(c.theirs))
			for _, line := range c.holds {
				if !holdsLine(out, line) {
					t.Errorf("lacks %q", line)
				}
			}
			for _, line := range c.lacks {
				if holdsLine(out, line) {
					t.Errorf("holds %q", line)
				}
			}
			at := 0
			for _, piece := range c.contains {
				k := strings.Index(string(out[at:]), piece)
				if k < 0 {
					t.Errorf("lacks %q (in this order)", piece)
					break
				}
				at += k + len(piece)
			}
			for _, piece := range c.absent {
				if strings.Contains(string(out), piece) {
					t.Errorf("holds %q", piece)
				}
			}
			if conflict != c.conflict {
				t.Errorf("conflict %v, want %v", conflict, c.conflict)
			}
			if t.Failed() {
				t.Logf("merged:\n%s", out)
			}
		})
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

// BenchmarkMergeFactFile_AnAppendIntoAPersonsEdit merges memd's append to a
// profile of 3,000 facts into a person's uncommitted edit of it (a line
// of prose at its top), as every write to the file does while they edit.
//
//	go test -run X -bench MergeFactFile_AnAppendIntoAPersonsEdit ./gitstore
func BenchmarkMergeFactFile_AnAppendIntoAPersonsEdit(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("# Profile\n\n")
	for i := range 3000 {
		fmt.Fprintf(&sb, "- (2026-11-03) Prefers the window seat on flight number %d of the season\n", i)
	}
	base := sb.String()
	ours := base + "- (2026-11-04) Booked a flight to Lisbon\n"
	theirs := strings.Replace(base, "# Profile\n", "# Profile\n\nAsk before booking travel.\n", 1)
	baseFacts := parseFactFile(ProfileFile, []byte(base))
	for b.Loop() {
		mergeFactFile(ProfileFile, []byte(base), []byte(ours), []byte(theirs), baseFacts)
	}
}
