package provenance

import (
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// How a commit changed a fact: taught it (a line added), took it away (a
// line removed), or rewrote it where it stood (both, one ID: its case or
// its date).
const (
	taught    = "+"
	removed   = "-"
	rewritten = "rewritten"
)

// lineAt names a fact's line by its file and date, as RemoveLine does.
type lineAt struct {
	file string
	date memd.Date
}

// factChange is how a commit changed a fact, and the lines it wrote.
type factChange struct {
	op          string
	wrote, took []lineAt
	byMemd      bool // memd's own commit, which writes no line of a fact it holds
}

// factChanges returns how a diff changed each fact it touches.
func factChanges(d gitstore.Diff) map[string]factChange {
	out := make(map[string]factChange, len(d.Facts))
	for _, ch := range d.Facts {
		fc, seen := out[ch.Fact.ID]
		if !seen {
			fc.op = ch.Op
		} else if fc.op != ch.Op {
			fc.op = rewritten
		}
		if l := (lineAt{ch.Fact.File, ch.Fact.Date}); ch.Op == "+" {
			fc.wrote = append(fc.wrote, l)
		} else {
			fc.took = append(fc.took, l)
		}
		out[ch.Fact.ID] = fc
	}
	return out
}

// agreed is how the rest of the history changed a fact as the reverted
// commit did: taught it too, with the lines those teachings wrote, or
// removed it too (op); or, for a fact the commit removed and the rest
// did not (op ""), the lines taught again below the commit since, which
// the history without the removal would not hold: taught while the fact
// stood, they would have added nothing.
type agreed struct {
	op       string
	wrote    []lineAt
	retaught []lineAt
}

// changedAgain returns, for each commit of us, the facts it taught or
// took away that the rest of the history taught or took away too: a
// revert of the commit leaves each as that history has it, as a replay of
// the history without the commit would.
//
// The rest of the history is every commit HEAD reaches and the commit
// does not (git's commit..HEAD): those after it, and those of another
// line merged in (another daemon's, a person's clone), ordered by the
// history rather than by commit times (a burst of commits shares one
// second, and another machine's clock may be off). For a fact the commit
// taught, what counts are the last changes of it in the rest (those no
// other change of the fact comes after): a fact another line taught and
// then forgot was taken away there, and one it forgot and taught again
// stands there. It stands by another teaching, or by a rewrite on a line
// the commit is not below (the fact stood there without it); a rewrite
// below it, of what it taught or of what another line taught too, passes
// the question on to what it rewrote. A fact the commit took away stays
// gone by a removal after it (a removal takes away every line the fact
// has), or by another line's last change removing it too, or by a removal
// of the very lines it took that no change after wrote again. An edit of the
// commit's own (a rewrite) is never counted here. Merges pass on what
// their lines did; a revert's changes do not count (it puts a fact back
// as it stood, taught by what taught it before), nor those of a commit a
// standing revert undid, nor those of the commits undone together with it
// (together: the history replayed is without all of them).
func changedAgain(sh *gitstore.Shard, head gitstore.Hash, us, together []undoing) (map[gitstore.Hash]map[string]agreed, error) {
	out := make(map[gitstore.Hash]map[string]agreed, len(us))
	facts := make(map[string]bool) // the facts any of us taught or removed
	did := make(map[gitstore.Hash]map[string]factChange, len(together))
	for _, u := range together {
		did[u.c.Hash] = factChanges(u.d)
	}
	for _, u := range us {
		out[u.c.Hash] = make(map[string]agreed)
		for id, fc := range did[u.c.Hash] {
			if fc.op != rewritten {
				facts[id] = true
			}
		}
	}
	if len(facts) == 0 {
		return out, nil
	}
	rests, walked, err := restsOf(sh, head, us)
	if err != nil {
		return nil, err
	}
	skip := make(map[gitstore.Hash]bool, len(together))
	for _, u := range together {
		skip[u.c.Hash] = true
	}
	changes := make(map[gitstore.Hash]map[string]factChange) // of every commit read, those that count
	for _, w := range walked {
		if err := countChanges(sh, w.commits, facts, skip, changes); err != nil {
			return nil, err
		}
	}
	for _, u := range us {
		rest := rests[u.c.Hash]
		again := out[u.c.Hash]
		for id, fc := range did[u.c.Hash] {
			if fc.op == rewritten {
				continue
			}
			a, ok := rest.lastAgreeing(u.c.Hash, id, fc, changes)
			if len(a.retaught) > 0 && taughtBefore(u, id, together, did, rest) {
				// What it removed goes back and away again with the
				// teaching undone with it: the lines taught since stay.
				a.retaught = nil
				ok = a.op != ""
			}
			if ok {
				again[id] = a
			}
		}
	}
	return out, nil
}

// taughtBefore reports whether each line of fact id that u removed was
// written by a commit undone together with u, before it in the history:
// then nothing u removed stays once they are undone.
func taughtBefore(u undoing, id string, together []undoing, did map[gitstore.Hash]map[string]factChange, r *rest) bool {
	return !slices.ContainsFunc(u.d.Facts, func(ch memd.FactChange) bool {
		if ch.Fact.ID != id || ch.Op != "-" {
			return false
		}
		l := lineAt{ch.Fact.File, ch.Fact.Date}
		return !slices.ContainsFunc(together, func(t undoing) bool {
			return t.c.Hash != u.c.Hash && !r.has(t.c.Hash) && slices.Contains(did[t.c.Hash][id].wrote, l)
		})
	})
}

// rest is the rest of the history of one reverted commit: the commits of
// a walk (parents first, maybe shared with other reverted commits), but
// those it leaves out.
type rest struct {
	walk   *walk
	out    map[gitstore.Hash]bool // commits of the walk that are not of this rest
	belowC map[gitstore.Hash]bool // its commits below the reverted one (below)
}

// walk is the commits of one walk from HEAD, parents first, with what is
// made of them when first needed.
type walk struct {
	commits []gitstore.Commit
	parents map[gitstore.Hash][]gitstore.Hash
	// byFact lists, for each fact, the commits that changed it and count,
	// in order; index is each commit's place.
	byFact map[string][]gitstore.Hash
	index  map[gitstore.Hash]int
}

func (w *walk) indexOf() map[gitstore.Hash]int {
	if w.index == nil {
		w.index = make(map[gitstore.Hash]int, len(w.commits))
		for i, c := range w.commits {
			w.index[c.Hash] = i
		}
	}
	return w.index
}

func (w *walk) parentsOf() map[gitstore.Hash][]gitstore.Hash {
	if w.parents == nil {
		w.parents = make(map[gitstore.Hash][]gitstore.Hash, len(w.commits))
		for _, c := range w.commits {
			w.parents[c.Hash] = c.Parents
		}
	}
	return w.parents
}

// restsOf returns the rest of the history of each commit of us, and the
// walks that read them. When the oldest of them is an ancestor of all the
// others (one line of history, the common case), one walk serves them
// all: a message's commits would each walk the history again.
func restsOf(sh *gitstore.Shard, head gitstore.Hash, us []undoing) (map[gitstore.Hash]*rest, []*walk, error) {
	out := make(map[gitstore.Hash]*rest, len(us))
	oldest := us[len(us)-1].c.Hash
	all, _, err := sh.Range(oldest, head, -1)
	if err != nil {
		return nil, nil, err
	}
	whole := &walk{commits: all}
	below := descendants(oldest, all, nil)
	if slices.ContainsFunc(us[:len(us)-1], func(u undoing) bool { return !below[u.c.Hash] }) {
		walks := []*walk{whole}
		out[oldest] = &rest{walk: whole}
		for _, u := range us[:len(us)-1] {
			commits, _, err := sh.Range(u.c.Hash, head, -1)
			if err != nil {
				return nil, nil, err
			}
			w := &walk{commits: commits}
			out[u.c.Hash] = &rest{walk: w}
			walks = append(walks, w)
		}
		return out, walks, nil
	}
	out[oldest] = &rest{walk: whole}
	for _, u := range us[:len(us)-1] {
		// Its rest is the oldest's but for its ancestors, and itself.
		before := out[oldest].ancestors(u.c.Hash)
		before[u.c.Hash] = true
		out[u.c.Hash] = &rest{walk: whole, out: before}
	}
	return out, []*walk{whole}, nil
}

// countChanges records in changes how each commit of commits (parents
// first) changed the facts, for the commits that changed any and count:
// not merges, not memd's reverts, not commits a revert still standing
// undid, not those of skip. memd's own commits whose trailers name none
// of the facts are not diffed. A commit already in changes, or known to
// change none, is not read again.
func countChanges(sh *gitstore.Shard, commits []gitstore.Commit, facts map[string]bool, skip map[gitstore.Hash]bool, changes map[gitstore.Hash]map[string]factChange) error {
	rv := newReverts(sh)
	for _, c := range slices.Backward(commits) { // newest first: a revert before what it undid
		p := Parse(c.Message)
		if err := rv.see(c, p); err != nil {
			return err
		}
		if _, read := changes[c.Hash]; read || skip[c.Hash] {
			continue
		}
		undone, err := rv.undone(c)
		if err != nil {
			return err
		}
		byMemd := madeByMemd(c, p)
		if undone || len(c.Parents) > 1 || p.Op == memd.OpRevert && byMemd ||
			byMemd && !slices.ContainsFunc(p.FactIDs, func(id string) bool { return facts[id] }) {
			changes[c.Hash] = nil
			continue
		}
		d, err := sh.Diff(c)
		if err != nil {
			return err
		}
		did := factChanges(d)
		for id, fc := range did {
			if !facts[id] {
				delete(did, id)
				continue
			}
			fc.byMemd = byMemd
			did[id] = fc
		}
		changes[c.Hash] = did
	}
	return nil
}

// lastAgreeing reports whether the rest of the history of commit c (see
// changedAgain) changed fact id as c's op did, and how. A fact c removed
// stays removed by a removal in the rest below c (a removal by ID takes
// away any line the fact had), or by a last change of another line that
// removed it. A fact c taught stands by a last change that taught it (or
// rewrote it on a line not below c); the lines it stands by are those of
// every such teaching no removal came after.
func (r *rest) lastAgreeing(c gitstore.Hash, id string, own factChange, changes map[gitstore.Hash]map[string]factChange) (agreed, bool) {
	op := own.op
	w := r.walk
	if w.byFact == nil {
		w.byFact = make(map[string][]gitstore.Hash)
		for _, wc := range w.commits {
			for id := range changes[wc.Hash] {
				w.byFact[id] = append(w.byFact[id], wc.Hash)
			}
		}
	}
	var at []gitstore.Hash // the commits that changed the fact, and count for it
	for _, h := range w.byFact[id] {
		if r.out[h] {
			continue
		}
		if op == taught && changes[h][id].op == rewritten && r.below(c)[h] {
			continue // a rewrite of what was taught: what it rewrote decides
		}
		at = append(at, h)
	}
	later, removedLater := r.after(at, func(h gitstore.Hash) bool { return changes[h][id].op == removed })
	var a agreed
	if op == removed && r.lineTakenLast(at, id, own.took, changes) {
		a.op = removed
	}
	for _, h := range at {
		fc := changes[h][id]
		switch {
		case op == removed && fc.op == removed && (!later[h] || r.below(c)[h]):
			a.op = removed
		case op == removed && fc.op == taught && fc.byMemd && r.below(c)[h] && !removedLater[h]:
			a.retaught = append(a.retaught, fc.wrote...)
		case op == taught && fc.op != removed:
			if !later[h] {
				a.op = taught
			}
			if !removedLater[h] {
				a.wrote = append(a.wrote, fc.wrote...)
			}
		}
	}
	if a.op != "" {
		a.retaught = nil
	}
	return a, a.op != "" || len(a.retaught) > 0
}

// has reports whether commit h is of the rest.
func (r *rest) has(h gitstore.Hash) bool {
	_, in := r.walk.indexOf()[h]
	return in && !r.out[h]
}

// lineTakenLast reports whether a last change of the lines gone (those a
// reverted commit took of fact id) among the changes at is a removal of
// one: that line of history lost the line, and no change after it wrote
// it again. A change that wrote such a line again (the fact forgotten
// and taught again as it stood) leaves it standing.
func (r *rest) lineTakenLast(at []gitstore.Hash, id string, gone []lineAt, changes map[gitstore.Hash]map[string]factChange) bool {
	touches := func(ls []lineAt) bool {
		return slices.ContainsFunc(ls, func(l lineAt) bool { return slices.Contains(gone, l) })
	}
	var onLine []gitstore.Hash
	for _, h := range at {
		if fc := changes[h][id]; fc.op == removed && touches(fc.took) || touches(fc.wrote) {
			onLine = append(onLine, h)
		}
	}
	later, _ := r.after(onLine, func(gitstore.Hash) bool { return false })
	return slices.ContainsFunc(onLine, func(h gitstore.Hash) bool { return !later[h] && changes[h][id].op == removed })
}

// below returns the commits of the rest that have c among their
// ancestors, made once.
func (r *rest) below(c gitstore.Hash) map[gitstore.Hash]bool {
	if r.belowC == nil {
		r.belowC = descendants(c, r.walk.commits, r.out)
	}
	return r.belowC
}

// after returns the commits of at (changes of one fact in the rest) that
// another of them comes after in the history, and those a removal of
// them (removal tells) comes after: one pass, children first, from the
// newest of them down.
func (r *rest) after(at []gitstore.Hash, removal func(gitstore.Hash) bool) (later, removedLater map[gitstore.Hash]bool) {
	if len(at) < 2 {
		return nil, nil
	}
	w := r.walk
	index := w.indexOf()
	const (
		belowAChange = 1 << iota
		belowARemoval
	)
	changed := make(map[gitstore.Hash]bool, len(at))
	newest := 0
	for _, h := range at {
		changed[h] = true
		newest = max(newest, index[h])
	}
	later, removedLater = make(map[gitstore.Hash]bool), make(map[gitstore.Hash]bool)
	marks := make(map[gitstore.Hash]uint8)
	for i := newest; i >= 0; i-- {
		c := w.commits[i]
		if r.out[c.Hash] {
			continue
		}
		m := marks[c.Hash]
		if changed[c.Hash] {
			later[c.Hash] = m&belowAChange != 0
			removedLater[c.Hash] = m&belowARemoval != 0
			m |= belowAChange
			if removal(c.Hash) {
				m |= belowARemoval
			}
		}
		if m != 0 {
			for _, p := range c.Parents {
				marks[p] |= m
			}
		}
	}
	return later, removedLater
}

// ancestors returns the commits of the rest that h reaches through its
// parents, h not among them.
func (r *rest) ancestors(h gitstore.Hash) map[gitstore.Hash]bool {
	parents := r.walk.parentsOf()
	seen := make(map[gitstore.Hash]bool)
	stack := slices.Clone(parents[h])
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ps, in := parents[p]
		if !in || seen[p] || r.out[p] {
			continue
		}
		seen[p] = true
		stack = append(stack, ps...)
	}
	return seen
}

// descendants returns the commits of commits (parents first), but those
// of out, that have c among their ancestors.
func descendants(c gitstore.Hash, commits []gitstore.Commit, out map[gitstore.Hash]bool) map[gitstore.Hash]bool {
	below := make(map[gitstore.Hash]bool)
	for _, r := range commits {
		if !out[r.Hash] && slices.ContainsFunc(r.Parents, func(p gitstore.Hash) bool { return p == c || below[p] }) {
			below[r.Hash] = true
		}
	}
	return below
}
