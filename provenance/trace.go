package provenance

import (
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// DescribeCommit is Describe of a commit of sh, with the diff it makes.
func DescribeCommit(sh *gitstore.Shard, c gitstore.Commit) (memd.Commit, error) {
	d, err := sh.Diff(c)
	if err != nil {
		return memd.Commit{}, err
	}
	return Describe(sh.ID(), c, d), nil
}

// Describe turns a commit and its diff into the record every surface shows.
func Describe(id memd.ShardID, c gitstore.Commit, d gitstore.Diff) memd.Commit {
	parents := make([]string, len(c.Parents))
	for i, p := range c.Parents {
		parents[i] = p.String()
	}
	var notes []string
	for _, f := range d.Files {
		if !gitstore.IsFactFile(f) {
			notes = append(notes, f)
		}
	}
	changes := d.Facts
	if changes == nil {
		changes = []memd.FactChange{}
	}
	return memd.Commit{
		Shard:      id,
		Hash:       c.Hash.String(),
		Parents:    parents,
		Author:     memd.Person{Name: c.Author.Name, Email: c.Author.Email},
		Time:       c.Time,
		Subject:    c.Subject(),
		Provenance: Parse(c.Message),
		Changes:    changes,
		Notes:      notes,
	}
}

// madeByMemd reports whether a commit's trailers can be trusted to list the
// facts it changed: memd committed it and it names an operation.
func madeByMemd(c gitstore.Commit, p memd.Provenance) bool {
	return c.ByMemd() && p.Op != ""
}

// touches reports whether a commit may change fact id, skipping the diff
// for memd's own commits whose trailers name other facts.
func touches(c gitstore.Commit, p memd.Provenance, id string) bool {
	return !madeByMemd(c, p) || slices.Contains(p.FactIDs, id)
}

// Trace returns the provenance of a fact: every commit that changed it,
// newest first, down to the commit that introduced it as it stands (or, for
// a fact no longer present, as it last stood); a commit a standing revert
// undid introduced nothing of a fact present. It is what git blame does for
// one line, returned as data. Where that commit is an edit, the walk goes on
// with the fact it replaced, and where it is a revert that put the fact
// back, with the same fact, down to where the first version was learned.
// ENOTFOUND if the shard never held the fact.
//
// It is long because one walk follows the versions back, its closure
// keeping which version it follows and where each was introduced.
func Trace(sh *gitstore.Shard, id string) (memd.Trace, error) {
	tr := memd.Trace{History: []memd.Commit{}, Chain: []memd.Commit{}}
	if f, err := sh.Fact(id); err == nil {
		tr.Fact, tr.Present = f, true
	} else if memd.ErrorCode(err) != memd.ENOTFOUND {
		return tr, err
	}
	// A fact present is traced from the line the index holds of it, the
	// newest (the first of those at one date): a commit that added
	// another line, or one deleted since, introduced nothing of it.
	var held memd.Fact
	if tr.Present {
		lines, err := sh.FactLines(id)
		if err != nil {
			return tr, err
		}
		for _, l := range lines {
			if held.ID == "" || held.Date.Before(l.Date) {
				held = l
			}
		}
		if held.ID != "" {
			tr.Fact = held
		}
	}
	stands := func(f memd.Fact) bool {
		return f.ID != id || !tr.Present || f.File == held.File && f.Date == held.Date
	}
	head, err := sh.Head()
	if err != nil {
		return tr, err
	}
	want := id       // the version being followed
	var chain []int  // indexes into History of each version's introduction
	introduced := -1 // index into History of what git blame names
	rv := newReverts(sh)
	err = sh.Walk(head, func(c gitstore.Commit) error {
		p := Parse(c.Message)
		if err := rv.see(c, p); err != nil {
			return err
		}
		if !touches(c, p, want) {
			return nil
		}
		d, err := sh.Diff(c)
		if err != nil {
			return err
		}
		var mine []memd.FactChange
		added := false
		for _, ch := range d.Facts {
			if ch.Fact.ID == want || p.Op == memd.OpEdit && ch.Fact.ID == p.Replaces {
				mine = append(mine, ch)
				added = added || ch.Op == "+" && ch.Fact.ID == want && stands(ch.Fact)
			}
		}
		if len(mine) == 0 {
			return nil
		}
		d.Facts = mine
		tr.History = append(tr.History, Describe(sh.ID(), c, d))
		if !tr.Present && tr.Fact.ID == "" {
			tr.Fact = factIn(mine, want)
		}
		// A line a standing revert took back introduced nothing that
		// stands: a fact present is held by an older line. (A fact gone
		// is traced as it last stood, reverted or not.)
		if tr.Present {
			if undone, err := rv.undoneFacts(c); err != nil || undone[want] {
				return err
			}
		}
		if !added {
			return nil
		}
		if introduced < 0 {
			introduced = len(tr.History) - 1
		}
		if p.Op == memd.OpRevert {
			return nil // put back as it stood before: go on to where it first stood
		}
		chain = append(chain, len(tr.History)-1)
		if p.Op == memd.OpEdit && p.Replaces != "" && memd.ValidFactID(p.Replaces) && len(chain) < maxChain {
			want = p.Replaces
			return nil
		}
		return gitstore.ErrStop
	})
	if err != nil {
		return tr, err
	}
	if len(tr.History) == 0 {
		return tr, memd.Errorf(memd.ENOTFOUND, "shard %s has no history of fact %s", sh.ID(), id)
	}
	if len(chain) == 0 && introduced >= 0 {
		chain = append(chain, introduced)
	}
	for _, i := range chain {
		tr.Chain = append(tr.Chain, tr.History[i])
	}
	if introduced >= 0 {
		tr.Introduced = &tr.History[introduced]
	}
	return tr, nil
}

// maxChain bounds how many versions a trace follows back through edits.
const maxChain = 1000

// factIn returns the change's fact with id, the first change's otherwise.
func factIn(changes []memd.FactChange, id string) memd.Fact {
	for _, ch := range changes {
		if ch.Fact.ID == id {
			return ch.Fact
		}
	}
	return changes[0].Fact
}
