package gitstore

// Merges of recurring entries by agents alone: days restored and taken
// back on both daemons, and random agents' writes against a model.

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// Agents only: our daemon took back the 13th's line of a recurring entry
// (RemoveLine); theirs took back the same line and then restored the 20th
// (RestoreLine, appended where the 13th's stood, the file's end). The
// 20th's line is kept, and nothing is named: it is no date corrected.
func TestMergeFactFiles_ADayRestoredWhereADayWasTakenBack(t *testing.T) {
	p := "log/2026-11.md"
	dune := "- (2026-11-07) Read Dune\n"
	base := logTop + runLine("05") + dune + runLine("13")
	peer := logTop + runLine("05") + dune + runLine("20") // RemoveLine 13, RestoreLine 20
	main := logTop + runLine("05") + dune                 // RemoveLine 13
	out, conflict := mergeFactFiles(p, []byte(base), []byte(main), []byte(peer))
	if !holdsLine(out, strings.TrimSuffix(runLine("20"), "\n")) {
		t.Fatalf("the 20th's line their agent restored is lost (conflict %v):\n%s", conflict, out)
	}
}

// Same, end to end with two daemons and their agents alone.
func TestShard_IntegrateKeepsADayRestoredWhereADayWasTakenBack(t *testing.T) {
	p := newTwoDaemons(t)
	const text = "Went running by the river"
	file := "log/2026-11.md"
	applyEdits(t, p.a, rememberEdit(text, memd.TierLog, "2026-11-05"), rememberEdit("Read Dune", memd.TierLog, "2026-11-07"))
	applyEdits(t, p.a, restoreDayEdit(text, "13"))
	integrateFromShard(t, p.b, p.a)
	remove13 := takeBackDayEdit(text, "13")
	applyEdits(t, p.a, remove13, rememberEdit("Met Ana", memd.TierProfile, "2026-11-21")) // another commit than theirs
	applyEdits(t, p.b, remove13)
	applyEdits(t, p.b, restoreDayEdit(text, "20"))
	in := integrateFromShard(t, p.a, p.b)
	log := memdtest.Git(t, p.a.Dir(), "show", "HEAD:"+file)
	if !strings.Contains(log, "- (2026-11-20) "+text+"\n") {
		t.Fatalf("the 20th's line their agent restored is lost (%+v):\n%s", in, log)
	}
}

// Agents only: their daemon restores a day of a recurring entry
// (RestoreLine), ours takes back another day of it (RemoveLine). Two
// agents' writes: a merge naming no conflict.
func TestShard_IntegrateOfAgentsRestoringAndTakingBackDays(t *testing.T) {
	for name, ourEdit := range map[string]func(text, file string) Edit{
		"we remove a day": func(text, file string) Edit {
			return takeBackDayEdit(text, "09")
		},
		"we restore another day": func(text, file string) Edit {
			return restoreDayEdit(text, "16")
		},
	} {
		t.Run(name, func(t *testing.T) {
			calls := mergeFileCalls(t)
			p := newTwoDaemons(t)
			const text = "Went running by the river"
			file := "log/2026-11.md"
			applyEdits(t, p.a, rememberEdit(text, memd.TierLog, "2026-11-02"), rememberEdit("Shipped the importer", memd.TierLog, "2026-11-03"))
			applyEdits(t, p.a, restoreDayEdit(text, "09"))
			integrateFromShard(t, p.b, p.a)
			applyEdits(t, p.a, ourEdit(text, file))
			applyEdits(t, p.b, restoreDayEdit(text, "12"))
			before := calls()
			in := integrateFromShard(t, p.a, p.b)
			log := memdtest.Git(t, p.a.Dir(), "show", "HEAD:"+file)
			if len(in.Conflicts) != 0 || calls() != before {
				t.Fatalf("agents' writes alone, yet %q named, %d git merge-file runs:\n%s", in.Conflicts, calls()-before, log)
			}
		})
	}
}

// A fact line of the model: file, ID and day.
type entryLine struct {
	file, id string
	day      memd.Date
}

// entryLines reads the fact lines of a shard's main, with their texts.
func entryLines(t *testing.T, sh *Shard) (map[entryLine]bool, map[string]memd.Fact) {
	t.Helper()
	lines, texts := make(map[entryLine]bool), make(map[string]memd.Fact)
	for _, file := range []string{ProfileFile, "log/2026-11.md"} {
		data, err := sh.fileBlobAtHead(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, lf := range parseFactFile(file, data) {
			lines[entryLine{file, lf.ID, lf.Date}] = true
			f := lf.Fact
			f.File = file
			texts[lf.ID] = f
		}
	}
	return lines, texts
}

// randomAgentEdit picks one agent edit at random on a shard: remember, forget,
// reword, RemoveLine, RestoreLine.
func randomAgentEdit(t *testing.T, sh *Shard, rng *rand.Rand, side string, n *int) (Edit, string) {
	lines, texts := entryLines(t, sh)
	keys := slices.SortedFunc(maps.Keys(lines), func(a, b entryLine) int {
		return strings.Compare(a.file+a.id+a.day.String(), b.file+b.id+b.day.String())
	})
	day := func() string { return fmt.Sprintf("2026-11-%02d", 1+rng.IntN(28)) }
	*n++
	text := fmt.Sprintf("Fact %s%d", side, *n)
	op := rng.IntN(5)
	if len(keys) == 0 {
		op = 0
	}
	switch op {
	case 1:
		k := keys[rng.IntN(len(keys))]
		return forgetEdit(texts[k.id].Text), "forget " + texts[k.id].Text
	case 2:
		k := keys[rng.IntN(len(keys))]
		return rewordEdit(texts[k.id].Text, text), "reword " + texts[k.id].Text + " -> " + text
	case 3:
		k := keys[rng.IntN(len(keys))]
		return Edit{Op: RemoveLine, Fact: memd.Fact{ID: k.id, File: k.file, Date: k.day}}, "removeline " + texts[k.id].Text + " " + k.day.String()
	case 4:
		k := keys[rng.IntN(len(keys))]
		f := texts[k.id]
		f.Date = dayOf(day())
		if f.File != ProfileFile {
			f.File = "log/2026-11.md"
		}
		return Edit{Op: RestoreLine, Fact: memd.Fact{Text: f.Text, Tier: f.Tier, Date: f.Date, File: f.File}}, "restoreline " + f.Text + " " + f.Date.String()
	}
	tier := memd.TierLog
	if rng.IntN(2) == 0 {
		tier = memd.TierProfile
	}
	d := day()
	return rememberEdit(text, tier, d), "remember " + text + " " + d
}

// Two daemons, agents alone, random remembers, forgets, edits, RemoveLine
// and RestoreLine on each side: the merge names no conflict, runs no git
// merge-file, and holds the lines of the model: base's, less those either
// side removed and every line of a fact either side no longer holds on
// any line, plus those either side added (of a fact the other still has,
// or new). Eight seeds here; MEMD_MERGE_SEEDS=n from MEMD_MERGE_SEED for
// more.
func TestShard_IntegrateOfAgentsRandomWrites(t *testing.T) {
	var failed []string
	first, seeds := uint64(1), uint64(8)
	if s, err := strconv.ParseUint(os.Getenv("MEMD_MERGE_SEED"), 10, 64); err == nil {
		first = s
	}
	if n, err := strconv.ParseUint(os.Getenv("MEMD_MERGE_SEEDS"), 10, 64); err == nil {
		seeds = n
	}
	for seed := first; seed < first+seeds; seed++ {
		ok := t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 5))
			calls := mergeFileCalls(t)
			p := newTwoDaemons(t)
			applyEdits(t, p.a, rememberEdit("Went running by the river", memd.TierLog, "2026-11-02"), rememberEdit("Shipped the importer", memd.TierLog, "2026-11-03"),
				rememberEdit("Lives in Lisbon", memd.TierProfile, "2026-11-01"), rememberEdit("Prefers tea", memd.TierProfile, "2026-11-01"),
				rememberEdit("Read Dune", memd.TierLog, "2026-11-07"))
			applyEdits(t, p.a, restoreDayEdit("Went running by the river", "09"))
			integrateFromShard(t, p.b, p.a)
			base, baseText := entryLines(t, p.a)
			var story []string
			n := 0
			for _, side := range []struct {
				sh   *Shard
				name string
			}{{p.a, "a"}, {p.b, "b"}} {
				for range 1 + rng.IntN(3) {
					e, what := randomAgentEdit(t, side.sh, rng, side.name, &n)
					// A second edit makes each side's commit its own.
					mark := rememberEdit(fmt.Sprintf("Mark %s%d", side.name, n), memd.TierLog, "2026-11-28")
					applyEdits(t, side.sh, e, mark)
					story = append(story, side.name+": "+what)
				}
			}
			la, _ := entryLines(t, p.a)
			lb, _ := entryLines(t, p.b)
			ids := func(ls map[entryLine]bool) map[string]bool {
				m := make(map[string]bool)
				for k := range ls {
					m[k.id] = true
				}
				return m
			}
			ia, ib, i0 := ids(la), ids(lb), ids(base)
			want := make(map[entryLine]bool)
			for _, side := range []map[entryLine]bool{base, la, lb} {
				for k := range side {
					gone := i0[k.id] && (!ia[k.id] || !ib[k.id]) || base[k] && (!la[k] || !lb[k])
					if !gone {
						want[k] = true
					}
				}
			}
			before := calls()
			in := integrateFromShard(t, p.a, p.b)
			got, gotText := entryLines(t, p.a)
			var bad []string
			if len(in.Conflicts) != 0 {
				bad = append(bad, fmt.Sprintf("conflict named: %q", in.Conflicts))
			}
			if c := calls() - before; c != 0 {
				bad = append(bad, fmt.Sprintf("git merge-file ran %d times", c))
			}
			for k := range want {
				if !got[k] {
					bad = append(bad, fmt.Sprintf("line lost: %s %s %s", k.file, k.day, cmpOr(gotText[k.id].Text, baseText[k.id].Text, k.id)))
				}
			}
			for k := range got {
				if !want[k] {
					bad = append(bad, fmt.Sprintf("line back or extra: %s %s %s", k.file, k.day, gotText[k.id].Text))
				}
			}
			if len(bad) > 0 {
				log, _ := p.a.fileBlobAtHead("log/2026-11.md")
				prof, _ := p.a.fileBlobAtHead(ProfileFile)
				t.Errorf("%s\nedits:\n  %s\nlog:\n%s\nprofile:\n%s", strings.Join(bad, "\n"), strings.Join(story, "\n  "), log, prof)
			}
		})
		if !ok {
			failed = append(failed, fmt.Sprint(seed))
		}
	}
	if len(failed) > 0 {
		t.Logf("failed seeds: %v", failed)
	}
}

func cmpOr(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Their person forgot "Read Dune" and corrected the date of the line
// below it (both gone from one place, one line put there); our person
// corrected that same date, differently: this side's date alone, named.
func TestMergeFactFiles_ADateBothCorrectedBesideAForget(t *testing.T) {
	p := "log/2026-11.md"
	base := logTop + "- (2026-11-07) Read Dune\n" + runLine("05") + "- (2026-11-08) Shipped the importer\n"
	peer := logTop + runLine("06") + "- (2026-11-08) Shipped the importer\n"
	main := logTop + "- (2026-11-07) Read Dune\n" + runLine("04") + "- (2026-11-08) Shipped the importer\n"
	out, conflict := mergeFactFiles(p, []byte(base), []byte(main), []byte(peer))
	if n := strings.Count(string(out), "Went running"); n != 1 || !strings.Contains(string(out), runLine("04")) {
		t.Fatalf("both corrected the date: %d lines of the fact, want this side's alone (conflict %v):\n%s", n, conflict, out)
	}
}
