package daemon

import (
	"context"
	"fmt"
	"slices"

	"github.com/memd/memd"
)

// Shards lists every shard with its fact count and HEAD.
func (s *Service) Shards(ctx context.Context) ([]memd.ShardInfo, error) {
	ids, err := s.Store.Shards()
	if err != nil {
		return nil, err
	}
	out := make([]memd.ShardInfo, 0, len(ids))
	for _, id := range ids {
		sh, err := s.Store.Shard(id)
		if err != nil {
			return nil, err
		}
		// The index counts the facts: a shard's files stay unread, so a
		// listing of a large store costs neither seconds nor memory.
		if err := s.Index.CatchUp(id); err != nil {
			return nil, err
		}
		facts, head := s.Index.Summary(id)
		si := memd.ShardInfo{Shard: id, Facts: facts}
		if !head.IsZero() {
			si.Head = head.String()
			if si.LastChange, err = sh.CommitTime(head); err != nil {
				return nil, err
			}
		}
		out = append(out, si)
	}
	return out, nil
}

// AddAgent creates an agent's shard and registers it, so that its memory
// is a git repository from the start. The shard comes first: a shard
// without an agent is what removing one leaves, and adding it again takes
// it up; an agent without a shard, with a token nobody was shown, was what
// a full disk left when the shard came second (undoing the registration
// needs room too).
func (s *Service) AddAgent(ctx context.Context, name string, projects []string) (memd.NewAgent, error) {
	if err := s.Registry.CanAdd(name, projects); err != nil {
		return memd.NewAgent{}, err
	}
	if _, err := s.Store.CreateShard(memd.AgentShard(name)); err != nil {
		return memd.NewAgent{}, fmt.Errorf("create shard of agent %s: %w", name, err)
	}
	return s.Registry.Add(name, projects)
}

// Agents lists the registered agents.
func (s *Service) Agents(ctx context.Context) ([]memd.Agent, error) {
	return s.Registry.List(), nil
}

// RemoveAgent revokes an agent's token. Its shard and history stay.
func (s *Service) RemoveAgent(ctx context.Context, name string) error {
	if err := s.Registry.Remove(name); err != nil {
		return err
	}
	if s.Feed != nil {
		s.Feed.CutAgent(name)
	}
	return nil
}

// ready says whether memd answers from all it holds: the index has read
// every shard since the start, and the learner, when on, is running.
func (s *Service) ready() (bool, []string) {
	waiting := []string{}
	if n := s.Index.Backlog(nil); n > 0 {
		waiting = append(waiting, fmt.Sprintf("the index is reading %d shard(s)", n))
	}
	if s.Learner != nil && !s.Learner.Running() {
		waiting = append(waiting, "the learner has not started")
	}
	return len(waiting) == 0, waiting
}

// Status describes the running service.
func (s *Service) Status(ctx context.Context) (memd.Status, error) {
	return s.status(ctx, nil)
}

// StatusFor describes the service as an agent may see it (see memd.Viewer).
func (s *Service) StatusFor(ctx context.Context, v memd.Viewer) (memd.Status, error) {
	if v.Reads == nil || v.Agent == "" {
		return memd.Status{}, memd.Errorf(memd.EINVALID, "a status for an agent names the agent and what it may read")
	}
	return s.status(ctx, &v)
}

// status describes the service: to the admin (v nil), all of it.
func (s *Service) status(ctx context.Context, v *memd.Viewer) (memd.Status, error) {
	// What the index holds so far, without waiting for it to read the
	// shards it has not: a status answers at once, even just after a start.
	shards, err := s.Store.Shards()
	if err != nil {
		return memd.Status{}, err
	}
	var reads func(memd.ShardID) bool // the admin's: all
	if v != nil {
		reads = v.Reads
		shards = slices.DeleteFunc(shards, func(id memd.ShardID) bool { return !v.Reads(id) })
	}
	// The shards the index holds are brought up to date, so that a status
	// just after a remember counts the fact (the index follows memd's own
	// commits a moment later); the others are not waited for. A shard that
	// cannot be read is counted as the index holds it: a status is what
	// someone asks when something is wrong.
	if err := s.Index.CatchUpHeld(shards...); err != nil {
		s.Logger.Warn("status: bringing the index up to date", "err", err)
	}
	st := memd.Status{
		Indexing:    s.Index.Backlog(reads),
		Attributing: s.Index.Attributing(reads),
		Version:     memd.Version,
		Started:     s.Started,
		Shards:      len(shards),
		Facts:       s.Index.Facts(shards...),
		Caller:      callerOf(ctx).Name(),
		Learning:    memd.LearnerStatus{Enabled: false, Reason: "no model endpoint configured (memd serve --model-url)"},
	}
	if s.meaning != nil {
		m := s.meaning.status()
		if v != nil {
			// How far it is, but not the store's counts, nor errors that
			// name the data directory or the endpoint.
			m = memd.MeaningStatus{Model: m.Model, Ready: m.Ready, Reading: m.Reading, Unreadable: m.Unreadable}
		}
		st.Meaning = &m
	}
	if s.Learner != nil {
		if st.Learning, err = s.learnerStatus(v); err != nil {
			return memd.Status{}, err
		}
	}
	if v != nil {
		return st, nil
	}
	st.Agents = len(s.Registry.List())
	st.DataDir = s.Store.Dir()
	if s.Syncer != nil {
		if st.Remotes, st.RemoteErrors, err = s.Syncer.Summary(); err != nil {
			return memd.Status{}, err
		}
	}
	if st.Review, err = s.reviewStatus(); err != nil {
		return memd.Status{}, err
	}
	return st, nil
}

// learnerStatus says how learning is doing: for an agent (v), with its
// own exchanges counted, and without synthesis's counts over the store.
func (s *Service) learnerStatus(v *memd.Viewer) (memd.LearnerStatus, error) {
	ls := memd.LearnerStatus{Enabled: true, Model: s.Learner.ModelName(), QuietUntil: s.Learner.QuietUntil()}
	agent := ""
	if v != nil {
		agent = v.Agent
	}
	var err error
	if ls.Pending, ls.Failed, err = s.Learner.Counts(agent); err != nil {
		return ls, err
	}
	if v == nil {
		ls.Synthesis, err = s.Learner.SynthesisStatus()
	}
	return ls, err
}

// Remotes describes the remote of each shard that has one.
func (s *Service) Remotes(ctx context.Context) ([]memd.RemoteStatus, error) {
	if s.Syncer == nil {
		return []memd.RemoteStatus{}, nil
	}
	return s.Syncer.Status()
}

// SyncRemotes fetches, integrates and pushes shards now.
func (s *Service) SyncRemotes(ctx context.Context, shards []memd.ShardID) ([]memd.RemoteStatus, error) {
	if s.Syncer == nil {
		return nil, memd.Errorf(memd.EUNAVAILABLE, "this memd has no remotes")
	}
	return s.Syncer.Sync(ctx, shards)
}

// Git opens a shard for the git endpoint; the caller is admitted already
// (see access.Guard).
func (s *Service) Git(ctx context.Context, shard memd.ShardID, push bool) (memd.GitRepo, error) {
	c, _ := memd.CallerFrom(ctx)
	who := c.Agent
	if c.Admin {
		who = "admin"
	}
	return memd.GitRepo{Shard: shard, Caller: who, Open: func(create bool) (any, error) {
		if create {
			return s.shardToWrite(shard, false) // a push to a typo's shard makes none
		}
		return s.Store.Shard(shard)
	}}, nil
}
