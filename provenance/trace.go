package provenance

import (
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

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
	return c.Committer == gitstore.Committer && p.Op != ""
}

// touches reports whether a commit may change fact id, skipping the diff
// for memd's own commits whose trailers name other facts.
func touches(c gitstore.Commit, p memd.Provenance, id string) bool {
	return !madeByMemd(c, p) || slices.Contains(p.FactIDs, id)
}

// Trace returns the provenance of a fact: every commit that changed it,
// newest first, down to the commit that introduced it as it stands (or, for
// a fact no longer present, as it last stood). It is what git blame does for
// one line, returned as data. ENOTFOUND if the shard never held the fact.
func Trace(sh *gitstore.Shard, id string) (memd.Trace, error) {
	tr := memd.Trace{History: []memd.Commit{}}
	if f, err := sh.Fact(id); err == nil {
		tr.Fact, tr.Present = f, true
	} else if memd.ErrorCode(err) != memd.ENOTFOUND {
		return tr, err
	}
	head, err := sh.Head()
	if err != nil {
		return tr, err
	}
	err = sh.Walk(head, func(c gitstore.Commit) error {
		p := Parse(c.Message)
		if !touches(c, p, id) {
			return nil
		}
		d, err := sh.Diff(c)
		if err != nil {
			return err
		}
		var mine []memd.FactChange
		for _, ch := range d.Facts {
			if ch.Fact.ID == id {
				mine = append(mine, ch)
			}
		}
		if len(mine) == 0 {
			return nil
		}
		d.Facts = mine
		rec := Describe(sh.ID(), c, d)
		tr.History = append(tr.History, rec)
		if !tr.Present && tr.Fact.ID == "" {
			tr.Fact = mine[0].Fact
		}
		for _, ch := range mine {
			if ch.Op == "+" {
				tr.Introduced = &tr.History[len(tr.History)-1]
				return gitstore.ErrStop
			}
		}
		return nil
	})
	if err != nil {
		return tr, err
	}
	if len(tr.History) == 0 {
		return tr, memd.Errorf(memd.ENOTFOUND, "shard %s has no history of fact %s", sh.ID(), id)
	}
	if tr.Introduced != nil {
		// History may have grown (and moved) since the pointer was taken.
		tr.Introduced = &tr.History[len(tr.History)-1]
	}
	return tr, nil
}
