package gitstore

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memd/memd"
)

// Restoring what a stale index dropped.
//
// git reads .git/index before it locks it, and several git commands (git
// status among them) write back the index they read. One that read it just
// before memd's update leaves an index lacking memd's latest facts, while
// the working files hold them; the person's next git commit then commits
// them away without anyone meaning to. The signature: a commit memd did not
// make, not a git revert, that puts a fact file back exactly as it was a few
// commits earlier, while the working file still holds the facts it dropped.
// A person who deletes a fact on purpose deletes it from the file. memd
// restores such facts in one commit whose message names the commit that
// dropped them; it is reverted like any other.

// staleLookback is how far back a fact file's earlier versions are looked for.
const staleLookback = 64

// ownLookback bounds the commits of any author a restore walks past.
const ownLookback = 1 << 14

// RestoreMessage formats the message of a commit restoring facts, or a
// note (its file), that a commit built from a stale index dropped, and
// taking back the facts memd had removed that it brought back (removed).
type RestoreMessage func(dropper Commit, restored, removed []memd.Fact, note string) string

// droppedNote is a note a commit from a stale index took back.
type droppedNote struct {
	path    string
	data    []byte // its version before the commit
	result  Hash   // what the commit left (zero: no file)
	dropper Commit
}

// droppedByStaleIndex returns the facts c removed by committing a fact file
// exactly as it was in a recent ancestor, and which its working file still
// holds; the facts it brought back so, which its working file lacks (memd
// removed them: a forget or a revert the stale index predates); and the
// notes it took back to a recent version (or removed) while their working
// files hold something else.
// The caller checks that the shard's checkout is on main (see
// restoreDropped).
func (sh *Shard) droppedByStaleIndex(c Commit) (lost, back []memd.Fact, notes []droppedNote, err error) {
	if c.ByMemd() || len(c.Parents) != 1 || strings.Contains(c.Message, "This reverts commit ") {
		return nil, nil, nil, nil
	}
	parent, err := sh.readCommit(c.Parents[0])
	if err != nil {
		return nil, nil, nil, err
	}
	t := &trees{db: sh.db}
	err = t.diffFiles(parent.tree, c.Tree, "", keepPushedPaths, func(path string, before, after Hash) error {
		// A file the commit removed counts too: a stale index that predates
		// a new file (a new month's or day's log, a note) drops it whole.
		if before.IsZero() {
			return nil
		}
		working, err := os.ReadFile(filepath.Join(sh.dir, filepath.FromSlash(path)))
		if err != nil {
			return nil // gone from the working tree too
		}
		if !sh.hadBlob(parent.parents, path, after, staleLookback) {
			return nil
		}
		if IsNoteFile(path) {
			n, err := sh.droppedNote(c.Parents[0], path, before, after, working)
			if n != nil {
				notes = append(notes, *n)
			}
			return err
		}
		was, err := sh.readFactFile(path, before)
		if err != nil {
			return err
		}
		now := &factFile{path: path}
		if !after.IsZero() {
			if now, err = sh.readFactFile(path, after); err != nil {
				return err
			}
		}
		inWorking := factIDs(parseFactFile(path, working))
		holds := func(facts []lineFact, id string) bool {
			return slices.ContainsFunc(facts, func(f lineFact) bool { return f.ID == id })
		}
		for _, lf := range was.facts {
			if inWorking[lf.ID] && !holds(now.facts, lf.ID) {
				f := lf.Fact
				f.Shard = sh.id
				lost = append(lost, f)
			}
		}
		for _, lf := range now.facts {
			if !inWorking[lf.ID] && !holds(was.facts, lf.ID) {
				f := lf.Fact
				f.Shard = sh.id
				back = append(back, f)
			}
		}
		return nil
	})
	return lost, back, notes, err
}

// droppedNote returns the note at path as it was (before, at parent) if
// memd wrote that version and the commit that made it after did not take
// it from the working file: the person committed what a stale index held,
// not what they had in front of them. A stale index only ever lacks memd's
// writes; a person's own are in it.
func (sh *Shard) droppedNote(parent Hash, path string, before, after Hash, working []byte) (*droppedNote, error) {
	if mine, err := sh.wroteVersion(parent, path, before); err != nil || !mine {
		return nil, err
	}
	if !after.IsZero() {
		now, err := sh.db.Get(after)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(now.Data, working) {
			return nil, nil // committed from the working file: meant
		}
	}
	was, err := sh.db.Get(before)
	if err != nil {
		return nil, err
	}
	return &droppedNote{path: path, data: was.Data, result: after}, nil // the caller names the dropper
}

// wroteVersion reports whether the commit that gave path the version blob
// it has at start (walking first parents back from start) is memd's.
func (sh *Shard) wroteVersion(start Hash, path string, blob Hash) (bool, error) {
	t := &trees{db: sh.db}
	h := start
	for range staleLookback {
		c, err := sh.readCommit(h)
		if err != nil {
			return false, err
		}
		if len(c.parents) == 0 {
			return c.byMemd(), nil
		}
		p, err := sh.readCommit(c.parents[0])
		if err != nil {
			return false, err
		}
		if e, ok, err := t.lookup(p.tree, path); err != nil {
			return false, err
		} else if !ok || e.hash != blob {
			return c.byMemd(), nil
		}
		h = c.parents[0]
	}
	return false, nil
}

// hadBlob reports whether path held blob (or, for the zero hash, was
// absent) in one of the first limit first-parent ancestors starting at
// parents.
func (sh *Shard) hadBlob(parents []Hash, path string, blob Hash, limit int) bool {
	return heldRecently(sh.db, parents, path, blob, limit)
}

// judgedName is the file that names the newest commit memd checked for
// what a stale index dropped, so that a start does not judge it again.
const judgedName = "memd-judged"

// markJudged records head as checked. It is a hint: lost, a start checks
// again the commits since memd's own last one.
func (sh *Shard) markJudged(head Hash) {
	writeHashFile(filepath.Join(sh.gitDir, judgedName), head)
}

// writeHashFile writes a commit's hash to path, aside and renamed in, and
// reports whether it is there.
func writeHashFile(path string, h Hash) bool {
	return replaceFile(path, []byte(h.String()+"\n"), 0o644, false) == nil
}

// readHashFile returns the hash a file writeHashFile wrote holds, or the
// zero hash.
func readHashFile(path string) Hash {
	b, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); err == nil && IsHash(s) {
		return NewHash(s)
	}
	return Hash{}
}

// owedName is the file that names where a restore that failed began, so
// that a start tries it again though memd committed since (lastJudged
// would stop at memd's own commit, after the one that dropped facts).
const owedName = "memd-restore-owed"

// oweRestore records that the restore of what the commits after base
// dropped failed, to be tried again. The caller holds sh.mu.
func (sh *Shard) oweRestore(base Hash) {
	// Each failure in a row doubles the wait, up to ten minutes: one that
	// lasts costs a walk and a warning that often, not at every write.
	sh.owedWait = min(max(2*sh.owedWait, owedRetryAfter), 10*time.Minute)
	sh.owedRetry.Store(time.Now().Add(sh.owedWait).UnixNano())
	if owed := sh.owed.Load(); owed == nil || *owed != base {
		sh.owed.Store(&base)
		sh.owedSaved = false
	}
	sh.saveOwed()
}

// owedDue reports whether a restore is owed and due to be tried again.
func (sh *Shard) owedDue() bool {
	return sh.owed.Load() != nil && time.Now().UnixNano() >= sh.owedRetry.Load()
}

// saveOwed writes the restore owed to owedName unless it is there: the
// failure may have been a full disk, and memd's next commit of its own
// would hide the commit that dropped facts from the next start. The
// caller holds sh.mu.
func (sh *Shard) saveOwed() {
	owed := sh.owed.Load()
	if owed == nil || sh.owedSaved {
		return
	}
	sh.owedSaved = writeHashFile(filepath.Join(sh.gitDir, owedName), *owed)
}

// owedRetryAfter is how long an owed restore first waits before it is
// tried again on a main that has not moved (a variable for tests).
var owedRetryAfter = 2 * time.Second

// settleOwed records that no restore is owed. The caller holds sh.mu.
func (sh *Shard) settleOwed() {
	if sh.owed.Swap(nil) != nil {
		os.Remove(filepath.Join(sh.gitDir, owedName))
	}
	sh.owedSaved, sh.owedWait = false, 0
}

// readOwed returns the commit oweRestore recorded, if memd can still read
// it, or the zero hash.
func (sh *Shard) readOwed() Hash {
	if h := readHashFile(filepath.Join(sh.gitDir, owedName)); !h.IsZero() && sh.db.Has(h) {
		return h
	}
	return Hash{}
}

// readJudged returns the commit markJudged recorded, or the zero hash.
func (sh *Shard) readJudged() Hash { return readHashFile(filepath.Join(sh.gitDir, judgedName)) }

// restoreDropped looks at the commits from..st.head that memd did not make
// and, where one dropped facts or notes by committing a stale index,
// commits them back on st. It returns the state to continue from. The
// caller holds sh.mu.
//
// It is long because it gathers facts and notes in one walk and commits
// them in one group.
func (sh *Shard) restoreDropped(from Hash, st *state) (*state, error) {
	msgf := sh.store.opts.Restore
	// Only while the shard's own checkout is on main are its working files
	// what a commit is judged against; away from main (a detached HEAD,
	// main checked out in a linked worktree) they are another version's.
	if msgf == nil || from.IsZero() || !sh.headOnMain() {
		return st, nil
	}
	var dropper Commit
	var lost, back []memd.Fact
	notes := map[string]droppedNote{}
	n, walked := 0, 0
	reached := false
	err := sh.Walk(st.head, func(c Commit) error {
		if c.Hash == from {
			reached = true
			return ErrStop
		}
		// memd's own commits drop nothing and count only toward a bound of
		// their own: an owed restore walks past those memd made since.
		if walked++; walked > ownLookback {
			return ErrStop
		}
		if c.ByMemd() {
			return nil
		}
		if n++; n > staleLookback {
			return ErrStop
		}
		facts, brought, dropped, err := sh.droppedByStaleIndex(c)
		if err != nil {
			return err
		}
		seen := func(id string) bool {
			return slices.ContainsFunc(lost, func(l memd.Fact) bool { return l.ID == id }) ||
				slices.ContainsFunc(back, func(l memd.Fact) bool { return l.ID == id })
		}
		// Only what HEAD still shows as the drop left it: a change since is
		// someone's decision.
		for _, f := range facts {
			if !seen(f.ID) && !st.where.has(f.ID) {
				lost = append(lost, f)
				dropper = c
			}
		}
		for _, f := range brought {
			if !seen(f.ID) && st.where.has(f.ID) {
				back = append(back, f)
				dropper = c
			}
		}
		for _, d := range dropped {
			if _, later := notes[d.path]; !later { // the newest drop is the one HEAD shows
				d.dropper = c
				notes[d.path] = d
			}
		}
		return nil
	})
	if err != nil || !reached {
		// Not reached: main was reset behind what memd last saw (a person
		// undoing a restore, say), or moved too far to judge. Nothing is
		// restored; the new history stands.
		if err == nil && sh.owed.Load() != nil {
			sh.store.log.Warn("a restore owed of what a stale index dropped is given up: main no longer leads back to where it began, or too far back to judge", "shard", sh.id, "from", short(from))
		}
		return st, err
	}
	g := newGroup(sh, st)
	if len(lost)+len(back) > 0 {
		var edits []Edit
		for _, f := range lost {
			edits = append(edits, Edit{Op: AddFact, Fact: f})
		}
		for _, f := range back {
			edits = append(edits, Edit{Op: RemoveFact, Fact: memd.Fact{ID: f.ID}})
		}
		if _, err := g.add(Change{Author: Committer(), Message: msgf(dropper, lost, back, ""), Edits: edits}); err != nil {
			return st, err
		}
	}
	t := &trees{db: sh.db}
	var restoredNotes []string
	for _, path := range slices.Sorted(maps.Keys(notes)) {
		d := notes[path]
		// Only a note HEAD still holds as the drop left it: a change
		// since is someone's decision.
		if e, ok, err := t.lookup(st.root, path); err != nil || ok != !d.result.IsZero() || ok && e.hash != d.result {
			continue
		}
		data := d.data
		set := func([]byte, bool) ([]byte, bool, error) { return data, false, nil }
		if _, err := g.add(Change{Author: Committer(), Message: msgf(d.dropper, nil, nil, path), Note: &NoteChange{Path: path, Update: set}}); err != nil {
			// A person is editing the note (conflict), or it could not be
			// checked: restoring it over their edit would take theirs
			// away, and failing the group would keep the facts out too.
			// A note refused leaves the group as it was; memd's version
			// stays in history.
			sh.store.log.Warn("a git commit made from a stale index took back a note memd had written; it is not restored",
				"shard", sh.id, "commit", short(d.dropper.Hash), "note", path, "memd's version", short(d.dropper.Hash)+"^:"+path, "reason", err)
			continue
		}
		restoredNotes = append(restoredNotes, path)
	}
	if len(lost) == 0 && len(back) == 0 && len(restoredNotes) == 0 {
		return st, nil
	}
	if err := g.build(); err != nil || g.b.Len() == 0 {
		return st, err
	}
	sp, err := sh.db.StagePack(g.b)
	if err != nil {
		return st, err
	}
	if err := sh.publish(st, g, sp); err != nil {
		return st, err
	}
	if len(lost) > 0 {
		sh.store.log.Warn("a git commit made from a stale index dropped facts memd had written; restored them",
			"shard", sh.id, "commit", short(dropper.Hash), "facts", len(lost))
	}
	if len(back) > 0 {
		sh.store.log.Warn("a git commit made from a stale index brought back facts memd had removed; took them back",
			"shard", sh.id, "commit", short(dropper.Hash), "facts", len(back))
	}
	for _, path := range restoredNotes {
		sh.store.log.Warn("a git commit made from a stale index took back a note memd had written; restored it",
			"shard", sh.id, "commit", short(notes[path].dropper.Hash), "note", path)
	}
	return sh.cur.Load(), nil
}
