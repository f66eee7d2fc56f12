package daemon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// errNoRules is Recall, Context or Subscribe called on the service itself:
// which shards they read is the rules of access's to say (access.Guard).
var errNoRules = memd.Errorf(memd.EINTERNAL, "recall, the memory section and the feed are reached through the rules of access")

// Recall refuses: see memd.ScopedReader.
func (s *Service) Recall(context.Context, memd.RecallQuery) (memd.RecallResult, error) {
	return memd.RecallResult{}, errNoRules
}

// Context refuses: see memd.ScopedReader.
func (s *Service) Context(context.Context, memd.ContextQuery) (memd.MemoryContext, error) {
	return memd.MemoryContext{}, errNoRules
}

// RecallIn ranks the facts of scopes. With At, it searches memory as it was
// then, read from git history rather than from the index.
func (s *Service) RecallIn(ctx context.Context, scopes memd.Scopes, q memd.RecallQuery) (memd.RecallResult, error) {
	k := q.K
	switch {
	case k == 0:
		k = memd.DefaultRecallK
	case k < 0 || k > memd.MaxRecallK:
		return memd.RecallResult{}, memd.Errorf(memd.EINVALID, "k must be between 1 and %d (0 or none: %d)", memd.MaxRecallK, memd.DefaultRecallK)
	}
	if strings.TrimSpace(q.Q) == "" {
		return memd.RecallResult{}, memd.Errorf(memd.EINVALID, "the query is empty")
	}
	if len(q.Q) > 1000 {
		return memd.RecallResult{}, memd.Errorf(memd.EINVALID, "the query is longer than 1000 bytes")
	}
	shards := scopes.Shards()
	x, at, err := s.view(ctx, shards, q.At, q.IncludeProposed)
	if err != nil {
		return memd.RecallResult{}, err
	}
	var res search.Result
	var byWords string
	if s.meaning != nil {
		// A wider net of both kinds, joined, then cut to k within the
		// budget.
		n := max(3*k, 30)
		res = x.Search(search.Query{Text: q.Q, Shards: shards, K: n, Now: s.Now(), Explain: q.Explain})
		var hits []search.Hit
		hits, byWords = s.meaning.byMeaning(ctx, x, q.Q, shards, res, n, q.Explain)
		res.Hits = search.Fit(hits, k, memd.RecallBudget)
	} else {
		res = x.Search(search.Query{Text: q.Q, Shards: shards, K: k, Budget: memd.RecallBudget, Now: s.Now(), Explain: q.Explain})
	}
	out := memd.RecallResult{Hits: make([]memd.Hit, 0, len(res.Hits)), Searched: shards, Skipped: scopes.Skipped, At: at, ReadAt: memd.NewReadAt(res.ReadAt, shards), ByWordsAlone: byWords}
	if out.Searched == nil {
		out.Searched = []memd.ShardID{}
	}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, memd.Hit{Fact: h.Fact, Note: h.Note, Score: h.Score, Commit: h.Commit, SourceMessages: h.Messages, SourceChat: h.Chat, Explain: h.Explain})
	}
	return out, nil
}

// view returns the search engine to answer from: the live index, caught up
// with the shards' HEADs, or for a point in time an index of the shards as
// they were then, read from git history. It also names the commit, date or
// stamp answered from. With proposed, shards with proposals waiting for
// review are read at the tip of their branch proposed.
func (s *Service) view(ctx context.Context, shards []memd.ShardID, at string, proposed bool) (*search.Engine, string, error) {
	if proposed && at != "" {
		return nil, "", memd.Errorf(memd.EINVALID, "ask with at or with include_proposed, not both")
	}
	var heads map[memd.ShardID]gitstore.Hash
	var label string
	var err error
	switch {
	case proposed:
		if heads, err = s.proposedHeads(shards); err != nil || heads == nil {
			if err != nil {
				return nil, "", err
			}
			return s.view(ctx, shards, "", false)
		}
	case at == "":
		if err := s.Index.CatchUp(shards...); err != nil {
			return nil, "", err
		}
		return s.Index.Engine(), "", nil
	default:
		if heads, label, err = s.instant(shards, at); err != nil {
			return nil, "", err
		}
	}
	x, err := s.Index.At(ctx, shards, heads)
	return x, label, err
}

// proposedHeads returns, when some of the shards have proposals waiting,
// the commit each shard is read at: the tip of its proposals, or main.
func (s *Service) proposedHeads(shards []memd.ShardID) (map[memd.ShardID]gitstore.Hash, error) {
	heads := make(map[memd.ShardID]gitstore.Hash, len(shards))
	found := false
	for _, id := range shards {
		sh, err := s.Store.Shard(id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		list, err := s.refreshProposals(sh)
		if err != nil {
			return nil, err
		}
		if len(list) > 0 {
			heads[id], found = list[len(list)-1].Hash, true
			continue
		}
		if heads[id], err = sh.Head(); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, nil
	}
	return heads, nil
}

// instant resolves at (a date, a commit in one of the shards, or a stamp of
// an earlier answer) to the commit each shard was at then; a shard absent
// had no commit yet. It also returns how to name that instant: the time of
// the day's end or of the commit, or the stamp itself.
func (s *Service) instant(shards []memd.ShardID, at string) (map[memd.ShardID]gitstore.Hash, string, error) {
	if stamp, ok, err := memd.ParseStamp(at); ok {
		if err != nil {
			return nil, "", err
		}
		heads, err := s.stampHeads(shards, stamp)
		return heads, at, err
	}
	when, exact, err := s.pointInTime(shards, at)
	if err != nil {
		return nil, "", err
	}
	heads := make(map[memd.ShardID]gitstore.Hash)
	for _, id := range shards {
		if h, ok := exact[id]; ok {
			heads[id] = h
			continue
		}
		sh, err := s.Store.Shard(id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		h, err := sh.ResolveTime(when)
		if err != nil {
			return nil, "", err
		}
		if !h.IsZero() {
			heads[id] = h
		}
	}
	return heads, when.UTC().Format(time.RFC3339), nil
}

// stampHeads resolves the commits of a stamp for the shards of a view. A
// stamp is an earlier answer's in the same view: one naming a shard the
// view does not read is refused (another agent's, or a project left), and
// a shard of the view it does not name had no commit then.
func (s *Service) stampHeads(shards []memd.ShardID, stamp map[memd.ShardID]string) (map[memd.ShardID]gitstore.Hash, error) {
	for id := range stamp {
		if !slices.Contains(shards, id) {
			return nil, memd.Errorf(memd.EINVALID, "the stamp names %s, which this view of memory does not read: it is another view's", id)
		}
	}
	heads := make(map[memd.ShardID]gitstore.Hash)
	for _, id := range shards {
		if c := stamp[id]; c != "" {
			h, err := s.resolveIn(id, c)
			if err != nil {
				return nil, err
			}
			heads[id] = h
		}
	}
	return heads, nil
}

// resolveIn finds a commit of one shard by hash or prefix.
func (s *Service) resolveIn(id memd.ShardID, commit string) (gitstore.Hash, error) {
	sh, err := s.Store.Shard(id)
	if err != nil {
		return gitstore.Hash{}, err
	}
	if len(commit) == 40 {
		h := gitstore.NewHash(commit)
		if _, err := sh.ReadCommit(h); err == nil {
			return h, nil
		}
	}
	return sh.ResolveCommit(commit)
}

// pointInTime turns at (a date, or a commit in one of the shards) into a
// point in time: the end of that day, or the time of that commit, which
// also names exactly the state of its own shard.
func (s *Service) pointInTime(shards []memd.ShardID, at string) (time.Time, map[memd.ShardID]gitstore.Hash, error) {
	if d, err := memd.ParseDate(at); err == nil {
		return d.Time().AddDate(0, 0, 1).Add(-time.Nanosecond), nil, nil
	}
	for _, id := range shards {
		sh, err := s.Store.Shard(id)
		if err != nil {
			continue
		}
		h, err := sh.Resolve(at)
		if err != nil || h.IsZero() {
			if memd.ErrorCode(err) == memd.EINVALID {
				return time.Time{}, nil, err
			}
			continue
		}
		c, err := sh.ReadCommit(h)
		if err != nil {
			return time.Time{}, nil, err
		}
		return c.Time, map[memd.ShardID]gitstore.Hash{id: h}, nil
	}
	return time.Time{}, nil, memd.Errorf(memd.ENOTFOUND, "no shard searched has a commit %q", at)
}

// ContextIn assembles the memory section of an agent's prompt from scopes,
// or with Since what changed in it since an earlier answer.
func (s *Service) ContextIn(ctx context.Context, scopes memd.Scopes, q memd.ContextQuery) (memd.MemoryContext, error) {
	if q.Since != "" {
		if q.At != "" || q.IncludeProposed {
			return memd.MemoryContext{}, memd.Errorf(memd.EINVALID, "ask with since alone: not with at or include_proposed (a change since reads main)")
		}
		return s.contextSince(scopes, q)
	}
	shards := scopes.Shards()
	x, _, err := s.view(ctx, shards, q.At, q.IncludeProposed)
	if err != nil {
		return memd.MemoryContext{}, err
	}
	var blocks []memd.ContextBlock
	readAt := x.Snapshot(shards, func(walk search.Walker) {
		for _, sc := range scopesOf(scopes) {
			blocks = append(blocks, contextBlock(walk, sc.shard, sc.title))
		}
	})
	return memd.MemoryContext{Markdown: renderContext(blocks), Blocks: blocks, Skipped: scopes.Skipped, ReadAt: memd.NewReadAt(readAt, shards)}, nil
}

type scope struct {
	shard memd.ShardID
	title string
}

// scopesOf lists the scopes of the memory section in its order.
func scopesOf(sc memd.Scopes) []scope {
	var out []scope
	if !sc.User.IsZero() {
		out = append(out, scope{sc.User, "User memory: " + sc.User.Name})
	}
	for _, p := range sc.Projects {
		out = append(out, scope{p, "Project memory: " + p.Name})
	}
	return append(out, scope{sc.Agent, "Your own memory (" + sc.Agent.Name + ")"})
}

// contextSince answers what changed in an agent's view of memory since a
// stamp: per scope, the facts added and removed between the commit the
// stamp names (none: the scope was empty or not in the view) and HEAD.
func (s *Service) contextSince(scopes memd.Scopes, q memd.ContextQuery) (memd.MemoryContext, error) {
	old, ok, err := memd.ParseStamp(q.Since)
	if err == nil && !ok {
		err = memd.Errorf(memd.EINVALID, "since takes the stamp of an earlier answer (<shard>@<commit>,...)")
	}
	if err != nil {
		return memd.MemoryContext{}, err
	}
	shards := scopes.Shards()
	before, err := s.stampHeads(shards, old)
	if err != nil {
		return memd.MemoryContext{}, err
	}
	if err := s.Index.CatchUp(shards...); err != nil {
		return memd.MemoryContext{}, err
	}
	now := s.Index.Engine().Heads(shards)
	out := memd.MemoryContext{ReadAt: memd.NewReadAt(now, shards)}
	var b strings.Builder
	for _, sc := range scopesOf(scopes) {
		from := before[sc.shard]
		to := gitstore.Hash{}
		if c := now[sc.shard]; c != "" {
			to = gitstore.NewHash(c)
		}
		if from == to {
			continue
		}
		sh, err := s.Store.Shard(sc.shard)
		if err != nil {
			return memd.MemoryContext{}, err
		}
		d, err := sh.Compare(from, to)
		if err != nil {
			return memd.MemoryContext{}, err
		}
		if len(d.Facts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "### %s\n", sc.title)
		for _, ch := range d.Facts {
			line := strings.TrimPrefix(gitstore.FormatLine(ch.Fact), "- ")
			if ch.Op == "-" {
				out.Removed = append(out.Removed, ch.Fact)
				b.WriteString("\u2212 " + line)
			} else {
				out.Added = append(out.Added, ch.Fact)
				b.WriteString("+ " + line)
			}
		}
	}
	out.Markdown = b.String()
	out.Skipped = scopes.Skipped
	return out, nil
}
