package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// The index on disk: one snapshot per shard, read at start (all at once,
// or a shard at a time as it is first asked for), and discarded whole
// when its format is older than memd's.

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
	if err := x.dropLegacyEmbeddings(); err != nil {
		return fmt.Errorf("load index: %w", err)
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
	f, err := os.Open(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read index snapshot: %w", err)
	}
	var snap *snapshotParts
	read := err == nil
	stale := false // postings another analysis made: the snapshot is written again
	unattributed := false
	if read {
		defer f.Close()
		snap, err = openSnapshotFile(id, f)
		if err == nil {
			// A part at a time: a large shard's facts are not held twice,
			// decoded and in the index.
			var used bool
			u := search.Update{Shard: id, Head: hashString(snap.head), Notes: notePassages(id, snap.notes), Postings: snap.postings}
			snap.postings = "" // ReplaceInParts lets them go once read
			used, err = x.search.ReplaceInParts(u, snap.n,
				func(put func([]search.Doc)) error {
					return snap.each(snapshotPart, func(docs []search.Doc) error {
						unattributed = unattributed || slices.ContainsFunc(docs, func(d search.Doc) bool { return d.Commit == "" })
						put(docs)
						return nil
					})
				})
			stale = !used && snap.n > 0
		}
		if err != nil {
			// Its shard is read from HEAD again, and what was half read
			// let go. A damaged snapshot, or an older format, is dropped;
			// one whose file could not be read is kept, to be read at the
			// next start if the fault passed (a newer one replaces it
			// once written).
			x.search.Apply(search.Update{Shard: id, Replace: true})
			read, stale = false, false
			switch {
			case errors.Is(err, errUnreadable):
				x.log.Warn("reading a shard from HEAD: its index snapshot could not be read", "shard", id, "file", path, "err", err)
			case errors.Is(err, errOldSnapshot):
				x.log.Info("reading a shard from HEAD: its index snapshot is in an older format", "shard", id)
			default:
				x.log.Warn("dropping a damaged index snapshot", "shard", id, "file", path, "err", err)
			}
			if !errors.Is(err, errUnreadable) {
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("drop index snapshot: %w", err)
				}
			}
		}
	}
	if read && unattributed {
		// Written while facts were still being attributed.
		x.attributeLater(id, snap.head)
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

// openSnapshotFile opens the snapshot in f, which each reads from after.
func openSnapshotFile(id memd.ShardID, f *os.File) (*snapshotParts, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, unreadable(err)
	}
	return openSnapshot(id, f, info.Size(), snapshotWindow)
}

// snapshotPart is how many facts of a snapshot are decoded at a time.
const snapshotPart = 16384

// bulkReadGC is the GC percentage while the index is read in bulk, unless
// the GOGC environment variable sets one, by a daemon or by a rebuild in a
// process of its own. Go's default lets the heap double past what is
// alive, and a daemon's peak is what its machine must have. At a million
// facts in one shard, 15 held a first start's peak to 375 MB and took
// 2.0 s; 25 takes 1.9 s for 400 MB (a restart 1.15 → 1.06 s, 355 → 365 MB).
const bulkReadGC = 25

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
	for _, id := range ids {
		x.mark(x.backlog, id, 1)
	}
	x.bg.Add(1)
	go func() {
		defer x.bg.Done()
		// Reading leaves garbage as it goes (each text's words); collect
		// it more often than Go's default of letting the heap double, so
		// the peak stays near what the index holds.
		defer collectOftenWhileReading(bulkReadGC)()
		for _, id := range ids {
			if x.ctx.Err() != nil {
				return
			}
			if err := x.CatchUp(id); err != nil {
				x.log.Warn("bringing the index up to date", "shard", id, "err", err)
			}
			x.mark(x.backlog, id, -1)
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

// discard empties the index: the snapshots go, and the file.
func (x *Index) discard() error {
	if err := os.RemoveAll(x.dir); err != nil {
		return fmt.Errorf("discard index: %w", err)
	}
	return x.db.Update(func(tx *buntdb.Tx) error {
		if err := tx.DeleteAll(); err != nil {
			return err
		}
		_, _, err := tx.Set(metaFormat, format, nil)
		return err
	})
}

// legacyEmbeddings prefixed the embeddings earlier versions cached in the
// index file; they are kept in vectors files now (daemon/vectors).
const legacyEmbeddings = "emb:"

// dropLegacyEmbeddings deletes them, so they are not held in memory.
func (x *Index) dropLegacyEmbeddings() error {
	return x.db.Update(func(tx *buntdb.Tx) error {
		var keys []string
		tx.AscendKeys(legacyEmbeddings+"*", func(k, _ string) bool {
			keys = append(keys, k)
			return true
		})
		for _, k := range keys {
			if _, err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
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
		head, err := sh.Head()
		if err != nil {
			return err
		}
		if err := x.readHeadInParts(sh, head); err != nil {
			return err
		}
	}
	report(progress, "reading HEAD", len(ids), len(ids))
	return nil
}
