package daemon

import (
	"context"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// Recall ranks the facts of the query's scopes. With At, it searches memory
// as it was then, read from git history rather than from the index.
func (s *Service) Recall(ctx context.Context, q memd.RecallQuery) (memd.RecallResult, error) {
	k := q.K
	switch {
	case k == 0:
		k = memd.DefaultRecallK
	case k < 0 || k > memd.MaxRecallK:
		return memd.RecallResult{}, memd.Errorf(memd.EINVALID, "k must be between 1 and %d", memd.MaxRecallK)
	}
	if strings.TrimSpace(q.Q) == "" {
		return memd.RecallResult{}, memd.Errorf(memd.EINVALID, "the query is empty")
	}
	if len(q.Q) > 1000 {
		return memd.RecallResult{}, memd.Errorf(memd.EINVALID, "the query is longer than 1000 bytes")
	}
	shards := q.Scopes.Shards()
	x, at, err := s.view(shards, q.At)
	if err != nil {
		return memd.RecallResult{}, err
	}
	var hits []search.Hit
	if s.Reranker != nil && q.At == "" {
		// Re-rank a wider lexical net, then cut to k within the budget.
		wide := x.Search(search.Query{Text: q.Q, Shards: shards, K: max(3*k, 30), Now: s.Now()})
		reranked, err := s.Reranker.Rerank(ctx, q.Q, wide)
		if err != nil {
			s.Logger.Warn("semantic re-ranking failed; answering with the lexical ranking", "err", err)
			reranked = wide
		}
		hits = search.Fit(reranked, k, memd.RecallBudget)
	} else {
		hits = x.Search(search.Query{Text: q.Q, Shards: shards, K: k, Budget: memd.RecallBudget, Now: s.Now()})
	}
	out := memd.RecallResult{Hits: make([]memd.Hit, 0, len(hits)), Searched: shards, At: at}
	if out.Searched == nil {
		out.Searched = []memd.ShardID{}
	}
	for _, h := range hits {
		out.Hits = append(out.Hits, memd.Hit{Fact: h.Fact, Note: h.Note, Score: h.Score, Commit: h.Commit, SourceMessages: h.Messages, SourceChat: h.Chat})
	}
	return out, nil
}

// view returns the search engine to answer from: the live index, caught up
// with the shards' HEADs, or for a point in time an index of the shards as
// they were then. It also names the commit or date answered from.
func (s *Service) view(shards []memd.ShardID, at string) (*search.Index, string, error) {
	if at == "" {
		if err := s.Index.CatchUp(shards...); err != nil {
			return nil, "", err
		}
		return s.Index.Search(), "", nil
	}
	when, exact, err := s.instant(shards, at)
	if err != nil {
		return nil, "", err
	}
	x := search.New()
	live := s.Index.Search()
	var docs []search.Doc
	for _, id := range shards {
		sh, err := s.Store.Shard(id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		h, ok := exact[id]
		if !ok {
			if h, err = sh.ResolveTime(when); err != nil {
				return nil, "", err
			}
		}
		lines, err := sh.LinesAt(h)
		if err != nil {
			return nil, "", err
		}
		for _, l := range lines {
			d := search.Doc{Fact: l.Fact, Offset: l.Offset}
			if cur, ok := live.Get(id, l.ID); ok && cur.Text == l.Text && cur.Date == l.Date {
				d.Commit, d.Messages, d.Chat = cur.Commit, cur.Messages, cur.Chat
			}
			docs = append(docs, d)
		}
		notes, _, err := sh.Notes(h)
		if err != nil {
			return nil, "", err
		}
		for _, n := range notes {
			path := strings.TrimPrefix(n.Path, gitstore.NotesDir+"/")
			x.PutNote(id, path, index.Passages(id, path, string(n.Data), memd.DateOf(when), ""))
		}
	}
	x.PutAll(docs)
	return x, when.UTC().Format(time.RFC3339), nil
}

// instant turns at (a date, or a commit in one of the shards) into a point
// in time: the end of that day, or the time of that commit, which also
// names exactly the state of its own shard.
func (s *Service) instant(shards []memd.ShardID, at string) (time.Time, map[memd.ShardID]plumbing.Hash, error) {
	if d, err := memd.ParseDate(at); err == nil {
		return d.Time().AddDate(0, 0, 1).Add(-time.Nanosecond), nil, nil
	}
	for _, id := range shards {
		sh, err := s.Store.Shard(id)
		if err != nil {
			continue
		}
		h, err := sh.Resolve(at)
		if err != nil || h == plumbing.ZeroHash {
			if memd.ErrorCode(err) == memd.EINVALID {
				return time.Time{}, nil, err
			}
			continue
		}
		c, err := sh.ReadCommit(h)
		if err != nil {
			return time.Time{}, nil, err
		}
		return c.Time, map[memd.ShardID]plumbing.Hash{id: h}, nil
	}
	return time.Time{}, nil, memd.Errorf(memd.ENOTFOUND, "no shard searched has a commit %q", at)
}

// Context assembles the memory section of an agent's prompt.
func (s *Service) Context(ctx context.Context, q memd.ContextQuery) (memd.MemoryContext, error) {
	x, _, err := s.view(q.Scopes.Shards(), q.At)
	if err != nil {
		return memd.MemoryContext{}, err
	}
	var blocks []memd.ContextBlock
	if !q.Scopes.User.IsZero() {
		blocks = append(blocks, contextBlock(x, q.Scopes.User, "User memory: "+q.Scopes.User.Name))
	}
	for _, p := range q.Scopes.Projects {
		blocks = append(blocks, contextBlock(x, p, "Project memory: "+p.Name))
	}
	blocks = append(blocks, contextBlock(x, q.Scopes.Agent, "Your own memory ("+q.Scopes.Agent.Name+")"))
	return memd.MemoryContext{Markdown: renderContext(blocks), Blocks: blocks}, nil
}
