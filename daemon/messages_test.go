package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
)

func quoted(tr memd.Trace) map[string]string {
	out := make(map[string]string)
	for _, q := range tr.Messages {
		out[q.ID] = q.Speaker() + ": " + q.Text
	}
	return out
}

// A reviewer reads what was said behind a learned fact, through an edit;
// an agent citing another's message ID reads nothing; one action reverts
// the exchange; an admin purges its text.
func TestMessages_TheConversationBehindAFact(t *testing.T) {
	m := newModelServer(t, answers("log: Flies to Lisbon on Friday"))
	e, feed := startLearning(t, m)
	ctx := context.Background()
	alice := e.agent(t, "alice", "apollo")
	bob := e.agent(t, "bob", "apollo")
	ex := exchange("alice", "c1", memd.ChatDirect, "pat", "Book me a flight to Lisbon for Friday please", "Booked: TAP 1234, Friday 9:05.")
	st, err := alice.Learn(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	ev := learned(t, feed, st.ID)
	if len(ev.Learned) != 1 {
		t.Fatalf("learned %+v", ev)
	}
	s := memd.AgentShard("alice")
	id := memd.FactID("Flies to Lisbon on Friday")
	tr, err := alice.Trace(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"c1-m0": "pat: Book me a flight to Lisbon for Friday please", "c1-m1": "alice: Booked: TAP 1234, Friday 9:05."}
	if got := quoted(tr); !mapsEqual(got, want) {
		t.Errorf("alice's trace quotes %v, want %v", got, want)
	}

	// An admin's edit keeps the conversation.
	edited, err := e.admin.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: id, Text: "Flies to Lisbon on Friday at 9:05"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err = alice.Trace(ctx, s, edited.Fact.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := quoted(tr); !mapsEqual(got, want) || len(tr.Chain) != 2 {
		t.Errorf("after the edit: chain of %d, quotes %v", len(tr.Chain), got)
	}

	// bob cites alice's message in his own memory: he reads no text.
	bs := memd.AgentShard("bob")
	r, err := bob.Remember(ctx, memd.RememberRequest{Shard: bs, Text: "Someone flies to Lisbon", Source: memd.Source{Messages: []string{"c1-m0"}, Chat: "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := bob.Trace(ctx, bs, r.Fact.ID); err != nil || len(tr.Messages) != 0 {
		t.Errorf("bob reads %v (%v) by citing alice's message", quoted(tr), err)
	}
	// Nor by editing a fact alice wrote where both may write, citing it.
	ps := memd.ProjectShard("apollo")
	pf, err := alice.Remember(ctx, memd.RememberRequest{Shard: ps, Text: "Launch review on Monday"})
	if err != nil {
		t.Fatal(err)
	}
	pe, err := bob.EditFact(ctx, memd.EditFactRequest{Shard: ps, ID: pf.Fact.ID, Text: "Launch review on Tuesday", Source: memd.Source{Messages: []string{"c1-m0"}, Chat: "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := bob.Trace(ctx, ps, pe.Fact.ID); err != nil || len(tr.Messages) != 0 {
		t.Errorf("bob reads %v (%v) by editing a fact and citing alice's message", quoted(tr), err)
	}
	// Nor by a commit made with git in his shard that claims to be alice's.
	dir := e.d.Store.ShardDir(bs)
	line := "- (2026-11-30) Someone else flies to Lisbon\n"
	f, err := os.OpenFile(filepath.Join(dir, "profile.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line)
	f.Close()
	gitIn(t, dir, "-c", "user.name=alice", "commit", "-qam", "remember: Someone else flies to Lisbon\n\nMemory-Op: remember\nSource-Message: c1-m0\nSource-Chat: c1\nLearned-By: learner")
	if tr, err := bob.Trace(ctx, bs, memd.FactID("Someone else flies to Lisbon")); err != nil || len(tr.Messages) != 0 {
		t.Errorf("a commit memd did not make quotes %v (%v)", quoted(tr), err)
	}

	// An explicit remember carries an excerpt, bounded.
	r, err = alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Prefers aisle seats",
		Source: memd.Source{Messages: []string{"c7-m3"}, Chat: "c7", ChatKind: memd.ChatDirect, Excerpt: "pat: aisle, always"}})
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := alice.Trace(ctx, s, r.Fact.ID); err != nil || quoted(tr)["c7-m3"] != "alice (excerpt): pat: aisle, always" {
		t.Errorf("excerpt: %v, %v", quoted(tr), err)
	}
	_, err = alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "x", Source: memd.Source{Messages: []string{"m"}, Excerpt: strings.Repeat("é", 2001)}})
	wantCode(t, err, memd.EINVALID)
	_, err = alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "x", Source: memd.Source{Excerpt: "said"}})
	wantCode(t, err, memd.EINVALID)

	// Undoing the edit puts the first version back, still quoting what was
	// said.
	log, err := e.admin.Log(ctx, memd.LogQuery{Shard: s, Op: memd.OpEdit})
	if err != nil || len(log) != 1 {
		t.Fatalf("the edit: %v, %v", log, err)
	}
	if _, err := e.admin.Revert(ctx, memd.RevertRequest{Shard: s, Commit: log[0].Hash}); err != nil {
		t.Fatal(err)
	}
	if tr, err := alice.Trace(ctx, s, id); err != nil || !mapsEqual(quoted(tr), want) || tr.Chain[len(tr.Chain)-1].Provenance.LearnedBy != memd.LearnedLearner {
		t.Errorf("after undoing the edit: chain %d, quotes %v, %v", len(tr.Chain), quoted(tr), err)
	}

	// One action reverts the exchange (a dry run says what the reverts
	// will do, each on what the one before left); asked again, nothing is
	// left.
	dry, err := e.admin.Revert(ctx, memd.RevertRequest{Messages: ex.MessageIDs(), Shards: []memd.ShardID{s}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	net := map[string]int{}
	for _, rv := range dry.Reverts {
		for _, ch := range rv.Changes {
			if ch.Op == "+" {
				net[ch.Fact.Text]++
			} else {
				net[ch.Fact.Text]--
			}
		}
	}
	for text, n := range net {
		if n > 0 {
			t.Errorf("the dry run says %q comes back", text)
		}
	}
	res, err := e.admin.Revert(ctx, memd.RevertRequest{Messages: ex.MessageIDs(), Shards: []memd.ShardID{s}})
	if err != nil || len(res.Reverts) != len(dry.Reverts) {
		t.Fatalf("revert the exchange: %+v, %v", res, err)
	}
	if got := factTexts(t, e, s); !slices.Equal(got, []string{"Prefers aisle seats"}) {
		t.Errorf("after reverting the exchange: %q", got)
	}
	again, err := e.admin.Revert(ctx, memd.RevertRequest{Messages: ex.MessageIDs(), Shards: []memd.ShardID{s}, DryRun: true})
	if err != nil || len(again.Reverts) != 0 {
		t.Errorf("a dry run with nothing left: %+v, %v", again, err)
	}
	_, err = e.admin.Revert(ctx, memd.RevertRequest{Message: "never-said", DryRun: true})
	wantCode(t, err, memd.ENOTFOUND)

	// Purging one message drops its exchange's text; agents may not.
	_, err = alice.PurgeMessage(ctx, memd.PurgeRequest{Message: "c1-m1"})
	wantCode(t, err, memd.EFORBIDDEN)
	p, err := e.admin.PurgeMessage(ctx, memd.PurgeRequest{Message: "c1-m1", Chat: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Sort(p.Messages); !slices.Equal(p.Messages, []string{"c1-m0", "c1-m1"}) {
		t.Errorf("purged %q", p.Messages)
	}
	if tr, err := e.admin.Trace(ctx, s, edited.Fact.ID); err != nil || len(tr.Messages) != 0 {
		t.Errorf("after the purge the trace quotes %v (%v)", quoted(tr), err)
	}
	_, err = e.admin.PurgeMessage(ctx, memd.PurgeRequest{Message: "c1-m1"})
	wantCode(t, err, memd.ENOTFOUND)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
