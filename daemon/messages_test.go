package daemon_test

import (
	"context"
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
	alice := e.agent(t, "alice")
	bob := e.agent(t, "bob")
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

	// One action reverts the exchange; asked again, nothing is left.
	res, err := e.admin.Revert(ctx, memd.RevertRequest{Messages: ex.MessageIDs(), Shards: []memd.ShardID{s}})
	if err != nil || len(res.Reverts) != 2 {
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
	_, err = alice.PurgeMessage(ctx, "c1-m1")
	wantCode(t, err, memd.EFORBIDDEN)
	p, err := e.admin.PurgeMessage(ctx, "c1-m1")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Sort(p.Messages); !slices.Equal(p.Messages, []string{"c1-m0", "c1-m1"}) {
		t.Errorf("purged %q", p.Messages)
	}
	if tr, err := e.admin.Trace(ctx, s, edited.Fact.ID); err != nil || len(tr.Messages) != 0 {
		t.Errorf("after the purge the trace quotes %v (%v)", quoted(tr), err)
	}
	_, err = e.admin.PurgeMessage(ctx, "c1-m1")
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
