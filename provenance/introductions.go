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
	type touch struct {
		c gitstore.Commit
		p memd.Provenance
	}
	touched := make(map[string]touch) // facts of want a commit touched but wrote no standing line of
	// removed holds the facts of want a newer commit forgot, every line of
	// them: an older commit's line of it is not the one that stands,
	// which a newer commit wrote. (A revert's removal of the held line
	// says nothing: a copy of it at the same place may stand.)
	removed := make(map[string]bool)
	rv := newReverts(sh)
	n := 0
	err := sh.Walk(head, func(c gitstore.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n++; progress != nil && n%1000 == 0 {
			progress(n)
		}
		p := Parse(c.Message)
		if err := rv.see(c, p); err != nil {
			return err
		}
		undone, err := rv.undoneFacts(c)
		if err != nil {
			return err
		}
		// wrote is a line c added of fact id, nil where its trailers
		// name the fact.
		introduced := func(id string, wrote *memd.Fact) error {
			if !want[id] {
				return nil
			}
			if undone[id] || removed[id] || wrote != nil && !wroteHeld(wrote, id, held) {
				if _, ok := touched[id]; !ok {
					touched[id] = touch{c, p}
				}
				return nil
			}
			delete(want, id)
			delete(touched, id)
			return fn(id, c, p)
		}
		switch {
		case !madeByMemd(c, p):
			// What it added, a file at a time: an import of a million
			// facts is never held whole.
			return stopWhenDone(want, sh.AddedFacts(c, func(f memd.Fact) error { return introduced(f.ID, &f) }))
		case p.Op == memd.OpRevert:
			d, err := sh.Diff(c)
			if err != nil {
				return err
			}
			for _, ch := range d.Facts {
				if ch.Op == "+" {
					err = introduced(ch.Fact.ID, &ch.Fact)
				} else if want[ch.Fact.ID] {
					err = introduced(ch.Fact.ID, &memd.Fact{}) // no line that stands
				}
				if err != nil {
					return err
				}
			}
		case p.Op == memd.OpForget:
			for _, id := range p.FactIDs {
				if err := introduced(id, &memd.Fact{}); err != nil {
					return err
				}
				if want[id] {
					removed[id] = true
				}
			}
		case p.Op != memd.OpMerge: // a merge's trailers name no fact: its commits are walked
			for _, id := range p.FactIDs {
				var err error
				if mayHaveWritten(p, id, held) {
					err = introduced(id, nil)
				} else {
					err = introduced(id, &memd.Fact{}) // another line
				}
				if err != nil {
					return err
				}
			}
		}
		return stopWhenDone(want, nil)
	})
	if progress != nil {
		progress(n)
	}
	if err != nil {
		return err
	}
	for id, t := range touched {
		delete(want, id)
		if err := fn(id, t.c, t.p); err != nil {
			return err
		}
	}
	return nil
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
