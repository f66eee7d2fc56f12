// Package daemon is memd's service: it implements memd.Service over the
// git store and provenance, and wires the surfaces (the HTTP API) and the
// rules of access around it.
package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/feed"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/metrics"
	"github.com/memd/memd/daemon/remote"
	"github.com/memd/memd/daemon/transcript"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/learn"
)

// Service implements memd.Service. It trusts its caller: wrap it with
// access.Guard before exposing it.
type Service struct {
	Store    *gitstore.Store
	Index    *index.Index
	Feed     *feed.Hub
	Learner  *learn.Learner // nil when learning is off
	Registry *auth.Registry
	Syncer   *remote.Syncer    // pushes to and fetches from git remotes
	meaning  *meaning          // recall by meaning, with an embeddings endpoint
	Messages *transcript.Store // the text of the chat messages facts cite
	// KeepMessages drops message texts older than this even while cited;
	// zero keeps them while a fact cites them.
	KeepMessages time.Duration
	Now          func() time.Time
	Logger       *slog.Logger
	Started      time.Time

	Metrics *metrics.Metrics // nil in tests that build a Service by hand

	origins    originCache // what wrote each fact's line, by commit
	growth     growthCache // each shard's growth at its head
	reviews    reviews     // what memd saw of each shard's proposals
	background sync.WaitGroup
}

var _ memd.Service = (*Service)(nil)

// author is the git identity of a caller.
func author(c memd.Caller) gitstore.Signature {
	if c.Admin {
		return gitstore.Signature{Name: "admin", Email: "admin@memd"}
	}
	return gitstore.Signature{Name: c.Agent, Email: c.Agent + "@agents.memd"}
}

// learnedBy is how a direct call's changes are recorded: a person when an
// admin makes them, explicit when an agent does.
func learnedBy(c memd.Caller) string {
	if c.Admin {
		return memd.LearnedPerson
	}
	return memd.LearnedExplicit
}

func callerOf(ctx context.Context) memd.Caller {
	c, _ := memd.CallerFrom(ctx)
	return c
}

// shard opens an existing shard.
func (s *Service) shard(id memd.ShardID) (*gitstore.Shard, error) {
	return s.Store.Shard(id) // which checks the ID
}

// shardAtHead opens a shard and reads where its main is.
func (s *Service) shardAtHead(id memd.ShardID) (*gitstore.Shard, gitstore.Hash, error) {
	sh, err := s.shard(id)
	if err != nil {
		return nil, gitstore.Hash{}, err
	}
	head, err := sh.Head()
	return sh, head, err
}

// shardToWrite opens a shard to write to, creating it if need be; but an
// agent's shard only for a registered agent, or when create says so, so
// that a typo in a name is an error rather than a new shard.
func (s *Service) shardToWrite(id memd.ShardID, create bool) (*gitstore.Shard, error) {
	sh, err := s.Store.Shard(id) // which checks the ID
	if memd.ErrorCode(err) != memd.ENOTFOUND {
		return sh, err
	}
	if _, ok := s.Registry.Agent(id.Name); id.Kind == memd.KindAgent && !ok && !create {
		return nil, memd.Errorf(memd.ENOTFOUND, "no shard %s and no agent %s: add the agent first (memd agent add %s), or ask to create the shard (--create)", id, id.Name, id.Name)
	}
	return s.Store.CreateShard(id)
}

// resolve names a commit of a shard: a hash, a prefix or a date.
func resolve(sh *gitstore.Shard, rev string) (gitstore.Hash, error) {
	return sh.Resolve(rev)
}
