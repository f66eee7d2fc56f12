package learn

import (
	"math"
	"testing"

	"github.com/memd/memd"
)

// A revert holds back the work of the agent it was made for (every
// agent's for an admin), in its chat, queued before it; a pass goes on
// with its changes that rest on no message taken back.
func TestDropFrom(t *testing.T) {
	exchange := func(agent, chat string, seq uint64) *job {
		return &job{Seq: seq, Kind: kindExchange, Agent: agent, State: memd.ExchangePending,
			Exchange: &memd.Exchange{Agent: agent, Chat: chat, Messages: []memd.Message{{ID: "0-q", Role: "user"}, {ID: "0-a", Role: "agent"}}}}
	}
	alices := reverted{messages: map[string][]drop{"0-q": {{agent: "alice", chat: "c", upTo: 10}}}}
	admins := reverted{messages: map[string][]drop{"0-q": {{upTo: 10}}}}
	for _, c := range []struct {
		name string
		r    reverted
		j    *job
		want bool
	}{
		{"the agent's exchange in the chat", alices, exchange("alice", "c", 7), true},
		{"the agent's exchange in another chat", alices, exchange("alice", "d", 7), false},
		{"another agent's exchange", alices, exchange("bob", "c", 7), false},
		{"an exchange queued after the revert", alices, exchange("alice", "c", 11), false},
		{"an admin's revert, any agent, any chat", admins, exchange("bob", "d", 7), true},
	} {
		if got := dropFrom(c.j, c.r); got != c.want || got != (c.j.State == memd.ExchangeSkipped) {
			t.Errorf("%s: dropped %v, state %s; want dropped %v", c.name, got, c.j.State, c.want)
		}
	}

	ep := &job{Seq: 9, Kind: kindEpisode, Agent: "alice", State: memd.ExchangePending, Plan: &plan{},
		Turns: []Turn{{Chat: "c", Messages: []string{"0-q", "0-a"}}, {Chat: "c", Messages: []string{"1-q"}}}}
	if !dropFrom(ep, alices) || len(ep.Turns) != 1 || ep.Turns[0].Messages[0] != "1-q" || ep.Plan != nil || ep.State != memd.ExchangePending {
		t.Errorf("episode after the drop: %+v, want the other turn alone, to be asked again", ep)
	}

	pass := &job{Seq: 9, Kind: kindSynthesis, Agent: "alice", State: memd.ExchangePending, Plan: &plan{Changes: []Change{
		{Op: SynthRewrite, Evidence: []string{"0-q"}, Chats: map[string]string{"0-q": "c"}, Verdict: VerdictApproved},
		{Op: SynthMerge, Evidence: []string{"f1", "f2"}, Verdict: VerdictApproved},
	}}}
	if !dropFrom(pass, alices) || pass.Plan.Changes[0].Verdict != VerdictRefused || pass.Plan.Changes[1].Verdict != VerdictApproved || pass.State != memd.ExchangePending {
		t.Errorf("pass after the drop: %+v, want the change resting on 0-q refused and the other kept", pass.Plan.Changes)
	}
	// A pass that read an exchange dropped from the evidence has none of
	// its changes applied, whatever they cite.
	read := &job{Seq: 9, Kind: kindSynthesis, Agent: "alice", State: memd.ExchangePending, Plan: &plan{Evidence: []uint64{4, 5}, Changes: []Change{
		{Op: SynthMerge, Evidence: []string{"f1", "f2"}, Verdict: VerdictApproved},
	}}}
	dropped := reverted{evidence: map[string]map[uint64]bool{"alice": {5: true}}}
	if !dropFrom(read, dropped) || read.Plan.Changes[0].Verdict != VerdictRefused {
		t.Errorf("pass that read dropped evidence: %+v, want its change refused", read.Plan.Changes)
	}
}

// What reverts hold is forgotten once no job a worker may hold can meet
// it, so reverts in a loop do not grow it.
func TestReverted_ForgetBefore(t *testing.T) {
	var r reverted
	r.add(reverted{messages: map[string][]drop{"a": {{upTo: 3}}, "b": {{upTo: 8}}}, evidence: map[string]map[uint64]bool{"alice": {2: true}}})
	r.forgetBefore(5) // the oldest pending job is the fifth
	if len(r.messages) != 1 || r.messages["b"] == nil || len(r.evidence) != 1 {
		t.Errorf("held with job 5 pending: %+v, want b's drop and the evidence", r)
	}
	r.forgetBefore(math.MaxUint64) // none pending
	if len(r.messages) != 0 || len(r.evidence) != 0 {
		t.Errorf("held with nothing pending: %+v, want nothing", r)
	}
}
