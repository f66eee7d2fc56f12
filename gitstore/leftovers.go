package gitstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// clearStaleLocks removes lock files a crashed memd left behind: the index
// lock it marks as its own, and a ref lock nobody has touched for a minute
// (git holds one for milliseconds). A lock on main that memd left naming a
// commit ahead of main is kept, and the move returned (from, to; zero if
// none), for finishMove: memd writes that lock only once the commit's
// objects are on disk, and may already have put the commit's files in the
// working tree. Only one memd opens a store at a time.
func (sh *Shard) clearStaleLocks() (from, to Hash) {
	sh.removeTempFiles()
	index := filepath.Join(sh.gitDir, "index")
	if ownIndexLock(sh.gitDir) {
		os.Remove(index + ".lock")
		sh.store.log.Warn("removed the index lock memd left when it stopped", "shard", sh.id)
	}
	os.Remove(filepath.Join(sh.gitDir, indexMarkerName+".tmp"))
	os.Remove(index + replaceSuffix)
	os.Remove(filepath.Join(sh.gitDir, placesFile+".tmp")) // a save a kill cut short
	if left, _ := filepath.Glob(filepath.Join(sh.gitDir, receivePrefix+"*")); len(left) > 0 {
		for _, dir := range left {
			sh.removeLeftPush(dir)
		}
		sh.store.log.Warn("removed what a push memd was receiving when it stopped had written", "shard", sh.id)
	}
	for _, name := range []string{"index", mainRef} {
		os.Remove(stagedLockPath(sh.gitDir, name))
	}
	ref := filepath.Join(sh.gitDir, mainRef+".lock")
	defer os.Remove(filepath.Join(sh.gitDir, movingMarker))
	b, err := os.ReadFile(ref)
	if err != nil {
		return from, to
	}
	if h, ok := sh.ownLock(b); ok {
		head, err := readRef(sh.gitDir, mainRef)
		if _, reached, rerr := sh.Range(head, h, ancestryLimit); err == nil && rerr == nil && reached && h != head {
			return head, h
		}
		os.Remove(ref)
		sh.store.log.Warn("removed the lock on main memd left when it stopped; the commit it names is not ahead of main", "shard", sh.id, "commit", short(h))
		return from, to
	}
	if s := strings.TrimSpace(string(b)); IsHash(s) && !sh.db.Has(NewHash(s)) {
		// git names in its lock a commit it has written; a commit that is
		// not there was memd's, in a pack a crash cut short (removed above).
		os.Remove(ref)
		sh.store.log.Warn("removed the lock on main memd left when it stopped; the commit it was making never reached the disk", "shard", sh.id)
		return from, to
	}
	if st, err := os.Stat(ref); err == nil && time.Since(st.ModTime()) > staleRefLock {
		os.Remove(ref)
		sh.store.log.Warn("removed a stale lock on main", "shard", sh.id, "age", time.Since(st.ModTime()).Round(time.Second))
	}
	return from, to
}

// clearStaleMainLock removes a lock on main older than staleRefLock, as a
// start does: a program left it when it stopped, and it would refuse every
// write until someone removed it. The caller holds sh.mu.
func (sh *Shard) clearStaleMainLock() {
	lock := sh.mainPath + ".lock"
	if st, err := os.Stat(lock); err == nil && time.Since(st.ModTime()) > staleRefLock && os.Remove(lock) == nil {
		sh.store.log.Warn("removed a stale lock on main", "shard", sh.id, "age", time.Since(st.ModTime()).Round(time.Second))
	}
}

// finishMove moves main from one commit to another as memd was doing when
// it stopped: the files it changes go in the working-tree journal first,
// then the lock memd left is renamed over main.
func (sh *Shard) finishMove(from, to Hash) {
	lock := filepath.Join(sh.gitDir, mainRef+".lock")
	err := sh.journalMove(from, to)
	if err == nil {
		if lerr := sh.logMove(from, to, "memd: finish the commit it was making when it stopped", sh.headOnMain()); lerr != nil {
			sh.store.log.Warn("main moves without a reflog entry", "shard", sh.id, "err", lerr)
		}
		err = sh.rollForward(lock)
	}
	if err != nil {
		os.Remove(lock)
		sh.store.log.Error("could not finish the commit memd was making when it stopped; dropped it", "shard", sh.id, "commit", short(to), "err", err)
		return
	}
	sh.store.log.Warn("finished the commit memd was making when it stopped", "shard", sh.id, "commit", short(to))
}

// rollForward renames a leftover lock on main over main, durably.
func (sh *Shard) rollForward(lock string) error {
	main := strings.TrimSuffix(lock, ".lock")
	if err := os.Rename(lock, main); err != nil {
		return err
	}
	if sh.store.opts.NoSync {
		return nil
	}
	return syncDirOf(main)
}

// removeTempFiles removes the files memd writes a working file's next
// version to before renaming it (see replaceWorking): one left by a
// crash is nobody's, and a person's git add -A would commit it. A file
// main's commit holds is somebody's, whatever its name.
func (sh *Shard) removeTempFiles() {
	filepath.WalkDir(sh.dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && path == sh.gitDir:
			return filepath.SkipDir
		case !d.IsDir() && strings.HasPrefix(d.Name(), worktreeTempPrefix) && !sh.mayBeTracked(path):
			if os.Remove(path) == nil {
				sh.store.log.Warn("removed a file memd was writing when it stopped", "shard", sh.id, "file", path)
			}
		}
		return nil
	})
}

// mayBeTracked reports whether a working-tree file is in main's commit,
// or might be: one that cannot be looked up is kept.
func (sh *Shard) mayBeTracked(path string) bool {
	rel, err := filepath.Rel(sh.dir, path)
	if err != nil {
		return true
	}
	head, err := readRef(sh.gitDir, mainRef)
	if err != nil {
		return true
	}
	if head.IsZero() {
		return false
	}
	c, err := sh.readCommit(head)
	if err != nil {
		return true
	}
	_, found, err := (&trees{db: sh.db}).lookup(c.tree, filepath.ToSlash(rel))
	return found || err != nil
}

// ownLock reports whether the lock on main, holding lock, is memd's: it
// names a commit memd made, or the commit memd marked as the one it was
// moving main to (a push's).
func (sh *Shard) ownLock(lock []byte) (Hash, bool) {
	s := strings.TrimSpace(string(lock))
	if !IsHash(s) {
		return Hash{}, false
	}
	h := NewHash(s)
	c, err := sh.readCommit(h)
	if err != nil {
		return Hash{}, false
	}
	if c.byMemd() {
		return h, true
	}
	marked, err := os.ReadFile(filepath.Join(sh.gitDir, movingMarker))
	return h, err == nil && strings.TrimSpace(string(marked)) == s
}

// mergeDirPrefix names the folders mergeLines gives git merge-file its
// three versions in, under the system's temporary folder.
const mergeDirPrefix = "memd-merge-"

// removeOldMergeDirs removes the merge folders under tmp older than an
// hour: a merge takes milliseconds, and one that old was left by a memd
// killed in the middle of it (kill -9, the kernel's OOM killer).
func removeOldMergeDirs(tmp string, now time.Time) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), mergeDirPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(tmp, e.Name()))
		}
	}
}
