package gitstore

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memd/memd"
)

const mainRef = "refs/heads/main"

// errRefMoved means the branch is no longer where a write expected it: a
// person or another program committed in between.
var errRefMoved = errors.New("branch moved")

// lockHeldError is a lock file another program held for as long as memd
// waited.
type lockHeldError struct {
	path string
	held time.Duration
}

func (e *lockHeldError) Error() string {
	return fmt.Sprintf("%s has been held for %s; if no git command is running there, remove it", e.path, e.held)
}

// staleRefLock is how old a lock on main must be to be taken for one a
// program left when it stopped: git holds it for moments. A start removes
// such a lock too (clearStaleLocks).
const staleRefLock = time.Minute

// lockTimeout bounds how long memd waits for a lock file git holds
// (lowered by tests).
var lockTimeout = 10 * time.Second

// readRef returns the commit a ref points at: the loose ref file if there is
// one, else its line in packed-refs, else the zero hash.
func readRef(gitDir, name string) (Hash, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, name))
	if err == nil {
		s := strings.TrimSpace(string(b))
		h := NewHash(s)
		if len(s) != 40 || h.IsZero() {
			return Hash{}, fmt.Errorf("ref %s: unexpected content %q", name, memd.Shorten(s, 60))
		}
		return h, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Hash{}, fmt.Errorf("read ref %s: %w", name, err)
	}
	return readPackedRef(gitDir, name)
}

func readPackedRef(gitDir, name string) (Hash, error) {
	f, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return Hash{}, nil
	}
	if err != nil {
		return Hash{}, fmt.Errorf("read packed-refs: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if len(line) > 41 && line[40] == ' ' && line[41:] == name {
			return NewHash(line[:40]), nil
		}
	}
	return Hash{}, sc.Err()
}

// lockFile is a git lock file: "<path>.lock", created exclusively. Whoever
// holds it may replace path by renaming the lock over it.
type lockFile struct {
	path string   // the file being replaced
	f    *os.File // the lock's content, open; nil for the index's
}

// acquireLock creates gitDir/name+".lock" holding content, waiting up to
// timeout while another program holds it. The lock appears with its
// content already in it: the content is written to a file of memd's own,
// which is then hard-linked into place (the link fails, as git's O_EXCL
// create does, while the lock exists). So a crash never leaves an empty
// lock, which memd could not tell from one git is about to fill.
func acquireLock(gitDir, name string, content []byte, timeout time.Duration) (*lockFile, error) {
	path := filepath.Join(gitDir, name)
	stage := stagedLockPath(gitDir, name)
	f, err := os.OpenFile(stage, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	defer os.Remove(stage)
	if _, err := f.Write(content); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := linkLock(stage, path, timeout); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return &lockFile{path: path, f: f}, nil
}

// linkLock hard-links stage to path+".lock", waiting up to timeout while
// another program holds the lock.
func linkLock(stage, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Microsecond
	for {
		err := os.Link(stage, path+".lock")
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) || time.Now().After(deadline) {
			if errors.Is(err, fs.ErrExist) {
				return &lockHeldError{path: path + ".lock", held: timeout}
			}
			return err
		}
		time.Sleep(wait)
		wait = min(wait*2, 20*time.Millisecond)
	}
}

// acquireIndexLock takes .git/index.lock as acquireLock does, but links a
// marker file memd keeps in the git directory rather than one written for
// the occasion: the index lock is only ever dropped, never renamed over the
// index (see replace), so it holds the same marker every time, and taking
// it creates no file. (Creating files is most of a commit's cost on ext4.)
// The caller holds sh.mu.
func (sh *Shard) acquireIndexLock(timeout time.Duration) (*lockFile, error) {
	marker := filepath.Join(sh.gitDir, indexMarkerName)
	path := filepath.Join(sh.gitDir, "index")
	for range 2 { // a second time when the marker went since it was checked
		if err := sh.checkIndexMarker(marker); err != nil {
			return nil, fmt.Errorf("lock index: %w", err)
		}
		// The lock's time is when it was taken, as a new file's would be:
		// a tool that removes index locks older than a while must not take
		// memd's for one left long ago.
		now := time.Now()
		os.Chtimes(marker, now, now)
		err := linkLock(marker, path, timeout)
		if err == nil {
			return &lockFile{path: path}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("lock index: %w", err)
		}
		sh.indexMarkerOK = false // removed by hand: written again
	}
	return nil, fmt.Errorf("lock index: %s keeps going", indexMarkerName)
}

// checkIndexMarker makes sure, once, that the marker holds memd's marker: a
// file another program left there, or one cut short, would lock the index
// with something else in it.
func (sh *Shard) checkIndexMarker(marker string) error {
	if sh.indexMarkerOK {
		return nil
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != indexLockMarker {
		err := os.WriteFile(marker+".tmp", []byte(indexLockMarker), 0o644)
		if err == nil {
			err = os.Rename(marker+".tmp", marker)
		}
		if err != nil {
			return err
		}
	}
	sh.indexMarkerOK = true
	return nil
}

// indexMarkerName is the file in the git directory acquireIndexLock links
// as .git/index.lock.
const indexMarkerName = "memd-index.lock-marker"

// ownIndexLock reports whether .git/index.lock is memd's: a link to its
// marker (whatever a person made of the marker's content since), or a file
// holding the marker, as an older memd wrote it.
func ownIndexLock(gitDir string) bool {
	lock := filepath.Join(gitDir, "index.lock")
	fi, err := os.Stat(lock)
	if err != nil {
		return false
	}
	if mi, err := os.Stat(filepath.Join(gitDir, indexMarkerName)); err == nil && os.SameFile(fi, mi) {
		return true
	}
	b, err := os.ReadFile(lock)
	return err == nil && string(b) == indexLockMarker
}

// stagedLockPath is where acquireLock writes a lock's content first: in
// the git directory itself, where git looks for nothing of that name.
func stagedLockPath(gitDir, name string) string {
	return filepath.Join(gitDir, "memd-"+strings.ReplaceAll(name, "/", "-")+".lock-new")
}

// replace puts data in place of the locked file and drops the lock. The
// data goes through a file of its own rather than the lock, so the lock
// keeps the marker memd wrote in it until the end: a crash at any moment
// leaves a lock memd recognises as its own (see clearStaleLocks).
func (l *lockFile) replace(data []byte) (os.FileInfo, error) {
	if err := l.write(data); err != nil {
		l.release()
		return nil, err
	}
	// Read while the lock still keeps git from writing the path: what is
	// there is what was written. (No answer only means it is not known.)
	fi, _ := os.Stat(l.path)
	l.release()
	return fi, nil
}

// write replaces the locked file with data, keeping the lock.
func (l *lockFile) write(data []byte) error {
	tmp := l.path + replaceSuffix
	err := os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(l.path), err)
	}
	return nil
}

// replaceSuffix names the file replace writes before renaming it.
const replaceSuffix = ".memd-new"

// commit renames the lock over the locked path. The index's lock, a link
// to memd's marker, is never committed (see replace).
func (l *lockFile) commit() error {
	if l.f == nil {
		l.release()
		return fmt.Errorf("write %s: its lock cannot be renamed over it", filepath.Base(l.path))
	}
	err := l.f.Close()
	if err == nil {
		err = os.Rename(l.path+".lock", l.path)
	}
	if err != nil {
		os.Remove(l.path + ".lock")
		return fmt.Errorf("write %s: %w", filepath.Base(l.path), err)
	}
	return nil
}

// release drops the lock without changing the locked file. A nil lock is
// none to drop.
func (l *lockFile) release() {
	if l == nil {
		return
	}
	if l.f != nil {
		l.f.Close()
	}
	os.Remove(l.path + ".lock")
}

// lockRef locks a ref the way git does before moving it, with the lock
// naming next (see acquireLock): create the ".lock" file exclusively, then compare the current value (loose ref or
// packed-refs) with old. A concurrent git commit therefore either completed
// before (and the compare fails with errRefMoved) or waits for the lock.
func lockRef(gitDir, name string, old, next Hash) (*lockFile, error) {
	l, err := acquireLock(gitDir, name, []byte(next.String()+"\n"), lockTimeout)
	if _, held := errors.AsType[*lockHeldError](err); held {
		return nil, &memd.Error{Code: memd.EUNAVAILABLE, Err: err,
			Message: fmt.Sprintf("another program holds git's lock on %s (%s.lock); nothing was committed, try again", name, name)}
	}
	if err != nil {
		return nil, err
	}
	cur, err := readRef(gitDir, name)
	if err != nil {
		l.release()
		return nil, err
	}
	if cur != old {
		l.release()
		return nil, fmt.Errorf("%w: %s is at %s, expected %s", errRefMoved, name, short(cur), short(old))
	}
	return l, nil
}

func short(h Hash) string { return h.String()[:12] }

// seenRef is main's commit as last read, with the stat data of the ref
// file it was read from.
type seenRef struct {
	stat fileStat
	head Hash
}

// settled is how old a ref file's last change must be before its stat
// data are trusted to change with its content: a file system's clock may
// tick coarsely, and a new file may take a removed one's inode.
var settled = time.Second

// visibleHead returns the commit main points at as readers take it: while
// a writer moves main and has not yet put the shard's state in step, the
// commit it moves from. That write is not acknowledged yet, so a read need
// not see it, and need not wait for the writer to finish.
func (sh *Shard) visibleHead() (Hash, error) {
	head, err := sh.mainHead()
	if err != nil {
		return head, err
	}
	if m := sh.moving.Load(); m != nil && *m == head {
		if st := sh.cur.Load(); st != nil {
			return st.head, nil
		}
	}
	return head, nil
}

// mainHead returns the commit main points at. While the ref file is
// unchanged since memd last read it (same inode, size and times, and last
// changed long enough ago that a change since would show in them), the
// commit read then is returned without reading the file again: a recall
// over a hundred shards would otherwise read a hundred files.
func (sh *Shard) mainHead() (Hash, error) {
	fi, err := os.Stat(sh.mainPath)
	stat, ok := statOf(fi)
	if err != nil || !ok {
		return readRef(sh.gitDir, mainRef) // packed, or not there
	}
	if seen := sh.mainSeen.Load(); seen != nil && seen.stat == stat {
		return seen.head, nil
	}
	head, err := readRef(sh.gitDir, mainRef)
	if err != nil {
		return head, err
	}
	if time.Since(time.Unix(0, max(stat.mtime, stat.ctime))) > settled {
		sh.mainSeen.Store(&seenRef{stat, head})
	}
	return head, nil
}
