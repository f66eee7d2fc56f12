package gitstore

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// syncWorktree writes the files memd changed into the working tree and
// records them in .git/index, so that `git status` is clean and a person's
// `git commit -a` keeps what memd wrote. touched maps each changed path to
// the version the change was built on (nil if the file is new); files holds
// the new versions (a path absent from it was removed). A file the person has
// edited or staged but not committed is merged rather than overwritten.
// The caller holds the index lock, which syncWorktree releases; without it
// (nil), only the working files are written, and the index waits.
//
// The paths of move (a move of main under way; nil for a catch-up) go
// first, and a failure before any of them was written stops at once: the
// caller may still refuse the move. Any other failure does not hold up the
// rest, and the index is written for the paths that were: inStep lists
// those now in step with files.
func (sh *Shard) syncWorktree(lock *lockFile, touched, files, move map[string]*factFile) (inStep []string, err error) {
	idx, err := sh.readIndex()
	if err != nil {
		lock.release()
		return nil, err
	}
	// Before the index memd last wrote is forgotten: the check reads it.
	if path, err := sh.noteSavedOver(move, touched, files); err != nil {
		lock.release() // the move may be refused yet
		return nil, &worktreeError{path: path, err: err}
	}
	if path, err := sh.roomForMove(idx, move, touched, files, lock != nil); err != nil {
		lock.release() // the move is refused
		return nil, &worktreeError{path: path, err: err}
	}
	// Changed below: what memd wrote is known again once it is written.
	sh.written = nil
	if sh.worktreeAt == nil {
		sh.worktreeAt = make(map[string]*factFile)
	}
	var done []string
	var failed error
	steps := make(map[string]stepRecord) // see noteSteps
	for _, path := range writeOrder(touched, files, move) {
		step, err := sh.syncPath(idx, path, touched, files)
		if err != nil {
			wrote := slices.Clone(done)
			if _, ok := errors.AsType[*fileWrittenError](err); ok {
				wrote = append(wrote, path)
			}
			we := &worktreeError{path: path, done: wrote, err: err}
			if _, ok := move[path]; ok && len(wrote) == 0 {
				lock.release() // the move may be refused yet
				return nil, we
			}
			if failed == nil {
				failed = we
			}
			continue
		}
		steps[path] = step
		done = append(done, path)
		// Until the index is written, the file is ahead of it.
		sh.worktreeAt[path] = files[path]
	}
	if lock == nil {
		sh.noteSteps(steps, false)
		return nil, failed
	}
	data, err := encodeIndex(idx)
	if err != nil {
		lock.release()
		sh.noteSteps(steps, false)
		return nil, fmt.Errorf("encode index: %w", err)
	}
	file, err := lock.replace(data)
	if err != nil {
		sh.noteSteps(steps, false)
		return nil, err
	}
	sh.noteSteps(steps, true)
	if file != nil {
		sh.written = wrote(idx, data, file)
	}
	for _, path := range done {
		delete(sh.worktreeAt, path)
	}
	return done, failed
}

// syncPath brings one working file, and its entry in idx, from touched's
// version to files' (see syncWorktree), and returns the record of what it
// found and left.
func (sh *Shard) syncPath(idx *index.Index, path string, touched, files map[string]*factFile) (stepRecord, error) {
	fileOld, ahead := sh.worktreeAt[path]
	if !ahead {
		fileOld = touched[path]
	}
	step := stepRecord{indexBefore: entryBlob(idx, path), committed: blobOf(files[path])}
	found, w, err := sh.syncFile(idx, path, touched[path], fileOld, files[path])
	if err != nil {
		return step, err
	}
	step.found(found, w, files[path])
	step.indexAfter = entryBlob(idx, path) // if the index is written below
	if prev, ok := sh.lastStep(path); ok && ahead && prev.unlocked && step.before == prev.after && step.existed == !prev.after.IsZero() {
		// The last write went to the file alone, and this one found the
		// file as it left it: one write with it (this one bringing the
		// index to it, or going to the file alone too), what was in the
		// file before both is what it found. (In the index, it is what
		// this write found: git may have written it since, a checkout
		// letting the lock go and memd's wait for it ending at once.)
		step.before, step.beforeData, step.existed = prev.before, prev.beforeData, prev.existed
	}
	return step, nil
}

// entryBlob returns path's blob in idx, zero for none.
func entryBlob(idx *index.Index, path string) Hash {
	if e, err := idx.Entry(path); err == nil {
		return Hash(e.Hash)
	}
	return Hash{}
}

// writeOrder is the order syncWorktree writes the working files in: the
// paths of move first, then the others touched; in each part, removals
// before writes, since a folder whose last file goes frees its name for a
// file written after.
func writeOrder(touched, files, move map[string]*factFile) []string {
	removalsFirst := func(paths []string) []string {
		slices.SortStableFunc(paths, func(a, b string) int {
			return cmp.Compare(boolInt(files[b] == nil), boolInt(files[a] == nil))
		})
		return paths
	}
	order := removalsFirst(slices.Sorted(mapKeys(move)))
	var rest []string
	for _, path := range slices.Sorted(mapKeys(touched)) {
		if _, ok := move[path]; !ok {
			rest = append(rest, path)
		}
	}
	return append(order, removalsFirst(rest)...)
}

// noteSavedOver checks the notes memd's own commits change (sh.ownNotes)
// once more before any file of the move is written: a person's save since
// memd checked them (see refuseOverPersonsEdit) that memd's change cannot
// be merged into refuses the move (errKeptChanging), to be built again
// without that change. Kept as it is, the file would take memd's change
// away at the person's next commit.
func (sh *Shard) noteSavedOver(move, touched, files map[string]*factFile) (string, error) {
	for _, path := range slices.Sorted(mapKeys(move)) {
		if _, own := sh.ownNotes[path]; !own {
			continue
		}
		fileOld, ahead := sh.worktreeAt[path]
		if !ahead {
			fileOld = touched[path]
		}
		var next []byte
		if files[path] != nil {
			next = files[path].data
		}
		at := noteBases{head: touched[path], file: fileOld, index: touched[path], tracked: sh.ownTracked}
		if err := sh.refuseOverPersonsEdit(path, at, next, files[path] == nil); memd.ErrorCode(err) == memd.ECONFLICT {
			return path, fmt.Errorf("%s: %w", path, errKeptChanging)
		}
	}
	return "", nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// worktreeError is a working file syncWorktree could not write, after
// the paths in done.
type worktreeError struct {
	path string
	done []string
	err  error
}

func (e *worktreeError) Error() string { return e.err.Error() }
func (e *worktreeError) Unwrap() error { return e.err }

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readIndex returns .git/index: the index memd wrote last while the file
// is still that one, else the file decoded. The caller holds sh.mu, and
// changes the index only to write it (see syncWorktree).
func (sh *Shard) readIndex() (*index.Index, error) {
	f, err := os.Open(filepath.Join(sh.gitDir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return &index.Index{Version: 2}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && sh.written.holds(f, fi) {
		return sh.written.idx, nil
	}
	idx := &index.Index{}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	// Extensions (cache-tree, untracked cache) describe the old entries;
	// git rebuilds them, and a stale cache-tree would be wrong.
	idx.Cache, idx.ResolveUndo, idx.EndOfIndexEntry = nil, nil, nil
	return idx, nil
}

// syncFile moves one path of the index from old, and of the working tree
// from fileOld (the version memd last brought the file to: old, unless the
// file went ahead of the index), to next.
func (sh *Shard) syncFile(idx *index.Index, path string, old, fileOld, next *factFile) (found fileBefore, w workWrite, err error) {
	full := filepath.Join(sh.dir, filepath.FromSlash(path))
	var oldData, newData []byte
	var oldBlob Hash
	if old != nil {
		oldData, oldBlob = old.data, old.blob
	}
	if next != nil {
		newData = next.data
	}
	entry, _ := idx.Entry(path)

	// The common case: index and file are as memd left them. An entry memd
	// wrote earlier is as good: git commands write back the index they
	// read, and one that read it before memd's last update (git status, a
	// git commit) leaves an older version of memd's own in the index, not a
	// change of the person's.
	inStep := entry == nil && old == nil || entry != nil && (Hash(entry.Hash) == oldBlob || sh.wasIndexed(path, Hash(entry.Hash)))
	appended := false
	if inStep && entry != nil && old != nil && fileOld == old && next != nil && len(newData) > len(oldData) && bytes.HasPrefix(newData, oldData) {
		if w, appended, err = appendWorking(full, entry, oldData, newData); err != nil {
			return found, w, err
		}
		found = fileBefore{blob: oldBlob, existed: true}
	}
	if !appended {
		w, err = rewriteWorking(full, func(cur []byte, exists bool) ([]byte, bool) {
			found = beforeOf(cur, exists, fileOld)
			base := fileOld
			if found.data != nil {
				if base = sh.earlierVersion(path, cur, fileOld, next); base == fileOld {
					cur = sh.lastWriteAgain(path, cur, fileOld)
				}
			}
			if exists && base != nil && !IsFactFile(path) && sh.lineEndsOnly(path, cur, base.data) {
				cur = base.data // the person's git wrote it with CRLF: no edit of theirs
			}
			return mergeWorking(path, base, next, cur, exists)
		})
		if err != nil {
			return found, w, err
		}
	}

	if err := sh.stageFile(idx, path, entry, inStep, old, fileOld, next, w); err != nil {
		// The working file holds memd's version already: this move can
		// no longer be refused (refusesMove), only caught up with.
		return found, w, &fileWrittenError{err}
	}
	return found, w, nil
}

// fileWrittenError is a failure of syncFile after it wrote the working file.
type fileWrittenError struct{ err error }

func (e *fileWrittenError) Error() string { return e.err.Error() }
func (e *fileWrittenError) Unwrap() error { return e.err }

// stageFile records in the index the version of path syncFile wrote (w):
// the new blob, unless the person staged a version of their own, which
// then gets memd's change merged in as well. A path in conflict (the
// person's git merge under way) keeps its entries, one a side: the person
// settles it with git add.
func (sh *Shard) stageFile(idx *index.Index, path string, entry *index.Entry, inStep bool, old, fileOld, next *factFile, w workWrite) error {
	var oldData, newData []byte
	var newBlob Hash
	if old != nil {
		oldData = old.data
	}
	if next != nil {
		newData, newBlob = next.data, next.blob
	}
	if unmerged(idx, path) {
		return nil
	}
	if !inStep && entry != nil && !IsFactFile(path) {
		// A version of a note the person staged stays staged, with memd's
		// change merged in where the two are apart.
		return sh.mergeStagedNote(entry, path, old, fileOld, next)
	}
	if !inStep && entry != nil {
		staged, err := sh.db.Get(Hash(entry.Hash))
		if err != nil {
			return fmt.Errorf("read staged %s: %w", path, err)
		}
		merged := mergeFactFile(path, oldData, newData, staged.Data, factsOf(old))
		if !bytes.Equal(merged, newData) {
			h, err := sh.db.WriteLoose(plumbing.BlobObject, merged)
			if err != nil {
				return err
			}
			entry.Hash = plumbing.Hash(h)
			fillEntryStat(entry, w, merged)
			return nil
		}
	}
	if next == nil {
		idx.Remove(path)
		return nil
	}
	if entry == nil {
		entry = idx.Add(path)
	}
	entry.Hash, entry.Mode, entry.Stage = plumbing.Hash(newBlob), filemode.Regular, 0
	sh.noteIndexed(path, newBlob)
	fillEntryStat(entry, w, newData)
	return nil
}

// mergeStagedNote merges memd's change of a note into the version a
// person staged, entry's, from the version it was staged from (see
// stagedFrom): old, the index's, or fileOld, the working file's. Where
// the two overlap, or memd removed the note, the staged version stays as
// it is.
func (sh *Shard) mergeStagedNote(entry *index.Entry, path string, old, fileOld, next *factFile) error {
	if next == nil {
		return nil
	}
	staged, err := sh.db.Get(Hash(entry.Hash))
	if err != nil {
		return fmt.Errorf("read staged %s: %w", path, err)
	}
	merged, ok, err := mergeNote(staged.Data, stagedFrom(staged.Data, old, fileOld), next.data)
	if err != nil || !ok || bytes.Equal(merged, staged.Data) {
		return nil
	}
	h, err := sh.db.WriteLoose(plumbing.BlobObject, merged)
	if err != nil {
		return err
	}
	entry.Hash, entry.Size, entry.ModifiedAt = plumbing.Hash(h), 0, time.Time{} // git reads the file again
	return nil
}

// stagedFrom is the version a person's staged copy of a note was made
// from: the working file's (fileOld), where it went ahead of the index
// and the copy holds what memd wrote there; else the index's (old).
func stagedFrom(staged []byte, old, fileOld *factFile) *factFile {
	if fileOld == nil || fileOld == old || blobOf(fileOld) == blobOf(old) && !blobOf(old).IsZero() {
		return old
	}
	var oldData []byte
	if old != nil {
		oldData = old.data
	}
	// It holds the lines memd added in the working file, or merging the
	// working file's change in leaves it as it is.
	if added, ok := bytes.CutPrefix(fileOld.data, oldData); ok && bytes.HasPrefix(staged, oldData) && holdsLines(staged[len(oldData):], added) {
		return fileOld
	}
	if m, conflict, err := mergeLines(staged, oldData, fileOld.data, "memd"); err == nil && !conflict && bytes.Equal(m, staged) {
		return fileOld
	}
	return old
}

// holdsLines reports whether text holds each line of lines, as many times.
func holdsLines(text, lines []byte) bool {
	have := make(map[string]int)
	for line := range bytes.Lines(text) {
		have[string(line)]++
	}
	for line := range bytes.Lines(lines) {
		if have[string(line)]--; have[string(line)] < 0 {
			return false
		}
	}
	return true
}

// unmerged reports whether the index holds a path in conflict: entries of
// stages 1 to 3. (go-git's index.Merged is 1, the ancestor's stage; a
// merged entry's stage is 0.)
func unmerged(idx *index.Index, path string) bool {
	return slices.ContainsFunc(idx.Entries, func(e *index.Entry) bool { return e.Name == path && e.Stage != 0 })
}

// fillEntryStat records in an index entry naming blob the stat data of the
// working file memd wrote, if it holds blob exactly; otherwise it clears
// them, which makes git read the file.
func fillEntryStat(entry *index.Entry, w workWrite, blob []byte) {
	if w.stat == nil || w.gone || !bytes.Equal(w.data, blob) {
		entry.Size, entry.ModifiedAt = 0, time.Time{}
		return
	}
	fillStat(entry, w.stat)
}

// mergeWorking is what a working file holding cur (exists: there is one)
// becomes when memd's change takes it from old to next (nil: removed, or
// new): next if the file held old, or memd's own write of next half done;
// otherwise the person's edits with memd's change merged in, or, where it
// cannot be merged, the person's file as it is.
func mergeWorking(path string, old, next *factFile, cur []byte, exists bool) (data []byte, remove bool) {
	var oldData, newData []byte
	if old != nil {
		oldData = old.data
	}
	if next != nil {
		newData = next.data
	}
	switch {
	case !exists:
		return newData, next == nil // new, or taken away by the person: memd's version
	case bytes.Equal(cur, newData) && next != nil:
		return cur, false
	case bytes.Equal(cur, oldData) && old != nil:
		return newData, next == nil
	case next == nil:
		return cur, false // removed at HEAD, but the person is editing it
	case old != nil && len(cur) > len(oldData) && bytes.HasPrefix(cur, oldData) && bytes.HasPrefix(newData, cur):
		return newData, false // memd's own append, cut short
	case IsFactFile(path):
		// Uncommitted edits: keep them, and apply memd's change on top.
		return mergeFactFile(path, oldData, newData, cur, factsOf(old)), false
	}
	merged, ok, err := mergeNote(cur, old, newData)
	if err != nil || !ok {
		// The person's edit and memd's overlap: theirs to settle. (memd
		// refuses such a change of its own, see refuseOverPersonsEdit and
		// noteSavedOver; this is a commit made elsewhere.)
		return cur, false
	}
	return merged, false
}

// mergeNote merges memd's change of a note from old (nil: it had none)
// to next into a person's version of it, theirs: where both added lines
// at the end, memd's lines first, as HEAD holds them, and once; otherwise
// git's line merge. ok is false where the two changed the same lines.
func mergeNote(theirs []byte, old *factFile, next []byte) (merged []byte, ok bool, err error) {
	if old != nil && endsLine(old.data) && endsLine(next) && bytes.HasPrefix(theirs, old.data) && bytes.HasPrefix(next, old.data) {
		// Both added lines at the end: the lines both start with once
		// (memd's own, in a version of the file the person's came from),
		// then memd's others, then theirs.
		shared := len(old.data) + sameStart(theirs[len(old.data):], next[len(old.data):])
		return append(slices.Clip(next), theirs[shared:]...), true, nil
	}
	var oldData []byte
	if old != nil {
		oldData = old.data
	}
	merged, conflict, err := mergeLines(theirs, oldData, next, "memd")
	return merged, err == nil && !conflict, err
}

// sameStart is how long the whole lines a and b both start with are.
func sameStart(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n == len(a) && (n == 0 || a[n-1] == '\n') || n == len(b) && (n == 0 || b[n-1] == '\n') {
		return n // one is a start of the other, ending a line
	}
	return bytes.LastIndexByte(a[:n], '\n') + 1
}

// endsLine reports whether text is empty or ends its last line.
func endsLine(text []byte) bool { return len(text) == 0 || text[len(text)-1] == '\n' }

// indexedKept is how many of the blobs memd put in the index (or the
// working tree) are remembered per path: more than git can write back
// while memd commits.
const indexedKept = 256

func (sh *Shard) noteIndexed(path string, blob Hash) {
	if sh.indexed == nil {
		sh.indexed = make(map[string][]Hash)
	}
	blobs := sh.indexed[path]
	if len(blobs) == indexedKept {
		blobs = append(blobs[:0], blobs[1:]...)
	}
	sh.indexed[path] = append(blobs, blob)
}

func (sh *Shard) wasIndexed(path string, blob Hash) bool {
	return slices.Contains(sh.indexed[path], blob)
}

// earlierVersion returns, for a working file holding cur (not fileOld,
// memd's last version) within moments of memd's last write of it, the
// version that write found in the file (or, made without the index lock,
// in the index) when cur is exactly that and next holds every line of it;
// or else fileOld. A git command running as memd wrote may write the file
// back as it was when it began (git merge putting the tree back after a
// failed strategy, git stash), and one restoring the file from the index
// memd had yet to bring forward (git checkout -- file) writes the version
// before: its lines missing since are memd's to bring forward, not a
// person's deletion for their next `git commit -a` to commit (an editor
// saving, unchanged, a copy read before memd's write is the same). Later,
// a file holding an earlier version is the person's doing (they deleted
// memd's newest fact), and a file holding lines next lacks is left to the
// merge as ever (main may have lost them to a commit from a stale index,
// which memd restores from the working file).
func (sh *Shard) earlierVersion(path string, cur []byte, fileOld, next *factFile) *factFile {
	rec, ok := sh.lastStep(path)
	if !ok || !rec.recent(time.Now()) || next == nil || !linesWithin(cur, next.data) {
		return fileOld
	}
	blob := odb.HashObject(plumbing.BlobObject, cur)
	switch {
	case blob == rec.before:
		if rec.beforeData != nil {
			// What the write found held the person's edits: as a base it
			// would take them out with memd's change. lastWriteAgain
			// merges the write in again instead.
			return fileOld
		}
	case blob == rec.indexBefore && rec.unlocked:
	default:
		return fileOld
	}
	v, err := sh.fileVersion(path, blob)
	if err != nil {
		return fileOld
	}
	return v
}

// lastWriteAgain returns cur with memd's last write of path merged into
// it again where, within moments of that write, cur holds none of the
// lines it added and is, at the place the write changed, as the write
// found it: a copy of the file read just before the write and saved just
// after (sed -i, a script, an editor's buffer) took the write out, and the
// person's next git commit -a would commit that as their removal. What the
// copy changed elsewhere stays. A file changed at that place (memd's line
// reworded, or a line of the person's added where memd's went, as at the
// end of a log) is left as it is: a stale copy cannot be told from an edit
// of memd's line there. (One that took out just the lines memd added, or
// put back the line memd replaced, and changed nothing around them, can
// be told from a stale copy no more: those lines come back.) So are lines
// the version memd last brought the file to, fileOld, no longer holds (a
// commit since took them out). A write that only took lines out is made
// again the same way, where main still lacks them.
func (sh *Shard) lastWriteAgain(path string, cur []byte, fileOld *factFile) []byte {
	rec, ok := sh.lastStep(path)
	if !ok || !rec.recent(time.Now()) || !rec.existed || rec.after.IsZero() || fileOld == nil {
		return cur
	}
	if odb.HashObject(plumbing.BlobObject, cur) == rec.after {
		return cur // as memd's write left it: the common case, and cheap
	}
	found, err := sh.versionOf(path, rec.before, rec.beforeData)
	if err != nil {
		return cur
	}
	left, err := sh.versionOf(path, rec.after, rec.afterData)
	if err != nil {
		return cur
	}
	was, now, held := textLines(found.data), textLines(left.data), textLines(cur)
	p, s := sharedEnds(was, now)
	added := linesAdded(was[p:len(was)-s], now[p:len(now)-s])
	removed := linesAdded(now[p:len(now)-s], was[p:len(was)-s])
	// A line is held where cur has it more often than the write found it.
	inCur, inFound, stands := lineCounts(held), lineCounts(was), lineCounts(textLines(fileOld.data))
	switch {
	case len(added) > 0:
		if slices.ContainsFunc(added, func(l string) bool { return inCur[l] > inFound[l] || stands[l] == 0 }) {
			return cur
		}
	case len(removed) > 0:
		// A write that only took lines out (a forget), where main still
		// lacks them: the place check below finds them in cur.
		if slices.ContainsFunc(removed, func(l string) bool { return stands[l] >= inFound[l] }) {
			return cur
		}
	default:
		return cur
	}
	// The place the write changed, with the nearest line on each side that
	// is not blank (or the file's start or end), must be in cur as the
	// write found it.
	from, to := p, len(was)-s
	for from > 0 && was[from-1] == "" {
		from--
	}
	for to < len(was) && was[to] == "" {
		to++
	}
	atStart, atEnd := from == 0, to == len(was)
	if !atStart {
		from--
	}
	if !atEnd {
		to++
	}
	if p == 0 && s == 0 || !holdsRun(held, was[from:to], atStart, atEnd) {
		return cur
	}
	if !IsFactFile(path) {
		// git's line merge, where lines put at one place by both conflict.
		merged, conflict, err := mergeLines(left.data, found.data, cur, "working file")
		if err != nil || conflict {
			return cur
		}
		return merged
	}
	merged, _ := mergeWorking(path, found, left, cur, true)
	return merged
}

// lineCounts counts how often each line stands in lines.
func lineCounts(lines []string) map[string]int {
	n := make(map[string]int, len(lines))
	for _, l := range lines {
		n[l]++
	}
	return n
}

// textLines splits a file into lines without their ends and trailing
// white space (a CRLF file's, an editor's trim), for comparing versions.
func textLines(data []byte) []string {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return lines
}

// sharedEnds returns how many lines a and b share at their start, and at
// their end beyond those.
func sharedEnds(a, b []string) (p, s int) {
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return p, s
}

// holdsRun reports whether lines hold run at one place, at their start
// with atStart and at their end with atEnd.
func holdsRun(lines, run []string, atStart, atEnd bool) bool {
	for i := 0; i+len(run) <= len(lines); i++ {
		if atStart && i > 0 {
			return false
		}
		if atEnd && i+len(run) != len(lines) {
			continue
		}
		if slices.Equal(lines[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// versionOf is a version of path recorded by its blob and, when it is not
// one memd committed, its content.
func (sh *Shard) versionOf(path string, blob Hash, data []byte) (*factFile, error) {
	if data != nil {
		return &factFile{path: path, blob: blob, data: data}, nil
	}
	return sh.fileVersion(path, blob)
}

// linesAdded returns the lines, other than blank ones, that b holds more
// often than a.
func linesAdded(a, b []string) []string {
	count := lineCounts(a)
	var added []string
	for _, l := range b {
		if count[l]--; count[l] < 0 && l != "" {
			added = append(added, l)
		}
	}
	return added
}

// linesWithin reports whether every line of a is a line of b.
func linesWithin(a, b []byte) bool {
	in := make(map[string]bool)
	for l := range strings.SplitSeq(string(b), "\n") {
		in[l] = true
	}
	for l := range strings.SplitSeq(string(a), "\n") {
		if !in[l] {
			return false
		}
	}
	return true
}

// worktreeTempPrefix starts the name of a working file's next version
// while memd writes it.
const worktreeTempPrefix = ".memd-tmp-"

// mergeFactFile applies memd's change of a fact file from base to ours onto
// a person's version of it, theirs (the working file, or what they
// staged). Fact by fact, so that both adding lines at the end is no
// conflict; line by line where that gives the same fact lines, so that a
// change to its other lines (a heading a fetch reworded) is kept too.
// baseFacts, when known, are base's fact lines.
func mergeFactFile(path string, base, ours, theirs []byte, baseFacts []lineFact) []byte {
	t := splitThree(path, [3][]byte{base, ours, theirs}, baseFacts)
	byFacts := t.mergeFactLines()
	// memd's own appends and removals change fact lines alone: the line
	// merge, a git process with three files, is for a change that came
	// from elsewhere, and for a line rewritten where it stands (an edit,
	// which by facts would go to the end of the person's file).
	if !t.changesOtherLines() {
		return byFacts
	}
	if merged, conflict, err := mergeLines(theirs, base, ours, "memd"); err == nil && !conflict && sameFacts(path, merged, byFacts) {
		return merged
	}
	return byFacts
}

// changesOtherLines tells whether ours changes more than which facts the
// file holds: a line that is not a fact, or a fact rewritten where it
// stands.
func (t threeFiles) changesOtherLines() bool {
	return t.rewrites() || t.changesProse()
}

// changesProse tells whether ours changes a line that is not a fact.
func (t threeFiles) changesProse() bool {
	return !bytes.Equal(otherLines(t.middle(0), t.mid[0], t.head), otherLines(t.middle(1), t.mid[1], t.head))
}

// rewrites tells whether ours both removes a fact of base and adds one:
// a line rewritten, or one put in place of another.
func (t threeFiles) rewrites() bool {
	inBase, inOurs := factIDs(t.mid[0]), factIDs(t.mid[1])
	removes := slices.ContainsFunc(t.mid[0], func(lf lineFact) bool { return !inOurs[lf.ID] })
	adds := slices.ContainsFunc(t.mid[1], func(lf lineFact) bool { return !inBase[lf.ID] })
	return removes && adds
}

// threeFiles is three versions of a fact file, base, ours and theirs: the
// whole lines all three share at their start (head bytes) and end (tail
// bytes), and the fact lines of each one's middle. A person editing a
// large profile while memd writes to it has memd merge every write into
// their copy; parsing each version whole, a hash of every line, made those
// writes ten times slower.
type threeFiles struct {
	vs         [3][]byte
	head, tail int
	// shared holds the fact lines of the shared start, then of the shared
	// end at their places in base.
	shared []lineFact
	mid    [3][]lineFact // at their places in their version
}

// splitThree parses three versions of a fact file, base's shared lines
// taken from baseFacts when given.
func splitThree(path string, vs [3][]byte, baseFacts []lineFact) threeFiles {
	t := threeFiles{vs: vs}
	t.head, t.tail = sharedLines(vs)
	base := vs[0]
	from := len(base) - t.tail
	if baseFacts == nil {
		t.shared = parseFactFile(path, base[:t.head])
		t.shared = appendShifted(t.shared, appendFactLines(nil, path, base[from:]), from)
	} else {
		// A line ends at or before head, or starts at or after it.
		h := sort.Search(len(baseFacts), func(i int) bool { return baseFacts[i].start >= t.head })
		e := sort.Search(len(baseFacts), func(i int) bool { return baseFacts[i].start >= from })
		t.shared = append(slices.Clip(baseFacts[:h]), baseFacts[e:]...)
	}
	for k, v := range vs {
		t.mid[k] = appendShifted(nil, appendFactLines(nil, path, v[t.head:len(v)-t.tail]), t.head)
	}
	return t
}

// factsOf returns a file's fact lines if they were parsed, else nil.
func factsOf(f *factFile) []lineFact {
	if f == nil {
		return nil
	}
	return f.facts
}

// middle is version k's bytes between the shared start and end.
func (t threeFiles) middle(k int) []byte { return t.vs[k][t.head : len(t.vs[k])-t.tail] }

// lines returns every fact line of version k, at its place.
func (t threeFiles) lines(k int) []lineFact {
	v := t.vs[k]
	h := sort.Search(len(t.shared), func(i int) bool { return t.shared[i].start >= t.head })
	out := append(slices.Clone(t.shared[:h]), t.mid[k]...)
	return appendShifted(out, t.shared[h:], len(v)-len(t.vs[0])) // base's end, moved to v's
}

// appendShifted appends to out the lines of a piece of a file moved by
// shift bytes.
func appendShifted(out, piece []lineFact, shift int) []lineFact {
	for _, lf := range piece {
		lf.start, lf.end = lf.start+shift, lf.end+shift
		out = append(out, lf)
	}
	return out
}

// sharedLines returns how many bytes, whole lines, three versions of a
// file share at their start, and then at their end.
func sharedLines(vs [3][]byte) (head, tail int) {
	a, b, c := vs[0], vs[1], vs[2]
	n := min(len(a), len(b), len(c))
	head = min(commonPrefix(a[:n], b[:n]), commonPrefix(a[:n], c[:n]))
	if head < len(a) || head < len(b) || head < len(c) {
		head = bytes.LastIndexByte(a[:head], '\n') + 1 // back to a line start
	}
	return head, wholeLinesOfTail(a, min(commonSuffix(a[head:], b[head:]), commonSuffix(a[head:], c[head:])))
}

// mergeFactLines applies the fact-level change from base to ours onto
// theirs (mergeFacts), and returns the merge alone.
func (t threeFiles) mergeFactLines() []byte {
	out, _ := t.mergeFacts()
	return out
}

// mergeFacts applies the fact-level change from base to ours onto theirs,
// line by line of a fact (lineKey: a fact held on several days has a line
// each). Every other line of theirs is kept as the person wrote it.
//   - A fact ours no longer holds on any line (a forget, or the old text
//     of an edit) loses every line of it in theirs; a line ours removed
//     of a fact it still holds (a revert's RemoveLine) loses that line.
//   - A line ours added is appended when theirs lacks it, or put where the
//     line it replaced stands in theirs (an edit in place, or a date
//     corrected). It is not added where theirs no longer holds a fact base
//     held (a forget stands), nor where theirs holds a fact base held on no
//     line and on none of ours' days (learned on both sides: kept once, as
//     theirs has it), nor where it corrects a date theirs corrected too
//     (theirs stands).
//
// clash says that both changed the lines of one fact: a date corrected
// differently on each side, or corrected on one and forgotten on the
// other. (Lines of a recurring entry each side added or took back, as
// reverts do, are no clash: they merge line by line.) A line of the
// shared lines is in all three, so it is neither dropped nor added: only
// the middles are read, and the shared lines only for the facts of the
// middles.
//
// It is long because each rule above reads the same sets of the three
// versions' lines and facts, built once at its start.
func (t threeFiles) mergeFacts() (out []byte, clash bool) {
	var in [3]map[lineKey]bool
	inMiddles := make(map[lineKey]bool)
	for k := range in {
		in[k] = lineKeys(t.mid[k])
		for key := range in[k] {
			inMiddles[key] = true
		}
	}
	shared := make(map[lineKey]bool)
	for _, lf := range t.shared {
		if inMiddles[keyOf(lf)] {
			shared[keyOf(lf)] = true
		}
	}
	// The facts each version holds, on any line, of those the middles
	// hold (all it is asked about): the shared lines are in all three,
	// and a large file is read once more, not mapped three times.
	var ids [3]map[string]bool
	inMiddleIDs := make(map[string]bool)
	for k := range ids {
		ids[k] = factIDs(t.mid[k])
		maps.Copy(inMiddleIDs, ids[k])
	}
	for _, lf := range t.shared {
		if inMiddleIDs[lf.ID] {
			for k := range ids {
				ids[k][lf.ID] = true
			}
		}
	}
	inBase, inOurs, inTheirs := in[0], in[1], in[2]
	// The facts whose date theirs corrected: it took out a day's line and
	// put in another. (A revert's RemoveLine or RestoreLine does one or the
	// other.) Ours must not meet such a change of the same fact unnoticed.
	var took, put [2]map[string]bool // [0] theirs, [1] ours: IDs of lines taken out, put in
	for side, k := range []int{2, 1} {
		took[side], put[side] = make(map[string]bool), make(map[string]bool)
		for _, lf := range t.mid[0] {
			if key := keyOf(lf); !shared[key] && !in[k][key] {
				took[side][lf.ID] = true
			}
		}
		for _, lf := range t.mid[k] {
			if key := keyOf(lf); !shared[key] && !inBase[key] {
				put[side][lf.ID] = true
			}
		}
	}
	theirsCorrected := func(id string) bool { return took[0][id] && put[0][id] }
	// The facts ours and theirs both hold on a line of the same day where
	// base held them on none: one entry both wrote, not one fact learned
	// twice on two days, so ours' other days of it join theirs.
	sameEntry := make(map[string]bool)
	for _, lf := range t.mid[1] {
		if k := keyOf(lf); !ids[0][lf.ID] && inTheirs[k] {
			sameEntry[lf.ID] = true
		}
	}
	added := func(lf lineFact) bool {
		k := keyOf(lf)
		return !shared[k] && !inBase[k] && !inTheirs[k] && (ids[0][lf.ID] == ids[2][lf.ID] || sameEntry[lf.ID])
	}
	var replacing map[lineKey][]int
	if len(took[1]) > 0 && len(put[1]) > 0 { // ours took a line out and put one in
		replacing = t.replacements(shared)
	}
	done := make(map[int]bool) // ours' added lines written already, or not to be, by place in t.mid[1]
	// A date ours corrected where theirs corrected it too: theirs stands.
	for k, places := range replacing {
		for _, j := range places {
			if lf := t.mid[1][j]; lf.ID == k.id && !inTheirs[k] && theirsCorrected(k.id) {
				done[j] = true
				clash = true
			}
		}
	}
	ours, theirs := t.vs[1], t.vs[2]
	end := lineEnd(theirs)
	// Drop removed fact lines from theirs, or put what replaced them.
	at := 0
	for _, lf := range t.mid[2] {
		k := keyOf(lf)
		gone := !ids[1][lf.ID] && ids[0][lf.ID] || inBase[k] && !inOurs[k]
		if shared[k] || !gone {
			continue
		}
		if !ids[1][lf.ID] && theirsCorrected(lf.ID) {
			clash = true // forgotten on one side, corrected on the other
		}
		out = append(out, theirs[at:lf.start]...)
		at = lf.end
		for _, j := range replacing[k] {
			if r := t.mid[1][j]; !done[j] && added(r) {
				done[j] = true
				out = append(append(out, bytes.TrimRight(ours[r.start:r.end], "\r\n")...), end...)
			}
		}
	}
	out = append(out, theirs[at:]...)
	// Append added facts, after a line end as the person's file has them.
	for j, lf := range t.mid[1] {
		if !done[j] && ids[0][lf.ID] && !ids[2][lf.ID] && took[1][lf.ID] && put[1][lf.ID] {
			clash = true // corrected on one side, forgotten on the other
		}
		if done[j] || !added(lf) {
			continue
		}
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, end...)
		}
		line := bytes.TrimRight(ours[lf.start:lf.end], "\r\n")
		out = append(append(out, line...), end...)
	}
	return out, clash
}

// replacements maps each line ours removed to the lines it added where
// that line stood (by their places in t.mid[1]): an edit in place, a date
// corrected. Only where ours changed facts alone do the places line up;
// elsewhere it is empty, and so where a line it took out of its middle is
// one the shared lines hold too (a line held twice, one copy removed):
// which copy went cannot be told.
func (t threeFiles) replacements(shared map[lineKey]bool) map[lineKey][]int {
	inBase, inOurs := lineKeys(t.mid[0]), lineKeys(t.mid[1])
	for _, lf := range t.mid[0] {
		if k := keyOf(lf); !inOurs[k] && shared[k] {
			return nil
		}
	}
	baseRest, removedAt := t.skeleton(0, inOurs)
	oursRest, addedAt := t.skeleton(1, inBase)
	if len(removedAt) == 0 || len(addedAt) == 0 || !bytes.Equal(withLineEnd(baseRest), withLineEnd(oursRest)) {
		return nil
	}
	var removed, addedLines []int // places in t.mid[0], t.mid[1]
	for j, lf := range t.mid[0] {
		if !inOurs[keyOf(lf)] {
			removed = append(removed, j)
		}
	}
	for j, lf := range t.mid[1] {
		if !inBase[keyOf(lf)] {
			addedLines = append(addedLines, j)
		}
	}
	// Each added line pairs with a line removed at its place: one of the
	// same fact if there is one (a date corrected), else the first. The
	// removed lines are grouped by place once: a change rewriting a whole
	// month's log in place must not cost the square of its lines.
	type place struct {
		first int            // the first line removed there, by place in removed
		byID  map[string]int // the first of each fact
	}
	places := make(map[int]*place)
	for r, at := range removedAt {
		p := places[at]
		if p == nil {
			p = &place{first: r, byID: make(map[string]int)}
			places[at] = p
		}
		if _, seen := p.byID[t.mid[0][removed[r]].ID]; !seen {
			p.byID[t.mid[0][removed[r]].ID] = r
		}
	}
	out := make(map[lineKey][]int)
	for n, at := range addedAt {
		p := places[at]
		if p == nil {
			continue
		}
		pick, ok := p.byID[t.mid[1][addedLines[n]].ID]
		if !ok {
			pick = p.first
		}
		k := keyOf(t.mid[0][removed[pick]])
		out[k] = append(out[k], addedLines[n])
	}
	return out
}

// skeleton returns version k's middle without the lines of the facts
// other lacks, and where in what is left each of those stood.
func (t threeFiles) skeleton(k int, other map[lineKey]bool) (rest []byte, at []int) {
	piece := t.middle(k)
	from := 0
	for _, lf := range t.mid[k] {
		if !other[keyOf(lf)] {
			rest = append(rest, piece[from:lf.start-t.head]...)
			at = append(at, len(rest))
			from = lf.end - t.head
		}
	}
	return append(rest, piece[from:]...), at
}

// lineKey names a line of a fact: its ID and day. A fact held on several
// days (a recurring entry: one text, one ID) has a key a line, so that
// one of them can be added or removed alone.
type lineKey struct {
	id  string
	day memd.Date
}

func keyOf(lf lineFact) lineKey { return lineKey{lf.ID, lf.Date} }

// lineKeys returns the keys of fact lines, as a set.
func lineKeys(facts []lineFact) map[lineKey]bool {
	keys := make(map[lineKey]bool, len(facts))
	for _, lf := range facts {
		keys[keyOf(lf)] = true
	}
	return keys
}

// otherLines returns a piece of a fact file but its fact lines, given
// those at their places in the file, where the piece starts at byte from.
func otherLines(piece []byte, facts []lineFact, from int) []byte {
	var out []byte
	at := 0
	for _, lf := range facts {
		out = append(out, piece[at:lf.start-from]...)
		at = lf.end - from
	}
	return append(out, piece[at:]...)
}

// sameFacts says whether two versions of a fact file hold the same fact
// lines, each as many times, in any order.
func sameFacts(path string, a, b []byte) bool {
	count := make(map[memd.Fact]int)
	for _, lf := range parseFactFile(path, a) {
		count[lf.Fact]++
	}
	for _, lf := range parseFactFile(path, b) {
		if count[lf.Fact]--; count[lf.Fact] < 0 {
			return false
		}
	}
	return !slices.ContainsFunc(slices.Collect(maps.Values(count)), func(n int) bool { return n != 0 })
}

func factIDs(facts []lineFact) map[string]bool {
	ids := make(map[string]bool, len(facts))
	for _, lf := range facts {
		ids[lf.ID] = true
	}
	return ids
}
