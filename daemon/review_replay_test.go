package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// An edit made again on another commit (a proposal accepted after main
// moved) rewrites the fact where it stands even when a person copied its
// line: the rewrite goes before the removal of the copy, which would
// otherwise take every line of it and leave the rewrite nothing.
func TestProposalChange_AnEditOfAFactOnTwoLines(t *testing.T) {
	s, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day, _ := memd.ParseDate("2026-11-03")
	old := memd.Fact{ID: memd.FactID("tea with milk"), Text: "tea with milk", Date: day, Tier: memd.TierLog}
	// Two shards alike: the edit is made on one and made again on the
	// other.
	var shards []*gitstore.Shard
	for _, name := range []string{"made", "again"} {
		sh, err := s.CreateShard(memd.AgentShard(name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sh.Apply(gitstore.Change{Author: gitstore.Committer(), Message: "remember\n", Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: old}}}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(sh.Dir(), "log", "2026-11.md")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, gitstore.FormatLine(old)...), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("git", "-C", sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qam", "copied").CombinedOutput(); err != nil {
			t.Fatalf("git commit: %v\n%s", err, out)
		}
		shards = append(shards, sh)
	}
	next := memd.FactID("tea without milk")
	msg := provenance.Message("edit: tea", memd.Provenance{Op: memd.OpEdit, Replaces: old.ID, FactIDs: []string{next}, LearnedBy: memd.LearnedExplicit})
	res, err := shards[0].Apply(gitstore.Change{Author: gitstore.Committer(), Message: msg, Edits: []gitstore.Edit{{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: old.ID}, With: memd.Fact{Text: "tea without milk"}}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := shards[0].ReadCommit(res.Commit)
	if err != nil {
		t.Fatal(err)
	}
	change, err := proposalChange(shards[0], c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shards[1].Apply(change); err != nil {
		t.Fatal(err)
	}
	if f, err := shards[1].Fact(next); err != nil || f.Text != "tea without milk" {
		t.Errorf("made again, the edit's text: %+v, %v", f, err)
	}
	if _, err := shards[1].Fact(old.ID); err == nil {
		t.Error("made again, the edit left the old text")
	}
}
