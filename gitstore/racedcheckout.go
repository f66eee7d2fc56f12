package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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

// stepRecord is what memd's last write of a path found and left in the
// working tree and index.
type stepRecord struct {
	before     Hash        // the file's blob before the write (zero: none, or see beforeData)
	beforeData []byte      // the file's content before, when not a version memd committed
	existed    bool        // a file was there before
	after      os.FileInfo // the file as the write left it (nil: none there)
	// indexBefore and indexAfter are the index entry's blob before and
	// after (zero: no entry).
	indexBefore, indexAfter Hash
	unlocked                bool // the write went to the file alone, git holding the index
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

// noteStep records what a write of path found (found, and the index
// entry's blob indexBefore) and left (w; indexAfter; unlocked: the index
// was not written). A write made while an earlier one's index entry still
// waits (ahead) keeps that one's before: what the checkout held is what
// came before both. The caller holds sh.mu.
func (sh *Shard) noteStep(path string, found fileBefore, w workWrite, indexBefore, indexAfter Hash, unlocked, ahead bool) {
	rec := stepRecord{before: found.blob, beforeData: found.data, existed: found.existed, indexBefore: indexBefore, indexAfter: indexAfter, unlocked: unlocked}
	if prev, ok := sh.steps[path]; ok && ahead {
		rec.before, rec.beforeData, rec.existed, rec.indexBefore = prev.before, prev.beforeData, prev.existed, prev.indexBefore
	}
	if !w.gone {
		rec.after = w.stat
		if rec.after == nil {
			rec.after, _ = os.Lstat(filepath.Join(sh.dir, filepath.FromSlash(path)))
		}
	}
	if sh.steps == nil {
		sh.steps = make(map[string]stepRecord)
	}
	sh.steps[path] = rec
}

// settleRacedCheckout brings, HEAD being away from main, the files and
// index entries memd's last writes touched to the new HEAD's version where
// they are still at what the write found or left (see above); held is the
// index lock when the caller has it (kept), else one is taken if anything
// is to be done. It holds the lock throughout, so no git checkout is half
// way through the index meanwhile; one that wrote the index and is yet to
// name main in HEAD finds memd's files and entries put back, and memd
// brings them forward once it does (catchUpCheckout). It reports false
// when the lock could not be had, the records kept for a later try. The
// caller holds sh.mu.
func (sh *Shard) settleRacedCheckout(held *lockFile) bool {
	if len(sh.steps) == 0 {
		return true
	}
	if sh.headOnMain() {
		sh.steps = nil
		return true // back on main: what memd wrote is main's
	}
	// Looked at first without the lock, which most checkouts need not be
	// kept from: only one that raced a write has anything to put right.
	if n, err := sh.fixCheckout(nil, sh.steps); err != nil || n == 0 {
		if err != nil {
			sh.store.log.Warn("looking at a checkout away from main", "shard", sh.id, "err", err)
		}
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
	if sh.headOnMain() {
		return true
	}
	if _, err := sh.fixCheckout(lock, steps); err != nil {
		sh.store.log.Warn("taking memd's writes out of a checkout away from main", "shard", sh.id, "err", err)
	}
	return true
}

// fixCheckout is settleRacedCheckout's work, done with the index lock,
// or only counted without it (nil). It returns how many files it put
// right, or would.
func (sh *Shard) fixCheckout(lock *lockFile, steps map[string]stepRecord) (fixed int, err error) {
	dry := lock == nil
	head, err := sh.checkedOutCommit()
	if err != nil {
		return 0, nil // an unborn branch (git switch --orphan) holds nothing of memd's
	}
	c, err := sh.readCommit(head)
	if err != nil {
		return 0, err
	}
	idx, err := sh.readIndex()
	if err != nil {
		return 0, err
	}
	t := &trees{db: sh.db}
	entriesChanged := false
	for _, path := range slices.Sorted(mapKeys(steps)) {
		rec := steps[path]
		var want, indexed Hash
		if e, found, err := t.lookup(c.tree, path); err != nil {
			return 0, err
		} else if found {
			want = e.hash
		}
		if e, err := idx.Entry(path); err == nil {
			indexed = Hash(e.Hash)
		}
		before := rec.beforeBlob()
		switch {
		case before == want && rec.existed == !want.IsZero():
			// The checkout holds the version memd's write found: the
			// write goes, where it is still there (and the index is the
			// checkout's, or memd's write's).
			if rec.unlocked && indexed != want || !rec.unlocked && indexed != rec.indexAfter {
				continue
			}
			undone, err := sh.undoFileWrite(path, rec, dry)
			if err != nil {
				return fixed, fmt.Errorf("%s: %w", path, err)
			}
			if !undone {
				continue
			}
			if fixed++; dry {
				continue
			}
			sh.store.log.Info("memd's write went into a checkout away from main as git made it; the checkout's version is back", "shard", sh.id, "path", path, "head", head.String())
			sh.leftWorktree.Store(true) // see catchUpCheckout
			if rec.indexBefore != rec.indexAfter {
				setEntry(idx, path, rec.indexBefore)
				entriesChanged = true
			}
		case !rec.unlocked && !want.IsZero() && want == rec.indexAfter && indexed == rec.indexBefore:
			// The checkout names memd's commit, but git wrote back the
			// index it read before memd's write, and the file with it: a
			// branch made from main as memd moved it.
			redone, err := sh.redoFileWrite(path, before, want, dry)
			if err != nil {
				return fixed, fmt.Errorf("%s: %w", path, err)
			}
			if redone {
				if fixed++; dry {
					continue
				}
				sh.store.log.Info("a git checkout made as memd wrote left a file a version behind its commit; it is brought forward", "shard", sh.id, "path", path, "head", head.String())
				setEntry(idx, path, want)
				entriesChanged = true
			}
		}
	}
	if !entriesChanged {
		return fixed, nil
	}
	data, err := encodeIndex(idx)
	if err != nil {
		return fixed, err
	}
	sh.written = nil
	return fixed, lock.write(data)
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

// beforeBlob returns the blob of what the file held before memd's write
// (zero: none).
func (rec stepRecord) beforeBlob() Hash {
	if rec.beforeData != nil {
		return odb.HashObject(plumbing.BlobObject, rec.beforeData)
	}
	return rec.before
}

// undoFileWrite puts back the working file at path as rec found it, if it
// is as memd's write left it (dry: only says whether it would).
func (sh *Shard) undoFileWrite(path string, rec stepRecord, dry bool) (bool, error) {
	full := filepath.Join(sh.dir, filepath.FromSlash(path))
	now, err := os.Lstat(full)
	switch {
	case rec.after == nil && !errors.Is(err, fs.ErrNotExist):
		return false, nil // written since
	case rec.after != nil && (err != nil || !os.SameFile(now, rec.after) || now.Size() != rec.after.Size() || !now.ModTime().Equal(rec.after.ModTime())):
		return false, nil
	case dry:
		return true, nil
	case !rec.existed:
		if err := os.Remove(full); err != nil {
			return false, err
		}
		removeEmptyFolders(filepath.Dir(full))
		return true, nil
	}
	data := rec.beforeData
	if data == nil {
		obj, err := sh.db.Get(rec.before)
		if err != nil {
			return false, err
		}
		data = obj.Data
	}
	return true, replaceFile(full, data, 0o644, false)
}

// redoFileWrite writes blob want into the working file at path if it holds
// blob before (dry: only says whether it would).
func (sh *Shard) redoFileWrite(path string, before, want Hash, dry bool) (bool, error) {
	full := filepath.Join(sh.dir, filepath.FromSlash(path))
	cur, err := os.ReadFile(full)
	if err != nil || odb.HashObject(plumbing.BlobObject, cur) != before {
		return false, nil
	}
	if dry {
		return true, nil
	}
	obj, err := sh.db.Get(want)
	if err != nil {
		return false, err
	}
	return true, replaceFile(full, obj.Data, 0o644, false)
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
