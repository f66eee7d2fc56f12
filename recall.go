package memd

import "context"

// Recall limits.
const (
	DefaultRecallK = 20
	MaxRecallK     = 50
	RecallBudget   = 4000 // characters of fact text in one answer
)

// Scopes are the shards one agent's view of memory reads in one chat: its
// own, a person's (direct chats only) and its projects. The rules of access
// resolve them; the service reads what they name.
type Scopes struct {
	Agent    ShardID   `json:"agent,omitzero"`
	User     ShardID   `json:"user,omitzero"`
	Projects []ShardID `json:"projects,omitempty"`
	// All is set for an admin's recall that names no agent: every shard.
	All []ShardID `json:"-"`
}

// Shards lists the scopes' shards: user, projects, then the agent's own.
func (s Scopes) Shards() []ShardID {
	if len(s.All) > 0 {
		return s.All
	}
	var out []ShardID
	if !s.User.IsZero() {
		out = append(out, s.User)
	}
	out = append(out, s.Projects...)
	if !s.Agent.IsZero() {
		out = append(out, s.Agent)
	}
	return out
}

// RecallQuery searches the memory an agent may read in its chat.
type RecallQuery struct {
	Q        string
	K        int      // 0 means DefaultRecallK
	Agent    string   // whose view; an agent's token implies its own
	User     string   // the person the agent is talking to
	Projects []string // only these projects (default: every project of the agent)
	At       string   // a commit or a date: search memory as it was then
	Scopes   Scopes   // resolved by the rules of access
}

// Hit is one fact recall found, with where it came from.
type Hit struct {
	Fact
	// Note, for a passage of a note, is the note's path under notes/; the
	// passage is Text, and Date the day the note last changed.
	Note           string   `json:"note,omitempty"`
	Score          float64  `json:"score"`
	Commit         string   `json:"commit,omitempty"`
	SourceMessages []string `json:"source_messages,omitempty"`
	SourceChat     string   `json:"source_chat,omitempty"`
}

// RecallResult is the hits, best first, and the shards searched.
type RecallResult struct {
	Hits     []Hit     `json:"hits"`
	Searched []ShardID `json:"searched"`
	At       string    `json:"at,omitempty"`
}

// ContextQuery asks for the memory section of an agent's prompt.
type ContextQuery struct {
	Agent    string
	User     string
	Projects []string // up to three, named by the caller
	At       string
	Scopes   Scopes // resolved by the rules of access
}

// ContextBlock is one scope's part of the memory section.
type ContextBlock struct {
	Shard       ShardID `json:"shard"`
	Title       string  `json:"title"`
	Profile     []Fact  `json:"profile"`
	ProfileLeft int     `json:"profile_left"` // lasting facts left on disk
	Recent      []Fact  `json:"recent"`
	RecentLeft  int     `json:"recent_left"` // dated facts left on disk
}

// MemoryContext is the memory section of a prompt, as Markdown and as data.
type MemoryContext struct {
	Markdown string         `json:"markdown"`
	Blocks   []ContextBlock `json:"blocks"`
}

// Reader is the read side of memory: recall and the prompt's memory section.
type Reader interface {
	// Recall ranks the facts of the scopes against a query.
	Recall(ctx context.Context, q RecallQuery) (RecallResult, error)
	// Context assembles the memory section of the agent's prompt.
	Context(ctx context.Context, q ContextQuery) (MemoryContext, error)
}
