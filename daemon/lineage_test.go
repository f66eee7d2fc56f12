package daemon_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// An edit keeps the source of the version it rewrites, names that version,
// and a trace follows the fact back through every edit to the message it
// was first learned from. Reverting the last edit puts the version before
// it back; reverting by the first message undoes the whole chain.
func TestFacts_EditKeepsLineage(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	first, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Flies to Lisbon on Friday",
		Source: memd.Source{Messages: []string{"m_1", "m_2"}, Chat: "chat_9", ChatKind: memd.ChatDirect}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.admin.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: first.Fact.ID, Text: "Flies to Lisbon on Saturday"})
	if err != nil {
		t.Fatal(err)
	}
	third, err := alice.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: second.Fact.ID, Text: "Flies to Porto on Saturday",
		Source: memd.Source{Messages: []string{"m_7"}, Chat: "chat_10", ChatKind: memd.ChatDirect, Excerpt: "pat: Porto, not Lisbon"}})
	if err != nil {
		t.Fatal(err)
	}

	// Plain git reads the edit's trailers.
	dir := e.d.Store.ShardDir(s)
	out, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%(trailers)").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	for _, want := range []string{"Memory-Op: edit\n", "Replaces: " + second.Fact.ID + "\n", "Source-Message: m_1\n",
		"Source-Message: m_2\n", "Source-Message: m_7\n", "Source-Chat: chat_9\n", "Learned-By: explicit\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the last edit's trailers lack %q:\n%s", want, out)
		}
	}

	tr, err := e.admin.Trace(ctx, s, third.Fact.ID)
	if err != nil {
		t.Fatal(err)
	}
	var texts, ops, authors []string
	for _, c := range tr.Chain {
		for _, ch := range c.Changes {
			if ch.Op == "+" {
				texts = append(texts, ch.Fact.Text)
			}
		}
		ops = append(ops, c.Provenance.Op)
		authors = append(authors, c.Author.Name)
	}
	if want := []string{"Flies to Porto on Saturday", "Flies to Lisbon on Saturday", "Flies to Lisbon on Friday"}; !slices.Equal(texts, want) {
		t.Errorf("chain texts %q, want %q", texts, want)
	}
	if want := []string{memd.OpEdit, memd.OpEdit, memd.OpRemember}; !slices.Equal(ops, want) {
		t.Errorf("chain ops %q, want %q", ops, want)
	}
	if want := []string{"alice", "admin", "alice"}; !slices.Equal(authors, want) {
		t.Errorf("chain authors %q, want %q", authors, want)
	}
	if tr.Introduced == nil || tr.Introduced.Hash != third.Commit {
		t.Errorf("introduced %+v, want the last edit %s", tr.Introduced, third.Commit)
	}
	if q := quoted(tr); q["m_7"] != "alice (excerpt): pat: Porto, not Lisbon" {
		t.Errorf("the edit made in another chat quotes %v", q)
	}
	origin := tr.Chain[len(tr.Chain)-1].Provenance
	if !slices.Equal(origin.SourceMessages, []string{"m_1", "m_2"}) || origin.SourceChat != "chat_9" {
		t.Errorf("the chain ends at %+v, not the first message", origin)
	}

	// Undo the last edit: the version before it is back.
	if _, err := e.admin.Revert(ctx, memd.RevertRequest{Shard: s, Commit: third.Commit}); err != nil {
		t.Fatal(err)
	}
	if got := factTexts(t, e, s); !slices.Equal(got, []string{"Flies to Lisbon on Saturday"}) {
		t.Errorf("after reverting the last edit: %q", got)
	}
	// Editing the version a revert put back keeps its source too.
	fourth, err := e.admin.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: second.Fact.ID, Text: "Flies to Lisbon on Sunday"})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%(trailers)").CombinedOutput(); !strings.Contains(string(out), "Source-Message: m_1\n") {
		t.Errorf("an edit of a version a revert put back lost its source:\n%s", out)
	}

	// Everything learned from m_1, edits included, is undone; the dry run
	// says so first.
	dry, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "m_1", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	standing := map[string]bool{fourth.Fact.Text: true}
	for _, rv := range dry.Reverts {
		for _, ch := range rv.Changes {
			standing[ch.Fact.Text] = ch.Op == "+"
		}
	}
	for text, there := range standing {
		if there {
			t.Errorf("the dry run leaves %q standing", text)
		}
	}
	res, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "m_1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := factTexts(t, e, s); len(got) != 0 {
		t.Errorf("after reverting message m_1 (%d reverts): %q", len(res.Reverts), got)
	}
}

func factTexts(t *testing.T, e *env, s memd.ShardID) []string {
	t.Helper()
	list, err := e.admin.Facts(context.Background(), memd.FactsQuery{Shard: s})
	if err != nil {
		t.Fatal(err)
	}
	return memdtest.Texts(list.Facts)
}

// Reverting an exchange keeps to its chat: another chat's message with the
// same ID is another message.
func TestRevert_ExchangeKeepsToItsChat(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	if _, err := alice.Remember(ctx, memd.RememberRequest{Shard: memd.AgentShard("alice"), Text: "Pat prefers tea",
		Source: memd.Source{Messages: []string{"1"}, Chat: "telegram-pat"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Remember(ctx, memd.RememberRequest{Shard: memd.AgentShard("bob"), Text: "Sam's build is green",
		Source: memd.Source{Messages: []string{"1"}, Chat: "slack-sam"}}); err != nil {
		t.Fatal(err)
	}
	res, err := e.admin.Revert(ctx, memd.RevertRequest{Messages: []string{"1"}, Chat: "telegram-pat"})
	if err != nil || len(res.Reverts) != 1 {
		t.Fatalf("revert: %+v, %v", res, err)
	}
	if got := factTexts(t, e, memd.AgentShard("bob")); !slices.Equal(got, []string{"Sam's build is green"}) {
		t.Errorf("bob's facts after reverting alice's exchange: %q", got)
	}
}
