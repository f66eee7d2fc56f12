package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/daemon/vectors"
)

// Recall by meaning: with an embeddings endpoint, each fact's vector is
// computed in the background (vectors.Filler) and recall joins the facts
// nearest the query by meaning to those its words found (search.Fuse).

// meaning is what recall by meaning needs; nil without an endpoint.
type meaning struct {
	set    *vectors.Set
	client *vectors.Client
	filler *vectors.Filler
	log    *slog.Logger
	// pausedUntil: after a query's embedding failed, recall answers by
	// words until then (Unix nanoseconds).
	pausedUntil atomic.Int64
}

// vectorsFile names the file of a model's vectors in the data directory:
// one per model, so going back to a model finds its vectors.
func vectorsFile(dataDir, model string) string {
	sum := sha256.Sum256([]byte(model))
	return filepath.Join(dataDir, fmt.Sprintf("vectors-%x.bin", sum[:6]))
}

// openMeaning opens the vectors of cfg's model.
func openMeaning(cfg Config, idx *index.Index) (*meaning, error) {
	set, err := vectors.Open(vectorsFile(cfg.DataDir, cfg.Embeddings.Model), cfg.Embeddings.Model)
	if err != nil {
		return nil, err
	}
	client := vectors.NewClient(*cfg.Embeddings)
	return &meaning{set: set, client: client, filler: vectors.NewFiller(set, client, indexSource{idx, cfg.Logger}, cfg.Logger), log: cfg.Logger}, nil
}

// indexSource lists the index's facts for the filler, caught up first so
// that facts reach their vectors without waiting for a recall.
type indexSource struct {
	idx *index.Index
	log *slog.Logger
}

func (s indexSource) Indexed() map[memd.ShardID]string {
	if err := s.idx.CatchUpAll(); err != nil {
		s.log.Warn("the index could not catch up for vectors", "err", err)
	}
	return s.idx.Engine().Indexed()
}

func (s indexSource) Facts(shard memd.ShardID) int { return s.idx.Engine().Facts(shard) }

func (s indexSource) FactsSince(shard memd.ShardID, mark search.Mark, gone func(id string), fn func(id, text string) bool) (search.Mark, bool) {
	return s.idx.Engine().FactsSince(shard, mark, gone, fn)
}

func (s indexSource) EachFact(shard memd.ShardID, fn func(id, text string) bool) {
	s.idx.Engine().EachFact(shard, fn)
}

// fillPoll is how often the filler looks for facts without vectors.
const fillPoll = 2 * time.Second

// queryTimeout bounds the wait for a query's embedding, and queryPause is
// how long recall answers by words after one failed, so that an endpoint
// down costs one recall in queryPause a timeout, not every recall.
const (
	queryTimeout = 3 * time.Second
	queryPause   = 10 * time.Second
)

// byMeaning joins the facts nearest the query by meaning to the hits its
// words found, or says why it answers from the words alone.
func (m *meaning) byMeaning(ctx context.Context, x *search.Engine, q string, shards []memd.ShardID, lexical search.Result, n int, explain bool) ([]search.Hit, string) {
	st := m.filler.Status()
	if !st.Ready {
		return lexical.Hits, fmt.Sprintf("by words alone: the vectors of %s are being computed (%d held, %d to go)", st.Model, st.Vectors, st.Pending)
	}
	// After a failure one recall at a time tries the endpoint again; the
	// others answer by words meanwhile rather than wait with it.
	now := time.Now()
	paused := m.pausedUntil.Load()
	if now.UnixNano() < paused || !m.pausedUntil.CompareAndSwap(paused, now.Add(queryTimeout).UnixNano()) {
		return lexical.Hits, "by words alone: the embeddings endpoint is failing; trying it again shortly"
	}
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	qv, err := m.client.EmbedQuery(qctx, q)
	switch {
	case errors.Is(err, vectors.ErrRefused):
		m.pausedUntil.Store(0) // this query, not the endpoint
		return lexical.Hits, "by words alone: " + err.Error()
	case err != nil:
		m.pausedUntil.Store(time.Now().Add(queryPause).UnixNano())
		m.log.Warn("recall answers by words alone for a while: embedding the query failed", "err", err, "pause", queryPause)
		return lexical.Hits, "by words alone: " + err.Error()
	}
	m.pausedUntil.Store(0)
	if dim := m.set.Dim(); dim != 0 && len(qv) != dim {
		m.filler.Rebuild()
		return lexical.Hits, fmt.Sprintf("by words alone: the query's vector has %d dimensions, the facts' %d; the vectors are being computed again", len(qv), dim)
	}
	// One more than wanted: the first beyond the candidates is the
	// background meaning is measured against.
	near := m.set.Nearest(qv, shards, n+1)
	cosine := func(shard memd.ShardID, id string) (float64, bool) { return m.set.Cosine(qv, shard, id) }
	return x.Fuse(lexical.Hits, lexical.Full, cosine, near, n, m.client.Config().Weight, explain), ""
}
