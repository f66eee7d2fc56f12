package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
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

// readHeadInParts indexes a shard from its files at head, a few files at a
// time, so that its facts are never held twice (as parsed lines and as
// the index's). Where a person wrote a fact twice the newer line counts,
// or the first of two of a day, as in gitstore.Lines. What the index held
// of the shard goes first, and what was read goes again on an error: a
// half-read shard is never taken for one read.
//
// Three steps run at once, each on what the one before gave: reading the
// files, analysing their facts' texts, and putting those into the index,
// which one step at a time may do. On two processors this reads a million
// facts in about two thirds of the time the steps take one after another.
func (x *Index) readHeadInParts(sh *gitstore.Shard, head gitstore.Hash) (err error) {
	id := sh.ID()
	x.search.Apply(search.Update{Shard: id, Replace: true})
	defer func() {
		if err != nil {
			x.search.Apply(search.Update{Shard: id, Replace: true})
		}
	}()
	read := make(chan search.Update)
	type prepared struct {
		update search.Prepared
		facts  []search.Doc // the update's, to be used again when it is made
	}
	ready := make(chan prepared)
	// Batches come back to be filled again: a million facts read are 200 MB
	// of Docs, and each batch made afresh was that much more to collect.
	spare := make(chan []search.Doc, 4)
	// A step that fails or panics makes the others stop: the reader at its
	// next file, each handing over what it holds.
	ctx, stop := context.WithCancel(x.ctx)
	defer func() {
		stop()
		for range ready {
		}
	}()
	var notes map[string]*noteRecord
	var readErr, prepareErr error
	go func() {
		defer close(read)
		defer func() {
			if r := recover(); r != nil {
				readErr = fmt.Errorf("reading shard %s: %v", id, r)
			}
		}()
		notes, readErr = x.readHeadBatches(ctx, sh, head, read, spare)
	}()
	go func() {
		defer close(ready)
		for u := range read {
			p, err := prepare(u)
			if err != nil {
				prepareErr = err
				stop()
				continue // what is still read goes unused
			}
			ready <- prepared{p, u.Put}
		}
	}()
	for p := range ready {
		x.search.ApplyPrepared(p.update)
		clear(p.facts) // let go of the files their strings are in
		select {
		case spare <- p.facts[:0]:
		default:
		}
	}
	if err := cmp.Or(prepareErr, readErr); err != nil {
		return err
	}
	x.readAt(id, head, notes)
	return nil
}

// prepare is search.Prepare, with a panic made an error for the shard.
func prepare(u search.Update) (p search.Prepared, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("analysing shard %s: %v", u.Shard, r)
		}
	}()
	return search.Prepare(u), nil
}

// readHeadBatches sends the facts of the shard's files at head in
// batches of about x.readBatch, the last with head and the shard's notes,
// and returns the notes. A fact written twice is put where it is newest:
// in one batch it is sent once, in two the index keeps the newer
// (KeepNewer). Batches are taken from spare when it has one.
func (x *Index) readHeadBatches(ctx context.Context, sh *gitstore.Shard, head gitstore.Hash, out chan<- search.Update, spare <-chan []search.Doc) (map[string]*noteRecord, error) {
	id := sh.ID()
	next := func() []search.Doc {
		select {
		case b := <-spare:
			return b
		default:
			// A batch is sent when a file takes it past x.readBatch: room
			// for that and a large file more (a Doc is 200 bytes).
			return make([]search.Doc, 0, x.readBatch+x.readBatch/4)
		}
	}
	batch := next()
	// A fact written twice within a batch is settled here, where the
	// reading waits on the putting anyway: put twice, the older copy would
	// be taken out of lists the length of the shard.
	inBatch := map[string]int{} // ID -> its place in batch
	err := sh.EachFactFile(head, func(lines []gitstore.Line) error {
		if err := ctx.Err(); err != nil {
			return err // the index is closing, or a step failed
		}
		for _, l := range lines {
			if i, ok := inBatch[l.ID]; ok {
				if batch[i].Date.Before(l.Date) {
					batch[i] = docOf(l)
				}
				continue
			}
			inBatch[l.ID] = len(batch)
			batch = append(batch, docOf(l))
		}
		if len(batch) >= x.readBatch {
			out <- search.Update{Shard: id, Put: batch, KeepNewer: true}
			batch = next()
			clear(inBatch)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	notes, err := headNotes(sh, head)
	if err != nil {
		return nil, err
	}
	out <- search.Update{Shard: id, Put: batch, KeepNewer: true, Head: hashString(head), Notes: notePassages(id, notes)}
	return notes, nil
}

// testHookBeforeLookup, set by tests, runs before follow reads the facts
// it follows.
var testHookBeforeLookup func()

var (
	errUnknownBase = errors.New("indexed commit is not an ancestor of HEAD")
	errTooFar      = errors.New("HEAD is too many commits past the indexed commit to follow")
	errHeadMoved   = errors.New("HEAD moved during the catch-up")
)

// maxWalk bounds how many commits catch-up reads before it reads HEAD
// afresh instead.
const maxWalk = 10000

// follow catches up from indexed to head by reading the commits between
// them: the trailers of memd's commits name the facts they changed, other
// commits are diffed. Each touched fact is then read from HEAD: present, it
// is (re)indexed, attributed to the newest commit that touched it; absent,
// it is dropped. Commits that land while the facts are read are followed
// in turn, and the facts they touched read again, until a read finds HEAD
// where the walk ended: under steady writes, starting over from indexed
// would meet new commits every time.
func (x *Index) follow(sh *gitstore.Shard, indexed, head gitstore.Hash) error {
	w := newWalk()
	if err := w.add(sh, indexed, head); err != nil {
		return err
	}
	found, head, err := readTouched(sh, w, head)
	if err != nil {
		return err
	}
	notes, err := w.notesAt(sh, head)
	if err != nil {
		return err
	}
	var put []search.Doc
	var del []string
	moved := make(map[string]bool) // files whose later lines moved up
	unknown := false
	for _, fid := range w.order {
		l, ok := found[fid]
		if !ok {
			if old, had := x.search.Get(sh.ID(), fid); had {
				moved[old.File] = true
			}
			del = append(del, fid)
			continue
		}
		d, known := x.attributed(sh.ID(), fid, w.by(fid), l)
		unknown = unknown || !known
		put = append(put, d)
	}
	if err := x.apply(sh, put, del, moved, notes, head); err != nil {
		return err
	}
	if unknown {
		x.attributeLater(sh.ID(), head)
	}
	return nil
}

// readTouched reads the facts the walk touched at head. Commits that
// land meanwhile are followed in turn, and the facts they touched read
// again, until a read finds HEAD where the walk ended. It returns the
// lines found, by fact, and the commit they were read at.
func readTouched(sh *gitstore.Shard, w *walk, head gitstore.Hash) (map[string]gitstore.Line, gitstore.Hash, error) {
	ids := w.order
	found := make(map[string]gitstore.Line, len(ids))
	for rounds := 0; ; rounds++ {
		if testHookBeforeLookup != nil {
			testHookBeforeLookup()
		}
		read, at, err := sh.Lookup(ids)
		if err != nil {
			return nil, head, err
		}
		for _, fid := range ids {
			if l, ok := read[fid]; ok {
				found[fid] = l
			} else {
				delete(found, fid)
			}
		}
		if at == head {
			return found, head, nil
		}
		// What was read is at a newer commit than the walk reached:
		// follow the commits up to it, and read what they touched there
		// or later. Each round reads only what the last one's commits
		// touched.
		if rounds == maxRounds {
			return nil, head, errHeadMoved
		}
		batch := len(w.order)
		if err := w.add(sh, head, at); errors.Is(err, errUnknownBase) {
			// HEAD went back or elsewhere (a reset, an amend): followed
			// again from indexed, it may still descend from it.
			return nil, head, errHeadMoved
		} else if err != nil {
			return nil, head, err
		}
		ids, head = w.touchedLast(batch), at
	}
}

// attributed is fact fid, of line l, with the commit that wrote it where
// known: the newest commit that touched it, t, where t wrote the line;
// else the commit held, where the line held is as it was. known is false
// where neither tells, for attribution to find in history.
func (x *Index) attributed(shard memd.ShardID, fid string, t *touch, l gitstore.Line) (d search.Doc, known bool) {
	d = docOf(l)
	if wroteLine(t.wrote, l.Fact) {
		d.Commit, d.Messages, d.Chat, d.When = t.commit, t.messages, t.chat, t.when
		return d, true
	}
	if old, ok := x.search.Get(shard, fid); ok && old.Commit != "" && old.Commit != t.reverts && old.Text == l.Text && old.File == l.File && old.Date == l.Date {
		// The newest commit touching the fact wrote no line of it (it
		// took a copy away), and the line held is as it was: so is the
		// commit that wrote it, unless that is the commit the newest
		// reverted (its copy gone, another stands).
		d.Commit, d.Messages, d.Chat, d.When = old.Commit, old.Messages, old.Chat, old.When
		return d, true
	}
	return d, false
}

// maxRounds bounds the rounds follow reads commits that landed during the
// round before; each takes the few commits of a moment, so that one more
// round meeting yet another commit grows ever less likely.
const maxRounds = 100

// walk is what the commits a catch-up follows touched: for each fact, the
// newest commit that touched it, and the newest merge that brought it in
// (which counts only for a fact no other commit touched: a merge's own
// diff repeats the changes of the commits it brought in, which are walked
// too); for each note, the newest commit that changed it.
type walk struct {
	direct, merged map[string]*touch
	order          []string // facts in the order first touched
	last           map[string]bool
	notes          map[string]gitstore.Commit
}

// touch is a commit that touched facts, as their documents name it.
type touch struct {
	commit   string
	messages []string
	chat     string
	when     int64
	wrote    map[string][]memd.Fact // the lines it wrote (see changedFacts)
	reverts  string                 // the commit it reverts, if a revert
}

func newWalk() *walk {
	return &walk{direct: make(map[string]*touch), merged: make(map[string]*touch), notes: make(map[string]gitstore.Commit)}
}

// add walks the commits from..to, which are newer than any walked before.
func (w *walk) add(sh *gitstore.Shard, from, to gitstore.Hash) error {
	commits, reached, err := sh.Range(from, to, maxWalk)
	switch {
	case errors.Is(err, gitstore.ErrTooFar):
		// Far behind, or rewritten: a rewrite's commits name nothing.
		if ok, aerr := sh.IsAncestor(from, to); aerr != nil || !ok {
			return errUnknownBase
		}
		return errTooFar
	case err != nil:
		if _, rerr := sh.ReadCommit(from); rerr != nil {
			return errUnknownBase // git dropped it: a person rewrote history
		}
		return err
	case !reached:
		return errUnknownBase
	}
	w.last = make(map[string]bool)
	seenDirect, seenMerged, seenNotes := make(map[string]bool), make(map[string]bool), make(map[string]bool)
	// Newest first: the first commit seen touching a fact is its newest.
	for i := len(commits) - 1; i >= 0; i-- {
		c := commits[i]
		p := provenance.Parse(c.Message)
		ids, wrote, err := changedFacts(sh, c, p)
		if err != nil {
			return err
		}
		to, seen := w.direct, seenDirect
		if len(c.Parents) > 1 {
			to, seen = w.merged, seenMerged
		}
		var by *touch // one for all the facts of the commit
		for _, fid := range ids {
			if seen[fid] {
				continue
			}
			seen[fid] = true
			if by == nil {
				by = &touch{commit: c.Hash.String(), when: c.Time.Unix(), wrote: wrote, reverts: p.Reverts}
				if len(c.Parents) <= 1 {
					by.messages, by.chat = p.SourceMessages, p.SourceChat
				}
			}
			if w.direct[fid] == nil && w.merged[fid] == nil {
				w.order = append(w.order, fid)
			}
			to[fid] = by
			w.last[fid] = true
		}
		if !c.ByMemd() || p.Op == "" || p.Op == memd.OpNoteEdit || p.Op == memd.OpRevert || p.Op == memd.OpMerge {
			changed, err := sh.ChangedNotes(c)
			if err != nil {
				return err
			}
			for _, path := range changed {
				if !seenNotes[path] {
					seenNotes[path] = true
					w.notes[path] = c
				}
			}
		}
	}
	return nil
}

// touchedLast returns the facts the last add touched; those first touched
// by it are from index batch of order on.
func (w *walk) touchedLast(batch int) []string {
	ids := slices.Clone(w.order[batch:])
	for _, fid := range w.order[:batch] {
		if w.last[fid] {
			ids = append(ids, fid)
		}
	}
	return ids
}

// by returns the commit a fact is attributed to.
func (w *walk) by(fid string) *touch {
	if t := w.direct[fid]; t != nil {
		return t
	}
	return w.merged[fid]
}

// notesAt returns the notes the walk saw changed, as they are at head
// (nil: removed), by path under the notes folder.
func (w *walk) notesAt(sh *gitstore.Shard, head gitstore.Hash) (map[string]*noteRecord, error) {
	notes := make(map[string]*noteRecord, len(w.notes))
	for file, c := range w.notes {
		data, ok, _, err := sh.Note(head, file)
		if err != nil {
			return nil, err
		}
		path := strings.TrimPrefix(file, gitstore.NotesDir+"/")
		notes[path] = nil
		if ok {
			notes[path] = &noteRecord{Date: memd.DateOf(c.Time).String(), Commit: c.Hash.String(), Text: string(data)}
		}
	}
	return notes, nil
}

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
