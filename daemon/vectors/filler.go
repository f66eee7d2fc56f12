package vectors

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/memd/memd"
)

// Source is the facts vectors are wanted for: the index.
type Source interface {
	// Indexed names each shard and the commit it was indexed at.
	Indexed() map[memd.ShardID]string
	// EachFact calls fn with each fact of a shard until fn returns false.
	EachFact(shard memd.ShardID, fn func(id, text string) bool)
}

// Status is how far the vectors are.
type Status struct {
	Model   string
	Vectors int // held
	Pending int // facts found without one at the last look
	// Ready: every fact had a vector at some look since the start; until
	// then recall answers from words alone.
	Ready     bool
	LastError string // of the last request, "" once one succeeds
	Failures  int    // requests failed since the start
}

// Filler computes the vectors of facts that lack one, in the background:
// in batches, retried with backoff, looking again when a shard's commit
// changes or Wake is called.
type Filler struct {
	set    *Set
	client *Client
	source Source
	log    *slog.Logger
	wake   chan struct{}
	// OnRequest, when set, is told of each request: texts embedded, error.
	OnRequest func(n int, err error)

	mu      sync.Mutex
	status  Status
	scanned map[memd.ShardID]string // heads with every fact embedded
}

// maxScan bounds the facts one look collects to embed: a store embedded
// for the first time is looked at again every few thousand.
const maxScan = 4096

// NewFiller returns a filler of set from source through client.
func NewFiller(set *Set, client *Client, source Source, log *slog.Logger) *Filler {
	return &Filler{set: set, client: client, source: source, log: log, wake: make(chan struct{}, 1),
		status: Status{Model: set.Model()}, scanned: map[memd.ShardID]string{}}
}

// Wake asks the filler to look for new facts now.
func (f *Filler) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Status reports how far the vectors are.
func (f *Filler) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.status
	st.Vectors = f.set.Len()
	return st
}

// Run fills until ctx ends. It looks for facts without vectors when woken,
// and every poll otherwise (commits that reach the index by other ways
// than memd's writes: a push, a hand edit).
func (f *Filler) Run(ctx context.Context, poll time.Duration) {
	backoff := time.Second
	for {
		todo, pending, heads := f.look()
		f.mu.Lock()
		f.status.Pending = pending
		if pending == 0 {
			f.status.Ready = true
		}
		f.mu.Unlock()
		if len(todo) == 0 {
			f.mu.Lock()
			for id, h := range heads {
				f.scanned[id] = h
			}
			f.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-f.wake:
			case <-time.After(poll):
			}
			continue
		}
		if err := f.embed(ctx, todo); err != nil {
			if ctx.Err() != nil {
				return
			}
			f.log.Warn("embedding facts failed; recall uses the vectors it has", "model", f.set.Model(), "err", err, "retry_in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Minute)
			continue
		}
		backoff = time.Second
	}
}

type fact struct {
	shard    memd.ShardID
	id, text string
}

// look collects up to maxScan facts without vectors from the shards whose
// commit changed since they were last found whole, and counts them all.
func (f *Filler) look() (todo []fact, pending int, heads map[memd.ShardID]string) {
	heads = f.source.Indexed()
	f.mu.Lock()
	changed := make([]memd.ShardID, 0, len(heads))
	for id, h := range heads {
		if f.scanned[id] != h || h == "" {
			changed = append(changed, id)
		}
	}
	f.mu.Unlock()
	for _, id := range changed {
		f.source.EachFact(id, func(fid, text string) bool {
			if !f.set.Has(id, fid) {
				pending++
				if len(todo) < maxScan {
					todo = append(todo, fact{id, fid, text})
				}
			}
			return true
		})
	}
	return todo, pending, heads
}

// embed embeds facts in batches and keeps their vectors.
func (f *Filler) embed(ctx context.Context, todo []fact) error {
	batch := f.client.Config().Batch
	for len(todo) > 0 {
		n := min(batch, len(todo))
		texts := make([]string, n)
		for i, t := range todo[:n] {
			texts[i] = t.text
		}
		got, err := f.client.Embed(ctx, texts)
		if f.OnRequest != nil {
			f.OnRequest(n, err)
		}
		f.mu.Lock()
		if err != nil {
			f.status.LastError = err.Error()
			f.status.Failures++
		} else {
			f.status.LastError = ""
		}
		f.mu.Unlock()
		if err != nil {
			return err
		}
		vs := make([]Vector, n)
		for i, t := range todo[:n] {
			vs[i] = Vector{Shard: t.shard, ID: t.id, V: got[i]}
		}
		if err := f.set.Put(vs); err != nil {
			return err
		}
		f.mu.Lock()
		f.status.Pending = max(0, f.status.Pending-n)
		f.mu.Unlock()
		todo = todo[n:]
	}
	return nil
}
