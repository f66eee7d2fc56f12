// Package feed sends memory diffs to subscribers as they happen: after
// every commit in a shard — memd's own write, a revert, a person's git
// commit, a pull — each subscriber that may read the shard gets one event
// with the commit's provenance and its fact-level diff. A subscriber that
// resumes from a commit gets the commits after it from git history first,
// then the live ones, with no gap and no duplicate. A subscriber that falls
// behind its bounded buffer is cut off with a reason, and resumes.
package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/udiff"
	"github.com/memd/memd/provenance"
)

// Buffer is how many events a subscriber may fall behind by before it is
// cut off.
const Buffer = 512

// maxReplay bounds how many commits a subscriber resuming with since may
// ask to replay: enough for one cut off in a push of that many commits to
// resume where it stopped. Listing a replay holds some 2 KB a commit until
// it is done (100 MB at the bound, one listing at a time), the replay 20
// bytes a commit until it is read. maxBacklog bounds how far the hub
// itself may fall behind a shard under sustained writes before it gives
// up and sends a reset: it is large, because a reset under load would
// break the promise of every commit once, in order, for every subscriber
// of the shard.
const (
	maxReplay  = 50_000
	maxBacklog = 1 << 20
)

// Hooks let the daemon count what the hub does.
type Hooks struct {
	Published func(op string)    // a commit was sent; op is its Memory-Op, or "person"
	Dropped   func()             // a subscriber was cut off for falling behind
	Moved     func(memd.ShardID) // a shard's branch moved, by memd or anyone (after its events went out)
	Described func()             // a commit was read from history and described for a replay
}

// Hub publishes commits to subscribers.
type Hub struct {
	store *gitstore.Store
	log   *slog.Logger
	hooks Hooks

	mu   sync.Mutex // guards subs and cutOff
	subs map[*Subscriber]struct{}
	// cutOff holds the subscribers cut off for falling behind until they
	// unsubscribe: sent nothing more, they may still be sending their
	// replay, which an agent's removal or memd stopping ends.
	cutOff map[*Subscriber]struct{}
	shards sync.Map // memd.ShardID -> *shardFeed

	dirtyMu    sync.Mutex
	dirty      map[memd.ShardID]bool
	publishing map[memd.ShardID]bool // shards being read and sent
	wake       chan struct{}

	watch *gitstore.RefWatcher // set and used by Run's goroutine alone

	replaying chan struct{} // turns at reading history for replays (replaySlotFor)
	listing   chan struct{} // the one listing of a replay read at a time
	listersMu sync.Mutex
	listers   map[string]*agentTurn // by agent: its resumes' one place in the queue for listing
	closing   chan struct{}         // closed by Close: replays waiting for a turn give up
	listed    *listings             // replays listed lately
	described *eventCache           // replay events described lately
}

// New returns a hub for a store. Shards are published from their current
// HEAD on: commits made before the hub started reach subscribers only
// through since.
func New(store *gitstore.Store, log *slog.Logger, hooks Hooks) (*Hub, error) {
	h := &Hub{store: store, log: log, hooks: hooks, subs: make(map[*Subscriber]struct{}), cutOff: make(map[*Subscriber]struct{}),
		dirty: make(map[memd.ShardID]bool), publishing: make(map[memd.ShardID]bool), wake: make(chan struct{}, 1),
		replaying: replaySlots(), listing: make(chan struct{}, 1), listers: make(map[string]*agentTurn), closing: make(chan struct{}), listed: newListings(), described: newEventCache(describedBytes)}
	ids, err := store.Shards()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		sh, err := store.Shard(id)
		if err != nil {
			return nil, err
		}
		head, err := sh.Head()
		if err != nil {
			return nil, err
		}
		h.shards.Store(id, &shardFeed{head: head, sent: []gitstore.Hash{head}})
	}
	return h, nil
}

func (h *Hub) feedOf(id memd.ShardID) *shardFeed {
	// A shard first seen after start is new: everything in it is news.
	f, _ := h.shards.LoadOrStore(id, &shardFeed{sent: []gitstore.Hash{{}}, fresh: true})
	return f.(*shardFeed)
}

// Notify tells the hub a shard's branch may have moved. It never blocks;
// the hub's worker reads the new commits.
func (h *Hub) Notify(id memd.ShardID) {
	h.dirtyMu.Lock()
	h.dirty[id] = true
	h.dirtyMu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// sweepEvery is how many poll intervals pass between checks of every shard
// while their refs are watched.
const sweepEvery = 10

// Run publishes notified shards until ctx ends. Commits made outside memd
// (a person's git commit) are seen at once through a watch on every
// shard's refs, and every interval, in case the watch missed one or could
// not be set, every shard is checked.
func (h *Hub) Run(ctx context.Context, interval time.Duration) {
	watch, err := h.store.WatchRefs(h.Notify)
	if err != nil {
		h.log.Warn("feed: cannot watch the shards' refs; polling them only", "every", interval, "err", err)
	} else {
		h.watch = watch
		defer watch.Close()
	}
	// Each interval, the shards not watched (made by hand since, or past
	// the kernel's limit) are checked; every sweepEvery intervals, all.
	check := func(all bool) {
		ids, err := h.store.Shards()
		if err != nil {
			return
		}
		for _, id := range ids {
			if watch != nil && watch.Watching(id) && !all {
				continue
			}
			if watch != nil {
				watch.Add(id)
			}
			h.Notify(id)
		}
	}
	check(true)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var running sync.WaitGroup
	defer running.Wait() // before the watch closes
	slots := make(chan struct{}, publishers)
	ticks := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-tick.C:
			ticks++
			check(watch == nil || ticks%sweepEvery == 0)
		}
		h.dirtyMu.Lock()
		dirty := h.dirty
		h.dirty = make(map[memd.ShardID]bool)
		h.dirtyMu.Unlock()
		for id := range dirty {
			if !h.startPublishing(ctx, id, slots, &running) {
				return
			}
		}
	}
}

// publishers is how many shards the hub reads and sends at once: a large
// batch of one shard (a person's push of thousands of commits) holds up
// no other shard's events while a slot is free.
const publishers = 4

// startPublishing publishes a shard in the background once a slot is
// free, unless it is being published already: then it stays dirty, and
// its publisher has the hub read it again when done. It returns false
// when ctx ended while it waited for a slot.
func (h *Hub) startPublishing(ctx context.Context, id memd.ShardID, slots chan struct{}, running *sync.WaitGroup) bool {
	h.dirtyMu.Lock()
	if h.publishing[id] {
		h.dirty[id] = true
		h.dirtyMu.Unlock()
		return true
	}
	h.publishing[id] = true
	h.dirtyMu.Unlock()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	running.Add(1)
	go func() {
		defer running.Done()
		if err := h.publish(id); err != nil && memd.ErrorCode(err) != memd.ENOTFOUND {
			h.log.Warn("feed: reading new commits", "shard", id, "err", err)
		}
		<-slots
		h.dirtyMu.Lock()
		delete(h.publishing, id)
		again := h.dirty[id]
		h.dirtyMu.Unlock()
		if again {
			select {
			case h.wake <- struct{}{}:
			default:
			}
		}
	}()
	return true
}

// publish sends the commits of a shard since the last one published, in
// order.
func (h *Hub) publish(id memd.ShardID) error {
	sh, err := h.store.Shard(id)
	if err != nil {
		return err
	}
	if h.watch != nil {
		h.watch.Add(id) // a shard memd just made is watched from its first commit
	}
	f := h.feedOf(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	return h.publishHeld(sh, f)
}

// publishHeld is publish, the shard's feed held.
func (h *Hub) publishHeld(sh *gitstore.Shard, f *shardFeed) error {
	id := sh.ID()
	h.keepFile(sh, f, f.startFile)
	// A commit made outside memd is read at once, so facts a stale git
	// index dropped are restored now, not at the next call that reads
	// the shard.
	if err := sh.Refresh(); err != nil {
		return err
	}
	head, err := sh.Head()
	if err != nil || head == f.head {
		return err
	}
	commits, reached, err := after(sh, f.head, head, maxBacklog)
	if err != nil {
		return err
	}
	if !reached {
		// The branch was reset or rewritten: say so, then carry on from it.
		h.keepFile(sh, f, func(sh *gitstore.Shard) error { return f.keepHead(sh, head, true) })
		h.deliver(memd.FeedEvent{Type: memd.EventReset, Shard: id, Commit: head.String()})
		f.published(head, true)
		if h.hooks.Moved != nil {
			h.hooks.Moved(id)
		}
		return nil
	}
	// The head is kept before the batch goes out: a kill while it does
	// leaves the batch whole for a replay after the restart.
	h.keepFile(sh, f, func(sh *gitstore.Shard) error { return f.keepHead(sh, head, false) })
	for _, c := range inFeedOrder(commits, head) {
		ev, err := event(sh, c)
		if err != nil {
			return err
		}
		h.deliver(ev)
		if h.hooks.Published != nil {
			op := ev.Provenance.Op
			if op == "" {
				op = memd.LearnedPerson
			}
			h.hooks.Published(op)
		}
	}
	f.published(head, false)
	if h.hooks.Moved != nil {
		h.hooks.Moved(id)
	}
	return nil
}

// keepFile runs a step of keeping the shard's file of heads, and warns,
// once a run and shard, when one fails: the feed goes on, and a replay
// across a restart goes by the history's order where the file lacks a
// head.
func (h *Hub) keepFile(sh *gitstore.Shard, f *shardFeed, step func(*gitstore.Shard) error) {
	if err := step(sh); err != nil && !f.warned {
		f.warned = true
		h.log.Warn("feed: keeping the heads published", "shard", sh.ID(), "err", err)
	}
}

// after returns the commits after from up to to, parents first; reached is
// false when from is not an ancestor of to within limit commits. Commits
// brought in from a remote come in as they were made, then the merge.
func after(sh *gitstore.Shard, from, to gitstore.Hash, limit int) (commits []gitstore.Commit, reached bool, err error) {
	commits, reached, err = sh.Range(from, to, limit)
	if errors.Is(err, gitstore.ErrTooFar) {
		return nil, false, nil
	}
	return commits, reached, err
}

// event describes one commit.
func event(sh *gitstore.Shard, c gitstore.Commit) (memd.FeedEvent, error) {
	rec, err := provenance.DescribeCommit(sh, c)
	if err != nil {
		return memd.FeedEvent{}, err
	}
	ev := memd.FeedEvent{Type: memd.EventCommit, Shard: sh.ID(), Commit: rec.Hash, Author: rec.Author,
		Time: rec.Time, Subject: rec.Subject, Provenance: rec.Provenance, Changes: rec.Changes}
	var parent gitstore.Hash
	if len(c.Parents) > 0 {
		parent = c.Parents[0]
		ev.Parent = parent.String()
	}
	for _, path := range rec.Notes {
		if !strings.HasPrefix(path, gitstore.NotesDir+"/") {
			continue
		}
		before, hadBefore, err := sh.FileAt(parent, path)
		if err != nil {
			return ev, err
		}
		now, hasNow, err := sh.FileAt(c.Hash, path)
		if err != nil {
			return ev, err
		}
		nc := memd.NoteChange{Path: path, Diff: udiff.Diff(path, string(before), string(now))}
		if hadBefore {
			nc.Before = memd.NoteRevision(string(before))
		}
		if hasNow {
			nc.After = memd.NoteRevision(string(now))
		}
		ev.Notes = append(ev.Notes, nc)
	}
	return ev, nil
}

// Announce sends an event that is not a commit (a learner failure) to the
// subscribers of its shard.
func (h *Hub) Announce(ev memd.FeedEvent) { h.deliver(ev) }

func (h *Hub) deliver(ev memd.FeedEvent) {
	ev.Encoded, _ = json.Marshal(ev) // once, for every subscriber
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !s.wants(ev.Shard) {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			delete(h.subs, s)
			h.cutOff[s] = struct{}{}
			s.cut(memd.ErrOverrun)
			h.log.Warn("feed: cut off a subscriber that fell behind; it resumes with since", "shard", ev.Shard, "commit", ev.Commit)
			if h.hooks.Dropped != nil {
				h.hooks.Dropped()
			}
		}
	}
}

// Subscriber receives the events of the shards it wants.
type Subscriber struct {
	agent  string // the agent following ("" for the admin)
	wants  func(memd.ShardID) bool
	ch     chan memd.FeedEvent
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex // guards reason
	reason error
	hub    *Hub
	replay []pending // what it resumes with, shard by shard
}

// Events returns the live events; read Replay first.
func (s *Subscriber) Events() <-chan memd.FeedEvent { return s.ch }

// Done is closed when the hub cut the subscriber off; Err says why.
func (s *Subscriber) Done() <-chan struct{} { return s.done }

// Err is why the subscriber was cut off.
func (s *Subscriber) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

func (s *Subscriber) cut(err error) { s.end(err, false) }

// end cuts the subscriber off; over says err is why even when it was cut
// off for falling behind already (its agent removed, or memd stopping,
// ends the replay it is still sent).
func (s *Subscriber) end(err error, over bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason == nil || over && errors.Is(s.reason, memd.ErrOverrun) {
		s.reason = err
	}
	s.once.Do(func() { close(s.done) })
}

// Subscribe registers a subscriber for the shards wants accepts. For each
// shard in since it reads the commits the feed sent after the given one,
// up to the last commit published; live events follow from there, so
// nothing is missed or sent twice. A commit the feed never sent (not on
// the shard's branch, or too far back) is an error.
//
// Listing what to replay waits its turn; a ctx that ends meanwhile (the
// client left) ends the wait.
func (h *Hub) Subscribe(ctx context.Context, agent string, wants func(memd.ShardID) bool, since map[memd.ShardID]Since) (*Subscriber, error) {
	s := h.newSubscriber(agent, wants)
	resumes, err := h.register(s, since)
	if err != nil {
		return nil, err
	}
	// What to replay is read with the shards' feeds free: a resume from
	// far back holds up no one's live events (which wait in the
	// subscriber's buffer meanwhile, behind the replay).
	for _, r := range resumes {
		if err := s.readReplay(ctx, r); err != nil {
			h.Unsubscribe(s)
			return nil, err
		}
	}
	return s, nil
}

func (h *Hub) newSubscriber(agent string, wants func(memd.ShardID) bool) *Subscriber {
	return &Subscriber{agent: agent, wants: wants, ch: make(chan memd.FeedEvent, Buffer), done: make(chan struct{}), hub: h}
}

// Since is where a subscriber resumes a shard: after a commit the feed
// sent, or, named by a date, after everything the last commit of that day
// holds (commits of a branch merged later, made after the day, included).
type Since struct {
	Commit gitstore.Hash
	ByDate bool
}

// resume is a shard a subscriber resumes, from where, and the heads its
// feed had published when the subscriber registered: this run's, and,
// when the resume may reach back past them, the earlier runs' as the
// shard's file held them then (a publisher may cut the file back at any
// later time).
type resume struct {
	shard         *gitstore.Shard
	from          Since
	sent, earlier []gitstore.Hash
}

// register adds a subscriber, holding the feeds of the shards it resumes
// (in the order of their names) while it does, so that what a replay
// reads up to and the first live event meet with nothing between. Each
// resumed shard is published first: a commit memd has just answered with
// is one the replay can start from, and the history of a shard the hub had
// not read yet is not news to this subscriber later.
func (h *Hub) register(s *Subscriber, since map[memd.ShardID]Since) ([]resume, error) {
	ids := slices.SortedFunc(maps.Keys(since), func(a, b memd.ShardID) int { return strings.Compare(a.String(), b.String()) })
	var locked []*shardFeed
	defer func() {
		for _, f := range locked {
			f.mu.Unlock()
		}
	}()
	resumes := make([]resume, 0, len(ids))
	for _, id := range ids {
		sh, err := h.store.Shard(id)
		if err != nil {
			return nil, err
		}
		f := h.feedOf(id)
		f.mu.Lock()
		locked = append(locked, f)
		if err := h.publishHeld(sh, f); err != nil {
			return nil, err
		}
		r := resume{shard: sh, from: since[id], sent: slices.Clone(f.sent)}
		if !r.from.ByDate && r.from.Commit != f.head {
			// Unread, a replay past this run's first head goes by the
			// history's order.
			r.earlier, _ = earlierHeads(sh, f.sent)
		}
		resumes = append(resumes, r)
	}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return resumes, nil
}

// Unsubscribe removes a subscriber.
func (h *Hub) Unsubscribe(s *Subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	delete(h.cutOff, s)
	h.mu.Unlock()
	s.cut(fmt.Errorf("unsubscribed"))
}

// CutAgent cuts off every subscriber of an agent, as it is removed: its
// token no longer opens anything, and what it had open closes now.
func (h *Hub) CutAgent(agent string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range []map[*Subscriber]struct{}{h.subs, h.cutOff} {
		for s := range set {
			if s.agent == agent && agent != "" {
				s.end(ErrAgentRemoved, true)
				delete(set, s)
			}
		}
	}
}

// ErrAgentRemoved is why an agent's subscribers are cut off when it is
// removed.
var ErrAgentRemoved = memd.Errorf(memd.EUNAUTHORIZED, "the agent was removed; its token no longer opens anything")

// Close cuts every subscriber off, as the daemon stops.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range []map[*Subscriber]struct{}{h.subs, h.cutOff} {
		for s := range set {
			s.end(ErrShutdown, true)
			delete(set, s)
		}
	}
	// After the cuts: a replay that gives up its wait finds its
	// subscriber ended, and its feed says why.
	select {
	case <-h.closing:
	default:
		close(h.closing)
	}
}

// ErrShutdown is why subscribers are cut off when memd stops.
var ErrShutdown = errors.New("memd is shutting down; reconnect with since to resume")

// Subscribers returns how many subscribers are registered.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
