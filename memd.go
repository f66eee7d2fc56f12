// Package memd holds the domain of the memd memory daemon: facts, shards,
// provenance, the service every surface (HTTP, MCP, CLI, web UI) exposes, and
// the error codes those surfaces share. Implementations live in subpackages:
// gitstore keeps shards as git repositories, provenance reads and undoes
// their history, daemon serves them, and client speaks to a running daemon.
package memd

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Version is the version of memd, set at build time with -ldflags.
var Version = "dev"

// ChatKind is the kind of chat a call is made from, as the caller declares it.
type ChatKind string

const (
	ChatDirect  ChatKind = "direct"  // one person and one agent
	ChatGroup   ChatKind = "group"   // several people or agents
	ChatRoutine ChatKind = "routine" // scheduled work, no person present
	ChatAPI     ChatKind = "api"     // a direct API call outside any chat
)

// ParseChatKind checks a chat kind; "" is returned as "" (the caller declared
// none, which the rules of access read as a group chat).
func ParseChatKind(s string) (ChatKind, error) {
	switch ChatKind(s) {
	case "", ChatDirect, ChatGroup, ChatRoutine, ChatAPI:
		return ChatKind(s), nil
	}
	return "", Errorf(EINVALID, "chat_kind %q: want direct, group, routine or api", Shorten(s, 40))
}

// ChatKindFrom is one declaration of a call's chat kind, and where it was
// made ("the query", "the source"), for the error that two disagree.
type ChatKindFrom struct {
	Where string
	Kind  ChatKind
}

// AgreedChatKind returns the chat kind several declarations of one call
// agree on (the connection's, the query's, the source's): one that is empty
// says nothing, and one that names no kind, or two that differ, are an
// EINVALID error naming where they were made.
func AgreedChatKind(declared ...ChatKindFrom) (ChatKind, error) {
	var agreed ChatKindFrom
	for _, d := range declared {
		if _, err := ParseChatKind(string(d.Kind)); err != nil {
			return "", Errorf(EINVALID, "%s in %s", ErrorMessage(err), d.Where)
		}
		switch {
		case d.Kind == "":
		case agreed.Kind == "":
			agreed = d
		case d.Kind != agreed.Kind:
			return "", Errorf(EINVALID, "chat_kind %q in %s and %q in %s disagree: declare one chat kind per call", agreed.Kind, agreed.Where, d.Kind, d.Where)
		}
	}
	return agreed.Kind, nil
}

// Source names the chat message(s) a change came from.
type Source struct {
	Messages []string `json:"messages,omitempty"`
	Chat     string   `json:"chat,omitempty"`
	ChatKind ChatKind `json:"chat_kind,omitempty"`
	// Excerpt is what was said, quoted by the agent (at most 2,000
	// characters), kept under the messages named so a reviewer reads it.
	// It is not written into the commit.
	Excerpt string `json:"excerpt,omitempty"`
}

// IsZero reports whether the source names nothing.
func (s Source) IsZero() bool {
	return len(s.Messages) == 0 && s.Chat == "" && s.ChatKind == "" && s.Excerpt == ""
}

// How a change was learned, as recorded in the Learned-By trailer.
const (
	LearnedExplicit  = "explicit"  // an agent called remember or forget
	LearnedLearner   = "learner"   // the learner extracted it from an exchange
	LearnedEpisode   = "episode"   // the learner summarised recent turns
	LearnedSynthesis = "synthesis" // a synthesis pass rewrote it
	LearnedImport    = "import"    // memd import brought it in
	LearnedPerson    = "person"    // a person: an admin through memd, or a git commit memd did not make
)

// learnedBys are the Learned-By values memd writes.
var learnedBys = []string{LearnedExplicit, LearnedLearner, LearnedEpisode, LearnedSynthesis, LearnedImport, LearnedPerson}

// CheckLearnedBy refuses a Learned-By filter no commit memd writes could
// match: an empty answer would hide the mistake.
func CheckLearnedBy(v string) error { return checkFilter("learned_by", v, learnedBys) }

// checkFilter refuses a filter's value v, when given, that is none of
// values.
func checkFilter(name, v string, values []string) error {
	if v != "" && !slices.Contains(values, v) {
		return Errorf(EINVALID, "%s must be one of %s, not %q", name, strings.Join(values, ", "), v)
	}
	return nil
}

// Memory operations, as recorded in the Memory-Op trailer.
const (
	OpRemember = "remember"
	OpForget   = "forget"
	OpEdit     = "edit" // a fact's text rewritten where it stands; Replaces names the old fact
	OpNoteEdit = "note-edit"
	OpRevert   = "revert"
	OpImport   = "import"
	OpMerge    = "merge"  // memd integrated commits from a remote
	OpReject   = "reject" // a record of a proposal a person rejected (refs/memd/rejected)
)

// ops are the Memory-Op values memd writes.
var ops = []string{OpRemember, OpForget, OpEdit, OpNoteEdit, OpRevert, OpImport, OpMerge, OpReject}

// Ops lists the Memory-Op values memd writes.
func Ops() []string { return slices.Clone(ops) }

// CheckOp refuses a Memory-Op filter no commit memd writes could match.
func CheckOp(v string) error { return checkFilter("op", v, ops) }

// Provenance is what a commit's trailers say about where a change came from.
type Provenance struct {
	Op             string   `json:"op,omitempty"`
	FactIDs        []string `json:"fact_ids,omitempty"`
	Tier           Tier     `json:"tier,omitempty"`
	SourceMessages []string `json:"source_messages,omitempty"`
	SourceChat     string   `json:"source_chat,omitempty"`
	ChatKind       ChatKind `json:"chat_kind,omitempty"`
	LearnedBy      string   `json:"learned_by"`
	Model          string   `json:"model,omitempty"`
	Prompt         string   `json:"prompt,omitempty"` // short hash of the prompt a model wrote it with
	Reverts        string   `json:"reverts,omitempty"`
	Replaces       string   `json:"replaces,omitempty"` // on an edit, the fact it rewrote
	// Evidence names what a synthesis change rests on: message IDs of the
	// exchanges it was shown, or IDs of the facts it merges.
	Evidence   []string `json:"evidence,omitempty"`
	ApprovedBy string   `json:"approved_by,omitempty"` // the model whose call approved a synthesis change
	ReviewedBy string   `json:"reviewed_by,omitempty"` // the person who accepted a proposal into main
	Rejects    string   `json:"rejects,omitempty"`     // on a record of a rejected proposal, its commit
	// On a merge of a remote's or a push's commits: the commit merged, and
	// the files it could not settle (kept with conflict markers, or with
	// this side's version).
	Merged    string   `json:"merged,omitempty"`
	Conflicts []string `json:"conflicts,omitempty"`
}

// Person is a commit's author or committer.
type Person struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// FactChange is one fact added ("+") or removed ("-") by a commit.
type FactChange struct {
	Op   string `json:"op"`
	Fact Fact   `json:"fact"`
}

// Commit is one commit of a shard with its provenance and fact-level diff.
type Commit struct {
	Shard      ShardID      `json:"shard"`
	Hash       string       `json:"commit"`
	Parents    []string     `json:"parents"`
	Author     Person       `json:"author"`
	Time       time.Time    `json:"time"`
	Subject    string       `json:"subject"`
	Provenance Provenance   `json:"provenance"`
	Changes    []FactChange `json:"changes"`
	Notes      []string     `json:"notes,omitempty"` // note paths the commit changed
}

// RememberRequest asks to remember one fact.
type RememberRequest struct {
	Shard  ShardID `json:"shard"`
	Text   string  `json:"text"`
	Tier   Tier    `json:"tier,omitempty"`
	Date   Date    `json:"date,omitzero"`
	Source Source  `json:"source,omitzero"`
	// Create makes an agent's shard though no agent of that name is
	// registered; otherwise such a write is ENOTFOUND, so a typo in a
	// name makes no new shard.
	Create bool `json:"create,omitempty"`
}

// RememberResult is the fact as it stands after remember. Existing is true
// when the shard already held the same text, and then no commit was made.
type RememberResult struct {
	Fact     Fact   `json:"fact"`
	Commit   string `json:"commit,omitempty"`
	Existing bool   `json:"existing"`
}

// ForgetRequest asks to forget one fact by ID.
type ForgetRequest struct {
	Shard  ShardID `json:"shard"`
	ID     string  `json:"id"`
	Source Source  `json:"source,omitzero"`
}

// ForgetResult names the forgotten fact and the commit that removed it.
type ForgetResult struct {
	Fact   Fact   `json:"fact"`
	Commit string `json:"commit"`
}

// EditFactRequest rewrites a fact's text where it stands, keeping its date
// and tier: one commit that removes the old fact and adds the new one.
type EditFactRequest struct {
	Shard  ShardID `json:"shard"`
	ID     string  `json:"id"`
	Text   string  `json:"text"`
	Source Source  `json:"source,omitzero"`
}

// EditFactResult is the fact as rewritten, the one it replaced, and the
// commit (empty when the text did not change).
type EditFactResult struct {
	Fact     Fact   `json:"fact"`
	Replaced Fact   `json:"replaced"`
	Commit   string `json:"commit,omitempty"`
}

// FactsQuery lists a shard's facts, optionally filtered and as of a past
// commit or date.
type FactsQuery struct {
	Shard ShardID
	Tier  Tier
	From  Date
	To    Date
	At    string // a commit hash (or prefix) or a date, YYYY-MM-DD
	// Text keeps the facts whose text holds it (any case) or whose ID
	// starts with it.
	Text string
	// LearnedBy, Model and Agent keep the facts whose line was written by
	// a commit with that Learned-By, Model, or author (at HEAD only).
	LearnedBy string
	Model     string
	Agent     string
	// Origins adds to each fact the commit that wrote its line (at HEAD).
	Origins bool
	// Sort is the order: "" (file order), "newest" (by date, then by the
	// time its line was written), "oldest", "text" or "tier".
	Sort string
	// Offset and Limit page the sorted list; Limit 0 means all.
	Offset int
	Limit  int
}

// Fact sorts FactsQuery.Sort names.
const (
	SortFile   = ""
	SortNewest = "newest"
	SortOldest = "oldest"
	SortText   = "text"
	SortTier   = "tier"
)

// FactList is a shard's facts and the commit they were read from. Total is
// how many matched before paging.
type FactList struct {
	Shard  ShardID `json:"shard"`
	Commit string  `json:"commit"`
	Total  int     `json:"total"`
	Facts  []Fact  `json:"facts"`
}

// Origin is what wrote a fact's line as it stands: the commit git blame
// names, and what its trailers say.
type Origin struct {
	Commit    string    `json:"commit"`
	Time      time.Time `json:"time"`
	Author    string    `json:"author"`
	Op        string    `json:"op,omitempty"`
	LearnedBy string    `json:"learned_by"`
	Model     string    `json:"model,omitempty"`
	Prompt    string    `json:"prompt,omitempty"`
}

// LogQuery lists a shard's commits, newest first.
type LogQuery struct {
	Shard   ShardID
	Message string // only commits citing this source message
	Agent   string // only commits authored by this agent or person
	Op      string // only commits with this Memory-Op
	Limit   int    // at most this many; 0 means 50
	Offset  int    // skip this many matching commits first (a later page)
}

// Trace is the provenance of one fact: the commit that introduced it as it
// stands (what git blame names), every commit that touched it since, and,
// when it was edited, every earlier version back to where it was first
// learned.
type Trace struct {
	Fact       Fact     `json:"fact"`
	Present    bool     `json:"present"` // the fact is in the shard's HEAD
	Introduced *Commit  `json:"introduced,omitempty"`
	History    []Commit `json:"history"` // newest first, down to the first version's introduction
	// Chain is the commit that introduced each version of the fact, newest
	// first: edits, each naming the fact it replaced, then the commit that
	// first learned it. One commit for a fact never edited.
	Chain []Commit `json:"chain"`
	// Messages quotes the chat messages the chain cites, where memd keeps
	// their text.
	Messages []Quote `json:"messages,omitempty"`
}

// LearningQuery asks how the facts learned in a period fared: those whose
// learning commit falls between From and To (UTC days, inclusive; zero is
// unbounded), optionally of one agent, model or prompt.
type LearningQuery struct {
	From   Date
	To     Date
	Agent  string
	Model  string
	Prompt string
}

// LearningStats is, per model, prompt and agent, the facts learned and how
// many of them people undid within 7 and 30 days. It is computed from
// commit trailers alone, so plain git gives the same figures.
type LearningStats struct {
	From Date          `json:"from,omitzero"`
	To   Date          `json:"to,omitzero"`
	Rows []LearningRow `json:"rows"`
}

// LearningRow is one model, prompt and agent.
type LearningRow struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	// PromptName is what this memd calls the prompt, when it is one of its own.
	PromptName string `json:"prompt_name,omitempty"`
	Agent      string `json:"agent"`
	Learned    int    `json:"learned"`
	Within7    Undone `json:"within_7_days"`
	Within30   Undone `json:"within_30_days"`
	// Facts are the row's facts that were undone, at any time, newest
	// undoing first.
	Facts []UndoneFact `json:"undone"`
}

// Undone counts the learned facts undone within a time: reverted (by
// anyone), forgotten or edited by a person; Rate is Total over Learned.
type Undone struct {
	Reverted  int     `json:"reverted"`
	Forgotten int     `json:"forgotten"`
	Edited    int     `json:"edited"`
	Rejected  int     `json:"rejected"`
	Total     int     `json:"total"`
	Rate      float64 `json:"rate"`
}

// How a learned fact was undone.
const (
	UndoneReverted  = "reverted"
	UndoneForgotten = "forgotten"
	UndoneEdited    = "edited"
	UndoneRejected  = "rejected" // a proposal a person rejected in review
)

// UndoneFact is a learned fact that was undone, and how.
type UndoneFact struct {
	Shard     ShardID   `json:"shard"`
	Fact      string    `json:"fact"`    // its ID
	Subject   string    `json:"subject"` // the learning commit's subject
	Learned   string    `json:"learned"` // the learning commit
	LearnedAt time.Time `json:"learned_at"`
	How       string    `json:"how"`    // reverted, forgotten or edited
	Commit    string    `json:"commit"` // the commit that undid it
	By        string    `json:"by"`     // that commit's author
	At        time.Time `json:"at"`
}

// GrowthQuery asks how memory grew: one shard, or every shard the caller
// may read.
type GrowthQuery struct {
	Shard ShardID
}

// Growth is how memory grew, day by day: ByCommit by the time of the
// commits that added and removed facts, ByDate by the dates of the facts
// memory holds now. Each day's Total is the running count.
type Growth struct {
	Shards   []ShardID   `json:"shards"`
	Facts    int         `json:"facts"`
	ByCommit []GrowthDay `json:"by_commit"`
	ByDate   []GrowthDay `json:"by_date"`
}

// GrowthDay is one day's change; days without one are left out.
type GrowthDay struct {
	Day     Date `json:"day"`
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	Total   int  `json:"total"`
}

// PurgeRequest names a message whose kept text to drop, with the rest of
// its exchange: in one chat, or in every chat that has a message with
// that ID.
type PurgeRequest struct {
	Message string `json:"message"`
	Chat    string `json:"chat,omitempty"`
}

// PurgeResult names the messages whose kept text a purge dropped.
type PurgeResult struct {
	Messages []string `json:"messages"`
}

// RevertRequest undoes one commit of a shard, or every commit that cites a
// source message in every shard the caller may write.
type RevertRequest struct {
	Shard   ShardID `json:"shard,omitzero"`
	Commit  string  `json:"commit,omitempty"`
	Message string  `json:"message,omitempty"`
	// Messages reverts everything learned from any of these messages (an
	// exchange's), each commit once.
	Messages []string `json:"messages,omitempty"`
	// Chat, with Message or Messages, keeps to the commits learned in this
	// chat: message IDs are the caller's, and two chats may reuse one.
	Chat string `json:"chat,omitempty"`
	// Shards limits a revert by message to these shards; empty means every
	// shard the caller may write.
	Shards []ShardID `json:"shards,omitempty"`
	// DryRun lists what the revert would change, and commits nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Confirmed, with Message or Messages, lists the commits a dry run
	// said it would revert, as the caller confirmed them: the revert is
	// refused (conflict) if it would now revert others, a commit citing
	// the messages made since the preview among them.
	Confirmed []string `json:"confirmed,omitempty"`
}

// Revert is one commit undone.
type Revert struct {
	Shard    ShardID      `json:"shard"`
	Reverted string       `json:"reverted"`         // the commit undone
	Commit   string       `json:"commit,omitempty"` // the revert commit; empty if nothing was left to undo
	Changes  []FactChange `json:"changes"`
	// Notes are the notes the revert puts back as they were before the
	// commit (paths under notes/), keeping what changed in them since.
	Notes []string `json:"notes,omitempty"`
	// Refused, in a revert by message, says why this commit was left as
	// it is while the others were undone: a note changed since in the
	// same lines, or a fact that can no longer be written as it was.
	Refused string `json:"refused,omitempty"`
}

// RevertResult lists the commits undone, newest first.
type RevertResult struct {
	Reverts []Revert `json:"reverts"`
	// LearningDropped counts what the learner still held of reverted
	// messages and dropped (exchanges waiting to be learned, episode
	// turns, synthesis evidence), so that nothing is learned of them again.
	LearningDropped int `json:"learning_dropped,omitempty"`
	// Rejected lists the proposals waiting for review that cited the
	// messages, rejected so that no accept brings them onto main.
	Rejected []Reviewed `json:"rejected_proposals,omitempty"`
}

// ShardInfo describes a shard the caller may read.
type ShardInfo struct {
	Shard      ShardID   `json:"shard"`
	Facts      int       `json:"facts"`
	Head       string    `json:"head"`
	LastChange time.Time `json:"last_change,omitzero"`
}

// Agent is a registered agent and the projects it is a member of.
type Agent struct {
	Name     string    `json:"name"`
	Projects []string  `json:"projects"`
	Created  time.Time `json:"created"`
	// Review puts what models learn for the agent up for review, on the
	// branch proposed of each shard, instead of into main.
	Review bool `json:"review,omitempty"`
}

// NewAgent is an agent just added, with its token (shown only this once).
type NewAgent struct {
	Agent
	Token string `json:"token"`
}

// MeaningStatus is how far the vectors of recall by meaning are.
type MeaningStatus struct {
	Model   string `json:"model"`
	Vectors int    `json:"vectors"` // fact texts embedded
	Pending int    `json:"pending"` // facts without a vector at the last look, about
	// Refused counts facts whose text the endpoint would not embed, alone
	// (a content filter, a text too long); found by words, tried again at
	// the next start.
	Refused int `json:"refused"`
	// Ready: at most one fact in twenty was without a vector at the last
	// look; until then recall answers by words alone and says so.
	Ready bool `json:"ready"`
	// Reading: the vectors are being read from their file at a start;
	// Unreadable: they could not be, and recall stays by words until
	// memd restarts (LastError says why).
	Reading    bool   `json:"reading,omitempty"`
	Unreadable bool   `json:"unreadable,omitempty"`
	LastError  string `json:"last_error,omitempty"`
	Failures   int    `json:"failures"` // embedding requests failed since the start
}

// Status describes the running service.
type Status struct {
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	DataDir string    `json:"data_dir,omitempty"`
	// Shards and Facts count, for an agent, the shards it may read in the
	// chat it declares; Agents counts agents for the admin, 0 for an agent.
	Shards   int           `json:"shards"`
	Facts    int           `json:"facts"`
	Agents   int           `json:"agents"`
	Caller   string        `json:"caller"`
	Learning LearnerStatus `json:"learning"`
	// Meaning is how far recall by meaning is; nil without an embeddings
	// endpoint (recall by words alone).
	Meaning *MeaningStatus `json:"meaning,omitempty"`
	// Indexing counts the shards the index is still reading in the
	// background after a start (Facts counts those it has read); recall
	// reads a caller's own shards first.
	Indexing int `json:"indexing,omitempty"`
	// Attributing counts the shards whose facts are being attributed to
	// their commits in the background, after a large shard was read from
	// HEAD: until then their hits name no commit.
	Attributing int `json:"attributing,omitempty"`
	// Remotes counts, for the admin, the shards with a git remote and
	// those whose last fetch or push failed.
	Remotes      int `json:"remotes,omitempty"`
	RemoteErrors int `json:"remote_errors,omitempty"`
	// Review counts proposals, when any agent is or was in review mode.
	Review *ReviewStatus `json:"review,omitempty"`
}

// LearnerStatus says whether automatic learning is on and how it is doing.
type LearnerStatus struct {
	Enabled bool   `json:"enabled"`
	Reason  string `json:"reason,omitempty"`
	Model   string `json:"model,omitempty"`
	Pending int    `json:"pending"`
	Failed  int    `json:"failed"`
	// QuietUntil is when the model, busy, asked to be called again
	// (Retry-After on a 429 or 503), when that is later than now: no
	// model call is made before.
	QuietUntil time.Time `json:"quiet_until,omitzero"`
	// Synthesis is set when synthesis passes are on.
	Synthesis *SynthesisStatus `json:"synthesis,omitempty"`
}

// SynthesisStatus counts what synthesis passes did, since the data
// directory was created.
type SynthesisStatus struct {
	Approver string `json:"approver"` // the model of the approving call
	Every    int    `json:"every"`    // learned exchanges that start a pass; 0: only when asked
	Applied  int    `json:"applied"`
	Refused  int    `json:"refused"`  // touched a fact written on purpose
	Rejected int    `json:"rejected"` // by the approving model
}

// RemoteStatus is how a shard's remote is doing.
type RemoteStatus struct {
	Shard  ShardID `json:"shard"`
	URL    string  `json:"url"` // without credentials
	Head   string  `json:"head,omitempty"`
	Remote string  `json:"remote,omitempty"` // main on the remote, as last seen
	// Pending is true while local commits wait to be pushed.
	Pending   bool      `json:"pending"`
	PushedAt  time.Time `json:"pushed_at,omitzero"`
	FetchedAt time.Time `json:"fetched_at,omitzero"`
	// Integrated is what the last fetch did: up-to-date, fast-forward or
	// merge; Conflicts lists the files that merge could not settle (kept
	// with conflict markers, or with this side's version).
	Integrated string    `json:"integrated,omitempty"`
	Conflicts  []string  `json:"conflicts,omitempty"`
	Error      string    `json:"error,omitempty"`
	ErrorAt    time.Time `json:"error_at,omitzero"`
}

// Service is memd's domain API. Every surface calls it; none holds memory
// logic of its own. The caller is taken from the context (see NewContext).
// Methods return *Error values with the codes in errors.go.
type Service interface {
	Reader
	Learner
	Reviewer
	Notes
	// Remember adds a fact; the same text again returns the existing fact.
	Remember(ctx context.Context, req RememberRequest) (RememberResult, error)
	// Forget removes a fact; ENOTFOUND when the shard does not hold it.
	Forget(ctx context.Context, req ForgetRequest) (ForgetResult, error)
	// EditFact rewrites a fact's text in place; ENOTFOUND when the shard
	// does not hold it, ECONFLICT when it holds the new text already.
	EditFact(ctx context.Context, req EditFactRequest) (EditFactResult, error)
	// Facts lists a shard's facts; ENOTFOUND for an unknown shard or commit.
	Facts(ctx context.Context, q FactsQuery) (FactList, error)
	// Trace returns the provenance of a fact; ENOTFOUND if it never existed.
	Trace(ctx context.Context, shard ShardID, id string) (Trace, error)
	// Log lists a shard's commits with provenance and fact diffs.
	Log(ctx context.Context, q LogQuery) ([]Commit, error)
	// Revert undoes a commit, or everything learned from a message.
	Revert(ctx context.Context, req RevertRequest) (RevertResult, error)
	// LearningStats says, per model, prompt and agent, how many learned
	// facts were later undone (admins only).
	LearningStats(ctx context.Context, q LearningQuery) (LearningStats, error)
	// Growth says how memory grew, by commit time and by fact date.
	Growth(ctx context.Context, q GrowthQuery) (Growth, error)
	// PurgeMessage drops the kept text of a message and the rest of its
	// exchange (admins only); ENOTFOUND when none is kept.
	PurgeMessage(ctx context.Context, req PurgeRequest) (PurgeResult, error)
	// Shards lists the shards the caller may read.
	Shards(ctx context.Context) ([]ShardInfo, error)
	// AddAgent registers an agent and returns its token; ECONFLICT if it exists.
	AddAgent(ctx context.Context, name string, projects []string) (NewAgent, error)
	// Agents lists registered agents.
	Agents(ctx context.Context) ([]Agent, error)
	// RemoveAgent revokes an agent's token; its shard stays.
	RemoveAgent(ctx context.Context, name string) error
	// Status describes the service.
	Status(ctx context.Context) (Status, error)
	// Remotes describes the remote of each shard that has one.
	Remotes(ctx context.Context) ([]RemoteStatus, error)
	// SyncRemotes fetches, integrates and pushes shards now: those named,
	// or every shard with a remote.
	SyncRemotes(ctx context.Context, shards []ShardID) ([]RemoteStatus, error)
	// Subscribe follows the memory diffs of shards; ENOTFOUND for a since
	// commit that is not on its shard's branch.
	Subscribe(ctx context.Context, q FeedQuery) (Subscription, error)
	// Git opens a shard for a git client, to read it (clone, fetch) or,
	// with push, to push to it. git declares no chat: a git caller may do
	// what it may do outside any chat, and user memory is the admin's.
	Git(ctx context.Context, shard ShardID, push bool) (GitRepo, error)
}

// ScopedReader is what the rules of access call once they have resolved
// what a caller may read: recall, the memory section and the feed, over
// the shards they name. The Service's own Recall, Context and Subscribe
// refuse when called without the rules in front of them: the rules are
// what says which shards those read.
type ScopedReader interface {
	RecallIn(ctx context.Context, scopes Scopes, q RecallQuery) (RecallResult, error)
	ContextIn(ctx context.Context, scopes Scopes, q ContextQuery) (MemoryContext, error)
	SubscribeAs(ctx context.Context, f Following, q FeedQuery) (Subscription, error)
	StatusFor(ctx context.Context, v Viewer) (Status, error)
}

// Viewer is an agent a status is for: it counts the shards the agent may
// read and the agent's own exchanges, and leaves out what only the admin
// sees (the data directory, agents, remotes, proposals, synthesis).
type Viewer struct {
	Reads func(ShardID) bool
	Agent string
}

// GitRepo is a shard opened for a git client by Service.Git.
type GitRepo struct {
	Shard ShardID
	// Caller names who reads or pushes, as memd's merge messages say it.
	Caller string
	// Open returns the store's handle on the shard, for the git endpoint
	// alone: ENOTFOUND when there is none, unless create.
	Open func(create bool) (any, error)
}
