package gitstore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A rebase of main reads main when it starts and, aborted, sets main back
// to what it read, with no check that main is still there. memd refuses to
// move main while a rebase is under way (rebasingMain), but the rebase
// writes the state that says so only after it has read main: a write of
// memd's that checked a moment before, or that the rebase read main
// before, lands on main after the rebase began. The rebase then fails to
// finish (it moves main only from where it read it), and its abort takes
// memd's answered commits off main with no word. git leaves one trace:
// main's reflog entry "rebase (abort): returning to refs/heads/main", from
// the tip it took them off to where the rebase began. memd puts that tip
// back before its next write and when HEAD moves (an abort returns HEAD to
// main); a person who meant to drop commits resets main instead (git
// reset), and an abort means "back to where I was", where memd's commits
// made meanwhile never were.

// abortedRebaseFrom ends git's reflog entry for an abort of a rebase of
// main ("rebase (abort): returning to refs/heads/main" as git 2.39 writes
// it); what comes before it is not held to, git's wording having moved.
const abortedRebaseFrom = "(abort): returning to " + mainRef

// restoreAbortedRebaseNow takes sh.mu for restoreAbortedRebase: for the
// ref watcher, which calls it when HEAD moves.
func (sh *Shard) restoreAbortedRebaseNow() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.errIfClosed() != nil {
		return
	}
	if err := sh.restoreAbortedRebase(); err != nil {
		sh.store.log.Warn("putting back the commits git rebase --abort took off main", "shard", sh.id, "err", err)
	}
}

// restoreAbortedRebase puts back the commits an aborted rebase took off
// main (see above), if main's last move was that abort and main has not
// moved since: a fast-forward, and the working tree and index follow. A
// write asks first thing under sh.mu, which the caller holds, so that
// nothing is built on the abort's main; it fails if the abort is still
// under way past abortWait (git resets main first, then ends the rebase),
// as a write during a rebase does.
func (sh *Shard) restoreAbortedRebase() error {
	reflog := filepath.Join(sh.gitDir, "logs", filepath.FromSlash(mainRef))
	old, next, ok := lastReflogMove(reflog)
	if !ok || old == next || old.IsZero() {
		return nil
	}
	// Still as the abort left it: sh.mu keeps memd from moving main, not
	// a person's git command.
	asLeft := func() bool {
		main, err := readRef(sh.gitDir, mainRef)
		o, n, ok := lastReflogMove(reflog)
		return err == nil && main == next && ok && o == old && n == next
	}
	if !asLeft() || !sh.db.Has(old) {
		return nil
	}
	if back, err := sh.IsAncestor(next, old); err != nil || !back {
		if err != nil {
			// The write goes ahead: the commits stay in main's reflog.
			sh.store.log.Warn("putting back the commits git rebase --abort took off main", "shard", sh.id, "err", err)
		}
		return nil
	}
	for waited := time.Duration(0); sh.rebasingMain(); waited += abortStep {
		if waited >= abortWait {
			return sh.errRebasingMain()
		}
		time.Sleep(abortStep)
	}
	if !asLeft() {
		return nil // a person moved main meanwhile: theirs to keep
	}
	in, err := sh.integrate(old, IntegrateOptions{From: "main before git rebase --abort", ForwardOnly: true})
	if err != nil {
		return fmt.Errorf("put back the commits git rebase --abort took off main (%s): %w", short(old), err)
	}
	if in.Kind != IntegrateNone {
		sh.store.log.Info("put back the commits git rebase --abort took off main", "shard", sh.id, "commits", in.Commits, "main", short(in.Head))
	}
	return nil
}

// abortWait bounds how long a write waits for git rebase --abort to end
// once it has set main back: it removes the rebase's state next, at once.
const (
	abortWait = 200 * time.Millisecond
	abortStep = 5 * time.Millisecond
)

// lastReflogMove reads the last entry of a reflog and returns the move it
// records if it is an abort of a rebase of main.
func lastReflogMove(path string) (old, next Hash, ok bool) {
	line, err := lastLine(path)
	if err != nil {
		return old, next, false
	}
	fields, why, found := strings.Cut(line, "\t")
	if !found || !strings.HasPrefix(why, "rebase") || !strings.HasSuffix(why, abortedRebaseFrom) {
		return old, next, false
	}
	hashes := strings.Fields(fields)
	if len(hashes) < 2 || !IsHash(hashes[0]) || !IsHash(hashes[1]) {
		return old, next, false
	}
	return NewHash(hashes[0]), NewHash(hashes[1]), true
}

// lastLine returns a file's last line, reading only its tail: a reflog
// grows by a line a move for as long as the shard lives.
func lastLine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	const tail = 4096 // a reflog line is two hashes, a name and a message
	from := max(0, st.Size()-tail)
	buf := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	} else if from > 0 {
		return "", fmt.Errorf("read %s: a last line longer than %d bytes", path, tail)
	}
	return string(buf), nil
}
