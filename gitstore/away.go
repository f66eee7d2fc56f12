package gitstore

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/memd/memd"
)

// A person may check out another commit or a branch of their own in a
// shard (to look at an old version, to bisect, to work apart): the working
// tree and index are then that checkout's, not main's. memd's commits go
// on main as ever and leave them alone; git brings them to main's files,
// memd's new facts included, when the person checks out main again. Were
// memd to write main's files into such a checkout, the person's return to
// main would carry them over as edits of their own, and show every fact
// main gained since the checked-out commit as deleted.

// headOnMain reports whether HEAD names main, as memd leaves it. An
// unreadable HEAD counts as main: git could not read it either.
func (sh *Shard) headOnMain() bool {
	head, err := os.ReadFile(filepath.Join(sh.gitDir, "HEAD"))
	return err != nil || namesMain(head)
}

// namesMain reports whether the content of a HEAD file names main.
func namesMain(head []byte) bool { return strings.TrimSpace(string(head)) == "ref: "+mainRef }

// rebasingMain reports whether a git rebase of main is under way, in the
// shard's working tree or a linked one (git worktree add), from the moment
// its list of commits is open in an editor (HEAD is still on main then).
// It ends by setting main to what it built or, aborted, to where it began,
// with no check that main is where it left it: a commit memd made
// meanwhile would be lost.
func (sh *Shard) rebasingMain() bool {
	gitDirs := []string{sh.gitDir}
	if linked, err := os.ReadDir(filepath.Join(sh.gitDir, "worktrees")); err == nil {
		for _, w := range linked {
			gitDirs = append(gitDirs, filepath.Join(sh.gitDir, "worktrees", w.Name()))
		}
	}
	for _, gitDir := range gitDirs {
		for _, dir := range []string{"rebase-merge", "rebase-apply"} {
			name, err := os.ReadFile(filepath.Join(gitDir, dir, "head-name"))
			if err == nil && strings.TrimSpace(string(name)) == mainRef {
				return true
			}
		}
	}
	return false
}

// errRebasingMain refuses a move of main while a rebase of it is under way.
func (sh *Shard) errRebasingMain() error {
	return memd.Errorf(memd.EUNAVAILABLE, "a git rebase of main is under way in shard %s; nothing was committed, try again once it is finished or aborted", sh.id)
}

// awayFromMain tells a move of main whether to leave the working tree and
// index alone (away): HEAD names something else. Then held is memd's lock
// on the index when it could be had, for the caller to drop once main has
// moved: it keeps a checkout of main from reading main in between, but
// cannot close the gap git leaves itself (it names main in HEAD only after
// letting the index go, and reads main before taking it), so what such a
// checkout leaves a version behind, catchUpCheckout brings forward. A
// rebase of main under way refuses the move (rebasingMain). main is where
// main is before the move (see markAwayBase). The caller holds sh.mu and
// the lock on main.
func (sh *Shard) awayFromMain(main Hash) (away bool, held *lockFile, err error) {
	if sh.rebasingMain() {
		return false, nil, sh.errRebasingMain()
	}
	if sh.headOnMain() {
		return false, nil, nil
	}
	lock, lerr := sh.acquireIndexLock(indexWait)
	if lerr != nil {
		lock = nil
	}
	switch {
	case sh.rebasingMain():
		lock.release()
		return true, nil, sh.errRebasingMain()
	case sh.headOnMain():
		// Back on main meanwhile: the checkout took main as memd found it,
		// and the working tree is written as ever.
		lock.release()
		return false, nil, nil
	}
	sh.leaveWorktree(lock)
	sh.markAwayBase(main)
	sh.leftWorktree.Store(true)
	return true, lock, nil
}

// catchUpCheckout brings the working tree and index to main once HEAD is
// on it again after memd moved main while it was away. git checks out a
// branch by reading where it points, writing the files and index, and
// naming it in HEAD last: a checkout of main that read main a moment
// before memd moved it leaves the files a version behind, with nothing to
// say so but the index, and the person's next commit would take memd's
// change back. Such files are brought forward as any file memd left
// behind (laggingFiles), the person's edits since kept; a version the
// person staged meanwhile is theirs, and the commit hook refuses it while it
// lacks what memd wrote (takenback.go). It runs when the ref watcher sees
// HEAD change and before each write.
func (sh *Shard) catchUpCheckout() {
	if !sh.leftWorktree.Load() {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.leftWorktree.Load() || !sh.headOnMain() {
		return
	}
	sh.leftWorktree.Store(false)
	st, err := sh.lockedState()
	touched := make(map[string]*factFile)
	if err == nil {
		err = sh.laggingFiles(st.head, st.root, touched)
	}
	var next map[string]*factFile
	if err == nil && len(touched) > 0 {
		if next, err = sh.versionsAt(st, touched); err == nil {
			err = sh.syncIndex(st.head, touched, next, indexWait, false)
		}
	}
	if err == nil && len(sh.behind) == 0 {
		sh.dropJournal()
		err = sh.dropAwayBaseIfInStep(st.head)
	}
	if err != nil {
		sh.store.log.Warn("bringing the working tree to main after a checkout of it", "shard", sh.id, "err", err)
	}
}

// leaveWorktree forgets what memd had yet to bring into the working tree
// and index: they hold another checkout now, and git brings them to main
// when the person checks it out. What memd wrote into that checkout as it
// was made is taken out of it.
func (sh *Shard) leaveWorktree(held *lockFile) {
	clear(sh.behind)
	clear(sh.behindNext)
	clear(sh.worktreeAt)
	sh.indexLate = false
	if sh.indexTimer != nil {
		sh.indexTimer.Stop()
	}
	if !sh.settleRacedCheckout(held) {
		sh.retryIndexSoon() // a git command holds the index: again in a moment
	}
}
