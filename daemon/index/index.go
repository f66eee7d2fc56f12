// Package index keeps every fact of every shard, derived from each shard's
// HEAD: the fact's shard, tier, date, file and line, and the commit that
// introduced it with that commit's source messages. It feeds them to the
// in-memory search engine and keeps them on disk as one snapshot per shard
// (snapshot.go), at the commit it was read from; it catches up from there
// after any commit — memd's own, a person's, a revert, a pull — by reading
// the trailers of memd's commits and diffing the trees of the others. A
// buntdb file beside the snapshots records their format. It is a cache:
// deleting it loses nothing. By file: the snapshots' encoding (snapshot.go),
// reading and discarding them (persist.go), catching up (catchup.go),
// attribution (attribution.go), notes (notes.go), memory at an earlier
// commit (at.go).
package index

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// Keys in the buntdb file, which holds the format and nothing else: each
// shard's facts and notes are in its snapshot (snapshot.go), and vectors
// in their own files (daemon/vectors).
const (
	metaFormat = "meta:format"
	format     = "4" // 2: notes; 3: commit times; 4: snapshots beside the file
)

// Index is the fact index of a store.
type Index struct {
	db     *buntdb.DB
	store  *gitstore.Store
	search *search.Engine
	log    *slog.Logger

	dir string // the shards' snapshots

	mu    sync.Mutex // guards heads, notes, dirty, unread and locks
	heads map[memd.ShardID]gitstore.Hash
	// unread holds the shards whose snapshot is on disk and not yet read:
	// a shard is read when first caught up, so a start answers a caller
	// once its own shards are read, not the whole store.
	unread map[memd.ShardID]bool
	notes  map[memd.ShardID]map[string]*noteRecord // each shard's notes, by path
	// dirty holds the shards indexed past their snapshot, with when the
	// first change since it came.
	dirty map[memd.ShardID]time.Time
	locks map[memd.ShardID]*sync.Mutex

	saveMu    sync.Mutex                     // one snapshot written at a time, in order
	saveCost  map[memd.ShardID]time.Duration // how long each shard's last snapshot took (guarded by mu)
	saverDone chan struct{}

	bg sync.WaitGroup // background attribution
	// backlog holds the shards the background pass of ReadAll has yet to
	// bring up to date (and no CatchUp has); attributing, those whose facts are being
	// attributed to their commits in the background (how many times over).
	progressMu           sync.Mutex
	backlog, attributing map[memd.ShardID]int
	// walkAgain holds the shards whose attribution walk runs, and the
	// head to walk again from once it ends (zero: none).
	walkAgain map[memd.ShardID]gitstore.Hash
	ctx       context.Context
	cancel    context.CancelFunc

	// toFollow holds the shards memd committed to since the follower
	// last caught them up (guarded by mu); followWake wakes it.
	toFollow     map[memd.ShardID]bool
	followWake   chan struct{}
	followerDone chan struct{}

	// OnCatchUp, when set, is told how long each catch-up took.
	OnCatchUp func(shard memd.ShardID, took time.Duration, full bool)

	followUpTo int // followUpTo, lowered by tests
	readBatch  int // readBatch, lowered by tests
}

// readBatch is how many facts readHeadInParts puts at a time. A batch's
// facts and terms are what the collector marks while a shard is read (the
// index it fills holds few pointers), at each of the forty-odd passes
// memd's GOGC=25 makes over a million facts: batches of 5,000 rather than
// 20,000 started a shard of a million in 2.16–2.20 s rather than
// 2.28–2.35, at a peak of 350–357 MiB rather than 378, side by side.
const readBatch = 5000

// Open opens (or creates) the index file at path and loads it with the
// shards' snapshots, kept in a directory beside it (path without its
// extension, with ".shards"). An index in an older format is discarded
// and rebuilt.
func Open(path string, store *gitstore.Store, log *slog.Logger) (*Index, error) {
	db, err := buntdb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	db.SetConfig(buntdb.Config{SyncPolicy: buntdb.EverySecond, AutoShrinkPercentage: 100, AutoShrinkMinSize: 32 << 20})
	x := &Index{db: db, store: store, search: search.New(), log: log,
		dir:   strings.TrimSuffix(path, filepath.Ext(path)) + ".shards",
		heads: make(map[memd.ShardID]gitstore.Hash), notes: make(map[memd.ShardID]map[string]*noteRecord),
		dirty: make(map[memd.ShardID]time.Time), locks: make(map[memd.ShardID]*sync.Mutex), unread: make(map[memd.ShardID]bool),
		saveCost: make(map[memd.ShardID]time.Duration), backlog: make(map[memd.ShardID]int), attributing: make(map[memd.ShardID]int), walkAgain: make(map[memd.ShardID]gitstore.Hash),
		saverDone: make(chan struct{}), followUpTo: followUpTo, readBatch: readBatch,
		toFollow: make(map[memd.ShardID]bool), followWake: make(chan struct{}, 1), followerDone: make(chan struct{})}
	x.search.KeepWords()
	x.ctx, x.cancel = context.WithCancel(context.Background())
	if err := x.load(); err != nil {
		db.Close()
		return nil, err
	}
	go x.saver()
	go x.follower()
	return x, nil
}

// Close stops background work, writes the snapshots of shards indexed
// past them, and closes the index.
func (x *Index) Close() error {
	x.followCommitted() // what memd wrote last goes into the snapshots
	x.cancel()
	<-x.followerDone
	x.bg.Wait()
	<-x.saverDone
	if err := x.saveDirty(true); err != nil {
		// A snapshot only spares the next start reading the shards from
		// git again: one not written (a full disk) loses nothing, and a
		// stop that otherwise went well is not a failed one.
		x.log.Warn("writing index snapshots at shutdown; the next start reads those shards from git", "err", err)
	}
	return x.db.Close()
}

// Engine returns the in-memory search engine over the indexed facts.
func (x *Index) Engine() *search.Engine { return x.search }

// hashString names a commit for the search engine; none is "".
func hashString(h gitstore.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

func docOf(l gitstore.Line) search.Doc {
	return search.Doc{Fact: l.Fact, Offset: l.Offset}
}

// lock serialises catch-up of one shard.
func (x *Index) lock(id memd.ShardID) func() {
	x.mu.Lock()
	l := x.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		x.locks[id] = l
	}
	x.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// upToDate reports whether a shard is indexed, and at head.
func (x *Index) upToDate(id memd.ShardID, head gitstore.Hash) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return !x.unread[id] && x.heads[id] == head
}

func (x *Index) isUnread(id memd.ShardID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.unread[id]
}

// Backlog returns how many shards the background pass started by ReadAll
// has yet to bring up to date and nothing else has, of those counted
// says (nil: all); 0 once it is done.
func (x *Index) Backlog(counted func(memd.ShardID) bool) int {
	return x.progress(x.backlog, counted)
}

// Attributing counts the shards whose facts are being attributed to their
// commits in the background (read from HEAD: until then their hits name
// no commit), of those counted says (nil: all).
func (x *Index) Attributing(counted func(memd.ShardID) bool) int {
	return x.progress(x.attributing, counted)
}

// progress counts the shards of set that counted says (nil: all), asked
// outside the lock: counted may take locks of its own (the access rules
// read the registry).
func (x *Index) progress(set map[memd.ShardID]int, counted func(memd.ShardID) bool) int {
	x.progressMu.Lock()
	ids := slices.Collect(maps.Keys(set))
	x.progressMu.Unlock()
	if counted == nil {
		return len(ids)
	}
	n := 0
	for _, id := range ids {
		if counted(id) {
			n++
		}
	}
	return n
}

// mark adds one to a shard's count in set (by -1: takes one off).
func (x *Index) mark(set map[memd.ShardID]int, id memd.ShardID, by int) {
	x.progressMu.Lock()
	defer x.progressMu.Unlock()
	if set[id] += by; set[id] <= 0 {
		delete(set, id)
	}
}

// Facts returns how many facts of the given shards are indexed.
func (x *Index) Facts(ids ...memd.ShardID) int { return x.search.Facts(ids...) }

// Summary returns how many facts of a shard are indexed and the commit
// they were indexed from, taken together.
func (x *Index) Summary(id memd.ShardID) (facts int, head gitstore.Hash) {
	defer x.lock(id)()
	return x.search.Facts(id), x.Head(id)
}

// Head returns the commit a shard's facts were indexed from.
func (x *Index) Head(id memd.ShardID) gitstore.Hash {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.heads[id]
}

func report(progress func(string, int, int), stage string, done, total int) {
	if progress != nil {
		progress(stage, done, total)
	}
}
