package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/memd/memd/gitstore/internal/odb"
)

// A git checkout away from main writes the files and the index under the
// index lock, lets the lock go, and names the new HEAD last. A write of
// memd's made while git holds the lock (the working files, without it, so
// that a person's commit reading them once main has moved takes nothing
// back), or in the moment between the lock and HEAD, finds HEAD still on
// main and merges memd's change into what git just wrote, as if it were a
// person's edit. Once HEAD names the checkout, memd's change shows there as
// the person's own, and their return to main is refused or carries it
// over. The other way round, a branch made from main as memd moves it can
// name memd's new commit while git writes back the index (and file) it
// read before memd's write: the checkout is a version behind its own
// commit, and the person's next commit on it takes memd's fact back.
//
// So each write notes what it found and left at each path (stepRecord),
// and once memd finds HEAD away from main (the ref watcher's notice, the
// next write) it brings each such file and index entry to the version the
// new HEAD holds, where it is still at one of the two: back to what memd's
// write found, or forward to what it left.

// stepRecord is what a write of memd's found and left in a path's working
// file and index entry, kept in sh.steps for stepsKeptFor: the last
// write's (run back through a write to the file alone that it found as
// that write left it, see syncPath), and the same run back through each
// run of the writes before it (following).
type stepRecord struct {
	at    time.Time
	since time.Time // the first write's, run back
	// saw and sawFile are the file's blob this write itself found, and
	// whether there was a file: before, not run back.
	saw        Hash
	sawFile    bool
	before     Hash   // the file's blob before the write (zero: none)
	beforeData []byte // its content, when not a version memd committed (not in the store)
	existed    bool   // a file was there before
	after      Hash   // the blob of what the write left in the file (zero: none)
	afterData  []byte // its content, when not a version memd committed
	committed  Hash   // memd's version in the commit (zero: removed)
	// indexBefore and indexAfter are the index entry's blob before and
	// after (zero: no entry).
	indexBefore, indexAfter Hash
	unlocked                bool // the write went to the file alone, git holding the index
}

// stepsKeptFor is how long after memd's write a checkout is taken to have
// raced it: git names the new HEAD within moments of writing the files.
// Older records would take a person's own edit made since for git's. A
// record is run back through earlier writes over no longer than this.
var stepsKeptFor = 5 * time.Second

// recent reports whether a checkout made at t may have raced the write.
func (rec stepRecord) recent(t time.Time) bool {
	// A file's times come from a clock that may run a few ms behind.
	return !t.Before(rec.at.Add(-50*time.Millisecond)) && t.Sub(rec.at) <= stepsKeptFor
}

// fileBefore is what syncFile found in a working file before writing it.
type fileBefore struct {
	blob    Hash   // a version memd committed, when the file held one
	data    []byte // the content otherwise
	existed bool
}

// beforeOf returns what a working file holding cur (exists: there is one)
// was, against fileOld, the version memd last brought it to.
func beforeOf(cur []byte, exists bool, fileOld *factFile) fileBefore {
	switch {
	case !exists:
		return fileBefore{}
	case fileOld != nil && bytes.Equal(cur, fileOld.data):
		return fileBefore{blob: fileOld.blob, existed: true}
	}
	return fileBefore{data: cur, existed: true}
}

// found fills in what a write found (f) and left in the file (w), next
// being memd's version: the file holds it when the write found memd's own
// last version, and what the write merged otherwise.
func (rec *stepRecord) found(f fileBefore, w workWrite, next *factFile) {
	rec.at = time.Now()
	rec.since = rec.at
	rec.before, rec.beforeData, rec.existed = f.blob, f.data, f.existed
	if f.data != nil {
		rec.before = odb.HashObject(plumbing.BlobObject, f.data) // a person's edit: rare
	}
	rec.saw, rec.sawFile = rec.before, rec.existed
	switch {
	case w.gone:
	case f.data == nil && next != nil:
		rec.after = next.blob
	default:
		rec.after = odb.HashObject(plumbing.BlobObject, w.data)
		if f.data != nil {
			rec.afterData = w.data
		}
	}
}

// noteSteps records the steps of one syncWorktree (indexed: it wrote the
// index), and forgets those too old to matter. The caller holds sh.mu.
func (sh *Shard) noteSteps(steps map[string]stepRecord, indexed bool) {
	now := time.Now()
	for path, runs := range sh.steps {
		if !runs[0].recent(now) {
			delete(sh.steps, path)
		}
	}
	if len(steps) == 0 {
		return
	}
	if sh.steps == nil {
		sh.steps = make(map[string][]stepRecord)
	}
	for path, rec := range steps {
		if !indexed {
			rec.indexAfter, rec.unlocked = rec.indexBefore, true
		}
		runs := []stepRecord{rec}
		for _, prev := range sh.steps[path] {
			if r, ok := rec.following(prev); ok && len(runs) < maxRun {
				runs = append(runs, r)
			}
		}
		sh.steps[path] = runs
	}
}

// lastStep returns the record of memd's last write of path, if it is
// kept.
func (sh *Shard) lastStep(path string) (stepRecord, bool) {
	if runs := sh.steps[path]; len(runs) > 0 {
		return runs[0], true
	}
	return stepRecord{}, false
}

// maxRun is how many writes of a path a checkout is taken to have raced at
// most: a checkout's moments hold a few, even of a busy agent's (tens of
// writes a second), and a longer run's records cost each write.
const maxRun = 32

// following returns rec, a write of a path, run back through prev, a
// record of the write before it (itself run back, or not), for undoing
// both where a checkout raced them; ok is false where rec did not find
// the file as prev left it (git wrote the checkout's version over prev's
// write, or the person saved), or the run would span more than
// stepsKeptFor. A checkout may race several writes (up to maxRun are
// kept): memd's retry taking the index lock the moment git let it go,
// writes before git names HEAD, writes after git read HEAD for a branch.
func (rec stepRecord) following(prev stepRecord) (stepRecord, bool) {
	if rec.saw != prev.after || rec.sawFile != !prev.after.IsZero() || rec.at.Sub(prev.since) > stepsKeptFor {
		return rec, false
	}
	rec.since = prev.since
	rec.before, rec.beforeData, rec.existed = prev.before, prev.beforeData, prev.existed
	switch {
	case rec.unlocked:
		// rec left the index alone: prev's part in it stands, if the
		// index is still as prev left it.
		if !prev.unlocked && rec.indexBefore == prev.indexAfter {
			rec.indexBefore, rec.unlocked = prev.indexBefore, false
		}
	case !prev.unlocked && rec.indexBefore == prev.indexAfter:
		rec.indexBefore = prev.indexBefore
	}
	return rec, true
}

// settleRacedCheckout brings, HEAD being away from main, the files and
// index entries memd's last writes touched to the new HEAD's version where
// they are still at what the write found or left (see above) and HEAD was
// named moments after the write; held is the index lock when the caller
// has it (kept), else one is taken if anything is to be done. It holds the
// lock throughout, so no git checkout is half way through the index
// meanwhile; one that wrote the index and is yet to name main in HEAD
// finds memd's files and entries put back, and memd brings them forward
// once it does (catchUpCheckout). It reports false when the lock could not
// be had, the records kept for a later try. The caller holds sh.mu.
func (sh *Shard) settleRacedCheckout(held *lockFile) bool {
	if len(sh.steps) == 0 {
		return true
	}
	// Looked at first without the lock, which most checkouts need not be
	// kept from: only one that raced a write has anything to put right.
	if n := sh.fixCheckout(nil, sh.steps); n == 0 {
		sh.steps = nil
		return true
	}
	lock := held
	if lock == nil {
		var err error
		if lock, err = sh.acquireIndexLock(indexWait); err != nil {
			return false
		}
		defer lock.release()
	}
	steps := sh.steps
	sh.steps = nil
	if !sh.headOnMain() {
		sh.fixCheckout(lock, steps)
	}
	return true
}

// fixCheckout is settleRacedCheckout's work, done with the index lock,
// or only counted without it (nil), given sh.steps.
// It returns how many paths it put right, or would; what it cannot do
// for a path it logs, and goes on.
func (sh *Shard) fixCheckout(lock *lockFile, steps map[string][]stepRecord) (fixed int) {
	dry := lock == nil
	head, err := sh.checkedOutCommit()
	if err != nil {
		return 0 // an unborn branch (git switch --orphan) holds nothing of memd's
	}
	named, err := os.Stat(filepath.Join(sh.gitDir, "HEAD"))
	if err != nil {
		return 0
	}
	c, err := sh.readCommit(head)
	if !dry {
		sh.written = nil // the index read below is changed in place
	}
	var idx *index.Index
	if err == nil {
		idx, err = sh.readIndex()
	}
	if err != nil {
		sh.store.log.Warn("reading a checkout away from main", "shard", sh.id, "err", err)
		return 0
	}
	t := &trees{db: sh.db}
	entriesChanged := false
	for _, path := range slices.Sorted(mapKeys(steps)) {
		var want Hash
		if e, found, err := t.lookup(c.tree, path); err == nil && found {
			want = e.hash
		}
		rec, to, entry, setIndex, ok := undoFor(steps[path], want, entryBlob(idx, path), named.ModTime())
		if !ok {
			continue
		}
		moved, err := sh.moveFile(path, rec, to, dry)
		if err != nil {
			sh.store.log.Warn("putting right a checkout that raced memd's write", "shard", sh.id, "path", path, "err", err)
			continue
		}
		if !moved && !setIndex {
			continue
		}
		if fixed++; dry {
			continue
		}
		sh.store.log.Info("a git checkout made as memd wrote left a file at another version than its commit's; it is put right", "shard", sh.id, "path", path, "head", head.String())
		sh.leftWorktree.Store(true) // a return to main that raced this is brought forward (catchUpCheckout)
		if setIndex {
			setEntry(idx, path, entry)
			entriesChanged = true
		}
	}
	if !entriesChanged {
		return fixed
	}
	if data, err := encodeIndex(idx); err != nil {
		sh.store.log.Warn("putting right a checkout's index", "shard", sh.id, "err", err)
	} else if err := lock.write(data); err != nil {
		sh.store.log.Warn("putting right a checkout's index", "shard", sh.id, "err", err)
	}
	return fixed
}

// undoFor chooses how to put right memd's writes of a path for a checkout
// whose commit holds want there, made at named, the index holding indexed,
// given the path's records in sh.steps (the last write's first, then runs
// each one write longer): the record to undo and undoneBack's or
// broughtForward's answer. Back to what the checkout holds through the
// longest run of writes that can be (one that raced any of them left the
// file or index at what the last left; a shorter run first would set the
// entry to what a later write of the run found), down to the last write
// alone. Forward to the checkout's commit, where git wrote back the index
// it read before the last write: that write alone, for a version of
// memd's staged since is the person's.
func undoFor(runs []stepRecord, want, indexed Hash, named time.Time) (rec stepRecord, to, entry Hash, setIndex, ok bool) {
	for i := len(runs) - 1; i >= 0; i-- {
		if rec = runs[i]; rec.recent(named) {
			if to, entry, setIndex, ok = rec.undoneBack(want, indexed); ok {
				return rec, to, entry, setIndex, ok
			}
		}
	}
	if len(runs) == 0 || !runs[0].recent(named) {
		return stepRecord{}, Hash{}, Hash{}, false, false
	}
	to, entry, setIndex, ok = runs[0].broughtForward(want, indexed)
	return runs[0], to, entry, setIndex, ok
}

// undoneBack says how to undo memd's write recorded in rec where the
// checkout's commit holds want at its path, the version the write found,
// and the index holds indexed: the version the file goes to from
// rec.after, the index entry, and whether the entry is set; ok is false
// where the write is not to be undone. It is undone where it is still
// there and the index is the checkout's (memd's write went to the file
// alone) or as the write left it.
func (rec stepRecord) undoneBack(want, indexed Hash) (to, entry Hash, setIndex, ok bool) {
	if rec.before != want || rec.existed != !want.IsZero() {
		return Hash{}, Hash{}, false, false
	}
	if rec.unlocked && indexed != want || !rec.unlocked && indexed != rec.indexAfter {
		return Hash{}, Hash{}, false, false
	}
	return rec.before, rec.indexBefore, !rec.unlocked && rec.indexBefore != indexed, true
}

// broughtForward is undoneBack for a checkout that names memd's commit
// while git wrote back the index it read before memd's write (and the
// file, or not): a branch made from main as memd moved it. The file and
// entry go forward to the commit's version.
func (rec stepRecord) broughtForward(want, indexed Hash) (to, entry Hash, setIndex, ok bool) {
	if want != rec.committed || indexed != rec.indexBefore || indexed == want {
		return Hash{}, Hash{}, false, false
	}
	return want, want, true, true
}

// checkedOutCommit returns the commit HEAD names, through a branch or
// detached.
func (sh *Shard) checkedOutCommit() (Hash, error) {
	b, err := os.ReadFile(filepath.Join(sh.gitDir, "HEAD"))
	if err != nil {
		return Hash{}, err
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: "); ok {
		return readRef(sh.gitDir, ref)
	}
	return readRef(sh.gitDir, "HEAD")
}

// moveFile writes blob to (zero: no file) into the working file at path
// if it holds what memd's write found or left there (rec), and reports
// whether it did (dry: would). A file the person changed since is left as
// it is.
func (sh *Shard) moveFile(path string, rec stepRecord, to Hash, dry bool) (bool, error) {
	var data []byte
	if !to.IsZero() {
		if to == rec.before && rec.beforeData != nil {
			data = rec.beforeData
		} else {
			obj, err := sh.db.Get(to)
			if err != nil {
				return false, err
			}
			data = obj.Data
		}
	}
	moved := false
	_, err := rewriteWorking(filepath.Join(sh.dir, filepath.FromSlash(path)), func(cur []byte, exists bool) ([]byte, bool) {
		var at Hash
		if exists {
			at = odb.HashObject(plumbing.BlobObject, cur)
		}
		if at == to || at != rec.after && at != rec.before {
			return cur, !exists // already there, or changed since: as it is
		}
		moved = true
		if dry {
			return cur, !exists
		}
		return data, to.IsZero()
	})
	return moved, err
}

// setEntry sets path's index entry to blob (zero: none), without stat data:
// git compares the file's content with it.
func setEntry(idx *index.Index, path string, blob Hash) {
	if blob.IsZero() {
		idx.Remove(path)
		return
	}
	e, err := idx.Entry(path)
	if err != nil {
		e = idx.Add(path)
	}
	e.Hash, e.Mode, e.Stage = plumbing.Hash(blob), filemode.Regular, 0
	e.Size, e.ModifiedAt = 0, time.Time{}
}
