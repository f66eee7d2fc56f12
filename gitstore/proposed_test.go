package gitstore

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// A chain of proposals — additions, a removal and a rewrite of main's
// facts — is on the branch proposed exactly as planned, main and the
// working tree untouched; made again after main moves, it still is; and
// git reads the branch.
func TestPropose_ChainOnTopOfMain(t *testing.T) {
	_, sh := aliceShard(t)
	date, _ := memd.ParseDate("2026-11-03")
	add := func(text string) Edit {
		return Edit{Op: AddFact, Fact: memd.Fact{Text: text, Date: date, Tier: memd.TierProfile}}
	}
	if _, err := sh.Apply(Change{Author: who, Message: "seed", Edits: []Edit{add("Drinks tea"), add("Works on billing"), add("Lives in Austin")}}); err != nil {
		t.Fatal(err)
	}
	main, _ := sh.Head()
	steps := []Change{
		{Author: who, Message: "remember: one", Edits: []Edit{add("Likes jazz")}},
		{Author: who, Message: "remember: two", Edits: []Edit{add("Owns a parrot")}},
		{Author: who, Message: "forget: billing", Edits: []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: memd.FactID("Works on billing")}}}},
		{Author: who, Message: "edit: Lisbon", Edits: []Edit{{Op: ReplaceFact, Fact: memd.Fact{ID: memd.FactID("Lives in Austin")}, With: memd.Fact{Text: "Lives in Lisbon"}}}},
		{Author: who, Message: "remember: two again", Edits: []Edit{add("Owns a parrot")}}, // changes nothing
	}
	for _, c := range steps {
		if _, err := sh.Propose(c); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"Drinks tea", "Likes jazz", "Lives in Lisbon", "Owns a parrot"}
	tipFacts := func() []string {
		_, list, err := sh.Proposals()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 4 {
			t.Fatalf("%d proposals, want 4", len(list))
		}
		facts, err := sh.FactsAt(list[len(list)-1].Hash)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(slices.Values(memdtest.Texts(facts)))
	}
	if got := tipFacts(); !slices.Equal(got, want) {
		t.Errorf("facts at the proposals' tip: %q, want %q", got, want)
	}
	if head, _ := sh.Head(); head != main {
		t.Error("proposing moved main")
	}
	if out, _ := exec.Command("git", "-C", sh.dir, "status", "--porcelain").Output(); len(out) != 0 {
		t.Errorf("git status: %s", out)
	}

	if _, err := sh.Apply(Change{Author: who, Message: "moved", Edits: []Edit{add("Has a standing desk")}}); err != nil {
		t.Fatal(err)
	}
	kept, err := sh.RebuildProposals(func(c Commit) (Change, bool, error) {
		i := slices.IndexFunc(steps, func(s Change) bool { return s.Message == strings.TrimSuffix(c.Message, "\n") })
		if i < 0 {
			return Change{}, false, fmt.Errorf("unknown proposal %q", c.Message)
		}
		return steps[i], true, nil
	})
	if err != nil || len(kept) != 4 {
		t.Fatalf("rebuilt %d proposals: %v", len(kept), err)
	}
	want = append(want, "Has a standing desk")
	slices.Sort(want)
	if got := tipFacts(); !slices.Equal(got, want) {
		t.Errorf("facts at the tip after main moved: %q, want %q", got, want)
	}
	if out, err := exec.Command("git", "-C", sh.dir, "log", "--format=%s", "proposed").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "edit: Lisbon\nforget: billing\nremember: two\nremember: one\nmoved\n") {
		t.Errorf("git log proposed: %v\n%s", err, out)
	}
}
