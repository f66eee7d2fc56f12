package provenance

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// The windows learning statistics count undoings in.
const (
	week  = 7 * 24 * time.Hour
	month = 30 * 24 * time.Hour
)

// learnedFact is one fact a model wrote, followed until something undoes
// it.
type learnedFact struct {
	row    rowKey
	fact   memd.UndoneFact
	undone bool
}

type rowKey struct{ model, prompt, agent string }

// madeByAModel reports whether a commit is a model's addition of a fact:
// the learner's, or a synthesis merge or rewrite.
func madeByAModel(p memd.Provenance) bool {
	switch p.LearnedBy {
	case memd.LearnedLearner, memd.LearnedEpisode:
		return p.Op == memd.OpRemember && len(p.FactIDs) > 0
	case memd.LearnedSynthesis:
		return (p.Op == memd.OpRemember || p.Op == memd.OpEdit) && len(p.FactIDs) > 0
	}
	return false
}

// Learning counts, per model, prompt and agent, the facts models learned
// in the query's period and those later undone: reverted by anyone, or
// forgotten or edited by a person. It reads commit trailers alone, oldest
// commit first in each shard; names labels prompts this memd knows.
func Learning(shards []*gitstore.Shard, q memd.LearningQuery, names map[string]string) (memd.LearningStats, error) {
	out := memd.LearningStats{From: q.From, To: q.To, Rows: []memd.LearningRow{}}
	rows := make(map[rowKey]*memd.LearningRow)
	for _, sh := range shards {
		facts, err := learnedIn(sh)
		if err != nil {
			return out, err
		}
		for _, f := range facts {
			day := memd.DateOf(f.fact.LearnedAt.UTC())
			if !q.From.IsZero() && day.Before(q.From) || !q.To.IsZero() && q.To.Before(day) ||
				q.Agent != "" && f.row.agent != q.Agent || q.Model != "" && f.row.model != q.Model || q.Prompt != "" && f.row.prompt != q.Prompt {
				continue
			}
			r := rows[f.row]
			if r == nil {
				r = &memd.LearningRow{Model: f.row.model, Prompt: f.row.prompt, PromptName: names[f.row.prompt], Agent: f.row.agent, Facts: []memd.UndoneFact{}}
				rows[f.row] = r
			}
			r.Learned++
			if !f.undone {
				continue
			}
			r.Facts = append(r.Facts, f.fact)
			after := f.fact.At.Sub(f.fact.LearnedAt)
			if after <= week {
				count(&r.Within7, f.fact.How)
			}
			if after <= month {
				count(&r.Within30, f.fact.How)
			}
		}
	}
	for _, r := range rows {
		r.Within7.Rate = rate(r.Within7.Total, r.Learned)
		r.Within30.Rate = rate(r.Within30.Total, r.Learned)
		slices.SortFunc(r.Facts, func(a, b memd.UndoneFact) int { return b.At.Compare(a.At) })
		out.Rows = append(out.Rows, *r)
	}
	slices.SortFunc(out.Rows, func(a, b memd.LearningRow) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Prompt, b.Prompt), cmp.Compare(a.Agent, b.Agent))
	})
	return out, nil
}

func count(u *memd.Undone, how string) {
	switch how {
	case memd.UndoneReverted:
		u.Reverted++
	case memd.UndoneForgotten:
		u.Forgotten++
	case memd.UndoneEdited:
		u.Edited++
	case memd.UndoneRejected:
		u.Rejected++
	}
	u.Total++
}

func rate(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// learnedIn follows, through a shard's history, every fact a model added
// to it, and what first undid it.
//
// It is long because it is one walk over history, matching each removal to
// what it undid.
func learnedIn(sh *gitstore.Shard) ([]*learnedFact, error) {
	head, err := sh.Head()
	if err != nil {
		return nil, err
	}
	var commits []gitstore.Commit
	err = sh.Walk(head, func(c gitstore.Commit) error {
		commits = append(commits, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var all []*learnedFact
	byCommit := make(map[string]*learnedFact) // by the commit that learned it
	live := make(map[string]*learnedFact)     // by fact ID, while not undone
	undo := func(f *learnedFact, how string, c gitstore.Commit) {
		if f == nil || f.undone {
			return
		}
		f.undone = true
		f.fact.How, f.fact.Commit, f.fact.By, f.fact.At = how, c.Hash.String(), c.Author.Name, c.Time
		if live[f.fact.Fact] == f {
			delete(live, f.fact.Fact)
		}
	}
	for i := len(commits) - 1; i >= 0; i-- {
		c := commits[i]
		p := Parse(c.Message)
		byPerson := p.LearnedBy == memd.LearnedPerson
		switch {
		case madeByAModel(p):
			f := &learnedFact{
				row: rowKey{p.Model, p.Prompt, c.Author.Name},
				fact: memd.UndoneFact{Shard: sh.ID(), Fact: p.FactIDs[0], Subject: strings.TrimPrefix(c.Subject(), p.Op+": "),
					Learned: c.Hash.String(), LearnedAt: c.Time},
			}
			all = append(all, f)
			byCommit[f.fact.Learned] = f
			// A synthesis merge or rewrite ends the lines of the facts it
			// replaces, against no one.
			if p.Op == memd.OpEdit {
				for _, id := range p.FactIDs[1:] {
					delete(live, id)
				}
			}
			live[f.fact.Fact] = f
		case p.Op == memd.OpRevert && p.Reverts != "":
			undo(byCommit[p.Reverts], memd.UndoneReverted, c)
		case p.Op == memd.OpForget:
			// Only a person's forget is a verdict on the model; anyone's
			// ends the line the model wrote.
			for _, id := range p.FactIDs {
				if byPerson {
					undo(live[id], memd.UndoneForgotten, c)
				}
				delete(live, id)
			}
		case p.Op == memd.OpEdit && p.Replaces != "":
			if byPerson {
				undo(live[p.Replaces], memd.UndoneEdited, c)
			}
			delete(live, p.Replaces)
		}
	}
	// Proposals a person rejected in review never reached main: each
	// counts as learned and undone, as a revert would.
	err = sh.Rejections(func(rec, prop gitstore.Commit) error {
		p := Parse(prop.Message)
		if !madeByAModel(p) {
			return nil
		}
		by := Parse(rec.Message).ReviewedBy
		if by == "" {
			by = rec.Author.Name
		}
		all = append(all, &learnedFact{
			row: rowKey{p.Model, p.Prompt, prop.Author.Name},
			fact: memd.UndoneFact{Shard: sh.ID(), Fact: p.FactIDs[0], Subject: strings.TrimPrefix(prop.Subject(), p.Op+": "),
				Learned: prop.Hash.String(), LearnedAt: prop.AuthorTime, How: memd.UndoneRejected, Commit: rec.Hash.String(), By: by, At: rec.Time},
			undone: true,
		})
		return nil
	})
	return all, err
}

// Growth is how a shard's facts grew: per day of commit time, the facts
// its commits added and removed, oldest day first. It follows the first
// parents from HEAD, so what a merge brings in is counted once, on the
// merge, from its diff. With since (a HEAD the caller has counted up to),
// it counts only the commits after it, when since is on that line; whole
// says it counted from the root instead.
func Growth(sh *gitstore.Shard, since gitstore.Hash) (days []memd.GrowthDay, head gitstore.Hash, whole bool, err error) {
	head, err = sh.Head()
	if err != nil {
		return nil, head, false, err
	}
	byDay := make(map[memd.Date]*memd.GrowthDay)
	for h := head; !h.IsZero(); {
		if h == since {
			return sorted(byDay), head, false, nil
		}
		c, err := sh.ReadCommit(h)
		if err != nil {
			return nil, head, false, err
		}
		if err := countDay(byDay, sh, c); err != nil {
			return nil, head, false, err
		}
		h = gitstore.Hash{}
		if len(c.Parents) > 0 {
			h = c.Parents[0]
		}
	}
	return sorted(byDay), head, true, nil
}

func countDay(byDay map[memd.Date]*memd.GrowthDay, sh *gitstore.Shard, c gitstore.Commit) error {
	added, removed, err := factsChanged(sh, c)
	if err != nil || added+removed == 0 {
		return err
	}
	day := memd.DateOf(c.Time.UTC())
	g := byDay[day]
	if g == nil {
		g = &memd.GrowthDay{Day: day}
		byDay[day] = g
	}
	g.Added += added
	g.Removed += removed
	return nil
}

func sorted(byDay map[memd.Date]*memd.GrowthDay) []memd.GrowthDay {
	out := make([]memd.GrowthDay, 0, len(byDay))
	for _, g := range byDay {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b memd.GrowthDay) int { return cmp.Compare(a.Day.Days(), b.Day.Days()) })
	return out
}

// factsChanged counts the facts a commit added and removed against its
// first parent: from the trailers of memd's own single-fact commits, which
// say it exactly, and from the diff of every other.
func factsChanged(sh *gitstore.Shard, c gitstore.Commit) (added, removed int, err error) {
	if p := Parse(c.Message); madeByMemd(c, p) && len(p.FactIDs) > 0 {
		switch p.Op {
		case memd.OpRemember:
			return len(p.FactIDs), 0, nil
		case memd.OpForget:
			return 0, len(p.FactIDs), nil
		case memd.OpEdit:
			return 1, 1, nil
		}
	}
	d, err := sh.Diff(c)
	if err != nil {
		return 0, 0, err
	}
	for _, ch := range d.Facts {
		if ch.Op == "+" {
			added++
		} else {
			removed++
		}
	}
	return added, removed, nil
}
