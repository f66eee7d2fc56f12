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

// meaning is what recall by meaning needs; nil without an endpoint. Its
// vectors are read from their file in the background (a million take
// seconds), so memd serves at once; until they are read recall answers by
// words alone and says so.
type meaning struct {
	client *vectors.Client
	model  string
	log    *slog.Logger
	// read is closed once set and filler are there, or readErr says why
	// they are not.
	read    chan struct{}
	set     *vectors.Set
	filler  *vectors.Filler
	readErr error
	// pausedUntil: after a query's embedding failed, recall answers by
	// words until then (Unix nanoseconds).
	pausedUntil atomic.Int64
}

// VectorsFile names the file of a model's vectors in the data directory:
// one per model, so going back to a model finds its vectors.
func VectorsFile(dataDir, model string) string {
	sum := sha256.Sum256([]byte(model))
	return filepath.Join(dataDir, fmt.Sprintf("vectors-%x.bin", sum[:6]))
}

// beforeVectorsRead is a hook for the test that holds the read back.
var beforeVectorsRead = func() {}

// openMeaning starts reading the vectors of cfg's model; onFiller, once
// they are read, is given the filler that computes the others.
func openMeaning(cfg Config, idx *index.Index, onFiller func(*vectors.Filler)) *meaning {
	m := &meaning{client: vectors.NewClient(*cfg.Embeddings), model: cfg.Embeddings.Model, log: cfg.Logger, read: make(chan struct{})}
	go func() {
		defer close(m.read)
		beforeVectorsRead()
		set, err := vectors.Open(VectorsFile(cfg.DataDir, cfg.Embeddings.Model), cfg.Embeddings.Model)
		if err != nil {
			m.readErr = err
			m.log.Error("recall answers by words alone: the vectors could not be read", "err", err)
			return
		}
		m.set = set
		m.filler = vectors.NewFiller(set, m.client, indexSource{idx, cfg.Logger}, cfg.Logger)
		onFiller(m.filler)
	}()
	return m
}

// ready tells whether the vectors are read, without waiting.
func (m *meaning) ready() bool {
	select {
	case <-m.read:
		return m.readErr == nil
	default:
		return false
	}
}

// wake tells the filler of a new fact, once there is one.
func (m *meaning) wake() {
	if m.ready() {
		m.filler.Wake()
	}
}

// runFiller computes the vectors of facts without one until ctx ends,
// once the vectors are read.
func (m *meaning) runFiller(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-m.read:
	}
	if m.readErr == nil {
		m.filler.Run(ctx, fillPoll)
	}
}

// status is how far recall by meaning is.
func (m *meaning) status() memd.MeaningStatus {
	select {
	case <-m.read:
	default:
		return memd.MeaningStatus{Model: m.model, Reading: true}
	}
	if m.readErr != nil {
		return memd.MeaningStatus{Model: m.model, Unreadable: true, LastError: "reading the vectors: " + m.readErr.Error()}
	}
	v := m.filler.Status()
	return memd.MeaningStatus{Model: v.Model, Vectors: v.Vectors, Pending: v.Pending, Refused: v.Refused, Ready: v.Ready, LastError: v.LastError, Failures: v.Failures}
}

// Close closes the vectors' file, once read.
func (m *meaning) Close() error {
	<-m.read
	if m.set == nil {
		return nil
	}
	return m.set.Close()
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
	select {
	case <-m.read:
		if m.readErr != nil {
			return lexical.Hits, fmt.Sprintf("by words alone: the vectors of %s could not be read: %v", m.model, m.readErr)
		}
	default:
		return lexical.Hits, fmt.Sprintf("by words alone: the vectors of %s are being read", m.model)
	}
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
	near, err := m.set.Nearest(qv, shards, n+1)
	var unread error // the first vector of a word hit that could not be read
	cosine := func(shard memd.ShardID, id string) (float64, bool) {
		c, ok, err := m.set.Cosine(qv, shard, id)
		if err != nil && unread == nil {
			unread = err
		}
		return c, ok && err == nil
	}
	var hits []search.Hit
	if err == nil {
		hits = x.Fuse(lexical.Hits, lexical.Full, cosine, near, n, m.client.Config().Weight, explain)
		err = unread
	}
	if err != nil {
		// Ranked by codes not the facts', meaning would mislead.
		m.log.Warn("recall answers by words alone: the vectors file could not be read", "err", err)
		return lexical.Hits, fmt.Sprintf("by words alone: the vectors of %s could not be read: %v", m.model, err)
	}
	return hits, ""
}
