package memd

import (
	"errors"
	"iter"
	"strings"
	"time"
)

// Feed event types.
const (
	EventCommit        = "commit"         // one commit in a shard
	EventReset         = "reset"          // the shard's branch moved to a commit not after the last one sent
	EventLearnerFailed = "learner_failed" // the learner gave up on an exchange of the shard's agent
	EventLearned       = "learned"        // the learner finished an exchange of the shard's agent
	EventProposed      = "proposed"       // a model's change waits for review on the shard's branch proposed
	EventRejected      = "rejected"       // a person rejected a proposal
)

// NoteChange is one note a commit changed: its revision before and after
// (hex sha256 of the text; empty when absent) and a unified diff.
type NoteChange struct {
	Path   string `json:"path"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Diff   string `json:"diff"`
}

// FeedEvent is what a feed subscriber receives for each commit in a shard
// it may read, in commit order per shard.
type FeedEvent struct {
	Type       string       `json:"type"`
	Shard      ShardID      `json:"shard"`
	Commit     string       `json:"commit"`
	Parent     string       `json:"parent,omitempty"`
	Author     Person       `json:"author"`
	Time       time.Time    `json:"time"`
	Subject    string       `json:"subject,omitempty"`
	Provenance Provenance   `json:"provenance"`
	Changes    []FactChange `json:"changes"`
	Notes      []NoteChange `json:"notes,omitempty"`
	// Replay is true for events read from history to catch up a
	// subscriber that resumed with since, false for live ones.
	Replay bool `json:"replay,omitempty"`
	// Exchange, Error and Learned describe learner events: the exchange,
	// why it failed, and the commits it made.
	Exchange string   `json:"exchange,omitempty"`
	Error    string   `json:"error,omitempty"`
	Learned  []string `json:"learned,omitempty"`
	// Encoded is the event as JSON, when the sender encoded it once for
	// all its subscribers.
	Encoded []byte `json:"-"`
}

// FeedQuery subscribes to memory diffs.
type FeedQuery struct {
	// Shards to follow; none means every shard the caller may read in its
	// chat, including shards created later.
	Shards []ShardID
	// Since resumes a shard after a commit: the commits after it are
	// replayed from history before live events.
	Since map[ShardID]string
}

// ParseFeedQuery makes a feed query of shard IDs and of resume points
// written "<shard>:<commit>", as the CLI and the HTTP API take them.
func ParseFeedQuery(shards, since []string) (FeedQuery, error) {
	q := FeedQuery{Since: map[ShardID]string{}}
	for _, v := range shards {
		id, err := ParseShardID(v)
		if err != nil {
			return q, err
		}
		q.Shards = append(q.Shards, id)
	}
	for _, v := range since {
		i := strings.LastIndexByte(v, ':')
		if i < 0 {
			return q, Errorf(EINVALID, "since %q: want <shard>:<commit>", v)
		}
		id, err := ParseShardID(v[:i])
		if err != nil {
			return q, err
		}
		if _, twice := q.Since[id]; twice {
			return q, Errorf(EINVALID, "since names shard %s twice: give one commit to resume it after", id)
		}
		q.Since[id] = v[i+1:]
	}
	return q, nil
}

// Following is what a subscription may follow, as the rules of access
// resolved it for its caller.
type Following struct {
	Wants func(ShardID) bool // the shards the caller may follow
	Agent string             // the agent following, whose removal ends the subscription ("" for the admin)
}

// Subscription is a running feed. Read Replay, then Events until Done.
// Replay's events are read from history as they are asked for; an error
// ends it.
type Subscription interface {
	Replay() iter.Seq2[FeedEvent, error]
	Events() <-chan FeedEvent
	Done() <-chan struct{}
	Err() error // why it ended
	Close()
}

// ErrOverrun is why a subscriber that fell behind its buffer is cut off.
var ErrOverrun = errors.New("fell too far behind; reconnect with since=<shard>:<last commit received> for each shard")

// CloseOverrun is the websocket close code of a subscriber cut off for
// falling behind; it resumes with since.
const CloseOverrun = 4001
