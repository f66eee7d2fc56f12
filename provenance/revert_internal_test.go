package provenance

import (
	"slices"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

// A commit made by someone else while a revert by message undoes its
// commits counts, as the history it undoes: a fact taught again meanwhile
// stands by that teaching, though the message taught it first.
func TestRevertMessages_ACommitMadeMeanwhileCounts(t *testing.T) {
	s, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sh, err := s.CreateShard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	bot := gitstore.Signature{Name: "alice", Email: "alice@agents.memd"}
	day, _ := memd.ParseDate("2026-10-01")
	change := func(op, text, msg string) {
		t.Helper()
		id := memd.FactID(text)
		edit := gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: day, Tier: memd.TierProfile}}
		if op == memd.OpForget {
			edit = gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: id}}
		}
		p := memd.Provenance{Op: op, FactIDs: []string{id}, Tier: memd.TierProfile, SourceMessages: []string{msg}, LearnedBy: memd.LearnedLearner}
		if _, err := sh.Apply(gitstore.Change{Author: bot, Message: Message(Subject(op, text), p), Edits: []gitstore.Edit{edit}}); err != nil {
			t.Fatal(err)
		}
	}
	change(memd.OpRemember, "Pat lives in Porto", "m1")
	change(memd.OpRemember, "Pat drinks tea", "m1")
	once := func() {
		testHookAfterRevert.Store(nil)
		change(memd.OpForget, "Pat lives in Porto", "o1")
		change(memd.OpRemember, "Pat lives in Porto", "o2")
	}
	testHookAfterRevert.Store(&once)
	t.Cleanup(func() { testHookAfterRevert.Store(nil) })

	r := Reverter{Author: gitstore.Signature{Name: "admin", Email: "admin@memd"}, LearnedBy: memd.LearnedPerson}
	got, err := r.RevertMessages([]*gitstore.Shard{sh}, []string{"m1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	facts, _, err := sh.Facts()
	if err != nil {
		t.Fatal(err)
	}
	if texts := memdtest.Texts(facts); !slices.Equal(texts, []string{"Pat lives in Porto"}) {
		t.Errorf("facts after undoing m1: %q (reverts %+v); want the fact o2 taught again", texts, got)
	}
}
