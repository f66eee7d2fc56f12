package gitstore

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// maxGroup bounds the commits written by one group commit, and so the length
// of a delta chain in one pack.
const maxGroup = 64

// Signature names who caused a change: the commit's author.
type Signature struct {
	Name  string
	Email string
}

// Committer is the committer of every commit memd makes.
func Committer() Signature { return Signature{Name: "memd", Email: "memd@localhost"} }

// ByMemd reports whether memd made c.
func (c Commit) ByMemd() bool { return c.Committer == Committer() }

func (c *commitInfo) byMemd() bool { return c.committer.Signature == Committer() }

// EditOp is what an Edit does to a fact.
type EditOp int

const (
	// AddFact adds a fact unless the shard holds its text already.
	AddFact EditOp = iota + 1
	// RemoveFact removes every line of a fact ID, if there are any.
	RemoveFact
	// ReplaceFact rewrites a fact's text where its line stands, keeping its
	// date and tier (and removes any other line of it).
	ReplaceFact
	// RemoveLine removes one line of a fact: the last in Fact.File dated
	// Fact.Date. The fact stays while another line holds it: a revert of a
	// commit that wrote the fact again takes back that line alone.
	RemoveLine
	// RestoreLine puts a fact's line back in Fact.File unless that file
	// holds a line of it of Fact.Date: a revert restores the line a commit
	// removed even where another line holds the fact too.
	RestoreLine
)

// Edit is one change to one fact. For AddFact, Fact carries the text, date
// and tier (and optionally the file, to restore a line where it was); for
// RemoveFact, only the ID; for RemoveLine, the ID, file and date; for
// RestoreLine, the whole fact with its file; for ReplaceFact, the ID, and
// With the new text.
type Edit struct {
	Op   EditOp
	Fact memd.Fact
	With memd.Fact
}

// Change is one commit: who, the message (subject and trailers), and the
// fact edits or the note change (one or the other). Edits that would change
// nothing are skipped; a change left with nothing to do makes no commit.
type Change struct {
	Author Signature
	// AuthorTime, when set, is the commit's author time (a proposal made
	// again keeps when it was first made); the commit's time otherwise.
	AuthorTime time.Time
	Message    string
	Edits      []Edit
	Note       *NoteChange
}

// Result says what a Change did.
type Result struct {
	Commit  Hash // zero when nothing changed
	Time    time.Time
	Changes []memd.FactChange
	// Facts has one entry per edit: the fact as it stands after AddFact (the
	// existing one when the text was already there), or as it stood before
	// RemoveFact (zero when the shard did not hold it).
	Facts []memd.Fact
	// Note is the note after a note change.
	Note NoteState
}

type request struct {
	change Change
	// at is when the change was queued; back says it came within
	// returnWindow of the answer to its author's last one: a writer who
	// writes again as soon as answered.
	at   time.Time
	back bool
	done chan struct{}
	res  Result
	err  error
}

// Apply commits a change to the shard and returns once the branch points at
// the commit (and, unless the store has NoSync, the commit is on disk).
// Changes that arrive while a commit is being written are queued and written
// together: one pack with a chain of commits, one per change, and one ref
// update.
func (sh *Shard) Apply(c Change) (Result, error) {
	if err := validateChange(&c); err != nil {
		return Result{}, err
	}
	sh.catchUpCheckout()
	r := &request{change: c, done: make(chan struct{})}
	sh.qmu.Lock()
	r.at = time.Now()
	r.back = sh.cameBack(c.Author, r.at)
	sh.queue = append(sh.queue, r)
	start := !sh.draining
	sh.draining = true
	sh.qmu.Unlock()
	if start {
		go sh.drain()
	}
	select {
	case sh.arrived <- struct{}{}:
	default:
	}
	<-r.done
	return r.res, r.err
}

func (sh *Shard) drain() {
	missed := false // the last wait for more changes ran out
	for {
		sh.qmu.Lock()
		n := min(len(sh.queue), maxGroup)
		if n == 0 {
			sh.draining = false
			sh.qmu.Unlock()
			return
		}
		batch := slices.Clone(sh.queue[:n])
		sh.queue = slices.Delete(sh.queue, 0, n)
		sh.qmu.Unlock()
		start := time.Now()
		answered := sh.commitGroup(batch)
		took := time.Since(start)
		sh.qmu.Lock()
		coming := sh.stillComing(batch, answered)
		queued := len(sh.queue)
		sh.qmu.Unlock()
		want, wait := nextGroup(queued, coming, took, missed)
		missed = wait > 0 && !sh.gather(want, wait)
	}
}

// groupDelay bounds how long the writer waits for more changes before a
// group commit. Waiting a fraction of a commit's cost lets the next group
// carry the writers whose changes just went out, like a database's commit
// delay.
const groupDelay = 2 * time.Millisecond

// returnWindow is how soon after the answer to its author's last change a
// change must come for its writer to be waited for: no later than the
// longest wait.
const returnWindow = groupDelay

// cameBack says whether a change by author arriving at now comes straight
// back after the answer to the author's last change. The caller holds qmu.
func (sh *Shard) cameBack(author Signature, now time.Time) bool {
	at, ok := sh.answered[author]
	return ok && now.Sub(at) <= returnWindow
}

// noteAnswered records that the authors of a batch are answered at now,
// before they are: a writer who comes straight back is then measured from
// this answer. The caller holds qmu.
func (sh *Shard) noteAnswered(batch []*request, now time.Time) {
	if sh.answered == nil {
		sh.answered = make(map[Signature]time.Time)
	}
	if len(sh.answered) > 4*maxGroup {
		maps.DeleteFunc(sh.answered, func(_ Signature, at time.Time) bool { return now.Sub(at) > returnWindow })
	}
	for _, r := range batch {
		sh.answered[r.change.Author] = now
	}
}

// stillComing returns how many writers of a batch answered at answered are
// likely to come back and have not yet: its changes that came straight
// back after their author's last answer, less the changes queued since
// this answer (those writers are back already, and counted as queued).
// The caller holds qmu.
func (sh *Shard) stillComing(batch []*request, answered time.Time) int {
	n := 0
	for _, r := range batch {
		if r.back {
			n++
		}
	}
	for _, r := range sh.queue {
		if !r.at.Before(answered) {
			n--
		}
	}
	return max(n, 0)
}

// nextGroup says how many changes the next group waits for, and for how
// long at most, after a group that took took: the queued changes, and the
// coming writers (just answered, who came straight back last time and are
// not back yet), likely to send their next change at once. Without
// waiting, busy writers split into two halves that take turns, each group
// carrying half of them (measured: 8 writers over HTTP, 4.3 changes a
// group, half the changes a second of groups that waited for all 8). A
// writer who writes once is not waited for; the wait is at most half a
// group's cost, and after a wait that ran out the next group goes at once.
func nextGroup(queued, coming int, took time.Duration, missed bool) (want int, wait time.Duration) {
	want = min(queued+coming, maxGroup)
	if want <= 1 || missed || queued >= want {
		return want, 0
	}
	return want, min(groupDelay, took/2)
}

// gather waits, at most wait, until want changes are queued, and says
// whether they were.
func (sh *Shard) gather(want int, wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		sh.qmu.Lock()
		n := len(sh.queue)
		sh.qmu.Unlock()
		if n >= want {
			return true
		}
		select {
		case <-sh.arrived:
		case <-timer.C:
			return false
		}
	}
}

func validateChange(c *Change) error {
	switch {
	case c.Note != nil && len(c.Edits) > 0:
		return memd.Errorf(memd.EINVALID, "a change edits facts or one note, not both")
	case c.Note != nil && (!IsNoteFile(c.Note.Path) || c.Note.Update == nil):
		return memd.Errorf(memd.EINVALID, "%q is not a note", c.Note.Path)
	case c.Note == nil && len(c.Edits) == 0:
		return memd.Errorf(memd.EINVALID, "a change needs at least one edit")
	}
	if strings.TrimSpace(c.Message) == "" || !utf8.ValidString(c.Message) || strings.ContainsRune(c.Message, 0) {
		return memd.Errorf(memd.EINVALID, "commit message must be non-empty UTF-8 text")
	}
	if !strings.HasSuffix(c.Message, "\n") {
		c.Message += "\n"
	}
	for _, s := range []string{c.Author.Name, c.Author.Email} {
		if s == "" || strings.ContainsAny(s, "<>\n\x00") {
			return memd.Errorf(memd.EINVALID, "author %q <%s> is not a valid git identity", c.Author.Name, c.Author.Email)
		}
	}
	for i := range c.Edits {
		e := &c.Edits[i]
		switch e.Op {
		case AddFact:
			if err := checkNewLine(&e.Fact); err != nil {
				return err
			}
		case RemoveFact:
			if !memd.ValidFactID(e.Fact.ID) {
				return memd.Errorf(memd.EINVALID, "fact ID %q: want 12 lowercase hex digits", e.Fact.ID)
			}
		case RestoreLine:
			if e.Fact.File == "" {
				return memd.Errorf(memd.EINVALID, "a line to restore needs its fact file")
			}
			if err := checkNewLine(&e.Fact); err != nil {
				return err
			}
		case RemoveLine:
			if !memd.ValidFactID(e.Fact.ID) {
				return memd.Errorf(memd.EINVALID, "fact ID %q: want 12 lowercase hex digits", e.Fact.ID)
			}
			if !IsFactFile(e.Fact.File) || e.Fact.Date.IsZero() {
				return memd.Errorf(memd.EINVALID, "a line to remove needs its fact file and date")
			}
		case ReplaceFact:
			if !memd.ValidFactID(e.Fact.ID) {
				return memd.Errorf(memd.EINVALID, "fact ID %q: want 12 lowercase hex digits", e.Fact.ID)
			}
			text, err := memd.CleanFactText(e.With.Text)
			if err != nil {
				return err
			}
			e.With = memd.Fact{Text: text, ID: memd.FactID(text)}
		default:
			return memd.Errorf(memd.EINVALID, "unknown edit")
		}
	}
	return nil
}

// groupAttempts bounds how often a group is built again on a fresh HEAD
// because someone moved the branch meanwhile; past the fifth, each waits a
// few milliseconds more, so that a person committing in a loop lets it by.
const groupAttempts = 20

// commitGroup writes a batch of changes, retrying on a fresh HEAD when
// someone else moved the branch while the pack was being written, and
// returns when it answered them.
func (sh *Shard) commitGroup(batch []*request) (answered time.Time) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var err error
	var rebase []*factFile // versions to take as packed bases, once answered
	// Moves refused because a person kept changing a working file are
	// tried again at once; one refused for a full disk is not: it would
	// find no more room, and each try leaves its pack.
	refused := 0
	for attempt := 0; attempt < groupAttempts; attempt++ {
		if attempt > 5 {
			time.Sleep(time.Duration(attempt) * time.Millisecond)
		}
		rebase, err = sh.tryGroup(batch)
		if errors.Is(err, errMoveRefused) && !memd.DiskFull(err) && refused < 2 {
			refused++
			continue
		}
		if !errors.Is(err, errRefMoved) {
			break
		}
	}
	if errors.Is(err, errRefMoved) {
		err = memd.Errorf(memd.EUNAVAILABLE, "the branch kept moving while memd wrote (%v); nothing was committed, try again", err)
	}
	err = unavailableIfRefused(err)
	answered = time.Now()
	sh.qmu.Lock()
	sh.noteAnswered(batch, answered)
	sh.qmu.Unlock()
	for _, r := range batch {
		if err != nil {
			r.res, r.err = Result{}, fmt.Errorf("shard %s: %w", sh.id, err)
		}
		close(r.done)
	}
	if err == nil {
		sh.takeAsBases(rebase)
		sh.maybeRepack()
	}
	return answered
}

// tryGroup builds and publishes a batch's commits on main's head, and
// returns the versions of large files they wrote whole (see takeAsBases).
func (sh *Shard) tryGroup(batch []*request) (rebase []*factFile, err error) {
	if err := sh.restoreAbortedRebase(); err != nil {
		return nil, err
	}
	// Refused before its pack is written, not only at the move: an agent
	// retrying within the second writes the same commits, so a pack of the
	// same name, which a git gc that found the first unreferenced may be
	// deleting as memd names it. A rebase begun after this look is still
	// refused at the move (awayFromMain).
	if sh.rebasingMain() {
		return nil, sh.errRebasingMain()
	}
	// A shard whose folder was removed while memd had it open: writing on
	// would make a .git of memd's pack alone, no repository.
	if _, err := os.Stat(filepath.Join(sh.gitDir, "HEAD")); err != nil {
		return nil, memd.Errorf(memd.EUNAVAILABLE, "shard %s: its repository is gone from %s (removed while memd ran?); nothing was committed", sh.id, sh.dir)
	}
	head, err := readRef(sh.gitDir, mainRef)
	if err != nil {
		return nil, err
	}
	sh.touch()
	st, err := sh.catchUp(head)
	if err != nil {
		return nil, err
	}
	g := newGroup(sh, st)
	results := make([]*Result, len(batch))
	refused := make([]error, len(batch))
	for i, r := range batch {
		if results[i], refused[i] = g.add(r.change); refused[i] != nil && memd.ErrorCode(refused[i]) == memd.EINTERNAL {
			return nil, refused[i]
		}
	}
	if err := g.build(); err != nil {
		return nil, err
	}
	for i, r := range batch {
		if refused[i] != nil {
			r.res, r.err = Result{}, refused[i]
			continue
		}
		r.res, r.err = *results[i], nil
	}
	if g.b.Len() == 0 {
		return nil, nil // nothing changed
	}
	sp, err := sh.db.StagePack(g.b)
	if err != nil {
		return nil, fmt.Errorf("write pack: %w", err)
	}
	if err := sh.publish(st, g, sp); err != nil {
		return nil, err
	}
	return g.rebase, nil
}

// publish makes the group's commits visible. The order is what keeps a
// person's git commit, run at the same moment, from losing memd's facts:
//
//  1. the pack, so the index may name its blobs;
//  2. the lock on main, checking main is still where the group was built;
//  3. pack and new ref value made durable;
//  4. the working-tree journal, then the working tree and .git/index (a
//     working file memd cannot write because a person keeps changing it
//     stops the move while no file of it was written yet: the write is
//     tried again, then refused; see errMoveRefused);
//  5. main renamed into place, and its directory made durable.
//
// git commit reads HEAD, then reads the index without locking it, and moves
// the branch only if HEAD is still what it read. A git commit that read HEAD
// after step 5 reads the new index; one that read it before fails to move
// the branch, which memd holds locked or has moved. A pack the branch never
// comes to point at stays, unreferenced, until a repack.
func (sh *Shard) publish(st *state, g *group, sp *odb.StagedPack) error {
	if err := sp.Publish(); err != nil {
		sp.Abort()
		return err
	}
	defer sp.Close()
	touched, next := g.worktreeChanges()
	// The notes memd checked against a person's edits are checked again
	// before the working tree is written; a fetch's or a push's are not.
	sh.ownNotes, sh.ownTracked = g.noteTouched, g.tracked
	defer func() { sh.ownNotes, sh.ownTracked = nil, nil }()
	defer sh.moving.Store(nil)
	if err := sh.advance(st.head, g.head, sp.Files(), touched, next, groupReflog(g)); err != nil {
		return err
	}
	sh.replaceState(func() (*state, error) { return g.commitState(), nil })
	for _, pl := range g.plans {
		sh.store.diffs.put(commitKey{sh.id, pl.res.Commit}, pl.diff)
	}
	if f := sh.store.opts.OnCommit; f != nil {
		f(sh.id)
	}
	return nil
}

// advance moves main from old to next, whose objects are in place (staged
// holds the pack files memd wrote for it, to sync): steps 2 to 5 of
// publish. The lock on main names next, so that a start after a crash
// finishes the move (see clearStaleLocks); the working-tree journal lists
// the files about to change (see finishWorktree).
func (sh *Shard) advance(old, next Hash, staged []*os.File, touched, files map[string]*factFile, why string) error {
	sh.awaitHandCommit()
	sh.clearStaleMainLock()
	rlock, err := lockRef(sh.gitDir, mainRef, old, next)
	if err != nil {
		return err
	}
	sync := !sh.store.opts.NoSync
	if sync {
		// With the pack's name in objects/pack: memd's own, or the one git
		// index-pack or fetch linked there (git syncs the files, not the
		// directory).
		err := durable(append(slices.Clone(staged), rlock.f), filepath.Join(sh.gitDir, "objects", "pack", "x"))
		if err != nil {
			rlock.release()
			return fmt.Errorf("sync commit to disk: %w", err)
		}
	}
	away, held, err := sh.awayFromMain(old)
	if err != nil {
		rlock.release()
		return err
	}
	defer held.release() // once main has moved (see awayFromMain)
	// Away from main, the working tree and index are the checkout's.
	if !away {
		if err := sh.syncIndex(next, touched, files, indexWait, true); err != nil {
			if errors.Is(err, errMoveRefused) {
				// The journal names the move refused: put back what waited
				// before it, while main is still locked (a start after a
				// crash before this would finish the move instead).
				if len(sh.behind) == 0 {
					sh.dropJournal()
				} else if jerr := sh.writeJournal(old, sh.behind, sh.behindNext); jerr != nil {
					sh.store.log.Warn("recording the working files behind main", "shard", sh.id, "err", jerr)
				}
			}
			rlock.release() // nothing of the move is in the working tree
			return err
		}
	}
	if err := sh.logMove(old, next, why, !away); err != nil {
		sh.store.log.Warn("main moves without a reflog entry", "shard", sh.id, "err", err)
	}
	// Readers take main for old until the caller has its state in step
	// (see visibleHead); the caller clears moving.
	sh.moving.Store(&next)
	if err := rlock.commit(); err != nil {
		if !away {
			sh.takeBack(old, touched, files) // main stays
		}
		return err
	}
	runHook(&testHookMainMoved, rlock.path)
	// The write is acknowledged once main names it on disk: the rename's
	// directory entry too, or a power cut could take main back.
	if sync {
		if err := syncDirOf(rlock.path); err != nil {
			// main names next though the write fails: readers take it as
			// it is, and what a commit wakes (the index, the feed) looks.
			sh.moving.Store(nil)
			if f := sh.store.opts.OnCommit; f != nil {
				f(sh.id)
			}
			return fmt.Errorf("sync %s to disk: %w", mainRef, err)
		}
	}
	if len(sh.behind) == 0 {
		sh.dropJournal()
	}
	return nil
}

// takeBack returns the working tree and index to old after a move of main
// from old that did not happen; touched and files are the move's.
func (sh *Shard) takeBack(old Hash, touched, files map[string]*factFile) {
	back := make(map[string]*factFile, len(touched))
	for path := range touched {
		back[path] = files[path]
	}
	sh.syncIndex(old, back, touched, indexWait, false)
}

// indexWait is how long a write waits for a git command to give back the
// index lock before leaving the index to catch up later.
const indexWait = 20 * time.Millisecond

// indexRetry is how soon an index left behind is tried again when no write
// comes along to do it.
const indexRetry = 100 * time.Millisecond

// syncIndex brings the working tree and .git/index in step for the paths
// touched (mapped to the versions they held) and any left behind before,
// to their versions in next (nil: removed), as of commit. It records the
// move in the working-tree journal first, and fails, touching nothing, if
// it cannot. A git command may hold the index lock for long (git commit,
// while its editor is open); memd's write then goes ahead without waiting,
// and the index catches up with the next write or a moment later. When
// touched is a move of main under way (move), a person who kept changing
// one of its files refuses it (see errMoveRefused); any other catch-up
// waits and tries again. The caller holds sh.mu.
//
// It is long for the journal, the index lock's two ways (waited for, or
// let go by) and their failures, in the order they happen.
func (sh *Shard) syncIndex(commit Hash, touched, next map[string]*factFile, wait time.Duration, move bool) error {
	behind, behindNext := maps.Clone(sh.behind), maps.Clone(sh.behindNext)
	if behind == nil {
		behind, behindNext = make(map[string]*factFile), make(map[string]*factFile)
	}
	dropped := make(map[string]*factFile) // from sh.worktreeAt, put back if the move is refused
	for path, old := range touched {
		if last, ok := behindNext[path]; ok && blobOf(last) != blobOf(old) {
			// A commit not memd's changed the path since memd last wrote
			// it, while it waited: a person's git commit -a, which took
			// the working file as it was and put it in the index. The
			// file and the index are that commit's version now, with the
			// person's edits since: the base to merge memd's change into.
			behind[path] = old
			if at, ok := sh.worktreeAt[path]; ok {
				dropped[path] = at
				delete(sh.worktreeAt, path)
			}
		}
		if _, ok := behind[path]; !ok {
			behind[path] = old
		}
		behindNext[path] = next[path]
	}
	if len(behind) == 0 {
		return nil
	}
	if len(touched) > 0 {
		if err := sh.writeJournal(commit, behind, behindNext); err != nil {
			return err
		}
	}
	prevBehind, prevNext := sh.behind, sh.behindNext
	sh.behind, sh.behindNext = behind, behindNext
	var moving map[string]*factFile
	if move {
		moving = touched
	}
	lock, err := sh.acquireIndexLock(wait)
	if err == nil {
		var inStep []string
		inStep, err = sh.syncWorktree(lock, sh.behind, sh.behindNext, moving)
		for _, path := range inStep {
			delete(sh.behind, path)
			delete(sh.behindNext, path)
		}
	} else if len(touched) > 0 {
		// The working files need no lock, and must not wait: a git commit
		// that reads HEAD once main has moved reads them, and would
		// otherwise commit memd's new facts away.
		_, ferr := sh.syncWorktree(nil, sh.behind, sh.behindNext, moving)
		if jerr := sh.writeJournal(commit, sh.behind, sh.behindNext); jerr != nil {
			// Which versions the files are at now, for a start after a crash.
			sh.store.log.Warn("recording the working files written while git holds the index", "shard", sh.id, "err", jerr)
		}
		if move && refusesMove(ferr, touched) {
			err = ferr
		} else if ferr != nil {
			sh.store.log.Warn("writing working files while git holds the index", "shard", sh.id, "err", ferr)
		}
	}
	if err != nil {
		if move && refusesMove(err, touched) {
			// Nothing of this move reached the working tree: it is
			// refused, and what waited before waits as it was.
			sh.behind, sh.behindNext = prevBehind, prevNext
			maps.Copy(sh.worktreeAt, dropped)
			err = fmt.Errorf("%w: %w", errMoveRefused, err)
		}
		if len(sh.behind) > 0 {
			sh.retryIndexSoon()
		}
		if errors.Is(err, errMoveRefused) {
			return err
		}
		if !sh.indexLate {
			sh.store.log.Info("the working tree and index will catch up with memd's commits in a moment", "shard", sh.id, "reason", err)
		}
		sh.indexLate = true
		return nil
	}
	clear(sh.behind)
	clear(sh.behindNext)
	sh.indexLate = false
	return nil
}

// unavailableIfRefused says a refused move as the caller should hear it:
// nothing happened, and trying again will do.
func unavailableIfRefused(err error) error {
	we, ok := errors.AsType[*worktreeError](err)
	switch {
	case !ok || !errors.Is(err, errMoveRefused):
		return err
	case memd.DiskFull(err):
		return &memd.Error{Code: memd.EUNAVAILABLE, Err: err,
			Message: fmt.Sprintf("the disk holding memd's data is full: there was no room to write %s; nothing was committed, try again once there is room", we.path)}
	default:
		return memd.Errorf(memd.EUNAVAILABLE, "a person kept changing %s while memd wrote it; nothing was committed, try again", we.path)
	}
}

// errMoveRefused is a move of main refused because a person kept changing
// a working file it would have written first, or the disk had no room for
// it. main must not move past what the working files show: a person's git
// commit -a would build on the new main from files that lack its change,
// and commit the change away. The move is refused only while nothing of
// it reached the working tree; otherwise main moves, and the file catches
// up a moment later.
var errMoveRefused = errors.New("move of main refused")

// refusesMove reports whether err, from writing the working files of a move
// touching touched, refuses the move (see errMoveRefused).
func refusesMove(err error, touched map[string]*factFile) bool {
	we, ok := errors.AsType[*worktreeError](err)
	if !ok || !errors.Is(err, errKeptChanging) && !memd.DiskFull(err) {
		return false
	}
	if _, ok := touched[we.path]; !ok {
		return false // a file behind since an earlier move
	}
	for _, path := range we.done {
		if _, ok := touched[path]; ok {
			return false
		}
	}
	return true
}

// retryIndexSoon has SyncWorktree run once indexRetry has passed. The
// caller holds sh.mu.
func (sh *Shard) retryIndexSoon() {
	if sh.indexTimer == nil {
		sh.indexTimer = time.AfterFunc(indexRetry, func() { sh.SyncWorktree(indexWait) })
	} else {
		sh.indexTimer.Reset(indexRetry)
	}
}

// SyncWorktree brings the working tree and .git/index up to HEAD now if a
// git command kept them behind, waiting up to wait for its index lock; with
// HEAD away from main, it takes out of that checkout what memd wrote into
// it as git made it (settleRacedCheckout). It reports whether they are
// in step.
func (sh *Shard) SyncWorktree(wait time.Duration) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if (len(sh.behind) > 0 || len(sh.steps) > 0) && !sh.headOnMain() {
		sh.leaveWorktree(nil) // see awayFromMain
		sh.dropJournal()
	}
	if len(sh.behind) > 0 {
		sh.syncIndex(Hash{}, nil, nil, wait, false)
		if len(sh.behind) == 0 {
			sh.dropJournal()
		}
	}
	return len(sh.behind) == 0
}

// indexLockMarker is what memd writes in .git/index.lock while it holds it,
// so that a lock left by a crash can be told from one git holds (an index
// starts "DIRC"). It stays there until memd drops the lock: the new index
// is written to a file of its own and renamed over .git/index.
const indexLockMarker = "memd\n"

// checkNewLine checks, and cleans, a fact about to be written as a line:
// its text, date, tier and, when named, its file. An empty File is chosen
// when the change is planned: where a log fact goes depends on the files
// at that moment.
func checkNewLine(f *memd.Fact) error {
	text, err := memd.CleanFactText(f.Text)
	if err != nil {
		return err
	}
	f.Text, f.ID = text, memd.FactID(text)
	if f.Date.IsZero() {
		return memd.Errorf(memd.EINVALID, "a fact needs a date")
	}
	if f.Tier, err = memd.ParseTier(string(f.Tier)); err != nil {
		return err
	}
	if f.File != "" && !IsFactFile(f.File) {
		return memd.Errorf(memd.EINVALID, "%q is not a fact file", f.File)
	}
	return nil
}
