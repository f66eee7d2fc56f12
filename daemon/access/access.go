// Package access enforces who may do what (README, "Who may do what, and
// the trust model") as a wrapper around a memd.Service: every call is
// checked against the caller in its context before it reaches the service,
// and refusals name the rule.
//
// The rules: an agent reads and writes its own shard; user memory only in
// a direct chat; a project's memory only as a member of the project. Admins
// may read and write everything, revert anything and manage agents. The
// chat kind is what the caller declares; none declared reads as a group chat.
package access

import (
	"context"
	"slices"

	"github.com/memd/memd"
)

// Names of the rules, as refusals report them.
const (
	RuleOwnShard      = "agent-own-shard"
	RuleDirectChat    = "user-memory-direct-chat"
	RuleProjectMember = "project-member"
	RuleAdminOnly     = "admin-only"
)

// Rules decide access for a caller.
type Rules struct {
	// Member reports whether an agent is a member of a project.
	Member func(agent, project string) bool
	// Projects lists the projects an agent is a member of.
	Projects func(agent string) []string
}

// maxContextProjects is how many project memories one prompt holds.
const maxContextProjects = 3

// Scopes resolves which shards an agent's view reads in the caller's chat:
// its own, the user's only in a direct chat (a group chat never sees user
// memory), and its projects — those named, which it must be a member of, or
// for recall every project it belongs to. An agent sees only its own view;
// an admin names the agent, or for recall none, to search every shard.
func (r Rules) Scopes(c memd.Caller, agent, user string, projects []string, forContext bool, all func() ([]memd.ShardInfo, error)) (memd.Scopes, error) {
	var s memd.Scopes
	switch {
	case !c.Admin && agent != "" && agent != c.Agent:
		return s, memd.Forbidden(RuleOwnShard, "agent %s may not read the memory of agent %s", c.Agent, agent)
	case !c.Admin:
		agent = c.Agent
	case agent == "" && forContext:
		return s, memd.Errorf(memd.EINVALID, "name the agent whose memory section to build (agent=... in the API, --agent in the CLI)")
	case agent == "":
		infos, err := all()
		if err != nil {
			return s, err
		}
		for _, i := range infos {
			s.All = append(s.All, i.Shard)
		}
		return s, nil
	}
	if err := memd.ValidateName(agent); err != nil {
		return s, memd.Errorf(memd.EINVALID, "agent: %s", memd.ErrorMessage(err))
	}
	s.Agent = memd.AgentShard(agent)
	if user != "" {
		if err := memd.ValidateName(user); err != nil {
			return s, memd.Errorf(memd.EINVALID, "user: %s", memd.ErrorMessage(err))
		}
		if c.Direct() {
			s.User = memd.UserShard(user)
		} else {
			s.Skipped = append(s.Skipped, memd.Skipped{Shard: memd.UserShard(user), Rule: RuleDirectChat,
				Reason: "a person's memory is read only in a direct chat with them; declare chat_kind=direct"})
		}
	}
	projects = distinct(projects) // a project named again is given once
	if forContext && len(projects) > maxContextProjects {
		return s, memd.Errorf(memd.EINVALID, "at most %d projects in a memory section, got %d", maxContextProjects, len(projects))
	}
	if len(projects) == 0 && !forContext && r.Projects != nil {
		projects = r.Projects(agent)
	}
	for _, p := range projects {
		if err := memd.ValidateName(p); err != nil {
			return s, memd.Errorf(memd.EINVALID, "project: %s", memd.ErrorMessage(err))
		}
		if !c.Admin && (r.Member == nil || !r.Member(agent, p)) {
			return s, memd.Forbidden(RuleProjectMember, "agent %s may not read project/%s: it is not a member of project %s", agent, p, p)
		}
		s.Projects = append(s.Projects, memd.ProjectShard(p))
	}
	return s, nil
}

// distinct returns names without repeats, in the order first named.
func distinct(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Check returns nil if the caller may read and write a shard (the rules
// are the same for both), or an EFORBIDDEN error naming the rule.
func (r Rules) Check(c memd.Caller, verb string, s memd.ShardID) error {
	if c.Admin {
		return nil
	}
	switch s.Kind {
	case memd.KindAgent:
		if s.Name == c.Agent {
			return nil
		}
		return memd.Forbidden(RuleOwnShard, "agent %s may not %s %s: an agent reads and writes only its own agent shard", c.Agent, verb, s)
	case memd.KindUser:
		if c.Direct() {
			return nil
		}
		kind := string(c.ChatKind)
		if kind == "" {
			kind = "none declared, read as group"
		}
		return memd.Forbidden(RuleDirectChat, "agent %s may not %s %s in this chat (chat_kind: %s): user memory is read and written only in direct chats", c.Agent, verb, s, kind)
	case memd.KindProject:
		if r.Member != nil && r.Member(c.Agent, s.Name) {
			return nil
		}
		return memd.Forbidden(RuleProjectMember, "agent %s may not %s %s: it is not a member of project %s", c.Agent, verb, s, s.Name)
	}
	return memd.Errorf(memd.EINVALID, "unknown shard kind %q", s.Kind)
}

// Guard returns a service that checks every call against the rules before
// passing it to inner.
func Guard(inner Inner, r Rules) memd.Service {
	return &guard{inner: inner, rules: r}
}

// Inner is the service the guard stands in front of: it reads recall, the
// memory section and the feed from the scopes the guard resolves.
type Inner interface {
	memd.Service
	memd.ScopedReader
}

type guard struct {
	inner Inner
	rules Rules
}

func caller(ctx context.Context) (memd.Caller, error) {
	c, ok := memd.CallerFrom(ctx)
	if !ok || (!c.Admin && c.Agent == "") {
		return memd.Caller{}, memd.Errorf(memd.EUNAUTHORIZED, "no caller")
	}
	return c, nil
}

// declare merges the chat kind a write's source names with the one the
// call declared, and records it on both.
func declare(ctx context.Context, src *memd.Source) (context.Context, memd.Caller, error) {
	c, err := caller(ctx)
	if err != nil {
		return ctx, c, err
	}
	if c.ChatKind, err = memd.AgreedChatKind(memd.ChatKindFrom{Where: "the query", Kind: c.ChatKind}, memd.ChatKindFrom{Where: "the source", Kind: src.ChatKind}); err != nil {
		return ctx, c, err
	}
	src.ChatKind = c.ChatKind
	return memd.NewContext(ctx, c), c, nil
}

func (g *guard) Remember(ctx context.Context, req memd.RememberRequest) (memd.RememberResult, error) {
	ctx, err := g.write(ctx, req.Shard, &req.Source)
	if err != nil {
		return memd.RememberResult{}, err
	}
	return g.inner.Remember(ctx, req)
}

func (g *guard) Forget(ctx context.Context, req memd.ForgetRequest) (memd.ForgetResult, error) {
	ctx, err := g.write(ctx, req.Shard, &req.Source)
	if err != nil {
		return memd.ForgetResult{}, err
	}
	return g.inner.Forget(ctx, req)
}

func (g *guard) EditFact(ctx context.Context, req memd.EditFactRequest) (memd.EditFactResult, error) {
	ctx, err := g.write(ctx, req.Shard, &req.Source)
	if err != nil {
		return memd.EditFactResult{}, err
	}
	return g.inner.EditFact(ctx, req)
}

func (g *guard) read(ctx context.Context, s memd.ShardID) error {
	c, err := caller(ctx)
	if err != nil {
		return err
	}
	return g.rules.Check(c, "read", s)
}

func (g *guard) Facts(ctx context.Context, q memd.FactsQuery) (memd.FactList, error) {
	if err := g.read(ctx, q.Shard); err != nil {
		return memd.FactList{}, err
	}
	return g.inner.Facts(ctx, q)
}

func (g *guard) Trace(ctx context.Context, s memd.ShardID, id string) (memd.Trace, error) {
	if err := g.read(ctx, s); err != nil {
		return memd.Trace{}, err
	}
	return g.inner.Trace(ctx, s, id)
}

func (g *guard) Log(ctx context.Context, q memd.LogQuery) ([]memd.Commit, error) {
	if err := g.read(ctx, q.Shard); err != nil {
		return nil, err
	}
	return g.inner.Log(ctx, q)
}

// Revert of one commit needs write access to its shard. Revert by message
// needs it in every shard named; named none, it reaches the shards the
// caller may write.
func (g *guard) Revert(ctx context.Context, req memd.RevertRequest) (memd.RevertResult, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.RevertResult{}, err
	}
	if req.Message == "" && len(req.Messages) == 0 {
		if req.Commit == "" {
			// Nothing to revert, in no shard: the service says what to name.
			return g.inner.Revert(ctx, req)
		}
		if err := g.rules.Check(c, "revert in", req.Shard); err != nil {
			return memd.RevertResult{}, err
		}
		return g.inner.Revert(ctx, req)
	}
	if c.Admin {
		return g.inner.Revert(ctx, req)
	}
	if len(req.Shards) > 0 {
		// Refused, not passed over: the caller would take the messages for
		// reverted in every shard it named.
		for _, s := range req.Shards {
			if err := g.rules.Check(c, "revert in", s); err != nil {
				return memd.RevertResult{}, err
			}
		}
		return g.inner.Revert(ctx, req)
	}
	all, err := g.inner.Shards(ctx)
	if err != nil {
		return memd.RevertResult{}, err
	}
	var writable []memd.ShardID
	for _, s := range all {
		if g.rules.Check(c, "write", s.Shard) == nil {
			writable = append(writable, s.Shard)
		}
	}
	if len(writable) == 0 {
		return memd.RevertResult{}, memd.Errorf(memd.ENOTFOUND, "no shard you may write cites the messages to revert")
	}
	req.Shards = writable
	return g.inner.Revert(ctx, req)
}

func (g *guard) Shards(ctx context.Context) ([]memd.ShardInfo, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	all, err := g.inner.Shards(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	for _, s := range all {
		if g.rules.Check(c, "read", s.Shard) == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

func (g *guard) admin(ctx context.Context, what string) error {
	c, err := caller(ctx)
	if err != nil {
		return err
	}
	if !c.Admin {
		return memd.Forbidden(RuleAdminOnly, "agent %s may not %s: only an admin may", c.Agent, what)
	}
	return nil
}

func (g *guard) AddAgent(ctx context.Context, name string, projects []string) (memd.NewAgent, error) {
	if err := g.admin(ctx, "add agents"); err != nil {
		return memd.NewAgent{}, err
	}
	return g.inner.AddAgent(ctx, name, projects)
}

func (g *guard) Agents(ctx context.Context) ([]memd.Agent, error) {
	if err := g.admin(ctx, "list agents"); err != nil {
		return nil, err
	}
	return g.inner.Agents(ctx)
}

func (g *guard) Git(ctx context.Context, shard memd.ShardID, push bool) (memd.GitRepo, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.GitRepo{}, err
	}
	// git declares no chat: whatever the request said, the caller is in
	// none, so user memory stays the admin's.
	c.ChatKind = ""
	verb := "read"
	if push {
		verb = "push to"
	}
	if err := g.rules.Check(c, verb, shard); err != nil {
		return memd.GitRepo{}, err
	}
	return g.inner.Git(memd.NewContext(ctx, c), shard, push)
}

func (g *guard) LearningStats(ctx context.Context, q memd.LearningQuery) (memd.LearningStats, error) {
	if err := g.admin(ctx, "read learning statistics"); err != nil {
		return memd.LearningStats{}, err
	}
	return g.inner.LearningStats(ctx, q)
}

// Growth of one shard needs read access to it; of every shard, an admin.
func (g *guard) Growth(ctx context.Context, q memd.GrowthQuery) (memd.Growth, error) {
	if q.Shard.IsZero() {
		if err := g.admin(ctx, "read the growth of every shard"); err != nil {
			return memd.Growth{}, err
		}
	} else if err := g.read(ctx, q.Shard); err != nil {
		return memd.Growth{}, err
	}
	return g.inner.Growth(ctx, q)
}

func (g *guard) NoteHistory(ctx context.Context, q memd.NoteHistoryQuery) ([]memd.NoteVersion, error) {
	if err := g.read(ctx, q.Shard); err != nil {
		return nil, err
	}
	return g.inner.NoteHistory(ctx, q)
}

func (g *guard) PurgeMessage(ctx context.Context, req memd.PurgeRequest) (memd.PurgeResult, error) {
	if err := g.admin(ctx, "purge message texts"); err != nil {
		return memd.PurgeResult{}, err
	}
	return g.inner.PurgeMessage(ctx, req)
}

func (g *guard) RemoveAgent(ctx context.Context, name string) error {
	if err := g.admin(ctx, "remove agents"); err != nil {
		return err
	}
	return g.inner.RemoveAgent(ctx, name)
}

func (g *guard) Recall(ctx context.Context, q memd.RecallQuery) (memd.RecallResult, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.RecallResult{}, err
	}
	scopes, err := g.rules.Scopes(c, q.Agent, q.User, q.Projects, false, func() ([]memd.ShardInfo, error) { return g.inner.Shards(ctx) })
	if err != nil {
		return memd.RecallResult{}, err
	}
	return g.inner.RecallIn(ctx, scopes, q)
}

func (g *guard) Context(ctx context.Context, q memd.ContextQuery) (memd.MemoryContext, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.MemoryContext{}, err
	}
	scopes, err := g.rules.Scopes(c, q.Agent, q.User, q.Projects, true, nil)
	if err != nil {
		return memd.MemoryContext{}, err
	}
	return g.inner.ContextIn(ctx, scopes, q)
}

// Subscribe follows only shards the caller may read in its declared chat:
// those it names, each checked, or every such shard as events arrive.
func (g *guard) Subscribe(ctx context.Context, q memd.FeedQuery) (memd.Subscription, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range q.Shards {
		if err := g.rules.Check(c, "read", s); err != nil {
			return nil, err
		}
	}
	var f memd.Following
	if len(q.Shards) > 0 {
		named := slices.Clone(q.Shards)
		f.Wants = func(s memd.ShardID) bool { return slices.Contains(named, s) }
	} else {
		f.Wants = func(s memd.ShardID) bool { return g.rules.Check(c, "read", s) == nil }
	}
	for s := range q.Since {
		if !f.Wants(s) {
			if err := g.rules.Check(c, "read", s); err != nil {
				return nil, err
			}
			return nil, memd.Errorf(memd.EINVALID, "since names %s, which the subscription does not follow", s)
		}
	}
	if !c.Admin {
		f.Agent = c.Agent
	}
	return g.inner.SubscribeAs(ctx, f, q)
}

// Learn accepts an agent's own exchanges; the admin's for any agent.
func (g *guard) Learn(ctx context.Context, ex memd.Exchange) (memd.ExchangeStatus, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.ExchangeStatus{}, err
	}
	if !c.Admin {
		if ex.Agent == "" {
			ex.Agent = c.Agent
		}
		if ex.Agent != c.Agent {
			return memd.ExchangeStatus{}, memd.Forbidden(RuleOwnShard, "agent %s may not hand in exchanges of agent %s", c.Agent, ex.Agent)
		}
	}
	return g.inner.Learn(ctx, ex)
}

// Synthesize runs a pass over an agent's own shard: the agent's or the
// admin's call.
func (g *guard) Synthesize(ctx context.Context, agent string) (memd.ExchangeStatus, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.ExchangeStatus{}, err
	}
	if !c.Admin {
		if agent == "" {
			agent = c.Agent
		}
		if agent != c.Agent {
			return memd.ExchangeStatus{}, memd.Forbidden(RuleOwnShard, "agent %s may not run synthesis over the memory of agent %s", c.Agent, agent)
		}
	}
	return g.inner.Synthesize(ctx, agent)
}

// SetReview and Review are a person's: the admin's.
func (g *guard) SetReview(ctx context.Context, agent string, on bool) (memd.Agent, error) {
	if err := g.admin(ctx, "put agents in review mode"); err != nil {
		return memd.Agent{}, err
	}
	return g.inner.SetReview(ctx, agent, on)
}

func (g *guard) Review(ctx context.Context, req memd.ReviewRequest) (memd.ReviewResult, error) {
	if err := g.admin(ctx, "review proposals"); err != nil {
		return memd.ReviewResult{}, err
	}
	return g.inner.Review(ctx, req)
}

// Proposals of one shard need read access to it; of every shard, an admin.
func (g *guard) Proposals(ctx context.Context, shard memd.ShardID) ([]memd.Proposal, error) {
	if shard.IsZero() {
		if err := g.admin(ctx, "list the proposals of every shard"); err != nil {
			return nil, err
		}
	} else if err := g.read(ctx, shard); err != nil {
		return nil, err
	}
	return g.inner.Proposals(ctx, shard)
}

// Exchanges shows an agent its own work; the admin everything.
func (g *guard) Exchanges(ctx context.Context, state string) ([]memd.ExchangeStatus, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	all, err := g.inner.Exchanges(ctx, state)
	if err != nil || c.Admin {
		return all, err
	}
	out := all[:0:0]
	for _, st := range all {
		if st.Agent == c.Agent {
			out = append(out, st)
		}
	}
	return out, nil
}

// RetryExchange retries an agent's own exchanges; the admin's any.
func (g *guard) RetryExchange(ctx context.Context, id string) (memd.ExchangeStatus, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.ExchangeStatus{}, err
	}
	if !c.Admin {
		mine, err := g.Exchanges(ctx, "")
		if err != nil {
			return memd.ExchangeStatus{}, err
		}
		if !slices.ContainsFunc(mine, func(st memd.ExchangeStatus) bool { return st.ID == id }) {
			return memd.ExchangeStatus{}, memd.Errorf(memd.ENOTFOUND, "no exchange %s of agent %s", id, c.Agent)
		}
	}
	return g.inner.RetryExchange(ctx, id)
}

func (g *guard) Status(ctx context.Context) (memd.Status, error) {
	c, err := caller(ctx)
	if err != nil {
		return memd.Status{}, err
	}
	if c.Admin {
		return g.inner.Status(ctx)
	}
	// An agent's status counts what it may read in the chat it declares,
	// as listing shards shows it; the size of the rest of the store is the
	// admin's.
	return g.inner.StatusFor(ctx, memd.Viewer{Reads: func(s memd.ShardID) bool { return g.rules.Check(c, "read", s) == nil }, Agent: c.Agent})
}

func (g *guard) Remotes(ctx context.Context) ([]memd.RemoteStatus, error) {
	if err := g.admin(ctx, "see the remotes"); err != nil {
		return nil, err
	}
	return g.inner.Remotes(ctx)
}

func (g *guard) SyncRemotes(ctx context.Context, shards []memd.ShardID) ([]memd.RemoteStatus, error) {
	if err := g.admin(ctx, "sync remotes"); err != nil {
		return nil, err
	}
	return g.inner.SyncRemotes(ctx, shards)
}

func (g *guard) ListNotes(ctx context.Context, shard memd.ShardID) ([]memd.NoteInfo, error) {
	if err := g.read(ctx, shard); err != nil {
		return nil, err
	}
	return g.inner.ListNotes(ctx, shard)
}

func (g *guard) ReadNote(ctx context.Context, shard memd.ShardID, path, at string) (memd.Note, error) {
	if err := g.read(ctx, shard); err != nil {
		return memd.Note{}, err
	}
	return g.inner.ReadNote(ctx, shard, path, at)
}

// write checks a write to a shard made from a source.
func (g *guard) write(ctx context.Context, shard memd.ShardID, src *memd.Source) (context.Context, error) {
	ctx, c, err := declare(ctx, src)
	if err != nil {
		return ctx, err
	}
	return ctx, g.rules.Check(c, "write", shard)
}

func (g *guard) CreateNote(ctx context.Context, req memd.CreateNoteRequest) (memd.NoteResult, error) {
	ctx, err := g.write(ctx, req.Shard, &req.Source)
	if err != nil {
		return memd.NoteResult{}, err
	}
	return g.inner.CreateNote(ctx, req)
}

func (g *guard) EditNote(ctx context.Context, req memd.EditNoteRequest) (memd.NoteResult, error) {
	ctx, err := g.write(ctx, req.Shard, &req.Source)
	if err != nil {
		return memd.NoteResult{}, err
	}
	return g.inner.EditNote(ctx, req)
}

func (g *guard) DeleteNote(ctx context.Context, req memd.DeleteNoteRequest) (memd.NoteResult, error) {
	ctx, err := g.write(ctx, req.Shard, &req.Source)
	if err != nil {
		return memd.NoteResult{}, err
	}
	return g.inner.DeleteNote(ctx, req)
}
