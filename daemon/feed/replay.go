package feed

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"iter"
	"runtime"
	"slices"
	"sync"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// A replay is read in two steps. Subscribe orders the commits to replay
// and keeps their names only; each event is described as the subscriber
// reads it. So a resume from thousands of commits back answers once its
// commits are listed, holds a few bytes a commit rather than every diff,
// and stops costing anything when its reader leaves. Listings and events
// are kept a while for the next subscriber: agents reconnecting together
// after a restart resume from the same commits, which are listed and
// described once.

// pending is a shard's commits a subscriber replays, in the order they go
// out.
type pending struct {
	shard   *gitstore.Shard
	commits []gitstore.Hash
}

// readReplay adds to the replay the commits of a shard the feed sent
// after where r resumes it.
func (s *Subscriber) readReplay(ctx context.Context, r resume) error {
	commits, err := s.hub.listReplay(ctx, s.agent, r)
	if err != nil || len(commits) == 0 {
		return err
	}
	s.replay = append(s.replay, pending{shard: r.shard, commits: commits})
	return nil
}

// listReplay returns the commits a resume of agent's replays, in order.
// Listing reads every commit of the range; agents resuming from the same
// commit of the same heads (as after a restart) share one listing.
func (h *Hub) listReplay(ctx context.Context, agent string, r resume) ([]gitstore.Hash, error) {
	if len(r.sent) == 0 || r.from.Commit == r.sent[len(r.sent)-1] {
		return nil, nil // resumed from the last head sent: nothing to list, no turn to wait for
	}
	key := r.key()
	if commits, ok := h.listed.get(key); ok {
		return commits, nil
	}
	// One listing at a time, whatever the processors: its memory is
	// large until done. It takes a replay's turn too, as its reading is.
	// An agent's resumes wait for each other first: one agent opening
	// many far resumes (a connection each) waits behind itself, and holds
	// one place in the queue the other agents wait in, not one a resume.
	done, err := h.agentListingTurn(ctx, agent)
	if err != nil {
		return nil, err
	}
	defer done()
	testHookListing("waits", agent)
	select {
	case h.listing <- struct{}{}:
		testHookListing("lists", agent)
		defer func() { <-h.listing }()
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.closing:
		return nil, errClosing
	}
	release, err := h.replaySlotFor(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if commits, ok := h.listed.get(key); ok { // listed while this one waited
		return commits, nil
	}
	var commits []gitstore.Commit
	if r.from.ByDate {
		commits, err = historyAfter(r.shard, r.from.Commit, r.sent[len(r.sent)-1], maxReplay, false)
	} else {
		commits, err = replayAfter(r.shard, r.from.Commit, r.sent, r.earlier, maxReplay)
	}
	if err != nil {
		return nil, err
	}
	hashes := make([]gitstore.Hash, len(commits))
	for i, c := range commits {
		hashes[i] = c.Hash
	}
	h.listed.put(key, hashes)
	return hashes, nil
}

// agentTurn is an agent's place in the queue for the listing turn.
type agentTurn struct {
	held  chan struct{} // by the agent's resume waiting for the listing turn, or listing
	users int           // the agent's resumes holding it or waiting for it
}

// agentListingTurn waits until none of an agent's other resumes is
// listing or waiting to, and returns what lets the next one go.
func (h *Hub) agentListingTurn(ctx context.Context, agent string) (done func(), err error) {
	h.listersMu.Lock()
	t := h.listers[agent]
	if t == nil {
		t = &agentTurn{held: make(chan struct{}, 1)}
		h.listers[agent] = t
	}
	t.users++
	h.listersMu.Unlock()
	leave := func() {
		h.listersMu.Lock()
		if t.users--; t.users == 0 {
			delete(h.listers, agent)
		}
		h.listersMu.Unlock()
	}
	testHookListing("waits behind its own", agent)
	select {
	case t.held <- struct{}{}:
		return func() { <-t.held; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	case <-h.closing:
		leave()
		return nil, errClosing
	}
}

// testHookListing is called as an agent's resume is about to wait for
// the agent's turn ("waits behind its own") and the listing turn
// ("waits"), and as it takes the latter ("lists").
var testHookListing = func(step, agent string) {}

// key names what a resume's listing depends on: the shard, where it
// resumes from, and the heads the feed had published.
func (r resume) key() string {
	d := sha256.New()
	d.Write([]byte(r.shard.ID().String()))
	d.Write(r.from.Commit[:])
	if r.from.ByDate {
		d.Write([]byte{1})
	}
	for _, hs := range [][]gitstore.Hash{r.sent, r.earlier} {
		binary.Write(d, binary.LittleEndian, uint64(len(hs)))
		for _, h := range hs {
			d.Write(h[:])
		}
	}
	return string(d.Sum(nil))
}

// listings keeps the last few replay listings, shared read-only by the
// subscribers given them.
type listings struct {
	mu   sync.Mutex
	keys []string // oldest first
	by   map[string][]gitstore.Hash
}

// keptListings is how many listings are kept: 8 MB at most.
const keptListings = 8

func newListings() *listings { return &listings{by: make(map[string][]gitstore.Hash)} }

func (l *listings) get(key string) ([]gitstore.Hash, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	hs, ok := l.by[key]
	return hs, ok
}

func (l *listings) put(key string, hs []gitstore.Hash) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.by[key]; ok {
		return
	}
	if len(l.keys) == keptListings {
		delete(l.by, l.keys[0])
		l.keys = l.keys[1:]
	}
	l.keys = append(l.keys, key)
	l.by[key] = slices.Clip(hs)
}

// Replay yields the events from history that precede the live ones, each
// described as it is read; a reader that stops early stops the work. An
// error (a commit that cannot be read) ends it.
func (s *Subscriber) Replay() iter.Seq2[memd.FeedEvent, error] {
	return func(yield func(memd.FeedEvent, error) bool) {
		for _, p := range s.replay {
			for _, h := range p.commits {
				ev, err := s.hub.replayed(p.shard, h)
				if !yield(ev, err) || err != nil {
					return
				}
			}
		}
	}
}

// errClosing refuses a subscription, or ends a replay, that waited for
// its turn as memd began to stop.
var errClosing = memd.Errorf(memd.EUNAVAILABLE, "%v", ErrShutdown)

// replaySlotFor waits for a turn to read history for a replay and returns
// its release, giving up when ctx ends or the hub closes. Replays take
// turns an event at a time, on all but one processor: many agents
// resuming from far back at once share them, and leave the live feed a
// processor to describe new commits on.
func (h *Hub) replaySlotFor(ctx context.Context) (func(), error) {
	select {
	case h.replaying <- struct{}{}:
		return func() { <-h.replaying }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.closing:
		return nil, errClosing
	}
}

// replayed returns the replay event of a commit, encoded.
func (h *Hub) replayed(sh *gitstore.Shard, commit gitstore.Hash) (memd.FeedEvent, error) {
	key := replayKey{sh.ID(), commit}
	if ev, ok := h.described.get(key); ok {
		return ev, nil
	}
	release, err := h.replaySlotFor(context.Background())
	if err != nil {
		return memd.FeedEvent{}, err
	}
	defer release()
	if ev, ok := h.described.get(key); ok { // described while this one waited
		return ev, nil
	}
	c, err := sh.ReadCommit(commit)
	if err != nil {
		return memd.FeedEvent{}, err
	}
	ev, err := event(sh, c)
	if err != nil {
		return memd.FeedEvent{}, err
	}
	ev.Replay = true
	ev.Encoded, _ = json.Marshal(ev)
	h.described.put(key, ev)
	if h.hooks.Described != nil {
		h.hooks.Described()
	}
	return ev, nil
}

func replaySlots() chan struct{} {
	return make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))
}

// describedBytes bounds what the events kept for replays hold (cost).
const describedBytes = 32 << 20

// cost is what a kept event holds: twice its encoding, which it holds
// beside its fields.
func cost(ev memd.FeedEvent) int { return 2 * len(ev.Encoded) }

type replayKey struct {
	shard  memd.ShardID
	commit gitstore.Hash
}

// eventCache keeps the replay events described last, up to a number of
// encoded bytes, dropping the least recently read first.
type eventCache struct {
	mu    sync.Mutex
	limit int
	size  int
	order *list.List // of *cached, most recently read first
	byKey map[replayKey]*list.Element
}

type cached struct {
	key replayKey
	ev  memd.FeedEvent
}

func newEventCache(limit int) *eventCache {
	return &eventCache{limit: limit, order: list.New(), byKey: make(map[replayKey]*list.Element)}
}

func (c *eventCache) get(k replayKey) (memd.FeedEvent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return memd.FeedEvent{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).ev, true
}

func (c *eventCache) put(k replayKey, ev memd.FeedEvent) {
	n := cost(ev)
	if n > c.limit/16 {
		return // one huge diff would push out the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.order.PushFront(&cached{k, ev})
	c.size += n
	for c.size > c.limit {
		last := c.order.Back()
		old := last.Value.(*cached)
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.size -= cost(old.ev)
	}
}
