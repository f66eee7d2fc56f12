package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Two edits of a change naming one line are refused when they differ (a
// removal and a rewrite, two rewrites), not one of them dropped; the
// same removal twice is one.
func TestPendingFile_TwoDifferentEditsOfALineConflict(t *testing.T) {
	line := func(s string) lineReplace { return lineReplace{start: 10, end: 20, line: []byte(s)} }
	for _, c := range []struct {
		name string
		p    pendingFile
		want bool
	}{
		{"removed twice", pendingFile{removes: [][2]int{{10, 20}, {10, 20}}}, false},
		{"removed and rewritten", pendingFile{removes: [][2]int{{10, 20}}, replaces: []lineReplace{line("- (2026-11-03) b\n")}}, true},
		{"rewritten twice, differently", pendingFile{replaces: []lineReplace{line("- (2026-11-03) b\n"), line("- (2026-11-03) c\n")}}, true},
		{"lines apart", pendingFile{removes: [][2]int{{0, 10}}, replaces: []lineReplace{line("- (2026-11-03) b\n")}}, false},
	} {
		if err := c.p.conflict(); (err != nil) != c.want {
			t.Errorf("%s: conflict = %v", c.name, err)
		}
	}
}

// Edits of one change that name a fact an earlier one of it made: the
// fact a rewrite made is not added again, removed with the rest of its
// lines, and rewritten in turn.
func TestChange_EditsOfAFactAnEarlierEditMade(t *testing.T) {
	oct, _ := memd.ParseDate("2026-10-03")
	nov, _ := memd.ParseDate("2026-11-03")
	f := func(n int) memd.Fact {
		text := fmt.Sprintf("fact %d", n)
		switch n {
		case 5, 6: // fact 0 written otherwise: the same ID
			text = map[int]string{5: "FACT  0", 6: "Fact 0"}[n]
		}
		return memd.Fact{ID: memd.FactID(text), Text: text, Date: nov, Tier: memd.TierLog}
	}
	replace := func(a, b int) Edit { return Edit{Op: ReplaceFact, Fact: memd.Fact{ID: f(a).ID}, With: f(b)} }
	for _, c := range []struct {
		name  string
		edits []Edit
		want  map[string]string // fact text -> the files holding it, joined by spaces
	}{
		{"rewritten, then added", []Edit{replace(0, 1), {Op: AddFact, Fact: f(1)}},
			map[string]string{"fact 0": "", "fact 1": "log/2026-11.md"}},
		{"rewritten, then removed", []Edit{replace(0, 1), {Op: RemoveFact, Fact: memd.Fact{ID: f(1).ID}}},
			map[string]string{"fact 0": "", "fact 1": ""}},
		{"rewritten to one held elsewhere, then removed", []Edit{replace(0, 2), {Op: RemoveFact, Fact: memd.Fact{ID: f(2).ID}}},
			map[string]string{"fact 0": "", "fact 2": ""}},
		// fact 2's newest line is the one fact 0's rewrite made.
		{"rewritten to one held elsewhere, then rewritten", []Edit{replace(0, 2), replace(2, 3)},
			map[string]string{"fact 0": "", "fact 2": "", "fact 3": "log/2026-11.md"}},
		{"rewritten twice", []Edit{replace(0, 1), replace(1, 3)},
			map[string]string{"fact 0": "", "fact 1": "", "fact 3": "log/2026-11.md"}},
		{"rewritten, back, and again", []Edit{replace(0, 1), replace(1, 0), replace(0, 3)},
			map[string]string{"fact 0": "", "fact 1": "", "fact 3": "log/2026-11.md"}},
		{"rewritten to another, whose line is rewritten to it, then removed", []Edit{replace(0, 1), replace(4, 0), {Op: RemoveFact, Fact: memd.Fact{ID: f(0).ID}}},
			map[string]string{"fact 0": "", "fact 1": "log/2026-11.md", "fact 4": ""}},
		{"rewritten to another, whose line is rewritten to it, then rewritten", []Edit{replace(0, 1), replace(4, 0), replace(0, 3)},
			map[string]string{"fact 0": "", "fact 1": "log/2026-11.md", "fact 3": "log/2026-11.md", "fact 4": ""}},
		{"rewritten keeping its ID, twice", []Edit{replace(0, 5), replace(0, 6)},
			map[string]string{"fact 0": "", "FACT  0": "", "Fact 0": "log/2026-11.md"}},
		{"added, then rewritten", []Edit{{Op: AddFact, Fact: f(1)}, replace(1, 3)},
			map[string]string{"fact 0": "log/2026-11.md", "fact 1": "", "fact 3": "log/2026-11.md"}},
		{"added, another rewritten to it, then rewritten", []Edit{{Op: AddFact, Fact: f(1)}, replace(0, 1), replace(1, 3)},
			map[string]string{"fact 0": "", "fact 1": "", "fact 3": "log/2026-11.md"}},
		{"removed, added again, then rewritten", []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: f(0).ID}}, {Op: AddFact, Fact: f(0)}, replace(0, 3)},
			map[string]string{"fact 0": "", "fact 3": "log/2026-11.md"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, sh := aliceShard(t)
			two := f(2)
			two.Date = oct // in October's log
			if _, err := sh.Apply(Change{Author: Committer(), Message: "import\n", Edits: []Edit{{Op: AddFact, Fact: f(0)}, {Op: AddFact, Fact: two}, {Op: AddFact, Fact: f(4)}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := sh.Apply(Change{Author: Committer(), Message: "edit\n", Edits: c.edits}); err != nil {
				t.Fatal(err)
			}
			placesAsReadAfresh(t, sh, 5)
			for text, want := range c.want {
				var files []string
				for _, path := range []string{"log/2026-10.md", "log/2026-11.md"} {
					b, _ := os.ReadFile(filepath.Join(sh.Dir(), path))
					for range strings.Count(string(b), ") "+text+"\n") {
						files = append(files, path)
					}
				}
				if got := strings.Join(files, " "); got != want {
					t.Errorf("%q is in %q, want %q", text, got, want)
				}
			}
		})
	}
}

// A change whose edits undo each other changes no file and makes no
// commit, and reports no change; one that adds and removes a fact it
// removed reports each step.
func TestChange_EditsThatUndoEachOther(t *testing.T) {
	_, sh := aliceShard(t)
	nov, _ := memd.ParseDate("2026-11-03")
	dec, _ := memd.ParseDate("2026-12-03")
	a := memd.Fact{ID: memd.FactID("fact a"), Text: "fact a", Date: nov, Tier: memd.TierLog}
	if _, err := sh.Apply(Change{Author: Committer(), Message: "import\n", Edits: []Edit{{Op: AddFact, Fact: a}}}); err != nil {
		t.Fatal(err)
	}
	b := memd.Fact{ID: memd.FactID("fact b"), Text: "fact b", Date: dec, Tier: memd.TierLog}
	res, err := sh.Apply(Change{Author: Committer(), Message: "both\n", Edits: []Edit{{Op: AddFact, Fact: b}, {Op: RemoveFact, Fact: memd.Fact{ID: b.ID}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Commit.IsZero() || len(res.Changes) != 0 {
		t.Errorf("a fact added and removed: commit %s, changes %v", res.Commit, res.Changes)
	}
	if _, err := os.Stat(filepath.Join(sh.Dir(), "log", "2026-12.md")); !os.IsNotExist(err) {
		t.Errorf("December's log was made for nothing: %v", err)
	}
	res, err = sh.Apply(Change{Author: Committer(), Message: "again\n", Edits: []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: a.ID}}, {Op: AddFact, Fact: a}, {Op: RemoveFact, Fact: memd.Fact{ID: a.ID}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := changeOps(res); got != "-fact a +fact a -fact a" {
		t.Errorf("removed, added and removed again, reported as %q", got)
	}
	if _, err := sh.Fact(a.ID); err == nil {
		t.Error("the fact is still held")
	}
	placesAsReadAfresh(t, sh, 0)
}

// What a refused change recorded of where facts are is put back: the
// other changes of its group go on from where they were.
func TestGroup_UndoOverPutsBackWhereFactsWere(t *testing.T) {
	_, sh := aliceShard(t)
	g := newGroup(sh, &state{files: map[string]fileAt{}, parsed: map[string]*factFile{}, where: newFactPlaces()})
	g.over["kept"] = []string{"log/2026-11.md"}
	g.over["gone"] = nil
	clear(g.before)
	g.setOver("kept", nil)
	g.setOver("gone", []string{ProfileFile})
	g.setOver("new", []string{ProfileFile})
	g.setOver("new", nil)
	g.undoOver()
	if len(g.over) != 2 || len(g.over["kept"]) != 1 || g.over["gone"] != nil {
		t.Errorf("after undo, over is %v", g.over)
	}
	if _, ok := g.over["new"]; ok {
		t.Error("a fact the refused change named first is still recorded")
	}
}

// A rewrite of a fact on two lines (a person copied it) reports each line
// it takes, with the text that line held, then the new fact.
func TestChange_ARewriteReportsEveryLineItTakes(t *testing.T) {
	_, sh := aliceShard(t)
	nov, _ := memd.ParseDate("2026-11-03")
	a := memd.Fact{ID: memd.FactID("fact a"), Text: "fact a", Date: nov, Tier: memd.TierLog}
	if _, err := sh.Apply(Change{Author: Committer(), Message: "import\n", Edits: []Edit{{Op: AddFact, Fact: a}}}); err != nil {
		t.Fatal(err)
	}
	personAppends(t, sh, "log/2026-11.md", "- (2026-11-04) FACT  A\n") // the same ID
	personCommits(t, sh)
	res, err := sh.Apply(Change{Author: Committer(), Message: "edit\n", Edits: []Edit{{Op: ReplaceFact, Fact: memd.Fact{ID: a.ID}, With: memd.Fact{Text: "fact b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := changeOps(res); got != "-fact a -FACT  A +fact b" {
		t.Errorf("the rewrite reported %q", got)
	}
}

// changeOps spells a result's changes as "+text" and "-text", in order.
func changeOps(res Result) string {
	var ops []string
	for _, c := range res.Changes {
		ops = append(ops, c.Op+c.Fact.Text)
	}
	return strings.Join(ops, " ")
}

// BenchmarkChange_RemoveManyFromOneFile times one change removing 20,000
// facts from one month's log, as a revert of a large import does: each
// removal once looked for its fact through every line of the file (2.95 s
// an op before), now through an index of the file's lines by ID.
func BenchmarkChange_RemoveManyFromOneFile(b *testing.B) {
	for range b.N {
		b.StopTimer()
		_, sh := aliceShard(b)
		d, _ := memd.ParseDate("2026-11-03")
		var adds, removes []Edit
		for i := range 20000 {
			text := fmt.Sprintf("fact %d", i)
			adds = append(adds, Edit{Op: AddFact, Fact: memd.Fact{ID: memd.FactID(text), Text: text, Date: d, Tier: memd.TierLog, File: "log/2026-11.md"}})
			removes = append(removes, Edit{Op: RemoveFact, Fact: memd.Fact{ID: memd.FactID(text)}})
		}
		if _, err := sh.Apply(Change{Author: Committer(), Message: "import\n", Edits: adds}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := sh.Apply(Change{Author: Committer(), Message: "revert\n", Edits: removes}); err != nil {
			b.Fatal(err)
		}
	}
}

// applyTogether commits changes as one group, as changes queued while a
// commit is written are, and returns each one's result and error.
func applyTogether(sh *Shard, changes ...Change) ([]Result, []error) {
	batch := make([]*request, len(changes))
	for i, c := range changes {
		batch[i] = &request{change: c, done: make(chan struct{})}
	}
	sh.commitGroup(batch)
	res, errs := make([]Result, len(batch)), make([]error, len(batch))
	for i, r := range batch {
		res[i], errs[i] = r.res, r.err
	}
	return res, errs
}

// A change that removes the shard's last file leaves the empty tree, and
// the changes after it in the group build on it.
func TestGroup_AfterTheLastFileWent(t *testing.T) {
	_, sh := aliceShard(t)
	day, _ := memd.ParseDate("2026-11-03")
	a := memd.Fact{ID: memd.FactID("fact a"), Text: "fact a", Date: day, Tier: memd.TierProfile}
	if _, err := sh.Apply(Change{Author: Committer(), Message: "a\n", Edits: []Edit{{Op: AddFact, Fact: a}}}); err != nil {
		t.Fatal(err)
	}
	b := memd.Fact{ID: memd.FactID("fact b"), Text: "fact b", Date: day, Tier: memd.TierProfile}
	_, errs := applyTogether(sh,
		Change{Author: Committer(), Message: "forget a\n", Edits: []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: a.ID}}}},
		Change{Author: Committer(), Message: "b\n", Edits: []Edit{{Op: AddFact, Fact: b}}})
	for i, err := range errs {
		if err != nil {
			t.Errorf("change %d: %v", i, err)
		}
	}
	if _, err := sh.Fact(b.ID); err != nil {
		t.Errorf("fact b: %v", err)
	}
	placesAsReadAfresh(t, sh, 0)
}

// A folder's last note removed and a note of its name made, in one group:
// the working tree follows, the removal first.
func TestGroup_ANoteInPlaceOfAFolderInOneGroup(t *testing.T) {
	_, sh := aliceShard(t)
	set := func(text string) NoteUpdate {
		return func([]byte, bool) ([]byte, bool, error) { return []byte(text), false, nil }
	}
	del := func([]byte, bool) ([]byte, bool, error) { return nil, true, nil }
	if _, err := sh.Apply(Change{Author: Committer(), Message: "note-edit: create\n", Note: &NoteChange{Path: "notes/x.md/b.md", Update: set("b\n")}}); err != nil {
		t.Fatal(err)
	}
	_, errs := applyTogether(sh,
		Change{Author: Committer(), Message: "note-edit: delete\n", Note: &NoteChange{Path: "notes/x.md/b.md", Update: del}},
		Change{Author: Committer(), Message: "note-edit: create\n", Note: &NoteChange{Path: "notes/x.md", Update: set("x\n")}})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	out, err := exec.Command("git", "-C", sh.Dir(), "status", "--porcelain").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("git status: %s %v", out, err)
	}
	if b, err := os.ReadFile(filepath.Join(sh.Dir(), "notes", "x.md")); err != nil || string(b) != "x\n" {
		t.Errorf("notes/x.md: %q, %v", b, err)
	}
}

// Busy writers each wait for their last change before sending the next:
// a group that went without those it just answered would leave them for a
// group of their own, and the writers would take turns in two halves.
func TestNextGroup_WaitsForTheWritersComingBack(t *testing.T) {
	const took = 6 * time.Millisecond
	cases := []struct {
		name           string
		queued, coming int
		took           time.Duration
		missed         bool
		want           int
		wait           time.Duration
	}{
		{"one writer goes at once", 0, 1, took, false, 1, 0},
		{"the half that queued waits for the half answered", 4, 4, took, false, 8, groupDelay},
		{"a group answered alone waits for its writers", 0, 8, took, false, 8, groupDelay},
		{"writers who wrote once are not waited for", 3, 0, took, false, 3, 0},
		{"a quick group waits half its time", 3, 2, time.Millisecond, false, 5, 500 * time.Microsecond},
		{"after a wait that ran out, at once", 4, 4, took, true, 8, 0},
		{"a full group's worth queued goes at once", maxGroup, 8, took, false, maxGroup, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, wait := nextGroup(c.queued, c.coming, c.took, c.missed)
			if want != c.want || wait != c.wait {
				t.Errorf("nextGroup(%d, %d, %v, %v) = %d, %v; want %d, %v", c.queued, c.coming, c.took, c.missed, want, wait, c.want, c.wait)
			}
		})
	}
}

// A writer counts as coming back when its change follows the answer to its
// last one within returnWindow; one that writes now and then, or for the
// first time, is not waited for, nor one already back.
func TestShard_CountsTheWritersStillComingBack(t *testing.T) {
	sh := &Shard{}
	busy, once := Signature{Name: "busy", Email: "busy@x"}, Signature{Name: "once", Email: "once@x"}
	t0 := time.Unix(1_800_000_000, 0)
	if sh.cameBack(busy, t0) {
		t.Fatal("a first change came back")
	}
	first := []*request{{change: Change{Author: busy}, at: t0}, {change: Change{Author: once}, at: t0}}
	sh.noteAnswered(first, t0)
	if n := sh.stillComing(first, t0); n != 0 {
		t.Errorf("first changes: %d still coming, want 0", n)
	}
	soon, late := t0.Add(returnWindow/2), t0.Add(returnWindow+time.Microsecond)
	if !sh.cameBack(busy, soon) || sh.cameBack(busy, late) {
		t.Errorf("came back at half the window: %v (want true); just past it: %v (want false)", sh.cameBack(busy, soon), sh.cameBack(busy, late))
	}
	second := []*request{{change: Change{Author: busy}, at: soon, back: sh.cameBack(busy, soon)}}
	sh.noteAnswered(second, soon)
	if n := sh.stillComing(second, soon); n != 1 {
		t.Errorf("a writer straight back: %d still coming, want 1", n)
	}
	// Queued before the answer: another writer's; after it: this one, back.
	sh.queue = []*request{{change: Change{Author: once}, at: soon.Add(-time.Microsecond)}}
	if n := sh.stillComing(second, soon); n != 1 {
		t.Errorf("with a change queued before the answer: %d still coming, want 1", n)
	}
	sh.queue = append(sh.queue, &request{change: Change{Author: busy}, at: soon.Add(time.Microsecond), back: true})
	if n := sh.stillComing(second, soon); n != 0 {
		t.Errorf("with the writer back already: %d still coming, want 0", n)
	}
	// Authors answered long ago are let go once many are kept.
	for i := range 4*maxGroup + 1 {
		sh.answered[Signature{Name: fmt.Sprint(i), Email: "x@x"}] = t0
	}
	sh.noteAnswered([]*request{{change: Change{Author: busy}}}, late.Add(returnWindow))
	if len(sh.answered) != 1 {
		t.Errorf("kept %d authors after letting go of those answered long ago, want 1", len(sh.answered))
	}
}
