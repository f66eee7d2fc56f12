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
	Kind     string    `json:"kind"` // "exchange" or "episode"
	Agent    string    `json:"agent"`
	State    string    `json:"state"`
	Attempts int       `json:"attempts"`
	Error    string    `json:"error,omitempty"`
	Reason   string    `json:"reason,omitempty"` // why it was skipped
	Accepted time.Time `json:"accepted"`
	Commits  []string  `json:"commits,omitempty"`
	// Ignored counts the lines of the model's answer that were not used:
	// malformed, over a limit, or not allowed (a removal of a fact it was
	// not shown, a fact about a person from a group chat).
	Ignored int `json:"ignored,omitempty"`
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
}
