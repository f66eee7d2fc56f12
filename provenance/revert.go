package provenance

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// Reverter undoes commits on behalf of someone.
type Reverter struct {
	Author    gitstore.Signature
	LearnedBy string // person for an admin, explicit for an agent
	// DryRun reports what a revert would change on the current HEAD and
	// commits nothing.
	DryRun bool

	preview preview                       // a dry run of several reverts: the facts as they would stand
	notes   map[string]gitstore.NoteState // and the notes, by path
}

// Revert undoes one commit of a shard semantically, on the current HEAD:
// a fact it added is removed if still there, a fact it removed is restored
// (with its date, tier and file) if absent. The result has no commit and
// no changes when nothing was left to undo, and a commit a standing revert
// undid already has nothing left.
func (r Reverter) Revert(sh *gitstore.Shard, h gitstore.Hash) (memd.Revert, error) {
	if done, err := Undone(sh, h); err != nil || done {
		// A revert that still stands undid it: nothing is left to undo.
		return memd.Revert{Shard: sh.ID(), Reverted: h.String(), Changes: []memd.FactChange{}}, err
	}
	head, err := sh.Head()
	if err != nil {
		return memd.Revert{}, err
	}
	us, err := readUndoing(sh, []gitstore.Hash{h})
	if err != nil {
		return memd.Revert{}, err
	}
	again, err := changedAgain(sh, head, us, us)
	if err != nil {
		return memd.Revert{}, err
	}
	return r.revert(sh, us[0], again[h])
}

// undoing is a commit to undo with its fact changes, read once: a diff of
// a month's file is not cheap, and both changedAgain and revert need it.
type undoing struct {
	c gitstore.Commit
	d gitstore.Diff
}

func readUndoing(sh *gitstore.Shard, hs []gitstore.Hash) ([]undoing, error) {
	us := make([]undoing, len(hs))
	for i, h := range hs {
		c, err := sh.ReadCommit(h)
		if err != nil {
			return nil, err
		}
		if us[i].d, err = sh.Diff(c); err != nil {
			return nil, err
		}
		us[i].c = c
	}
	return us, nil
}

// revert undoes commit u, which no standing revert undid, but for the
// facts the rest of the history changed as it did (changedAgain).
func (r Reverter) revert(sh *gitstore.Shard, u undoing, later map[string]agreed) (memd.Revert, error) {
	c, d := u.c, u.d
	h := c.Hash
	out := memd.Revert{Shard: sh.ID(), Reverted: h.String(), Changes: []memd.FactChange{}}
	// A fact taught elsewhere too stands (its lines of this commit are
	// weighed below); one removed elsewhere too stays removed.
	var alsoTaught []memd.Fact
	d.Facts = slices.DeleteFunc(slices.Clone(d.Facts), func(ch memd.FactChange) bool {
		if later[ch.Fact.ID].op != ch.Op {
			return false
		}
		if ch.Op == taught {
			alsoTaught = append(alsoTaught, ch.Fact)
		}
		return true
	})
	var err error
	if d.Facts, err = r.withoutRewritesGone(sh, d.Facts); err != nil {
		return out, err
	}
	for _, ch := range d.Facts {
		// A person's line memd would now refuse to write (a text of
		// nothing visible) cannot be put back as it was, if it is gone.
		if _, bad := memd.CleanFactText(ch.Fact.Text); ch.Op == "-" && bad != nil {
			if _, err := sh.Fact(ch.Fact.ID); memd.ErrorCode(err) == memd.ENOTFOUND {
				return out, memd.Errorf(memd.ECONFLICT, "fact %s cannot be put back as it was: %s", ch.Fact.ID, memd.ErrorMessage(bad))
			}
		}
	}
	// Removals of what it added first, so a line it changed is put back.
	var edits []gitstore.Edit
	var ids []string
	for _, ch := range d.Facts {
		if ch.Op == "+" {
			e, err := takeBack(sh, ch.Fact)
			if err != nil {
				return out, err
			}
			edits = append(edits, e)
			ids = appendID(ids, ch.Fact.ID)
		}
	}
	ownLines, err := r.ownLines(sh, alsoTaught, later)
	if err != nil {
		return out, err
	}
	for _, f := range ownLines {
		edits = append(edits, gitstore.Edit{Op: gitstore.RemoveLine, Fact: memd.Fact{ID: f.ID, File: f.File, Date: f.Date}})
		ids = appendID(ids, f.ID)
	}
	// A line it removed goes back in its file, even where another file
	// holds the fact too, as in the history replayed without the commit.
	for _, ch := range d.Facts {
		if ch.Op == "-" {
			op := gitstore.AddFact
			if ch.Fact.File != "" {
				op = gitstore.RestoreLine
			}
			edits = append(edits, gitstore.Edit{Op: op, Fact: ch.Fact})
			ids = appendID(ids, ch.Fact.ID)
		}
	}
	retaught, err := r.retaughtLines(sh, d.Facts, later)
	if err != nil {
		return out, err
	}
	for _, f := range retaught {
		edits = append(edits, gitstore.Edit{Op: gitstore.RemoveLine, Fact: f})
	}
	if len(edits) == 0 {
		return r.revertNote(sh, c, out)
	}
	if r.DryRun {
		out.Changes, err = wouldChange(sh, d.Facts, ownLines, retaught, r.preview)
		return out, err
	}
	msg := Message(Subject(memd.OpRevert, c.Subject()), memd.Provenance{
		Op:        memd.OpRevert,
		FactIDs:   ids,
		LearnedBy: r.LearnedBy,
		Reverts:   h.String(),
	})
	res, err := sh.Apply(gitstore.Change{Author: r.Author, Message: msg, Edits: edits})
	if err != nil {
		return out, err
	}
	if !res.Commit.IsZero() {
		out.Commit = res.Commit.String()
		out.Changes = res.Changes
	}
	return out, nil
}

// ownLines returns the lines of facts a commit taught that the rest of
// the history taught too, which its revert takes back: each that no other
// teaching wrote (file and date), while the fact keeps another line.
// Lines are reckoned as the dry run's earlier reverts left them.
func (r Reverter) ownLines(sh *gitstore.Shard, alsoTaught []memd.Fact, later map[string]agreed) ([]memd.Fact, error) {
	var out []memd.Fact
	left := make(map[string][]memd.Fact) // each fact's lines as the lines before leave it
	for _, f := range alsoTaught {
		if slices.Contains(later[f.ID].wrote, lineAt{f.File, f.Date}) {
			continue // the other teaching's line too
		}
		lines, ok := left[f.ID]
		if !ok {
			var err error
			if lines, err = linesNow(sh, f.ID, r.preview); err != nil {
				return nil, err
			}
		}
		if at := lastLike(lines, f); len(lines) > 1 && at >= 0 {
			out = append(out, f)
			lines = slices.Delete(slices.Clone(lines), at, at+1)
		}
		left[f.ID] = lines
	}
	return out, nil
}

// retaughtLines returns the lines a revert takes back after putting back
// the lines a commit removed: those taught again since (agreed.retaught),
// still there, and unlike any line put back. Lines are reckoned as the
// dry run's earlier reverts left them.
func (r Reverter) retaughtLines(sh *gitstore.Shard, changes []memd.FactChange, later map[string]agreed) ([]memd.Fact, error) {
	var out []memd.Fact
	done := make(map[string]bool)
	for _, ch := range changes {
		id := ch.Fact.ID
		if ch.Op != "-" || done[id] || len(later[id].retaught) == 0 {
			continue
		}
		done[id] = true
		lines, err := linesNow(sh, id, r.preview)
		if err != nil {
			return nil, err
		}
		putBack := func(l lineAt) bool {
			return slices.ContainsFunc(changes, func(c memd.FactChange) bool {
				return c.Op == "-" && c.Fact.ID == id && c.Fact.File == l.file && c.Fact.Date == l.date
			})
		}
		if !slices.ContainsFunc(changes, func(c memd.FactChange) bool {
			return c.Op == "-" && c.Fact.ID == id && c.Fact.File != "" && lastLike(lines, c.Fact) < 0
		}) {
			continue // nothing of it goes back
		}
		for _, l := range slices.Compact(slices.Clone(later[id].retaught)) {
			f := memd.Fact{ID: id, File: l.file, Date: l.date}
			if !putBack(l) && lastLike(lines, f) >= 0 {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// withoutRewritesGone returns a commit's fact changes but the rewrites
// (a line removed and one added, one ID, in one file) whose new line is no
// longer there: forgotten or deleted since, here or on another line
// merged in, it stays gone, as in the history without the rewrite. The
// commit's other lines of the fact are still undone.
func (r Reverter) withoutRewritesGone(sh *gitstore.Shard, changes []memd.FactChange) ([]memd.FactChange, error) {
	type inFile struct{ id, file string }
	ops := make(map[inFile]string)
	for _, ch := range changes {
		k := inFile{ch.Fact.ID, ch.Fact.File}
		if prev, ok := ops[k]; ok && prev != ch.Op {
			ops[k] = rewritten
		} else {
			ops[k] = ch.Op
		}
	}
	gone := make(map[inFile]bool)
	for _, ch := range changes {
		k := inFile{ch.Fact.ID, ch.Fact.File}
		if ch.Op != "+" || ops[k] != rewritten {
			continue
		}
		lines, err := linesNow(sh, ch.Fact.ID, r.preview)
		if err != nil {
			return nil, err
		}
		if lastLike(lines, ch.Fact) < 0 {
			gone[k] = true
		}
	}
	return slices.DeleteFunc(changes, func(ch memd.FactChange) bool { return gone[inFile{ch.Fact.ID, ch.Fact.File}] }), nil
}

// takeBack is the edit that takes back a line a commit added: the fact,
// unless another line holds it too (a person or another daemon wrote it
// again), when that line alone goes and the fact stays, as it would in
// the history replayed without the commit.
func takeBack(sh *gitstore.Shard, added memd.Fact) (gitstore.Edit, error) {
	lines, err := sh.FactLines(added.ID)
	if err != nil {
		return gitstore.Edit{}, err
	}
	if len(lines) > 1 && lastLike(lines, added) >= 0 {
		return gitstore.Edit{Op: gitstore.RemoveLine, Fact: memd.Fact{ID: added.ID, File: added.File, Date: added.Date}}, nil
	}
	return gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: added.ID}}, nil
}

// lastLike returns the index of the last of a fact's lines in f's file
// dated f's date, the one gitstore.RemoveLine takes; -1 when there is none.
func lastLike(lines []memd.Fact, f memd.Fact) int {
	at := -1
	for i, l := range lines {
		if l.File == f.File && l.Date == f.Date {
			at = i
		}
	}
	return at
}

// revertNote undoes the change commit c made to a note, when it changed
// one note and no fact, as memd's note edits do: the note goes back as it
// was before c, keeping what changed in it since (gitstore.UndoNote).
func (r Reverter) revertNote(sh *gitstore.Shard, c gitstore.Commit, out memd.Revert) (memd.Revert, error) {
	paths, err := sh.ChangedNotes(c)
	if err != nil || len(paths) != 1 || len(c.Parents) > 1 {
		return out, err
	}
	path := paths[0]
	var parent gitstore.Hash
	if len(c.Parents) == 1 {
		parent = c.Parents[0]
	}
	var before, after gitstore.NoteState
	if !parent.IsZero() {
		if before.Data, before.Exists, _, err = sh.Note(parent, path); err != nil {
			return out, err
		}
	}
	if after.Data, after.Exists, _, err = sh.Note(c.Hash, path); err != nil {
		return out, err
	}
	undo := gitstore.UndoNote(path, before, after)
	name := strings.TrimPrefix(path, gitstore.NotesDir+"/")
	now, ok := r.notes[path] // a dry run's earlier undo of it
	if !ok {
		if now.Data, now.Exists, _, err = sh.Note(gitstore.Hash{}, path); err != nil {
			return out, err
		}
	}
	if !leftOf(before, after, now) {
		return out, nil // undone already, or changed again since
	}
	if r.DryRun {
		next, remove, err := undo(now.Data, now.Exists)
		if err != nil {
			return out, err
		}
		if remove != !now.Exists || string(next) != string(now.Data) {
			out.Notes = []string{name}
		}
		if r.notes != nil {
			r.notes[path] = gitstore.NoteState{Data: next, Exists: !remove}
		}
		return out, nil
	}
	msg := Message(Subject(memd.OpRevert, c.Subject()), memd.Provenance{Op: memd.OpRevert, LearnedBy: r.LearnedBy, Reverts: c.Hash.String()})
	res, err := sh.Apply(gitstore.Change{Author: r.Author, Message: msg, Note: &gitstore.NoteChange{Path: path, Update: undo}})
	if err != nil {
		return out, err
	}
	if !res.Commit.IsZero() {
		out.Commit, out.Notes = res.Commit.String(), []string{name}
	}
	return out, nil
}

// preview is a shard's fact lines as a dry run of several reverts leaves
// them: what each would change is reckoned on what the ones before it
// changed, as the real reverts would find it.
type preview map[string][]memd.Fact // a fact's lines, by ID

// wouldChange is what undoing fact changes would do on HEAD (as p says it
// stands, when given), line by line as Revert does it (takeBack, then
// gitstore.RestoreLine): take back the lines added, the fact's every line
// unless another holds it, and the lines ownLines chose; put back the
// lines removed that their file lacks; then take back the lines
// retaughtLines chose.
func wouldChange(sh *gitstore.Shard, changes []memd.FactChange, ownLines, retaught []memd.Fact, p preview) ([]memd.FactChange, error) {
	out := []memd.FactChange{}
	if p == nil {
		// A fact the revert removes and restores (an edit that kept its ID)
		// is absent when its restore is reckoned.
		p = make(preview)
	}
	// In the order Revert makes them: removals of its own lines, then of
	// those taught elsewhere too, restores, then removals of the lines
	// taught again (marked by their ops).
	changes = slices.Clone(changes)
	slices.SortStableFunc(changes, func(a, b memd.FactChange) int { return strings.Compare(a.Op, b.Op) }) // "+" sorts before "-"
	restores := slices.IndexFunc(changes, func(ch memd.FactChange) bool { return ch.Op != "+" })
	if restores < 0 {
		restores = len(changes)
	}
	const elsewhereToo, taughtAgain = "+also", "-again"
	for _, f := range ownLines {
		changes = slices.Insert(changes, restores, memd.FactChange{Op: elsewhereToo, Fact: f})
		restores++
	}
	for _, f := range retaught {
		changes = append(changes, memd.FactChange{Op: taughtAgain, Fact: f})
	}
	for _, ch := range changes {
		lines, err := linesNow(sh, ch.Fact.ID, p)
		if err != nil {
			return nil, err
		}
		at := lastLike(lines, ch.Fact)
		switch {
		case (ch.Op == "+" || ch.Op == elsewhereToo) && len(lines) > 1 && at >= 0:
			out = append(out, memd.FactChange{Op: "-", Fact: lines[at]})
			p[ch.Fact.ID] = slices.Delete(slices.Clone(lines), at, at+1)
		case ch.Op == elsewhereToo:
		case ch.Op == taughtAgain:
			if at >= 0 {
				out = append(out, memd.FactChange{Op: "-", Fact: lines[at]})
				p[ch.Fact.ID] = slices.Delete(slices.Clone(lines), at, at+1)
			}
		case ch.Op == "+":
			for _, f := range lines {
				out = append(out, memd.FactChange{Op: "-", Fact: f})
			}
			p[ch.Fact.ID] = []memd.Fact{}
		case ch.Fact.File != "" && at < 0, ch.Fact.File == "" && len(lines) == 0:
			restored := ch.Fact
			out = append(out, memd.FactChange{Op: "+", Fact: restored})
			p[restored.ID] = append(slices.Clone(lines), restored)
		}
	}
	return out, nil
}

// linesNow is a fact's lines as a preview has them, or as HEAD has them.
func linesNow(sh *gitstore.Shard, id string, p preview) ([]memd.Fact, error) {
	if lines, ok := p[id]; ok {
		return lines, nil
	}
	return sh.FactLines(id)
}

func appendID(ids []string, id string) []string {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// reverts tracks, walking a shard newest first, which commits a revert
// that still stands undid. A Reverts trailer counts only when its commit's
// fact changes undo one of the named commit's (a push may carry any
// trailer; an empty commit claiming to revert undoes nothing).
type reverts struct {
	sh *gitstore.Shard
	by map[string]gitstore.Commit // commit → the revert naming it, seen first
}

func newReverts(sh *gitstore.Shard) *reverts {
	return &reverts{sh: sh, by: make(map[string]gitstore.Commit)}
}

// see records c, visited before any commit it may name.
func (rv *reverts) see(c gitstore.Commit, p memd.Provenance) error {
	if p.Reverts == "" {
		return nil
	}
	undone, err := rv.undone(c)
	if err != nil || undone {
		return err
	}
	if _, seen := rv.by[p.Reverts]; !seen {
		rv.by[p.Reverts] = c
	}
	return nil
}

// undone reports whether a standing revert undid c.
func (rv *reverts) undone(c gitstore.Commit) (bool, error) {
	r, ok := rv.by[c.Hash.String()]
	if !ok {
		return false, nil
	}
	return undoes(rv.sh, r, c)
}

// undoneFacts returns the facts whose change in c a standing revert
// undid, none if no revert stands for c.
func (rv *reverts) undoneFacts(c gitstore.Commit) (map[string]bool, error) {
	r, ok := rv.by[c.Hash.String()]
	if !ok {
		return nil, nil
	}
	dr, err := rv.sh.Diff(r)
	if err != nil {
		return nil, err
	}
	dc, err := rv.sh.Diff(c)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]bool)
	for _, x := range dc.Facts {
		for _, y := range dr.Facts {
			if x.Fact.ID == y.Fact.ID && x.Op != y.Op {
				ids[x.Fact.ID] = true
			}
		}
	}
	return ids, nil
}

// undoes reports whether commit r undoes one of c's fact changes: removes
// a fact c added, or adds one c removed.
func undoes(sh *gitstore.Shard, r, c gitstore.Commit) (bool, error) {
	dr, err := sh.Diff(r)
	if err != nil {
		return false, err
	}
	dc, err := sh.Diff(c)
	if err != nil {
		return false, err
	}
	for _, x := range dc.Facts {
		for _, y := range dr.Facts {
			if x.Fact.ID == y.Fact.ID && x.Op != y.Op {
				return true, nil
			}
		}
	}
	return false, nil
}

// leftOf reports whether anything of a commit's change of a note is left
// in the note as it stands: a line it added still there beyond the copies
// held before, or a line it removed still missing. Lines of white space
// alone say nothing. What the note holds decides, not a commit claiming
// to revert: a pushed commit could claim anything.
func leftOf(before, after, now gitstore.NoteState) bool {
	was, made, is := lineCounts(before), lineCounts(after), lineCounts(now)
	for l := range made {
		if strings.TrimSpace(l) != "" && made[l] > was[l] && is[l] > was[l] {
			return true
		}
	}
	for l := range was {
		if strings.TrimSpace(l) != "" && made[l] < was[l] && is[l] < was[l] {
			return true
		}
	}
	return false
}

// lineCounts counts a note's lines, each without its line end (a last
// line without one is the same line).
func lineCounts(n gitstore.NoteState) map[string]int {
	counts := make(map[string]int)
	if !n.Exists {
		return counts
	}
	for _, l := range strings.SplitAfter(string(n.Data), "\n") {
		if l != "" {
			counts[strings.TrimSuffix(l, "\n")]++
		}
	}
	return counts
}

// Undone reports whether a revert that still stands (not itself undone)
// undid commit h.
func Undone(sh *gitstore.Shard, h gitstore.Hash) (bool, error) {
	head, err := sh.Head()
	if err != nil {
		return false, err
	}
	rv := newReverts(sh)
	done := false
	err = sh.Walk(head, func(c gitstore.Commit) error {
		if c.Hash == h {
			var err error
			done, err = rv.undone(c)
			if err == nil {
				err = gitstore.ErrStop
			}
			return err
		}
		return rv.see(c, Parse(c.Message))
	})
	return done, err
}

// CitingCommits returns the commits of a shard whose Source-Message
// trailers name any of msgs and that are not already undone by a revert
// that still stands, newest first; cited is whether any commit ever cited
// one of them. With chat, a commit that names another chat is left out
// (message IDs are the caller's; two chats may reuse one); commits that
// name none, as episodes, and edits, which carry the messages of the
// version they rewrote, are kept.
func CitingCommits(sh *gitstore.Shard, msgs []string, chat string) (commits []gitstore.Hash, cited bool, err error) {
	head, err := sh.Head()
	if err != nil {
		return nil, false, err
	}
	rv := newReverts(sh)
	err = sh.Walk(head, func(c gitstore.Commit) error {
		p := Parse(c.Message)
		if err := rv.see(c, p); err != nil {
			return err
		}
		if !Cites(p, msgs, chat) {
			return nil
		}
		cited = true
		undone, err := rv.undone(c)
		if err != nil || undone {
			return err
		}
		commits = append(commits, c.Hash)
		return nil
	})
	return commits, cited, err
}

// Cites reports whether a commit's provenance names any of msgs as its
// source, in chat when one is named: a commit naming no chat (an episode
// of several chats' turns) and an edit (which carries the messages of the
// version it rewrote) are taken as in any chat.
func Cites(p memd.Provenance, msgs []string, chat string) bool {
	inChat := chat == "" || p.SourceChat == "" || p.SourceChat == chat || p.Op == memd.OpEdit
	return inChat && slices.ContainsFunc(p.SourceMessages, func(m string) bool { return slices.Contains(msgs, m) })
}

// RevertMessages undoes every commit that cites any of msgs (the messages
// of one exchange, or one message) in the given shards (those the caller
// may write), newest first in each shard, each commit once. Nothing left to
// undo is an empty list; ENOTFOUND when no commit ever cited them.
func (r Reverter) RevertMessages(shards []*gitstore.Shard, msgs []string, chat string) ([]memd.Revert, error) {
	out := []memd.Revert{}
	cited := false
	for _, sh := range shards {
		commits, ever, err := CitingCommits(sh, msgs, chat)
		if err != nil {
			return out, err
		}
		if r.DryRun {
			r.preview, r.notes = make(preview), make(map[string]gitstore.NoteState)
		}
		cited = cited || ever
		// What the rest of the history changed again is reckoned once
		// for all the commits while HEAD moves by these reverts alone. A
		// commit someone else makes meanwhile may teach again what a
		// revert would take: then it is reckoned anew for those left.
		us, err := readUndoing(sh, commits)
		if err != nil {
			return out, err
		}
		var head gitstore.Hash
		var again map[gitstore.Hash]map[string]agreed
		for n, u := range us {
			h := u.c.Hash
			now, err := sh.Head()
			if err != nil {
				return out, err
			}
			if again == nil || now != head {
				if again, err = changedAgain(sh, now, us[n:], us); err != nil {
					return out, err
				}
				head = now
			}
			rv, err := r.revert(sh, u, again[h])
			if memd.ErrorCode(err) == memd.ECONFLICT {
				// One commit that cannot be undone does not keep the others.
				out = append(out, memd.Revert{Shard: sh.ID(), Reverted: h.String(), Changes: []memd.FactChange{}, Refused: memd.ErrorMessage(err)})
				continue
			}
			if err != nil {
				return out, err
			}
			if rv.Commit != "" {
				// The revert moved HEAD: by itself alone only if it sits
				// right on the HEAD walked from.
				c, err := sh.ReadCommit(gitstore.NewHash(rv.Commit))
				if err != nil {
					return out, err
				}
				if len(c.Parents) == 1 && c.Parents[0] == head {
					head = c.Hash
				}
			}
			if f := testHookAfterRevert.Load(); f != nil {
				(*f)()
			}
			if len(rv.Changes) == 0 && len(rv.Notes) == 0 {
				continue // nothing of it stands
			}
			out = append(out, rv)
		}
	}
	if !cited {
		return out, memd.Errorf(memd.ENOTFOUND, "no commit cites source message %s in the shards you may write", quoteAll(msgs))
	}
	return out, nil
}

// testHookAfterRevert, when set, runs after each revert RevertMessages
// makes: a test commits there as someone else would meanwhile.
var testHookAfterRevert atomic.Pointer[func()]

func quoteAll(msgs []string) string {
	q := make([]string, len(msgs))
	for i, m := range msgs {
		q[i] = fmt.Sprintf("%q", m)
	}
	return strings.Join(q, ", ")
}

// RestoreMessage is the message of the commit that puts back facts, or a
// note, a git commit dropped by committing a stale index (see gitstore): a
// revert of that commit's removals.
func RestoreMessage(dropper gitstore.Commit, restored, removed []memd.Fact, note string) string {
	by := dropper.Hash.String()[:12]
	if note != "" {
		subject := fmt.Sprintf("revert: restore %s, which %s took back by committing a stale index", note, by)
		return Message(subject, memd.Provenance{Op: memd.OpRevert, LearnedBy: memd.LearnedExplicit, Reverts: dropper.Hash.String()})
	}
	var ids []string
	for _, f := range slices.Concat(restored, removed) {
		ids = append(ids, f.ID)
	}
	var subject string
	switch {
	case len(removed) == 0:
		subject = fmt.Sprintf("revert: restore %d %s that %s dropped by committing a stale index", len(restored), plural(len(restored), "fact", "facts"), by)
	case len(restored) == 0:
		subject = fmt.Sprintf("revert: take back %d %s that %s brought back by committing a stale index", len(removed), plural(len(removed), "fact", "facts"), by)
	default:
		subject = fmt.Sprintf("revert: restore %d and take back %d facts that %s dropped and brought back by committing a stale index", len(restored), len(removed), by)
	}
	return Message(subject, memd.Provenance{Op: memd.OpRevert, FactIDs: ids, LearnedBy: memd.LearnedExplicit, Reverts: dropper.Hash.String()})
}

// MergeMessage is the message of a merge commit memd makes when it
// integrates a remote's or a push's commits: a subject, then trailers
// naming the commit merged and each file merged with conflict markers.
func MergeMessage(commits int, from string, theirs gitstore.Hash, conflicts []string) string {
	subject := fmt.Sprintf("%s: %d %s from %s", memd.OpMerge, commits, plural(commits, "commit", "commits"), from)
	quoted := make([]string, len(conflicts))
	for i, path := range conflicts {
		quoted[i] = quotePath(path)
	}
	return Message(subject, memd.Provenance{Op: memd.OpMerge, Merged: theirs.String(), Conflicts: quoted})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
