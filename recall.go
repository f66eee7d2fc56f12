package memd

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

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
	// Skipped lists the shards asked for that the rules left out.
	Skipped []Skipped `json:"-"`
}

// Skipped is a shard a read asked for and the rules of access left out,
// with the rule and why.
type Skipped struct {
	Shard  ShardID `json:"shard"`
	Rule   string  `json:"rule"`
	Reason string  `json:"reason"`
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
	At       string   // a commit, a date or a stamp: search memory as it was then
	Explain  bool     // say why each hit ranked
	// IncludeProposed searches the proposals waiting for review too (see
	// Reviewer); recall reads main only otherwise.
	IncludeProposed bool
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
	// Explain, when the caller asked, says why the hit ranked.
	Explain *ScoreParts `json:"explain,omitempty"`
}

// ScoreParts are the parts of a hit's score; they add up to it (Total).
type ScoreParts struct {
	Terms       []TermScore `json:"terms,omitempty"`        // query words the fact holds, each with its part
	Substring   float64     `json:"substring,omitempty"`    // a query word found inside a word
	Phrase      float64     `json:"phrase,omitempty"`       // the query's words in a row
	Date        float64     `json:"date,omitempty"`         // near a date the query names
	NamedShard  float64     `json:"named_shard,omitempty"`  // in a shard the query names
	Context     float64     `json:"context,omitempty"`      // borrowed from facts near it in its conversation
	ContextFrom []Lender    `json:"context_from,omitempty"` // the facts it borrowed from
	ChatDay     float64     `json:"chat_day,omitempty"`     // its chat's day as a whole matches the query
	Tier        float64     `json:"tier,omitempty"`         // the tier's weight (episode up, note down)
	Semantic    float64     `json:"semantic,omitempty"`     // similarity of meaning, with an embeddings model
}

// TermScore is one matched term of the index (a stem, or a word sharing
// the query word's first letters) and its part of the score.
type TermScore struct {
	Term   string  `json:"term"`
	Weight float64 `json:"weight"`
}

// Lender is a fact whose score a hit borrowed from, and how far apart the
// two are in their conversation (1: the line next to it).
type Lender struct {
	Shard    ShardID `json:"shard"`
	ID       string  `json:"id"`
	Distance int     `json:"distance"`
	Amount   float64 `json:"amount"`
}

// Total adds the parts up.
func (p *ScoreParts) Total() float64 {
	t := p.Substring + p.Phrase + p.Date + p.NamedShard + p.Context + p.ChatDay + p.Tier + p.Semantic
	for _, ts := range p.Terms {
		t += ts.Weight
	}
	return t
}

// NamedPart is one part of a score, named for a person.
type NamedPart struct {
	Name  string
	Value float64
}

// Named lists the parts that count, largest first: each matched term, each
// fact context was borrowed from, and the others by name. They add up to
// Total.
func (p *ScoreParts) Named() []NamedPart {
	var out []NamedPart
	for _, t := range p.Terms {
		out = append(out, NamedPart{"term " + strconv.Quote(t.Term), t.Weight})
	}
	for _, x := range []NamedPart{{"substring", p.Substring}, {"phrase", p.Phrase}, {"date", p.Date}, {"named shard", p.NamedShard},
		{"chat day", p.ChatDay}, {"tier", p.Tier}, {"meaning", p.Semantic}} {
		if x.Value != 0 {
			out = append(out, x)
		}
	}
	for _, l := range p.ContextFrom {
		out = append(out, NamedPart{fmt.Sprintf("context from %s (%d away)", l.ID, l.Distance), l.Amount})
	}
	slices.SortStableFunc(out, func(a, b NamedPart) int { return cmp.Compare(math.Abs(b.Value), math.Abs(a.Value)) })
	return out
}

// String writes the parts on one line: "1.234 term \"lisbon\" + ...".
func (p *ScoreParts) String() string {
	var b strings.Builder
	for i, x := range p.Named() {
		if i > 0 {
			b.WriteString(" + ")
		}
		fmt.Fprintf(&b, "%.3f %s", x.Value, x.Name)
	}
	return b.String()
}

// Scale multiplies every part by f.
func (p *ScoreParts) Scale(f float64) {
	for i := range p.Terms {
		p.Terms[i].Weight *= f
	}
	for i := range p.ContextFrom {
		p.ContextFrom[i].Amount *= f
	}
	p.Substring *= f
	p.Phrase *= f
	p.Date *= f
	p.NamedShard *= f
	p.Context *= f
	p.ChatDay *= f
	p.Tier *= f
	p.Semantic *= f
}

// RecallResult is the hits, best first, the shards searched and the commit
// each was read at.
type RecallResult struct {
	Hits     []Hit     `json:"hits"`
	Searched []ShardID `json:"searched"`
	// Skipped names the shards asked for that were not searched, and why.
	Skipped []Skipped `json:"skipped,omitempty"`
	At      string    `json:"at,omitempty"`
	// ByWordsAlone says why recall did not search by meaning though an
	// embeddings endpoint is set: its vectors are still being computed,
	// or the endpoint failed.
	ByWordsAlone string `json:"by_words_alone,omitempty"`
	ReadAt
}

// NothingFound says that a recall found nothing, naming the shards it
// searched when they are few: a mistyped agent or project shows.
func (r RecallResult) NothingFound() string {
	if n := len(r.Searched); n == 0 || n > 5 {
		return fmt.Sprintf("nothing found in %d shards", n)
	}
	names := make([]string, len(r.Searched))
	for i, s := range r.Searched {
		names[i] = s.String()
	}
	return "nothing found in " + strings.Join(names, ", ")
}

// ReadAt names the commit each shard of an answer was read at (a shard
// with no commit yet is absent), and the same as one stamp naming every
// shard read, "none" for one without a commit: the answer is reproduced
// by asking again with at=<stamp>, and what changed since is asked for
// with since=<stamp>.
type ReadAt struct {
	Commits map[ShardID]string `json:"read_at"`
	Stamp   string             `json:"stamp"`
}

// stampNone stands in a stamp for a shard that had no commit.
const stampNone = "none"

// NewReadAt makes a ReadAt of the shards read and the commits they were
// read at.
func NewReadAt(commits map[ShardID]string, shards []ShardID) ReadAt {
	if commits == nil {
		commits = map[ShardID]string{}
	}
	var parts []string
	seen := make(map[ShardID]bool)
	for _, id := range shards {
		if seen[id] {
			continue
		}
		seen[id] = true
		c := commits[id]
		if c == "" {
			c = stampNone
		}
		parts = append(parts, id.String()+"@"+c)
	}
	slices.Sort(parts)
	return ReadAt{Commits: commits, Stamp: strings.Join(parts, ",")}
}

// ParseStamp reads a stamp: "<shard>@<commit>" pairs joined by commas, as
// ReadAt writes it; a shard that had no commit maps to "". ok is false for
// text that is not meant as a stamp (a date, a bare commit).
func ParseStamp(s string) (commits map[ShardID]string, ok bool, err error) {
	if !strings.Contains(s, "@") {
		return nil, false, nil
	}
	commits = make(map[ShardID]string)
	for _, part := range strings.Split(s, ",") {
		name, commit, found := strings.Cut(strings.TrimSpace(part), "@")
		commit = strings.ToLower(commit)
		id, perr := ParseShardID(name)
		if !found || perr != nil || commit != stampNone && !isHex(commit) {
			return nil, true, Errorf(EINVALID, "stamp %q: want <shard>@<commit> pairs joined by commas, as read_at's stamp", Shorten(s, 80))
		}
		if commit == stampNone {
			commit = ""
		}
		commits[id] = commit
	}
	return commits, true, nil
}

func isHex(s string) bool {
	return len(s) >= 4 && len(s) <= 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// ContextQuery asks for the memory section of an agent's prompt.
type ContextQuery struct {
	Agent    string
	User     string
	Projects []string // up to three, named by the caller
	At       string
	// Since, a stamp of an earlier answer: only what changed in these
	// scopes since then, as added and removed fact lines.
	Since string
	// IncludeProposed puts the proposals waiting for review in the section
	// too.
	IncludeProposed bool
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

// MemoryContext is the memory section of a prompt, as Markdown and as data,
// with the commit each scope was read at. Asked with Since, it is instead
// the facts added and removed since then, and Markdown lists them as "+"
// and "-" lines under their scopes' titles (empty when nothing changed).
type MemoryContext struct {
	Markdown string         `json:"markdown"`
	Blocks   []ContextBlock `json:"blocks,omitempty"`
	Added    []Fact         `json:"added,omitempty"`
	Removed  []Fact         `json:"removed,omitempty"`
	// Skipped names the shards asked for that the section leaves out, and
	// why.
	Skipped []Skipped `json:"skipped,omitempty"`
	ReadAt
}

// Reader is the read side of memory: recall and the prompt's memory section.
type Reader interface {
	// Recall ranks the facts of the scopes against a query.
	Recall(ctx context.Context, q RecallQuery) (RecallResult, error)
	// Context assembles the memory section of the agent's prompt.
	Context(ctx context.Context, q ContextQuery) (MemoryContext, error)
}
