package index

import (
	"errors"
	"slices"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Following the commits from the one a shard was indexed at to HEAD.

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
