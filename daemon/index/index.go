// Package index keeps every fact of every shard, derived from each shard's
// HEAD: the fact's shard, tier, date, file and line, and the commit that
// introduced it with that commit's source messages. It feeds them to the
// in-memory search engine and keeps them on disk as one snapshot per shard
// (snapshot.go), at the commit it was read from; it catches up from there
// after any commit — memd's own, a person's, a revert, a pull — by reading
// the trailers of memd's commits and diffing the trees of the others. A
// buntdb file beside the snapshots caches embeddings. It is a cache:
// deleting it loses nothing.
package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Key prefixes in the buntdb file, which holds the format, cached
// embeddings, and nothing else: each shard's facts and notes are in its
// snapshot (snapshot.go).
const (
	metaFormat = "meta:format"
	format     = "4" // 2: notes; 3: commit times; 4: snapshots beside the file
	// Earlier formats kept facts, heads and notes in the file.
	factPrefix = "fact:"
	headPrefix = "head:"
	notePrefix = "note:"
)

// maxWalk bounds how many commits catch-up reads before it reads HEAD
// afresh instead.
const maxWalk = 10000

// Index is the fact index of a store.
type Index struct {
	db     *buntdb.DB
	store  *gitstore.Store
	search *search.Index
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
	// backlog counts the shards the background pass of ReadAll has yet
	// to bring up to date.
	backlog atomic.Int64
	ctx     context.Context
	cancel  context.CancelFunc

	// OnCatchUp, when set, is told how long each catch-up took.
	OnCatchUp func(shard memd.ShardID, took time.Duration, full bool)
}

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
		saveCost:  make(map[memd.ShardID]time.Duration),
		saverDone: make(chan struct{})}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	if err := x.load(); err != nil {
		db.Close()
		return nil, err
	}
	go x.saver()
	return x, nil
}

// Close stops background work, writes the snapshots of shards indexed
// past them, and closes the index.
func (x *Index) Close() error {
	x.cancel()
	x.bg.Wait()
	<-x.saverDone
	err := x.saveDirty(true)
	if cerr := x.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Search returns the in-memory search engine over the indexed facts.
func (x *Index) Search() *search.Index { return x.search }

func (x *Index) load() error {
	stale := false
	err := x.db.View(func(tx *buntdb.Tx) error {
		v, err := tx.Get(metaFormat)
		stale = err != nil || v != format
		return nil
	})
	if err != nil {
		return fmt.Errorf("load index: %w", err)
	}
	if stale {
		return x.discard()
	}
	ids, err := x.snapshotShards()
	if err != nil {
		return fmt.Errorf("load index: %w", err)
	}
	for _, id := range ids {
		x.unread[id] = true
	}
	return nil
}

// readSnapshot reads a shard's snapshot into the index if it has one not
// yet read. The caller holds the shard's lock.
func (x *Index) readSnapshot(id memd.ShardID) error {
	if !x.isUnread(id) {
		return nil
	}
	path := x.snapshotPath(id)
	main, postings, tail, err := readSnapshotFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read index snapshot: %w", err)
	}
	var snap snapshot
	read := err == nil
	if read {
		if snap, err = decodeSnapshotParts(id, main, postings, tail); err != nil {
			// Its shard is read from HEAD again.
			if errors.Is(err, errOldSnapshot) {
				x.log.Info("reading a shard from HEAD: its index snapshot is in an older format", "shard", id)
			} else {
				x.log.Warn("dropping a damaged index snapshot", "shard", id, "file", path, "err", err)
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("drop index snapshot: %w", err)
			}
			read = false
		}
	}
	stale := false // postings another analysis made: the snapshot is written again
	if read {
		used := x.search.Apply(search.Update{Shard: id, Head: hashString(snap.head), Replace: true, Put: snap.facts, Notes: notePassages(id, snap.notes), Postings: snap.postings})
		stale = !used && len(snap.facts) > 0
		if slices.ContainsFunc(snap.facts, func(d search.Doc) bool { return d.Commit == "" }) {
			// Written while facts were still being attributed.
			x.attributeLater(id, snap.head)
		}
	}
	x.mu.Lock()
	if read {
		x.heads[id] = snap.head
		x.notes[id] = snap.notes
	}
	if stale {
		x.markDirty(id)
	}
	delete(x.unread, id)
	x.mu.Unlock()
	return nil
}

// GC percentages while the index is read in bulk, unless the GOGC
// environment variable sets one: by a daemon, whose peak is what its
// machine must have (readingGC), and by a rebuild in a process of its own,
// which may trade memory for time (rebuildGC).
const (
	readingGC = 15
	rebuildGC = 25
)

// collectOftenWhileReading sets the GC percentage for a bulk read and
// returns what puts it back.
func collectOftenWhileReading(percent int) func() {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	was := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(was) }
}

// ReadAll brings every shard of the store up to date in the background,
// reading the snapshots not yet read, until the index closes.
func (x *Index) ReadAll() {
	// Counted before the start answers anyone, so that a status never
	// says all is read before the reading began.
	ids, err := x.store.Shards()
	if err != nil {
		x.log.Warn("listing shards to index", "err", err)
		return
	}
	x.backlog.Store(int64(len(ids)))
	x.bg.Add(1)
	go func() {
		defer x.bg.Done()
		// Reading leaves garbage as it goes (each text's words); collect
		// it more often than Go's default of letting the heap double, so
		// the peak stays near what the index holds.
		defer collectOftenWhileReading(readingGC)()
		for _, id := range ids {
			if x.ctx.Err() != nil {
				return
			}
			if err := x.CatchUp(id); err != nil {
				x.log.Warn("bringing the index up to date", "shard", id, "err", err)
			}
			x.backlog.Add(-1)
		}
		// Reading leaves as much garbage as the index holds; hand its
		// pages back now rather than keep them resident.
		debug.FreeOSMemory()
	}()
}

// snapshotShards lists the shards that have a snapshot, and removes what
// a write stopped half way left.
func (x *Index) snapshotShards() ([]memd.ShardID, error) {
	var ids []memd.ShardID
	kinds, err := os.ReadDir(x.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if !k.IsDir() {
			continue // not memd's
		}
		files, err := os.ReadDir(filepath.Join(x.dir, k.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			name, ok := strings.CutSuffix(f.Name(), ".snap")
			if !ok {
				os.Remove(filepath.Join(x.dir, k.Name(), f.Name())) // a write stopped half way
				continue
			}
			if id, err := memd.ParseShardID(k.Name() + "/" + name); err == nil {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// discard empties the index: the snapshots go, and of the file only the
// cached embeddings stay, as they depend only on a fact's text.
func (x *Index) discard() error {
	if err := os.RemoveAll(x.dir); err != nil {
		return fmt.Errorf("discard index: %w", err)
	}
	return x.db.Update(func(tx *buntdb.Tx) error {
		var keys []string
		for _, prefix := range []string{factPrefix, headPrefix, notePrefix} {
			tx.AscendKeys(prefix+"*", func(k, _ string) bool {
				keys = append(keys, k)
				return true
			})
		}
		var kept [][2]string
		tx.AscendKeys(embPrefix+"*", func(k, v string) bool {
			kept = append(kept, [2]string{k, v})
			return len(kept) < len(keys)
		})
		if len(kept) < len(keys) {
			// Emptying the file and keeping the few embeddings is cheaper
			// than deleting every fact one by one.
			if err := tx.DeleteAll(); err != nil {
				return err
			}
			for _, kv := range kept {
				if _, _, err := tx.Set(kv[0], kv[1], nil); err != nil {
					return err
				}
			}
		} else {
			for _, k := range keys {
				if _, err := tx.Delete(k); err != nil {
					return err
				}
			}
		}
		_, _, err := tx.Set(metaFormat, format, nil)
		return err
	})
}

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
// has yet to bring up to date; 0 once it is done.
func (x *Index) Backlog() int { return int(x.backlog.Load()) }

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

// CatchUp brings the index of the given shards to their HEADs. Shards that
// do not exist are skipped.
func (x *Index) CatchUp(ids ...memd.ShardID) error {
	for _, id := range ids {
		sh, err := x.store.Shard(id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			continue
		}
		if err != nil {
			return err
		}
		if err := x.catchUp(sh); err != nil {
			return fmt.Errorf("index %s: %w", id, err)
		}
	}
	return nil
}

// CatchUpAll brings every shard of the store up to date.
func (x *Index) CatchUpAll() error {
	ids, err := x.store.Shards()
	if err != nil {
		return err
	}
	return x.CatchUp(ids...)
}

func (x *Index) catchUp(sh *gitstore.Shard) error {
	head, err := sh.Head()
	if err != nil {
		return err
	}
	id := sh.ID()
	if x.upToDate(id, head) {
		return nil
	}
	defer x.lock(id)()
	if err := x.readSnapshot(id); err != nil {
		return err
	}
	indexed := x.Head(id)
	if indexed == head {
		return nil
	}
	start := time.Now()
	full := false
	parsed := sh.Parsed()
	if head.IsZero() {
		err = x.replaceShard(sh, nil, head)
	} else {
		// A shard never indexed is followed from its first commit while its
		// history is short, which attributes every fact on the way. Writes
		// during it move HEAD; it is followed again to the newer HEAD.
		err = x.follow(sh, indexed, head)
		for try := 0; errors.Is(err, errHeadMoved) && try < 10; try++ {
			if head, err = sh.Head(); err == nil {
				err = x.follow(sh, indexed, head)
			}
		}
		if errors.Is(err, errUnknownBase) || errors.Is(err, errHeadMoved) {
			full = true
			err = x.rebuildShard(sh)
		}
	}
	if err == nil && indexed.IsZero() && !parsed {
		// A first indexing parsed every file for the index alone: a start
		// on a store no memd has indexed would otherwise hold every
		// shard's files at once, until they sat idle for a minute.
		sh.Release()
	}
	if err == nil && x.OnCatchUp != nil {
		x.OnCatchUp(id, time.Since(start), full)
	}
	return err
}

var (
	errUnknownBase = errors.New("indexed commit is not an ancestor of HEAD")
	errHeadMoved   = errors.New("HEAD moved during the catch-up")
)

// follow catches up from indexed to head by reading the commits between
// them: the trailers of memd's commits name the facts they changed, other
// commits are diffed. Each touched fact is then read from HEAD: present, it
// is (re)indexed, attributed to the newest commit that touched it; absent,
// it is dropped.
func (x *Index) follow(sh *gitstore.Shard, indexed, head gitstore.Hash) error {
	type touch struct {
		commit   string
		messages []string
		chat     string
		when     int64
	}
	touched := make(map[string]*touch)
	var order []string
	notes := make(map[string]*noteRecord) // notes changed, by path; filled in below
	noteCommits := make(map[string]gitstore.Commit)
	commits, reached, err := sh.Range(indexed, head, maxWalk)
	if err != nil && !errors.Is(err, gitstore.ErrTooFar) {
		return err
	}
	if !reached {
		return errUnknownBase
	}
	// Newest first, so that each fact is attributed to the last commit
	// that touched it. A merge's own diff repeats the changes of the
	// commits it brought in, which are in the range too: it counts only
	// for facts no other commit touched.
	var merged []string
	mergedBy := make(map[string]gitstore.Commit)
	for i := len(commits) - 1; i >= 0; i-- {
		c := commits[i]
		p := provenance.Parse(c.Message)
		var ids []string
		if c.Committer == gitstore.Committer && p.Op != "" && p.Op != memd.OpMerge {
			ids = p.FactIDs
		} else {
			d, err := sh.Diff(c)
			if err != nil {
				return err
			}
			for _, ch := range d.Facts {
				ids = append(ids, ch.Fact.ID)
			}
		}
		if len(c.Parents) > 1 {
			for _, fid := range ids {
				if _, seen := mergedBy[fid]; !seen {
					mergedBy[fid] = c
					merged = append(merged, fid)
				}
			}
			ids = nil
		}
		var by *touch // one for all the facts of the commit
		for _, fid := range ids {
			if touched[fid] == nil {
				if by == nil {
					by = &touch{commit: c.Hash.String(), messages: p.SourceMessages, chat: p.SourceChat, when: c.Time.Unix()}
				}
				touched[fid] = by
				order = append(order, fid)
			}
		}
		if c.Committer != gitstore.Committer || p.Op == "" || p.Op == memd.OpNoteEdit || p.Op == memd.OpRevert || p.Op == memd.OpMerge {
			changed, err := sh.ChangedNotes(c)
			if err != nil {
				return err
			}
			for _, path := range changed {
				if _, seen := noteCommits[path]; !seen {
					noteCommits[path] = c
				}
			}
		}
	}
	byMerge := make(map[gitstore.Hash]*touch)
	for _, fid := range merged {
		if touched[fid] == nil {
			c := mergedBy[fid]
			if byMerge[c.Hash] == nil {
				byMerge[c.Hash] = &touch{commit: c.Hash.String(), when: c.Time.Unix()}
			}
			touched[fid] = byMerge[c.Hash]
			order = append(order, fid)
		}
	}
	for file, c := range noteCommits {
		data, ok, _, err := sh.Note(head, file)
		if err != nil {
			return err
		}
		path := strings.TrimPrefix(file, gitstore.NotesDir+"/")
		notes[path] = nil
		if ok {
			notes[path] = &noteRecord{Date: memd.DateOf(c.Time).String(), Commit: c.Hash.String(), Text: string(data)}
		}
	}
	found, at, err := sh.Lookup(order)
	if err != nil {
		return err
	}
	if at != head {
		// The facts were read at a newer commit than the one the index
		// would record: recording head would name a state it does not hold.
		return errHeadMoved
	}
	var put []search.Doc
	var del []string
	moved := make(map[string]bool) // files whose later lines moved up
	for _, fid := range order {
		l, ok := found[fid]
		if !ok {
			if old, had := x.search.Get(sh.ID(), fid); had {
				moved[old.File] = true
			}
			del = append(del, fid)
			continue
		}
		t := touched[fid]
		d := docOf(l)
		d.Commit, d.Messages, d.Chat, d.When = t.commit, t.messages, t.chat, t.when
		put = append(put, d)
	}
	return x.apply(sh, put, del, moved, notes, head)
}

// apply writes the changes of one catch-up to the file and the engine.
func (x *Index) apply(sh *gitstore.Shard, put []search.Doc, del []string, moved map[string]bool, notes map[string]*noteRecord, head gitstore.Hash) error {
	id := sh.ID()
	// Lines after a removed one moved; refresh the offsets of those files.
	for file := range moved {
		lines, at, err := sh.FileLines(file)
		if err != nil {
			return err
		}
		if at != head {
			return errHeadMoved
		}
		for _, l := range lines {
			if d, ok := x.search.Get(id, l.ID); ok && d.Offset != l.Offset && !slices.ContainsFunc(put, func(p search.Doc) bool { return p.ID == l.ID }) {
				d.Offset = l.Offset
				put = append(put, d)
			}
		}
	}
	x.search.Apply(search.Update{Shard: id, Head: hashString(head), Delete: del, Put: put, Notes: notePassages(id, notes)})
	x.mu.Lock()
	x.heads[id] = head
	if x.notes[id] == nil {
		x.notes[id] = make(map[string]*noteRecord)
	}
	for path, r := range notes {
		if r == nil {
			delete(x.notes[id], path)
		} else {
			x.notes[id][path] = r
		}
	}
	x.markDirty(id)
	x.mu.Unlock()
	return nil
}

// rebuildShard indexes a shard afresh from HEAD, then attributes each fact
// to the commit that introduced it by walking history in the background.
func (x *Index) rebuildShard(sh *gitstore.Shard) error {
	lines, head, err := sh.Lines()
	if err != nil {
		return err
	}
	sh.Release() // read for the index, not to be written
	if err := x.replaceShard(sh, lines, head); err != nil {
		return err
	}
	x.attributeLater(sh.ID(), head)
	return nil
}

// attributeLater attributes a shard's facts to their commits in the
// background.
func (x *Index) attributeLater(id memd.ShardID, head gitstore.Hash) {
	sh, err := x.store.Shard(id)
	if err != nil {
		x.log.Warn("attributing facts to commits", "shard", id, "err", err)
		return
	}
	x.bg.Add(1)
	go func() {
		defer x.bg.Done()
		if err := x.attribute(x.ctx, sh, head, nil); err != nil && !errors.Is(err, context.Canceled) {
			x.log.Warn("attributing facts to commits", "shard", id, "err", err)
		}
	}()
}

// replaceShard replaces everything indexed for a shard with lines and the
// notes at head.
func (x *Index) replaceShard(sh *gitstore.Shard, lines []gitstore.Line, head gitstore.Hash) error {
	id := sh.ID()
	notes := map[string]*noteRecord{}
	if !head.IsZero() {
		c, err := sh.ReadCommit(head)
		if err != nil {
			return err
		}
		if notes, err = notesAt(sh, head, c.Time); err != nil {
			return err
		}
	}
	docs := make([]search.Doc, len(lines))
	for i, l := range lines {
		docs[i] = docOf(l)
		if old, ok := x.search.Get(id, l.ID); ok && old.Text == l.Text {
			docs[i].Commit, docs[i].Messages, docs[i].Chat, docs[i].When = old.Commit, old.Messages, old.Chat, old.When
		}
	}
	x.search.Apply(search.Update{Shard: id, Head: hashString(head), Replace: true, Put: docs, Notes: notePassages(id, notes)})
	x.mu.Lock()
	x.heads[id] = head
	x.notes[id] = notes
	x.markDirty(id)
	x.mu.Unlock()
	return nil
}

// attribute walks a shard's history from head, newest first, and records
// for each indexed fact not yet attributed the commit that introduced it.
// progress, when given, is told how many commits have been read.
func (x *Index) attribute(ctx context.Context, sh *gitstore.Shard, head gitstore.Hash, progress func(int)) error {
	id := sh.ID()
	want := make(map[string]bool)
	x.search.Walk(id, true, func(d search.Doc) bool {
		if d.Commit == "" {
			want[d.ID] = true
		}
		return true
	})
	x.search.Walk(id, false, func(d search.Doc) bool {
		if d.Commit == "" {
			want[d.ID] = true
		}
		return true
	})
	if len(want) == 0 {
		return nil
	}
	var batch []search.Doc
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// Under the shard's lock, and only for facts still indexed as
		// they were: a catch-up may have moved on meanwhile.
		defer x.lock(id)()
		for _, d := range batch {
			cur, ok := x.search.Get(id, d.ID)
			if !ok || cur.Commit != "" || cur.Text != d.Text || cur.Date != d.Date {
				continue
			}
			x.search.SetProvenance(id, d.ID, d.Commit, d.Messages, d.Chat, d.When)
		}
		x.mu.Lock()
		x.markDirty(id)
		x.mu.Unlock()
		batch = batch[:0]
		return nil
	}
	// The facts of one commit share its name.
	var last gitstore.Hash
	var name string
	err := Introductions(ctx, sh, head, want, progress, func(fid string, c gitstore.Commit, p memd.Provenance) error {
		if d, ok := x.search.Get(id, fid); ok {
			if c.Hash != last {
				last, name = c.Hash, c.Hash.String()
			}
			d.Commit, d.Messages, d.Chat, d.When = name, p.SourceMessages, p.SourceChat, c.Time.Unix()
			batch = append(batch, d)
		}
		if len(batch) >= 1000 {
			return flush()
		}
		return nil
	})
	if ferr := flush(); err == nil {
		err = ferr
	}
	return err
}

// Introductions walks a shard's history from head, newest first, and calls
// fn for each fact of want with the newest commit that touched it (memd's
// commits name their facts in trailers; others are diffed), removing it
// from want, until none is left. progress, when given, is told how many
// commits have been read.
func Introductions(ctx context.Context, sh *gitstore.Shard, head gitstore.Hash, want map[string]bool, progress func(int),
	fn func(id string, c gitstore.Commit, p memd.Provenance) error) error {
	n := 0
	err := sh.Walk(head, func(c gitstore.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n++; progress != nil && n%1000 == 0 {
			progress(n)
		}
		p := provenance.Parse(c.Message)
		var ids []string
		if c.Committer == gitstore.Committer && p.Op != "" {
			ids = p.FactIDs
		} else {
			d, err := sh.Diff(c)
			if err != nil {
				return err
			}
			for _, ch := range d.Facts {
				if ch.Op == "+" {
					ids = append(ids, ch.Fact.ID)
				}
			}
		}
		for _, fid := range ids {
			if !want[fid] {
				continue
			}
			delete(want, fid)
			if err := fn(fid, c, p); err != nil {
				return err
			}
		}
		if len(want) == 0 {
			return gitstore.ErrStop
		}
		return nil
	})
	if progress != nil {
		progress(n)
	}
	return err
}

// Rebuild discards the index and rebuilds it: every shard from HEAD, then
// every fact attributed to its commit. progress, when given, is told what
// is being done: a stage name, and how far along it is.
func (x *Index) Rebuild(ctx context.Context, progress func(stage string, done, total int)) error {
	defer collectOftenWhileReading(rebuildGC)()
	if err := x.Reload(progress); err != nil {
		return err
	}
	if err := x.AttributeAll(ctx, progress); err != nil {
		return err
	}
	report(progress, "writing the index", 0, 1)
	err := x.saveDirty(true)
	report(progress, "writing the index", 1, 1)
	return err
}

// Reload discards the index and reads every shard's facts from HEAD.
func (x *Index) Reload(progress func(stage string, done, total int)) error {
	ids, err := x.store.Shards()
	if err != nil {
		return err
	}
	x.saveMu.Lock()
	err = x.discard()
	if err == nil {
		x.search.Reset()
		x.mu.Lock()
		x.heads = make(map[memd.ShardID]gitstore.Hash)
		x.notes = make(map[memd.ShardID]map[string]*noteRecord)
		x.dirty = make(map[memd.ShardID]time.Time)
		x.unread = make(map[memd.ShardID]bool)
		x.mu.Unlock()
	}
	x.saveMu.Unlock()
	if err != nil {
		return err
	}
	for i, id := range ids {
		report(progress, "reading HEAD", i, len(ids))
		sh, err := x.store.Shard(id)
		if err != nil {
			return err
		}
		lines, head, err := sh.Lines()
		if err != nil {
			return err
		}
		sh.Release() // read for the index, not to be written
		if err := x.replaceShard(sh, lines, head); err != nil {
			return err
		}
	}
	report(progress, "reading HEAD", len(ids), len(ids))
	return nil
}

// AttributeAll attributes every indexed fact of every shard to the commit
// that introduced it.
func (x *Index) AttributeAll(ctx context.Context, progress func(stage string, done, total int)) error {
	ids, err := x.store.Shards()
	if err != nil {
		return err
	}
	for i, id := range ids {
		report(progress, "attributing facts to commits", i, len(ids))
		sh, err := x.store.Shard(id)
		if err != nil {
			return err
		}
		if err := x.attribute(ctx, sh, x.Head(id), nil); err != nil {
			return err
		}
	}
	report(progress, "attributing facts to commits", len(ids), len(ids))
	return nil
}

func report(progress func(string, int, int), stage string, done, total int) {
	if progress != nil {
		progress(stage, done, total)
	}
}

// embPrefix keys cached embeddings: emb:<model>:<fact id>.
const embPrefix = "emb:"

// Embedding returns a fact text's cached embedding for a model.
func (x *Index) Embedding(model, id string) ([]float32, bool) {
	var v string
	err := x.db.View(func(tx *buntdb.Tx) error {
		var err error
		v, err = tx.Get(embPrefix + model + ":" + id)
		return err
	})
	if err != nil || len(v)%4 != 0 {
		return nil, false
	}
	out := make([]float32, len(v)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32([]byte(v[i*4 : i*4+4])))
	}
	return out, true
}

// PutEmbeddings caches embeddings of fact texts for a model.
func (x *Index) PutEmbeddings(model string, vecs map[string][]float32) error {
	return x.db.Update(func(tx *buntdb.Tx) error {
		for id, v := range vecs {
			b := make([]byte, 4*len(v))
			for i, f := range v {
				binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(f))
			}
			if _, _, err := tx.Set(embPrefix+model+":"+id, string(b), nil); err != nil {
				return err
			}
		}
		return nil
	})
}
