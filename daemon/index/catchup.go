package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// Catching up with HEAD: from the commit a shard's snapshot was taken at,
// by the trailers of memd's commits and the diffs of the others, or by
// reading HEAD afresh.

// CatchUp brings the index of the given shards to their HEADs. Shards that
// do not exist are skipped.
func (x *Index) CatchUp(ids ...memd.ShardID) error {
	for _, id := range ids {
		sh, err := x.store.Shard(id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			continue
		}
		if err != nil {
			return err
		}
		if err := x.catchUp(sh, true); err != nil {
			return fmt.Errorf("index %s: %w", id, err)
		}
		// Read now, whoever asked first: a recall reads its caller's
		// shards before the background pass reaches them.
		x.progressMu.Lock()
		delete(x.backlog, id)
		x.progressMu.Unlock()
	}
	return nil
}

// CatchUpHeld brings up to date, without chasing writes that come
// meanwhile, the shards of ids the index holds at a commit or that memd
// committed to since the follower last ran: a status counts a fact just
// written, or a person's commit, without waiting for the follower. The
// others are left to the background pass, to a recall or to the follower:
// a shard the pass has yet to read, or a large repository a person copied
// in, would take seconds. A shard that fails does not stop the others.
func (x *Index) CatchUpHeld(ids ...memd.ShardID) error {
	var errs []error
	for _, id := range ids {
		if !x.held(id) {
			continue
		}
		sh, err := x.store.Shard(id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			continue
		}
		if err == nil {
			err = x.catchUp(sh, false)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("index %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// held reports whether the index holds a shard as read at a commit, or
// memd committed to it since the follower last ran.
func (x *Index) held(id memd.ShardID) bool {
	x.progressMu.Lock()
	reading := x.backlog[id] > 0
	x.progressMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	return !reading && !x.unread[id] && (!x.heads[id].IsZero() || x.toFollow[id])
}

// CatchUpAll brings every shard of the store up to date.
func (x *Index) CatchUpAll() error {
	ids, err := x.store.Shards()
	if err != nil {
		return err
	}
	return x.CatchUp(ids...)
}

// catchUp brings a shard's index to its HEAD. Writes moving HEAD while it
// reads are followed again, a few times, and then the shard is read whole
// from HEAD: a caller that must see the latest commits gets them
// (chase). Without chase it leaves the shard where it was, for a later
// catch-up.
func (x *Index) catchUp(sh *gitstore.Shard, chase bool) error {
	head, err := sh.Head()
	if err != nil {
		return err
	}
	id := sh.ID()
	if x.upToDate(id, head) {
		return nil
	}
	defer x.lock(id)()
	if err := x.readSnapshot(id); err != nil {
		return err
	}
	// Another catch-up may have moved the index past the HEAD read before
	// the lock, which would then look like a commit it cannot follow.
	if head, err = sh.Head(); err != nil {
		return err
	}
	indexed := x.Head(id)
	if indexed == head {
		return nil
	}
	start := time.Now()
	full := false
	parsed := sh.Parsed()
	large := false
	if indexed.IsZero() && !head.IsZero() {
		large, err = sh.MoreFactLines(head, x.followUpTo)
		if err != nil {
			return err
		}
	}
	switch {
	case head.IsZero():
		err = x.replaceShard(sh, nil, head, nil)
	case large:
		full = true
		if err = x.readHeadInParts(sh, head); err == nil {
			x.attributeLater(id, head)
		}
	default:
		// A shard never indexed is followed from its first commit while its
		// history is short, which attributes every fact on the way. Writes
		// during it move HEAD; it is followed again to the newer HEAD.
		err = x.follow(sh, indexed, head)
		for try := 0; chase && errors.Is(err, errHeadMoved) && try < 10; try++ {
			if head, err = sh.Head(); err == nil {
				err = x.follow(sh, indexed, head)
			}
		}
		if !chase && errors.Is(err, errHeadMoved) {
			return nil // left as it was, consistent, for the next catch-up
		}
		switch {
		case errors.Is(err, errUnknownBase):
			// History rewritten: the commits it replaced name nothing.
			full = true
			err = x.rebuildShard(sh, parsed, indexed)
		case errors.Is(err, errTooFar) || errors.Is(err, errHeadMoved):
			full = true
			err = x.rebuildShard(sh, parsed, gitstore.Hash{})
		}
	}
	if err == nil && indexed.IsZero() && !parsed {
		// A first indexing parsed every file for the index alone: a start
		// on a store no memd has indexed would otherwise hold every
		// shard's files at once, until they sat idle for a minute.
		sh.Release()
	}
	if err == nil && x.OnCatchUp != nil {
		x.OnCatchUp(id, time.Since(start), full)
	}
	return err
}

// followUpTo is the most facts a shard never indexed may hold and still
// be followed from its first commit. A larger one is read from HEAD a few
// files at a time, its facts attributed to their commits in the
// background: following the commits that wrote a million facts held each
// fact twice (in the diffs and at HEAD), a first start 19.5 s and 1.5 GB
// where reading HEAD in parts takes 5.0 s and 0.5 GB.
const followUpTo = 50000

// apply writes the changes of one catch-up to the file and the engine.
func (x *Index) apply(sh *gitstore.Shard, put []search.Doc, del []string, moved map[string]bool, notes map[string]*noteRecord, head gitstore.Hash) error {
	id := sh.ID()
	// Lines after a removed one moved; refresh the offsets of those files.
	for file := range moved {
		lines, at, err := sh.FileLines(file)
		if err != nil {
			return err
		}
		if at != head {
			return errHeadMoved
		}
		for _, l := range lines {
			if d, ok := x.search.Get(id, l.ID); ok && d.Offset != l.Offset && !slices.ContainsFunc(put, func(p search.Doc) bool { return p.ID == l.ID }) {
				d.Offset = l.Offset
				put = append(put, d)
			}
		}
	}
	x.search.Apply(search.Update{Shard: id, Head: hashString(head), Delete: del, Put: put, Notes: notePassages(id, notes)})
	x.mu.Lock()
	x.heads[id] = head
	if x.notes[id] == nil {
		x.notes[id] = make(map[string]*noteRecord)
	}
	for path, r := range notes {
		if r == nil {
			delete(x.notes[id], path)
		} else {
			x.notes[id][path] = r
		}
	}
	x.markDirty(id)
	x.mu.Unlock()
	return nil
}

// rebuildShard indexes a shard afresh from HEAD, then attributes each fact
// to the commit that introduced it by walking history in the background.
// keep keeps the files it parses, for a writer that had them. A fact keeps
// the commit the index named for it at indexed unless a person rewrote
// that commit away (an amend, a rebase, a reset): then it is attributed
// again, to what main holds.
func (x *Index) rebuildShard(sh *gitstore.Shard, keep bool, indexed gitstore.Hash) error {
	gone, err := rewrittenAway(sh, indexed)
	if err != nil {
		return err
	}
	lines, head, err := sh.Lines()
	if err != nil {
		return err
	}
	if !keep {
		sh.Release() // read for the index, not to be written
	}
	if err := x.replaceShard(sh, lines, head, gone); err != nil {
		return err
	}
	x.attributeLater(sh.ID(), head)
	return nil
}

// rewrittenAway returns which commits main no longer holds of those that
// led to indexed: none when indexed is an ancestor of HEAD, those a
// rewrite replaced otherwise, and every one when that cannot be told (git
// dropped indexed, or the rewrite went back further than a walk goes).
func rewrittenAway(sh *gitstore.Shard, indexed gitstore.Hash) (func(commit string) bool, error) {
	if indexed.IsZero() {
		return nil, nil
	}
	head, err := sh.Head()
	if err != nil {
		return nil, err
	}
	gone, _, err := sh.Range(head, indexed, maxWalk)
	if err != nil {
		return func(string) bool { return true }, nil
	}
	if len(gone) == 0 {
		return nil, nil
	}
	set := make(map[string]bool, len(gone))
	for _, c := range gone {
		set[c.Hash.String()] = true
	}
	return func(commit string) bool { return set[commit] }, nil
}

// readAt records that a shard was read afresh at head, with its notes
// there, and is to be saved.
func (x *Index) readAt(id memd.ShardID, head gitstore.Hash, notes map[string]*noteRecord) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.heads[id] = head
	x.notes[id] = notes
	x.markDirty(id)
}

// headNotes reads the notes at head, dated by its commit (none for no
// commit).
func headNotes(sh *gitstore.Shard, head gitstore.Hash) (map[string]*noteRecord, error) {
	if head.IsZero() {
		return map[string]*noteRecord{}, nil
	}
	c, err := sh.ReadCommit(head)
	if err != nil {
		return nil, err
	}
	return notesAt(sh, head, c.Time)
}

// replaceShard replaces everything indexed for a shard with lines and the
// notes at head. A fact indexed at the same line (text, file and date)
// keeps the commit it was attributed to, unless gone says main no longer
// holds that commit.
func (x *Index) replaceShard(sh *gitstore.Shard, lines []gitstore.Line, head gitstore.Hash, gone func(commit string) bool) error {
	id := sh.ID()
	notes, err := headNotes(sh, head)
	if err != nil {
		return err
	}
	docs := make([]search.Doc, len(lines))
	for i, l := range lines {
		docs[i] = docOf(l)
		if old, ok := x.search.Get(id, l.ID); ok && old.Text == l.Text && old.File == l.File && old.Date == l.Date && (gone == nil || !gone(old.Commit)) {
			docs[i].Commit, docs[i].Messages, docs[i].Chat, docs[i].When = old.Commit, old.Messages, old.Chat, old.When
		}
	}
	x.search.Apply(search.Update{Shard: id, Head: hashString(head), Replace: true, Put: docs, Notes: notePassages(id, notes)})
	x.readAt(id, head, notes)
	return nil
}

// Rebuild discards the index and rebuilds it: every shard from HEAD, then
// every fact attributed to its commit. progress, when given, is told what
// is being done: a stage name, and how far along it is.
func (x *Index) Rebuild(ctx context.Context, progress func(stage string, done, total int)) error {
	defer collectOftenWhileReading(bulkReadGC)()
	if err := x.Reload(progress); err != nil {
		return err
	}
	if err := x.AttributeAll(ctx, progress); err != nil {
		return err
	}
	report(progress, "writing the index", 0, 1)
	err := x.saveDirty(true)
	report(progress, "writing the index", 1, 1)
	return err
}

// Committed tells the index that memd moved a shard's branch. The index
// catches the shard up soon, in the background, while the writer still
// holds the shard's files: a catch-up then reads only what the commits
// changed, where one after the files were given up (at the next start,
// after a stop) reads and parses every file of the shard.
func (x *Index) Committed(id memd.ShardID) {
	x.mu.Lock()
	x.toFollow[id] = true
	x.mu.Unlock()
	select {
	case x.followWake <- struct{}{}:
	default: // already woken
	}
}

// followQuiet is how long after memd's last commit the follower waits
// before it catches up: it follows a burst of writes once it ends, rather
// than chase each commit of it (a catch-up that HEAD outruns is given up,
// for the next).
const followQuiet = 200 * time.Millisecond

// follower catches up the shards memd commits to, once commits pause,
// until the index closes. Close catches up what is left.
func (x *Index) follower() {
	defer close(x.followerDone)
	for {
		select {
		case <-x.ctx.Done():
			return
		case <-x.followWake:
		}
		quiet := time.NewTimer(followQuiet)
		for waiting := true; waiting; {
			select {
			case <-x.ctx.Done():
				quiet.Stop()
				return
			case <-x.followWake:
				quiet.Reset(followQuiet)
			case <-quiet.C:
				waiting = false
			}
		}
		x.followCommitted()
	}
}

// followCommitted catches up the shards memd committed to since it last
// ran, without chasing writes that come meanwhile.
func (x *Index) followCommitted() {
	x.mu.Lock()
	ids := make([]memd.ShardID, 0, len(x.toFollow))
	for id := range x.toFollow {
		ids = append(ids, id)
	}
	clear(x.toFollow)
	x.mu.Unlock()
	for _, id := range ids {
		sh, err := x.store.Shard(id)
		if err == nil {
			err = x.catchUp(sh, false)
		}
		if err != nil && memd.ErrorCode(err) != memd.ENOTFOUND && x.ctx.Err() == nil {
			x.log.Warn("bringing the index up to a commit memd made", "shard", id, "err", err)
		}
	}
}
