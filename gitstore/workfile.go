package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
	"golang.org/x/sync/semaphore"
)

// Writing a working file a person may be editing at the same moment.
//
// memd reads the file, merges its change into what it read, and renames
// the result over the file. A person's write between the read and the
// rename would be lost, so the file is checked again just before the
// rename (and read and merged again if it changed), and the file replaced
// is checked after it: a write that reached it in between is merged into
// the new file. What the index records of the file (its stat data) comes
// from the file memd wrote, never from a later look at the path, which
// could see a person's write and call it memd's.

// Tests stand in for a person writing at the worst moments through these;
// atomic, as a retry timer may write a file while a test changes them.
var testHookBeforeRename, testHookAtRename, testHookAfterRename, testHookBeforeAppend atomic.Pointer[func(full string)]

// testHookMainMoved is called once main names a commit memd is making,
// before the shard's state is in step with it.
var testHookMainMoved atomic.Pointer[func(full string)]

func runHook(h *atomic.Pointer[func(full string)], full string) {
	if fn := h.Load(); fn != nil {
		(*fn)(full)
	}
}

// testHookAfterSwap is called when installWorking has swapped memd's file
// in, with the name the replaced file is at.
var testHookAfterSwap atomic.Pointer[func(tmp, full string)]

func runSwapHook(tmp, full string) {
	if fn := testHookAfterSwap.Load(); fn != nil {
		(*fn)(tmp, full)
	}
}

// testHookWatchDone is called when a watch of a replaced file ends.
var testHookWatchDone atomic.Pointer[func()]

// workWrite is a working file after memd wrote it.
type workWrite struct {
	data []byte      // what the file holds
	gone bool        // the file is not there
	stat os.FileInfo // its stat data while it held exactly data; nil if unknown
}

// rewriteAttempts bounds how often a write starts again because the file
// changed under it. After the first two it waits a little longer each time
// (1 ms, doubling; about 60 ms in all): a person's editor or script
// writing in a burst has usually finished by then. memd holds main's lock
// meanwhile, and git waits 100 ms for a ref lock.
const rewriteAttempts = 8

// rewriteBackoff is how long attempt waits before it starts.
func rewriteBackoff(attempt int) time.Duration {
	if attempt < 2 {
		return 0
	}
	return time.Millisecond << (attempt - 2)
}

// rewriteWorking replaces the working file at full with what merge makes
// of its current content (exists is false when there is no file). merge
// returns remove to take the file away, and data equal to cur to leave it.
// Where data only adds to cur, it is appended in place rather than
// renamed over the file, so that a write a person has under way to the
// file lands beside it.
func rewriteWorking(full string, merge func(cur []byte, exists bool) (data []byte, remove bool)) (workWrite, error) {
	for attempt := 0; attempt < rewriteAttempts; attempt++ {
		time.Sleep(rewriteBackoff(attempt))
		f, cur, before, err := openWorking(full)
		if err != nil {
			return workWrite{}, err
		}
		exists := f != nil
		data, remove := merge(cur, exists)
		switch {
		case remove && !exists:
			return workWrite{gone: true}, nil
		case remove:
			if changedSince(f, before) || replaced(full, before) {
				f.Close()
				continue
			}
			err := os.Remove(full)
			f.Close()
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return workWrite{}, err
			}
			removeEmptyFolders(filepath.Dir(full))
			return workWrite{gone: true}, nil
		case exists && bytes.Equal(data, cur):
			st := before
			if changedSince(f, before) {
				st = nil
			}
			f.Close()
			return workWrite{data: cur, stat: st}, nil
		case exists && len(data) > len(cur) && bytes.HasPrefix(data, cur):
			f.Close()
			w, retry, err := appendInPlace(full, before, cur, data[len(cur):])
			if err != nil || !retry {
				return w, err
			}
			continue
		}
		w, retry, theirs, err := replaceWorking(full, f, before, data)
		switch {
		case err != nil:
			return workWrite{}, err
		case retry: // the file changed before the rename
			continue
		case theirs != nil:
			// A person wrote to the file just replaced: what they added
			// goes at the end of the new one.
			return keepLateWrite(full, cur, theirs, w)
		}
		return w, nil
	}
	return workWrite{}, fmt.Errorf("write %s: %w", filepath.Base(full), errKeptChanging)
}

// errKeptChanging is a working file a person kept changing while memd
// tried to write it.
var errKeptChanging = errors.New("the file kept changing")

// keepLateWrite adds to the working file at full what a person appended to
// the file memd replaced, which held cur when memd read it and theirs after;
// w is memd's write.
func keepLateWrite(full string, cur, theirs []byte, w workWrite) (workWrite, error) {
	if !bytes.HasPrefix(theirs, cur) {
		// Not an append: nothing to place it by. Rare enough to say so.
		return w, fmt.Errorf("write %s: a person rewrote the file while memd replaced it; their version was %d bytes", filepath.Base(full), len(theirs))
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return w, err
	}
	_, err = f.Write(theirs[len(cur):])
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return w, fmt.Errorf("append to %s: %w", filepath.Base(full), err)
	}
	data, err := os.ReadFile(full)
	return workWrite{data: data}, err
}

// appendInPlace appends add to the working file at full, which held cur
// with the stat data before when memd read it; retry reports that memd
// must read it again. Lines a person appended since keep memd's merge
// valid (their lines stay, memd's go after), so they do not send memd back:
// a person appending in a loop would otherwise keep memd out of the file.
func appendInPlace(full string, before os.FileInfo, cur, add []byte) (w workWrite, retry bool, err error) {
	runHook(&testHookBeforeAppend, full)
	f, err := os.OpenFile(full, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return w, true, nil
	}
	if err != nil {
		return w, false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(st, before) {
		return w, true, nil
	}
	now := cur
	if changedSince(f, before) {
		var ok bool
		if now, ok = grownByLines(f, cur, add); !ok {
			return w, true, nil
		}
		// Nothing written since that read: a line a person is half way
		// through would be joined to memd's.
		if st, err := f.Stat(); err != nil || st.Size() != int64(len(now)) {
			return w, true, nil
		}
	}
	if err := appendWhole(f, int64(len(now)), add); err != nil {
		return w, false, fmt.Errorf("append to %s: %w", filepath.Base(full), err)
	}
	after, err := f.Stat()
	if err != nil {
		return w, false, err
	}
	if replaced(full, after) {
		return w, true, nil // the append went to a file no longer there
	}
	whole := append(now[:len(now):len(now)], add...)
	if after.Size() != int64(len(whole)) {
		// Someone else appended at the same moment; both are there.
		data, err := os.ReadFile(full)
		return workWrite{data: data}, false, err
	}
	return workWrite{data: whole, stat: after}, false, nil
}

// appendWhole appends add to f, opened for appending and size bytes long
// before. A write cut short (a full disk) is taken back: half a line of
// memd's would read as a fact, and a person's git commit -a would keep it.
// Only if nobody else wrote to the file meanwhile; then it stays, and the
// next write completes the line (mergeWorking).
func appendWhole(f *os.File, size int64, add []byte) error {
	n, err := f.Write(add)
	if err != nil && n > 0 {
		if st, serr := f.Stat(); serr == nil && st.Size() == size+int64(n) {
			f.Truncate(size)
		}
	}
	return err
}

// grownByLines returns what the open file f holds if that is cur with
// whole lines appended, none of them a line of add; ok is false otherwise.
func grownByLines(f *os.File, cur, add []byte) (data []byte, ok bool) {
	if len(cur) > 0 && cur[len(cur)-1] != '\n' {
		return nil, false
	}
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	if err != nil || len(data) <= len(cur) || !bytes.HasPrefix(data, cur) || data[len(data)-1] != '\n' {
		return nil, false
	}
	theirs := data[len(cur):]
	for line := range bytes.Lines(add) {
		if bytes.Contains(theirs, line) {
			return nil, false
		}
	}
	return data, true
}

// openWorking opens a working file and reads it; f is nil if there is no
// file.
func openWorking(full string) (f *os.File, data []byte, st os.FileInfo, err error) {
	f, err = os.Open(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if st, err = f.Stat(); err == nil && st.IsDir() && isRealDir(full) && os.Remove(full) == nil {
		// An empty folder a removed file left (git leaves none; a person
		// may): the file takes its place.
		f.Close()
		return nil, nil, nil, nil
	}
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", filepath.Base(full))
	}
	if err == nil {
		data, err = io.ReadAll(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("read %s: %w", filepath.Base(full), err)
	}
	return f, data, st, nil
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// isRealDir reports whether path is a folder itself, not a link to one
// (removing a link would drop it whatever its folder holds).
func isRealDir(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.IsDir()
}

// removeEmptyFolders removes dir and the folders above it while they are
// empty, as git does when it removes a file: a folder of notes whose last
// note went leaves its name free for a note. A folder holding anything
// (the shard's own, holding .git, among them) stays.
func removeEmptyFolders(dir string) {
	for isRealDir(dir) && os.Remove(dir) == nil {
		dir = filepath.Dir(dir)
	}
}

// replaceWorking writes data to a file of its own and renames it over
// full, unless the file open as old (nil: there was none) changed since
// before: then it reports retry. If the replaced file changed while the
// rename happened, theirs is what it held then.
func replaceWorking(full string, old *os.File, before os.FileInfo, data []byte) (w workWrite, retry bool, theirs []byte, err error) {
	defer func() { closeFile(old) }() // unless a watch took it over
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return w, false, nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(full), worktreeTempPrefix)
	if err != nil {
		return w, false, nil, err
	}
	fail := func(err error) (workWrite, bool, []byte, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return workWrite{}, false, nil, fmt.Errorf("write %s: %w", filepath.Base(full), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	written, err := tmp.Stat()
	if err != nil {
		return fail(err)
	}
	runHook(&testHookBeforeRename, full)
	// The last look before the rename.
	if old != nil && (changedSince(old, before) || replaced(full, before)) ||
		old == nil && exists(full) {
		tmp.Close()
		os.Remove(tmp.Name())
		return workWrite{}, true, nil, nil
	}
	runHook(&testHookAtRename, full)
	var read os.FileInfo // the file memd read, to be what it replaces
	if old != nil {
		read = before
	}
	if put, err := installWorking(tmp.Name(), full, data, written, read); err != nil {
		tmp.Close()
		// Removed only if it is memd's: a failed swap back leaves the
		// person's save under that name.
		if st, serr := os.Lstat(tmp.Name()); serr == nil && os.SameFile(st, written) {
			os.Remove(tmp.Name())
		}
		return workWrite{}, false, nil, fmt.Errorf("write %s: %w", filepath.Base(full), err)
	} else if !put {
		tmp.Close()
		return workWrite{}, true, nil, nil
	}
	w = workWrite{data: data}
	// The rename changes the file's ctime, which git records: take the stat
	// data now, from the file memd wrote, and only if nobody wrote to it.
	if after, err := tmp.Stat(); err == nil && after.Size() == written.Size() && after.ModTime().Equal(written.ModTime()) {
		w.stat = after
	}
	tmp.Close()
	runHook(&testHookAfterRename, full)
	if old != nil && changedSince(old, before) {
		// A person wrote to the file just replaced.
		theirs, err := io.ReadAll(io.NewSectionReader(old, 0, 1<<62))
		if err != nil {
			return w, false, nil, fmt.Errorf("read %s: %w", filepath.Base(full), err)
		}
		return w, false, theirs, nil
	}
	if old != nil && watchSlots.TryAcquire(1) {
		// A write a person opened the file for before the rename may land
		// a moment later still: watch the replaced file for a while.
		go watchReplaced(full, old, before)
		old = nil // the watch closes it
	}
	return w, false, nil, nil
}

// watchSlots bounds the replaced files watched at once (each holds a file
// descriptor for a second); past it, a replaced file is not watched.
var watchSlots = semaphore.NewWeighted(64)

// replacedWatch is when, after memd replaced a working file, the replaced
// one is looked at again for a person's late write.
var replacedWatch = []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second}

// watchReplaced looks at the working file memd replaced (open as old, with
// the stat data before when memd read it) a few times over a second, and
// appends to the file now at full what a person appended to it meanwhile,
// as the person would have. It then closes old.
func watchReplaced(full string, old *os.File, before os.FileInfo) {
	defer watchSlots.Release(1)
	defer old.Close()
	if done := testHookWatchDone.Load(); done != nil {
		defer (*done)()
	}
	start := time.Now()
	for _, at := range replacedWatch {
		time.Sleep(time.Until(start.Add(at)))
		if !changedSince(old, before) {
			continue
		}
		theirs, err := io.ReadAll(io.NewSectionReader(old, 0, 1<<62))
		if err != nil || int64(len(theirs)) <= before.Size() {
			return
		}
		cur, err := io.ReadAll(io.NewSectionReader(old, 0, before.Size()))
		if err != nil {
			return
		}
		keepLateWrite(full, cur, theirs, workWrite{})
		return
	}
}

// appendWorking appends the part of next past old to the working file at
// full if it holds old as memd left it, as the index entry records it; ok
// is false when it does not, or when the file was replaced while memd
// wrote.
func appendWorking(full string, entry *index.Entry, old, next []byte) (w workWrite, ok bool, err error) {
	st, err := os.Lstat(full)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(old)) || !statMatches(entry, st) {
		return w, false, nil
	}
	w, retry, err := appendInPlace(full, st, old, next[len(old):])
	return w, err == nil && !retry, err
}

// changedSince reports whether the open file f changed since it had the
// stat data before.
func changedSince(f *os.File, before os.FileInfo) bool {
	st, err := f.Stat()
	return err != nil || st.Size() != before.Size() || !st.ModTime().Equal(before.ModTime())
}

// replaced reports whether full names another file than the one that had
// the stat data before (or none).
func replaced(full string, before os.FileInfo) bool {
	st, err := os.Lstat(full)
	if err != nil {
		return true
	}
	a, ok1 := st.Sys().(*syscall.Stat_t)
	b, ok2 := before.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || a.Ino != b.Ino || a.Dev != b.Dev
}

func exists(full string) bool {
	_, err := os.Lstat(full)
	return err == nil
}
