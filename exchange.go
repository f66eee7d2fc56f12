package memd

import (
	"context"
	"time"
)

// Message is one chat message of an exchange.
type Message struct {
	ID   string `json:"id"`
	Role string `json:"role"` // "user" or "agent"
	Text string `json:"text"`
}

// Quote is the text of a chat message a fact was learned from, as memd keeps
// it: from an exchange the learner was given, or an excerpt an agent sent
// with an explicit remember.
type Quote struct {
	ID      string    `json:"id"`
	Role    string    `json:"role,omitempty"` // "user" or "agent"; empty for an excerpt
	Text    string    `json:"text"`
	Agent   string    `json:"agent,omitempty"`
	User    string    `json:"user,omitempty"`
	Chat    string    `json:"chat,omitempty"`
	Time    time.Time `json:"time,omitzero"`
	Excerpt bool      `json:"excerpt,omitempty"`
}

// Speaker names who said a quoted message, as well as memd knows.
func (q Quote) Speaker() string {
	switch {
	case q.Role == "agent" && q.Agent != "":
		return q.Agent
	case q.Role == "user" && q.User != "":
		return q.User
	case q.Role != "":
		return q.Role
	case q.Agent != "":
		return q.Agent + " (excerpt)"
	}
	return "excerpt"
}

// Exchange is one chat turn handed to the learner: what the person said and
// what the agent answered.
type Exchange struct {
	ID       string    `json:"id,omitempty"` // assigned by memd when accepted
	Agent    string    `json:"agent"`
	Chat     string    `json:"chat"`
	ChatKind ChatKind  `json:"chat_kind"`
	User     string    `json:"user,omitempty"` // the person, for facts about them (direct chats)
	Messages []Message `json:"messages"`
	Time     time.Time `json:"time,omitzero"`
}

// MessageIDs returns the IDs of the exchange's messages.
func (e Exchange) MessageIDs() []string {
	out := make([]string, len(e.Messages))
	for i, m := range e.Messages {
		out[i] = m.ID
	}
	return out
}

// States of an exchange in the learner's queue.
const (
	ExchangePending = "pending" // waiting, or being learned, or retrying
	ExchangeDone    = "done"    // learned
	ExchangeSkipped = "skipped" // not eligible, or small talk: no model call
	ExchangeFailed  = "failed"  // the model call failed after every retry
)

// ExchangeStatus is where an exchange is in the learner.
type ExchangeStatus struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"` // "exchange", "episode" or "synthesis"
	Agent    string    `json:"agent"`
	State    string    `json:"state"`
	Attempts int       `json:"attempts"`
	Error    string    `json:"error,omitempty"`
	Reason   string    `json:"reason,omitempty"` // why it was skipped
	Accepted time.Time `json:"accepted"`
	Commits  []string  `json:"commits,omitempty"`
	// NextTry is when a pending exchange is tried next, when that is
	// later than now: after a failed try, or when the model asked to be
	// left alone (Retry-After).
	NextTry time.Time `json:"next_try,omitzero"`
	// Ignored counts the lines of the model's answer that were not used:
	// malformed, over a limit, or not allowed (a removal of a fact it was
	// not shown, a fact about a person from a group chat).
	Ignored int `json:"ignored,omitempty"`
	// Synthesis is what a synthesis pass proposed and did (kind synthesis).
	Synthesis *SynthesisOutcome `json:"synthesis,omitempty"`
}

// SynthesisOutcome is what one synthesis pass proposed and what became of
// each change.
type SynthesisOutcome struct {
	Evidence int               `json:"evidence"` // queued exchanges the pass read
	Proposed int               `json:"proposed"`
	Applied  int               `json:"applied"`
	Rejected int               `json:"rejected"` // by the approving call
	Refused  int               `json:"refused"`  // by memd's rules: they touched a fact written on purpose
	Ignored  int               `json:"ignored"`  // malformed lines, or changes citing nothing they may cite
	Changes  []SynthesisChange `json:"changes,omitempty"`
}

// SynthesisChange is one change a synthesis pass proposed.
type SynthesisChange struct {
	Op       string   `json:"op"` // merge, rewrite or remove
	Facts    []string `json:"facts"`
	Text     string   `json:"text,omitempty"`
	Evidence []string `json:"evidence"`
	Verdict  string   `json:"verdict"` // approved, rejected or refused
	Reason   string   `json:"reason,omitempty"`
	Commit   string   `json:"commit,omitempty"`
}

// Learner is the service's door to automatic learning.
type Learner interface {
	// Learn accepts an exchange: it is stored durably before this returns,
	// and learned in order with the agent's other exchanges. EUNAVAILABLE
	// when learning is off.
	Learn(ctx context.Context, ex Exchange) (ExchangeStatus, error)
	// Exchanges lists the learner's work, optionally in one state.
	Exchanges(ctx context.Context, state string) ([]ExchangeStatus, error)
	// RetryExchange queues a failed exchange again; ENOTFOUND if unknown,
	// ECONFLICT if it has not failed.
	RetryExchange(ctx context.Context, id string) (ExchangeStatus, error)
	// Synthesize queues a synthesis pass over an agent's own shard now (or
	// returns the one queued); EUNAVAILABLE when synthesis is off.
	Synthesize(ctx context.Context, agent string) (ExchangeStatus, error)
}
