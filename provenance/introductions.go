package provenance

import (
	"context"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// Introductions walks a shard's history from head, newest first, and calls
// fn for each fact of want with the commit that wrote the line of it that
// held names (the line head holds: its file, date and tier). That is what
// git blame names and Trace calls Introduced: the newest commit that added
// that line, but for one whose change of the fact a standing revert undid.
// A commit that only took a line of the fact away (a revert of a commit
// that wrote it again, a person deleting a copy), or wrote another line of
// it, wrote nothing that stands; nor did one older than a forget of it.
// memd's commits name their facts in trailers, taken as writing the line
// (of the tier they name, for a commit of one fact); its reverts, which may
// add or take away, and others' commits are read for the lines they added.
// Each fact found leaves want, and the walk ends when none is left. A fact
// whose line no commit is found to have written (a history pushed with
// claims its changes do not bear out) is given the newest commit that
// touched it, so that every fact is attributed. progress, when given, is
// told how many commits have been read.
func Introductions(ctx context.Context, sh *gitstore.Shard, head gitstore.Hash, want map[string]bool, held func(id string) memd.Fact,
	progress func(int), fn func(id string, c gitstore.Commit, p memd.Provenance) error) error {
	w := &introductions{sh: sh, want: want, held: held, fn: fn,
		touched: make(map[string]step), removed: make(map[string]bool), rv: newReverts(sh)}
	n := 0
	err := sh.Walk(head, func(c gitstore.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n++; progress != nil && n%1000 == 0 {
			progress(n)
		}
		return w.read(c)
	})
	if progress != nil {
		progress(n)
	}
	if err != nil {
		return err
	}
	for id, t := range w.touched {
		delete(want, id)
		if err := fn(id, t.c, t.p); err != nil {
			return err
		}
	}
	return nil
}

// introductions is one walk of Introductions.
type introductions struct {
	sh   *gitstore.Shard
	want map[string]bool
	held func(id string) memd.Fact
	fn   func(id string, c gitstore.Commit, p memd.Provenance) error
	// touched holds the facts of want a commit touched but wrote no
	// standing line of: the newest such commit, for a fact no commit is
	// found to have written.
	touched map[string]step
	// removed holds the facts of want a newer commit forgot, every line of
	// them: an older commit's line of it is not the one that stands,
	// which a newer commit wrote. (A revert's removal of the held line
	// says nothing: a copy of it at the same place may stand.)
	removed map[string]bool
	rv      *reverts
}

// step is a commit of the walk: its trailers, and the facts whose change
// in it a standing revert undid.
type step struct {
	c      gitstore.Commit
	p      memd.Provenance
	undone map[string]bool
}

// read credits the facts of want whose held line commit c wrote, and
// ends the walk once none is left.
func (w *introductions) read(c gitstore.Commit) error {
	p := Parse(c.Message)
	if err := w.rv.see(c, p); err != nil {
		return err
	}
	undone, err := w.rv.undoneFacts(c)
	if err != nil {
		return err
	}
	at := step{c, p, undone}
	switch {
	case !madeByMemd(c, p):
		// What it added, a file at a time: an import of a million
		// facts is never held whole.
		return stopWhenDone(w.want, w.sh.AddedFacts(c, func(f memd.Fact) error { return w.introduced(at, f.ID, &f) }))
	case p.Op == memd.OpRevert:
		err = w.readRevert(at)
	case p.Op == memd.OpForget:
		for _, id := range p.FactIDs {
			if err = w.introduced(at, id, &memd.Fact{}); err != nil {
				break
			}
			if w.want[id] {
				w.removed[id] = true
			}
		}
	case p.Op != memd.OpMerge: // a merge's trailers name no fact: its commits are walked
		for _, id := range p.FactIDs {
			wrote := &memd.Fact{} // another line
			if mayHaveWritten(p, id, w.held) {
				wrote = nil
			}
			if err = w.introduced(at, id, wrote); err != nil {
				break
			}
		}
	}
	return stopWhenDone(w.want, err)
}

// readRevert credits the lines a revert added back; one it took away of
// a fact of want stands no more.
func (w *introductions) readRevert(at step) error {
	d, err := w.sh.Diff(at.c)
	if err != nil {
		return err
	}
	for _, ch := range d.Facts {
		if ch.Op == "+" {
			err = w.introduced(at, ch.Fact.ID, &ch.Fact)
		} else if w.want[ch.Fact.ID] {
			err = w.introduced(at, ch.Fact.ID, &memd.Fact{}) // no line that stands
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// introduced credits the commit of at with fact id, if it is of want and
// the commit wrote its held line: wrote is a line the commit added of it,
// nil where its trailers name the fact.
func (w *introductions) introduced(at step, id string, wrote *memd.Fact) error {
	if !w.want[id] {
		return nil
	}
	if at.undone[id] || w.removed[id] || wrote != nil && !wroteHeld(wrote, id, w.held) {
		if _, ok := w.touched[id]; !ok {
			w.touched[id] = step{c: at.c, p: at.p}
		}
		return nil
	}
	delete(w.want, id)
	delete(w.touched, id)
	return w.fn(id, at.c, at.p)
}

// wroteHeld tells whether a line written is the line of fact id held names.
func wroteHeld(wrote *memd.Fact, id string, held func(id string) memd.Fact) bool {
	h := held(id)
	return wrote.File == h.File && wrote.Date == h.Date
}

// mayHaveWritten tells whether a memd commit writing one fact, in the tier
// its trailers name, may have written the line of it held: a commit
// writing the fact in another tier wrote another line (one a merge
// dropped, one moved since).
func mayHaveWritten(p memd.Provenance, id string, held func(id string) memd.Fact) bool {
	return p.Tier == "" || len(p.FactIDs) != 1 || held(id).Tier == p.Tier
}

// stopWhenDone ends a walk once want is empty, or with err.
func stopWhenDone(want map[string]bool, err error) error {
	if err == nil && len(want) == 0 {
		return gitstore.ErrStop
	}
	return err
}
