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
)

// syncWorktree writes the files memd changed into the working tree and
// records them in .git/index, so that `git status` is clean and a person's
// `git commit -a` keeps what memd wrote. touched maps each changed path to
// the version the change was built on (nil if the file is new); files holds
// the new versions (a path absent from it was removed). A file the person has
// edited or staged but not committed is merged at the level of fact lines
// rather than overwritten. The caller holds the index lock; syncWorktree
// releases it.
func (sh *Shard) syncWorktree(lock *lockFile, touched map[string]*factFile, files map[string]*factFile) error {
	idx, err := sh.readIndex()
	if err != nil {
		lock.release()
		return err
	}
	for _, path := range slices.Sorted(mapKeys(touched)) {
		if err := sh.syncFile(idx, path, touched[path], files[path]); err != nil {
			lock.release()
			return err
		}
	}
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		lock.release()
		return fmt.Errorf("encode index: %w", err)
	}
	return lock.replace(buf.Bytes())
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (sh *Shard) readIndex() (*index.Index, error) {
	f, err := os.Open(filepath.Join(sh.gitDir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return &index.Index{Version: 2}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer f.Close()
	idx := &index.Index{}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	// Extensions (cache-tree, untracked cache) describe the old entries;
	// git rebuilds them, and a stale cache-tree would be wrong.
	idx.Cache, idx.ResolveUndo, idx.EndOfIndexEntry = nil, nil, nil
	return idx, nil
}

// syncFile moves one path of the working tree and index from old to next.
func (sh *Shard) syncFile(idx *index.Index, path string, old, next *factFile) error {
	full := filepath.Join(sh.dir, filepath.FromSlash(path))
	var oldData, newData []byte
	var oldBlob, newBlob plumbing.Hash
	if old != nil {
		oldData, oldBlob = old.data, old.blob
	}
	if next != nil {
		newData, newBlob = next.data, next.blob
	}
	entry, _ := idx.Entry(path)

	// The common case: index and file are as memd left them. An entry memd
	// wrote earlier is as good: git commands write back the index they
	// read, and one that read it before memd's last update (git status, a
	// git commit) leaves an older version of memd's own in the index, not a
	// change of the person's.
	inStep := entry == nil && old == nil || entry != nil && (entry.Hash == oldBlob || sh.wasIndexed(path, entry.Hash))
	st, err := os.Lstat(full)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if exists && !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	written := newData // what the working file holds afterwards
	if !exists || inStep && entry != nil && statMatches(entry, st) {
		var err error
		if exists && next != nil && old != nil && len(newData) > len(oldData) && bytes.HasPrefix(newData, oldData) {
			err = appendFile(full, newData[len(oldData):])
		} else {
			err = sh.writeOrRemove(full, next)
		}
		if err != nil {
			return err
		}
	} else {
		cur, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		switch {
		case bytes.Equal(cur, newData):
		case bytes.Equal(cur, oldData):
			if err := sh.writeOrRemove(full, next); err != nil {
				return err
			}
		case next == nil:
			written = cur // removed at HEAD, but the person is editing it
		case !IsFactFile(path):
			written = cur // a note the person is editing: theirs to commit
		default:
			// Uncommitted edits: keep them, and apply memd's change on top.
			written = mergeFactLines(path, oldData, newData, cur)
			if err := writeWorktreeFile(full, written); err != nil {
				return err
			}
		}
	}

	// The index: the new blob, unless the person staged a version of their
	// own, which then gets memd's change merged in as well.
	if !inStep && entry != nil && !IsFactFile(path) {
		return nil // a version of a note the person staged stays staged
	}
	if !inStep && entry != nil {
		staged, err := sh.db.Get(entry.Hash)
		if err != nil {
			return fmt.Errorf("read staged %s: %w", path, err)
		}
		merged := mergeFactLines(path, oldData, newData, staged.Data)
		if !bytes.Equal(merged, newData) {
			h, err := sh.db.WriteLoose(plumbing.BlobObject, merged)
			if err != nil {
				return err
			}
			entry.Hash = h
			if !bytes.Equal(merged, written) {
				entry.Size, entry.ModifiedAt = 0, time.Time{} // makes git look at the file
				return nil
			}
			return sh.statEntry(entry, full)
		}
	}
	if next == nil {
		idx.Remove(path)
		return nil
	}
	if entry == nil {
		entry = idx.Add(path)
	}
	entry.Hash, entry.Mode, entry.Stage = newBlob, filemode.Regular, 0
	sh.noteIndexed(path, newBlob)
	if !bytes.Equal(written, newData) {
		entry.Size, entry.ModifiedAt = 0, time.Time{} // the file holds the person's edits too
		return nil
	}
	return sh.statEntry(entry, full)
}

// indexedKept is how many of the blobs memd put in the index are
// remembered per path: more than git can write back while memd commits.
const indexedKept = 256

func (sh *Shard) noteIndexed(path string, blob plumbing.Hash) {
	if sh.indexed == nil {
		sh.indexed = make(map[string][]plumbing.Hash)
	}
	blobs := sh.indexed[path]
	if len(blobs) == indexedKept {
		blobs = append(blobs[:0], blobs[1:]...)
	}
	sh.indexed[path] = append(blobs, blob)
}

func (sh *Shard) wasIndexed(path string, blob plumbing.Hash) bool {
	return slices.Contains(sh.indexed[path], blob)
}

func (sh *Shard) writeOrRemove(full string, next *factFile) error {
	if next == nil {
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeWorktreeFile(full, next.data)
}

// appendFile appends to a working file known to hold the previous version:
// cheaper than replacing it, which matters when facts arrive one by one.
func appendFile(full string, data []byte) error {
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", filepath.Base(full), err)
	}
	return nil
}

func (sh *Shard) statEntry(entry *index.Entry, full string) error {
	st, err := os.Lstat(full)
	if err != nil {
		return fmt.Errorf("stat %s: %w", filepath.Base(full), err)
	}
	fillStat(entry, st)
	return nil
}

// worktreeTempPrefix starts the name of a working file's next version
// while memd writes it.
const worktreeTempPrefix = ".memd-tmp-"

func writeWorktreeFile(full string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(full), worktreeTempPrefix)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), full)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", filepath.Base(full), err)
	}
	return nil
}

// mergeFactLines applies the fact-level change from base to ours onto
// theirs: lines of facts ours removed are dropped from theirs, and facts ours
// added are appended when theirs lacks them. Every other line of theirs is
// kept as the person wrote it.
func mergeFactLines(path string, base, ours, theirs []byte) []byte {
	inBase := factIDs(path, base)
	inOurs := factIDs(path, ours)
	inTheirs := factIDs(path, theirs)
	var out []byte
	// Drop removed fact lines from theirs.
	at := 0
	for _, lf := range parseFactFile(path, theirs) {
		if inBase[lf.ID] && !inOurs[lf.ID] {
			out = append(out, theirs[at:lf.start]...)
			at = lf.end
		}
	}
	out = append(out, theirs[at:]...)
	// Append added facts.
	for _, lf := range parseFactFile(path, ours) {
		if !inBase[lf.ID] && !inTheirs[lf.ID] {
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			out = append(out, ours[lf.start:lf.end]...)
			if out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
		}
	}
	return out
}

func factIDs(path string, data []byte) map[string]bool {
	ids := make(map[string]bool)
	for _, lf := range parseFactFile(path, data) {
		ids[lf.ID] = true
	}
	return ids
}

// repairWorktree brings index entries of fact files that lag behind HEAD,
// or are ahead of it, back in step, as after memd stopped in the middle of a
// commit. An entry lags when it names the file's blob in a recent ancestor
// of HEAD, and is ahead when it names the blob of the commit memd was making
// (the one its leftover lock on main named); any other difference is a
// person's staged change and is left alone.
func (sh *Shard) repairWorktree() error {
	st := sh.cur.Load()
	if st == nil || st.head.IsZero() {
		return nil
	}
	idx, err := sh.readIndex()
	if err != nil {
		return err
	}
	touched := make(map[string]*factFile) // path -> the version the index holds
	if !sh.unfinished.IsZero() && sh.unfinished != st.head {
		if err := sh.aheadOfHead(idx, st, touched); err != nil {
			return err
		}
	}
	for path, ff := range st.files {
		if _, ok := touched[path]; ok {
			continue
		}
		e, err := idx.Entry(path)
		switch {
		case err != nil:
			touched[path] = nil
		case e.Hash != ff.blob && sh.inRecentHistory(st.head, path, e.Hash):
			old, err := sh.readFactFile(path, e.Hash)
			if err != nil {
				return err
			}
			touched[path] = old
		}
	}
	if len(touched) == 0 {
		return nil
	}
	next := make(map[string]*factFile, len(touched))
	t := &trees{db: sh.db}
	for path := range touched {
		if IsFactFile(path) {
			next[path] = st.files[path]
			continue
		}
		e, ok, err := t.lookup(st.root, path)
		if err != nil {
			return err
		}
		if ok {
			if next[path], err = sh.readFactFile(path, e.hash); err != nil {
				return err
			}
		}
	}
	lock, err := acquireLock(sh.gitDir, "index", []byte(indexLockMarker), lockTimeout)
	if err != nil {
		return err
	}
	return sh.syncWorktree(lock, touched, next)
}

// aheadOfHead adds to touched the fact files whose index entries hold the
// unfinished commit's version rather than HEAD's.
func (sh *Shard) aheadOfHead(idx *index.Index, st *state, touched map[string]*factFile) error {
	c, err := sh.readCommit(sh.unfinished)
	if err != nil {
		return err
	}
	t := &trees{db: sh.db}
	keep := func(p string) bool {
		return keepFactPaths(p) || p == NotesDir+"/" || strings.HasPrefix(p, NotesDir+"/")
	}
	return t.diffFiles(st.root, c.tree, "", keep, func(path string, _, ahead plumbing.Hash) error {
		e, err := idx.Entry(path)
		switch {
		case ahead.IsZero() && err != nil: // the commit removed the file
			touched[path] = nil
		case !ahead.IsZero() && err == nil && e.Hash == ahead:
			ff, err := sh.readFactFile(path, ahead)
			if err != nil {
				return err
			}
			touched[path] = ff
		}
		return nil
	})
}

// inRecentHistory reports whether path held blob in one of the last commits
// before head (as many as one group commit writes, and some).
func (sh *Shard) inRecentHistory(head plumbing.Hash, path string, blob plumbing.Hash) bool {
	t := &trees{db: sh.db}
	h := head
	for i := 0; i <= 2*maxGroup && !h.IsZero(); i++ {
		c, err := sh.readCommit(h)
		if err != nil {
			return false
		}
		if e, ok, err := t.lookup(c.tree, path); err == nil && ok && e.hash == blob {
			return true
		}
		if len(c.parents) == 0 {
			return false
		}
		h = c.parents[0]
	}
	return false
}
