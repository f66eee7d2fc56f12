package daemon

import (
	"context"
	"slices"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/metrics"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/learn"
	"github.com/memd/memd/provenance"
)

// How many known facts the extraction call sees (README, "Learning from
// conversations").
const (
	knownProfile = 100
	knownRecent  = 30
	knownShared  = 10
)

// Learn hands an exchange to the learner.
func (s *Service) Learn(ctx context.Context, ex memd.Exchange) (memd.ExchangeStatus, error) {
	if s.Learner == nil {
		return memd.ExchangeStatus{}, memd.Errorf(memd.EUNAVAILABLE, "learning is off: start memd serve with --model-url (see memd serve -h)")
	}
	// What is learned goes to the agent's shard: a typo in its name must
	// not make one.
	if _, ok := s.Registry.Agent(ex.Agent); !ok && ex.Agent != "" {
		return memd.ExchangeStatus{}, memd.Errorf(memd.ENOTFOUND, "no agent %s (memd agent add %s)", ex.Agent, ex.Agent)
	}
	return s.Learner.Accept(ex)
}

// Exchanges lists the learner's work.
func (s *Service) Exchanges(ctx context.Context, state string) ([]memd.ExchangeStatus, error) {
	switch state {
	case "", memd.ExchangePending, memd.ExchangeDone, memd.ExchangeSkipped, memd.ExchangeFailed:
	default:
		return nil, memd.Errorf(memd.EINVALID, "state must be pending, done, skipped or failed")
	}
	if s.Learner == nil {
		return []memd.ExchangeStatus{}, nil
	}
	return s.Learner.Status(state)
}

// RetryExchange queues a failed exchange again.
func (s *Service) RetryExchange(ctx context.Context, id string) (memd.ExchangeStatus, error) {
	if s.Learner == nil {
		return memd.ExchangeStatus{}, memd.Errorf(memd.EUNAVAILABLE, "learning is off")
	}
	return s.Learner.Retry(id)
}

// timedModel counts a model's calls and how long they take.
type timedModel struct {
	learn.Model
	m *metrics.Metrics
}

func timed(model learn.Model, m *metrics.Metrics) learn.Model { return timedModel{model, m} }

func (t timedModel) Complete(ctx context.Context, system, user string) (string, error) {
	start := time.Now()
	out, err := t.Model.Complete(ctx, system, user)
	result := "ok"
	if err != nil {
		result = "error"
	}
	t.m.ModelCalls.WithLabelValues(t.Name(), result).Observe(time.Since(start).Seconds())
	return out, err
}

// learnerMemory is what the learner reads and writes, over the index and
// the shards.
type learnerMemory struct{ s *Service }

// Known returns the facts the extraction call sees: lasting facts, the
// highest-ranked dated ones, and a few that share words with the exchange,
// from the agent's memory and, in a direct chat, the person's.
func (m learnerMemory) Known(ctx context.Context, ex memd.Exchange) ([]memd.Fact, error) {
	shards := []memd.ShardID{memd.AgentShard(ex.Agent)}
	if ex.ChatKind == memd.ChatDirect && ex.User != "" {
		shards = append(shards, memd.UserShard(ex.User))
	}
	if err := m.s.Index.CatchUp(shards...); err != nil {
		return nil, err
	}
	x := m.s.Index.Engine()
	var out []memd.Fact
	seen := make(map[memd.ShardID]map[string]bool)
	add := func(f memd.Fact) bool {
		if seen[f.Shard] == nil {
			seen[f.Shard] = make(map[string]bool)
		}
		if seen[f.Shard][f.ID] {
			return false
		}
		seen[f.Shard][f.ID] = true
		out = append(out, f)
		return true
	}
	for _, profile := range []bool{true, false} {
		limit := knownRecent
		if profile {
			limit = knownProfile
		}
		var best []search.Doc
		for _, id := range shards {
			x.Walk(id, profile, func(d search.Doc) bool {
				best = append(best, d)
				return len(best) < limit*len(shards)
			})
		}
		slices.SortStableFunc(best, func(a, b search.Doc) int {
			ra, rb := search.Rank(a.Date, a.Tier), search.Rank(b.Date, b.Tier)
			switch {
			case ra > rb:
				return -1
			case ra < rb:
				return 1
			}
			return 0
		})
		for i := 0; i < len(best) && i < limit; i++ {
			add(best[i].Fact)
		}
	}
	var said string
	for _, msg := range ex.Messages {
		said += msg.Text + " "
	}
	n := 0
	for _, h := range x.Search(search.Query{Text: said, Shards: shards, K: memd.MaxRecallK, Now: m.s.Now()}).Hits {
		if n < knownShared && add(h.Fact) {
			n++
		}
	}
	return out, nil
}

// Add commits one learned fact; the same text already there changes nothing.
func (m learnerMemory) Add(ctx context.Context, agent string, shard memd.ShardID, f memd.Fact, p memd.Provenance) (string, error) {
	sh, err := m.s.shardToWrite(shard, false)
	if err != nil {
		return "", err
	}
	return m.commitOne(agent, sh, memd.OpRemember, f.Text, p, gitstore.Edit{Op: gitstore.AddFact, Fact: f})
}

// commitOne commits one learned edit of a fact whose text is text, as op
// with the trailers p, and keeps the messages p cites for reviewers; it
// returns the commit ("" when nothing changed).
func (m learnerMemory) commitOne(agent string, sh *gitstore.Shard, op, text string, p memd.Provenance, e gitstore.Edit) (string, error) {
	res, err := m.s.commitLearned(agent, sh, gitstore.Change{
		Author:  author(memd.Caller{Agent: agent}),
		Message: provenance.Message(provenance.Subject(op, text), p),
		Edits:   []gitstore.Edit{e},
	})
	if err != nil || res.Commit.IsZero() {
		return "", err
	}
	m.s.cite(memd.Caller{Agent: agent}, res.Commit.String(), memd.Source{Messages: p.SourceMessages, Chat: p.SourceChat})
	return res.Commit.String(), nil
}

// Remove commits the removal of one fact; a fact already gone changes
// nothing.
func (m learnerMemory) Remove(ctx context.Context, agent string, shard memd.ShardID, id string, p memd.Provenance) (string, error) {
	sh, err := m.s.Store.Shard(shard)
	if err != nil {
		return "", err
	}
	f, err := sh.Fact(id)
	if memd.ErrorCode(err) == memd.ENOTFOUND {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return m.commitOne(agent, sh, memd.OpForget, f.Text, p, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: id}})
}

var _ learn.Memory = learnerMemory{}
