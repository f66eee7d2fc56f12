package vectors

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// Source is the facts vectors are wanted for: the index.
type Source interface {
	// Indexed names each shard and the commit it was indexed at.
	Indexed() map[memd.ShardID]string
	// Facts counts a shard's facts.
	Facts(shard memd.ShardID) int
	// FactsSince tells the facts a shard lost and gained since mark (see
	// search.Engine.FactsSince).
	FactsSince(shard memd.ShardID, mark search.Mark, gone func(id string), fn func(id, text string) bool) (search.Mark, bool)
	// EachFact calls fn with each fact of a shard until fn returns false.
	EachFact(shard memd.ShardID, fn func(id, text string) bool)
}

// Status is how far the vectors are.
type Status struct {
	Model   string
	Vectors int // held
	Pending int // facts without one at the last look, about: vectors of facts gone count until pruned
	// Refused counts facts whose text the endpoint refused alone (a
	// content filter, a text too long); they are tried again at the next
	// start, and found by words meanwhile.
	Refused int
	// Ready: the last look found at most one fact in twenty without a
	// vector (see readySlack); until then recall answers by words alone.
	Ready     bool
	LastError string // of the last request, "" once one succeeds
	Failures  int    // requests failed since the start
}

// readySlack is how many facts may lack a vector while recall still
// searches by meaning: one in twenty, such as those written since the last
// look, found by their words until their vectors come; not a store's worth
// after a change of model or a large import.
func readySlack(held int) int { return held / 20 }

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
	looked  bool
	batch   int                     // texts a request, halved when the endpoint finds it too large
	scanned map[memd.ShardID]string // heads with every fact embedded
	// marks holds where each shard's last look stopped: a look reads only
	// the facts a shard gained since, not every fact after each write.
	marks   map[memd.ShardID]search.Mark
	before  map[memd.ShardID]search.Mark // the marks before the last look, for a failed embedding to go back to
	gen     int                          // counts Rebuilds
	refused map[fact]bool
}

// probeText is a text any endpoint embeds, to tell a refused text from an
// endpoint that refuses everything.
const probeText = "memory"

// maxScan bounds the facts one look collects to embed: a store embedded
// for the first time is looked at again every few thousand.
const maxScan = 4096

// NewFiller returns a filler of set from source through client.
func NewFiller(set *Set, client *Client, source Source, log *slog.Logger) *Filler {
	return &Filler{set: set, client: client, source: source, log: log, wake: make(chan struct{}, 1),
		status: Status{Model: set.Model()}, batch: client.Config().Batch, scanned: map[memd.ShardID]string{}, marks: map[memd.ShardID]search.Mark{}, before: map[memd.ShardID]search.Mark{}, refused: map[fact]bool{}}
}

// Rebuild forgets every vector and computes them again: the model behind
// the name now answers with other dimensions.
func (f *Filler) Rebuild() {
	if err := f.set.Reset(); err != nil {
		f.log.Warn("forgetting the vectors of other dimensions failed", "err", err)
	}
	f.startOver()
	f.Wake()
}

// startOver makes the next look read every fact again.
func (f *Filler) startOver() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.scanned)
	clear(f.marks)
	clear(f.before)
	f.gen++          // a look under way keeps none of what it read
	f.looked = false // not ready until a look counts what is missing
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
	st.Refused = len(f.refused)
	st.Ready = f.looked && st.Pending <= readySlack(st.Vectors)
	return st
}

// Run fills until ctx ends. It looks for facts without vectors when woken,
// and every poll otherwise (commits that reach the index by other ways
// than memd's writes: a push, a hand edit).
func (f *Filler) Run(ctx context.Context, poll time.Duration) {
	backoff := time.Second
	for {
		todo := f.look()
		if len(todo) == 0 {
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

// look collects up to maxScan facts without vectors from what the shards
// whose commit changed gained since the last look, counts the facts still
// without one, and forgets the vectors of facts gone once they are more
// than a few.
func (f *Filler) look() (todo []fact) {
	heads := f.source.Indexed()
	f.mu.Lock()
	gen := f.gen
	var changed []memd.ShardID
	for id, h := range heads {
		if f.scanned[id] != h {
			changed = append(changed, id)
		}
	}
	f.mu.Unlock()
	for _, id := range changed {
		f.mu.Lock()
		mark := f.marks[id]
		f.mu.Unlock()
		before, whole := len(todo), true
		var gone []string
		seen := map[string]bool{}
		next, restarted := f.source.FactsSince(id, mark, func(fid string) { gone = append(gone, fid) }, func(fid, text string) bool {
			seen[fid] = true
			if f.set.Has(id, fid) || f.isRefused(fact{id, fid, text}) {
				return true
			}
			if len(todo) == maxScan {
				whole = false
				return false
			}
			todo = append(todo, fact{id, fid, text})
			return true
		})
		switch {
		case restarted && whole:
			// Facts may have gone unseen (at a start, or before a
			// compaction of the index): the walk saw every live one.
			if err := f.set.Prune(id, func(fid string) bool { return seen[fid] }); err != nil {
				f.log.Warn("forgetting the vectors of facts gone failed", "shard", id, "err", err)
			}
		case restarted:
			f.prune(id) // the walk stopped short: every fact read again
		case len(gone) > 0:
			// A fact gone and back again (a revert) keeps its vector.
			gone = slices.DeleteFunc(gone, func(fid string) bool { return seen[fid] })
			if err := f.set.Remove(id, gone); err != nil {
				f.log.Warn("forgetting the vectors of facts gone failed", "shard", id, "err", err)
			}
		}
		f.mu.Lock()
		if f.gen == gen {
			f.before[id], f.marks[id] = mark, next
			if whole && len(todo) == before {
				f.scanned[id] = heads[id]
			}
		}
		f.mu.Unlock()
	}
	pending := 0
	refused := map[memd.ShardID]int{}
	f.mu.Lock()
	for ft := range f.refused {
		refused[ft.shard]++
	}
	f.mu.Unlock()
	for id := range heads {
		pending += max(0, f.source.Facts(id)-f.set.ShardLen(id)-refused[id])
	}
	f.mu.Lock()
	for id := range f.scanned {
		if _, ok := heads[id]; !ok {
			delete(f.scanned, id)
			delete(f.marks, id)
			delete(f.before, id)
		}
	}
	f.status.Pending = pending
	f.looked = f.gen == gen
	f.mu.Unlock()
	return todo
}

func (f *Filler) isRefused(ft fact) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused[ft]
}

// prune forgets the vectors of a shard's facts gone: forgotten, or edited
// into another text. It reads every fact of the shard; look calls it when
// it could not be told which went.
func (f *Filler) prune(id memd.ShardID) {
	live := map[string]bool{}
	f.source.EachFact(id, func(fid, _ string) bool {
		live[fid] = true
		return true
	})
	if err := f.set.Prune(id, func(fid string) bool { return live[fid] }); err != nil {
		f.log.Warn("forgetting the vectors of facts gone failed", "shard", id, "err", err)
	}
}

// embed embeds facts in batches and keeps their vectors. A batch the
// endpoint refuses is sent a text at a time, so that one text it will not
// take does not hold back the others; a text refused alone is skipped
// until the next start, unless every text of the batch is (then the
// endpoint, not the texts, is at fault).
func (f *Filler) embed(ctx context.Context, todo []fact) (err error) {
	defer func() {
		if err == nil {
			return
		}
		// What was not embedded is looked for again at the next look.
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, ft := range todo {
			if m, ok := f.before[ft.shard]; ok {
				f.marks[ft.shard] = m
			} else {
				delete(f.marks, ft.shard)
			}
		}
	}()
	for len(todo) > 0 {
		f.mu.Lock()
		batch := f.batch
		f.mu.Unlock()
		n := min(batch, len(todo))
		err := f.embedBatch(ctx, todo[:n])
		if errors.Is(err, ErrTooLarge) {
			// The endpoint takes fewer texts a request (text-embeddings-
			// inference: 32 by default): halved until it does.
			f.mu.Lock()
			f.batch = max(1, n/2)
			f.mu.Unlock()
			f.log.Info("the embeddings endpoint takes fewer texts a request", "batch", max(1, n/2))
			continue
		}
		if errors.Is(err, ErrRefused) {
			var refused []fact
			for _, ft := range todo[:n] {
				if n == 1 {
					refused = append(refused, ft)
				} else if err := f.embedBatch(ctx, []fact{ft}); errors.Is(err, ErrRefused) {
					refused = append(refused, ft)
				} else if err != nil {
					return err
				}
			}
			// Every text refused: the texts, or the endpoint refusing
			// everything? A text it has always taken tells.
			if len(refused) == n {
				if _, perr := f.client.Embed(ctx, []string{probeText}); perr != nil {
					return err
				}
			}
			f.mu.Lock()
			for _, ft := range refused {
				f.refused[ft] = true
				f.status.Pending = max(0, f.status.Pending-1)
			}
			f.mu.Unlock()
			for _, ft := range refused {
				f.log.Warn("the embeddings endpoint refused a fact's text; it is found by words alone", "shard", ft.shard, "fact", ft.id)
			}
		} else if err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// embedBatch embeds one request's facts and keeps their vectors; vectors
// of other dimensions than those held mean the model behind the name
// changed, and every vector is computed again.
func (f *Filler) embedBatch(ctx context.Context, facts []fact) error {
	texts := make([]string, len(facts))
	for i, ft := range facts {
		texts[i] = ft.text
	}
	got, err := f.client.Embed(ctx, texts)
	if err == nil {
		vs := make([]Vector, len(facts))
		for i, ft := range facts {
			vs[i] = Vector{Shard: ft.shard, ID: ft.id, V: got[i]}
		}
		err = f.set.Put(vs)
		if errors.Is(err, ErrDimensions) && f.set.Dim() != 0 && len(got[0]) != f.set.Dim() {
			f.log.Warn("the model's vectors changed dimensions; computing every vector again", "model", f.set.Model(), "was", f.set.Dim(), "now", len(got[0]))
			if err = f.set.Reset(); err == nil {
				f.startOver()
				err = f.set.Put(vs)
			}
		}
	}
	if f.OnRequest != nil {
		f.OnRequest(len(facts), err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.status.LastError = err.Error()
		f.status.Failures++
		return err
	}
	f.status.LastError = ""
	f.status.Pending = max(0, f.status.Pending-len(facts))
	return nil
}
