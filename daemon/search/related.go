package search

import (
	"cmp"
	"math"
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search/thesaurus"
)

// relatedShares weighs a term related to a query term by its relation,
// as a share of the lesser IDF of the two, so a relative never counts for
// more than the word the query said. Chosen on the tuning part of the
// paraphrase set, holding the other sets (quality_test.go): synonyms and
// derived forms at 0.3, narrower words at 0.2, broader ones at 0.1; an
// irregular form's base ("bought", "buy") is nearly the word itself.
var relatedShares = [thesaurus.Kinds]float64{
	thesaurus.Synonym:  0.3,
	thesaurus.Derived:  0.3,
	thesaurus.Broader:  0.1,
	thesaurus.Narrower: 0.2,
	thesaurus.Base:     0.6,
}

// maxRelatedShare bounds the facts searched a relative may be in: one in
// a few says little, and reading its postings costs the most. Under
// minRelatedBound facts it costs nothing, and a small store is all
// relatives.
const (
	maxRelatedShare = 0.1
	minRelatedBound = 64
)

// relatedCap bounds what a query term's relatives add to a fact, as a
// share of what the term itself scores in a fact of the average length
// (its IDF): several synonyms in a short fact do not outrank the word the
// query said in a fact up to twice and a half as long as most.
const relatedCap = 0.5

// scoreRelated scores the terms the thesaurus relates to the query's, for
// facts that say what the query means in other words. A fact holding the
// query's own term gains nothing from its relatives, and they carry no
// bit: phrases, context and chat days are the query's own words. Explain
// names them "~term": the words related to term.
//
// Relatives add to the facts that could reach the strongest candidates
// with them; in a large store most facts holding a relative cannot, and
// scoring them would cost more than the rest of the search.
//
// Which facts can is asked again before each term's relatives while none
// are ruled out: the cut rises with what the terms before added, and what
// the terms left can add falls, so a long query's later terms are pruned
// though its first could not be. The relatives are still added term by
// term in the order scored, every fact's sum as without pruning.
func (q *queryTerms) scoreRelated() {
	sc := q.sc
	relatives, bounds := q.findRelatives()
	// With no relatives at all the floor is the cut: the passes after
	// read only the candidates at it or above.
	floor, cut := q.relatedFloor(sum(bounds))
	if floor > 0 {
		q.markAbove(floor)
		q.pruned = true
		relativesPrunedFrom(0)
	}
	for n, t := range q.scored {
		// The cut can have risen by no more than the terms before added:
		// short of that, looking again cannot rule a fact out.
		if !q.pruned && cut > 0 && len(relatives[n]) > 0 && q.couldPrune(cut+sum(bounds[:n]), sum(bounds[n:])) {
			if floor, cut = q.relatedFloor(sum(bounds[n:])); floor > 0 {
				q.markAbove(floor)
				q.pruned, q.prunedFrom = true, n
				relativesPrunedFrom(n)
			}
		}
		own := q.bits[t]
		for _, r := range relatives[n] {
			gain := func(i int32, tf float64) {
				if own != 0 && sc.termsOf(i)&own != 0 {
					return
				}
				// A fact first reached here becomes a candidate now, at
				// the place it would take when its gain is added.
				k := sc.add(i, 0)
				g := sc.gainOf(k)
				if *g == 0 {
					sc.gained = append(sc.gained, int32(k)) // in the order first reached, for stable ties
				}
				*g += q.bm25(r.idf, tf, i)
			}
			if q.pruned {
				// Only the candidates at the floor or above gain: their
				// entries are looked up in the relative's postings,
				// which may hold a tenth of the facts searched.
				q.eachAbove(r.term, gain)
			} else {
				q.eachPosting(r.term, gain)
			}
		}
		limit := relatedCap * q.idf(t)
		for _, k := range sc.gained {
			v := math.Min(sc.gain[k], limit)
			sc.gain[k] = 0
			sc.v[k] += v
			i := sc.touched[k]
			if p := sc.explain(i); p != nil {
				p.Terms = append(p.Terms, memd.TermScore{Term: "~" + t, Weight: v})
			}
		}
		sc.gained = sc.gained[:0]
	}
}

// eachAbove calls fn with each fact searched holding a term that is at
// scoreRelated's floor or above, and how often it holds the term, in the
// order of its postings. When those facts are few, each is looked up in
// the postings; else the postings are read, each fact's mark tested.
func (q *queryTerms) eachAbove(t string, fn func(i int32, tf float64)) {
	sc := q.sc
	for _, part := range q.st.parts {
		var one [1]posting
		all := part.noneDead()
		ps := part.postings(t, &one)
		if sc.narrowed && fewerThan(len(sc.live), ps) {
			if len(sc.aboveEntries) == 0 {
				sc.aboveEntries = risingEntries(sc, sc.live, sc.above, sc.aboveEntries)
			}
			relativesLookedUp()
			eachIn(ps, sc.aboveEntries, func(p posting) {
				if i := p.doc(); all || q.x.alive[i] {
					fn(i, float64(p.tf()))
				}
			})
			continue
		}
		for _, p := range ps {
			if i := p.doc(); sc.above[i>>6]&(1<<(i&63)) != 0 && (all || q.x.alive[i]) {
				fn(i, float64(p.tf()))
			}
		}
	}
}

// findRelatives lists the words related to each scored term that are
// worth scoring, and bounds what each term's can add to a fact.
func (q *queryTerms) findRelatives() (relatives [][]relative, bounds []float64) {
	relatives = make([][]relative, len(q.scored))
	bounds = make([]float64, len(q.scored))
	q.relatives = relatives
	limit := max(minRelatedBound, int(maxRelatedShare*float64(q.st.live)))
	worth := func(r string) bool {
		// Each part's postings are looked up once, for both counts.
		lists := q.lists(r)
		return held(lists) <= limit && q.freqIn(r, lists) > 0
	}
	done := map[string]bool{}
	for n, e := range q.relatedEntries(worth) {
		if e == nil {
			continue
		}
		t := q.scored[n]
		most := 0.0
		for kind, list := range e.ByKind() {
			for _, r := range list {
				if q.seen[r] || done[r] || !worth(r) {
					continue
				}
				done[r] = true
				idf := relatedShares[kind] * math.Min(q.idf(r), q.idf(t))
				relatives[n] = append(relatives[n], relative{r, idf})
				most += idf * (k1 + 1) // BM25 never reaches idf × (k1+1)
			}
		}
		bounds[n] = math.Min(most, relatedCap*q.idf(t))
	}
	return relatives, bounds
}

func sum(vs []float64) float64 {
	total := 0.0
	for _, v := range vs {
		total += v
	}
	return total
}

// maxRelatedTerms is how many of a query's terms have their relatives
// scored: of those with a relative worth scoring, the rarest, whose
// relatives weigh the most (a relative counts for a share of the lesser
// IDF of the two). A query as long as a person's whole message (an agent
// passing it on) holds many such terms, and the bound on what all their
// relatives add grew until it pruned nothing: over a million facts they
// were two thirds of such a recall. Eight leaves every figure of the
// judged sets, held-out parts included, as scoring all; five or three
// (tried as the rarest of all terms) moved some by up to 0.009, either
// way.
const maxRelatedTerms = 8

// relatedEntries returns, by place in scored, the thesaurus entries of
// the terms whose relatives are scored (nil for the others): of the terms
// with a relative worth scoring, the maxRelatedTerms rarest.
func (q *queryTerms) relatedEntries(worth func(string) bool) []*thesaurus.Entry {
	entries := make([]*thesaurus.Entry, len(q.scored))
	var with []int // the places of the terms with relatives worth scoring
	for n, t := range q.scored {
		if entries[n] = thesaurus.Lookup(t); entries[n] != nil {
			with = append(with, n)
		}
	}
	if len(with) <= maxRelatedTerms {
		return entries
	}
	with = slices.DeleteFunc(with, func(n int) bool {
		for _, list := range entries[n].ByKind() {
			if slices.ContainsFunc(list, func(r string) bool { return !q.seen[r] && worth(r) }) {
				return false
			}
		}
		entries[n] = nil
		return true
	})
	if len(with) <= maxRelatedTerms {
		return entries
	}
	slices.SortStableFunc(with, func(a, b int) int { return cmp.Compare(q.freq(q.scored[a]), q.freq(q.scored[b])) })
	for _, n := range with[maxRelatedTerms:] {
		entries[n] = nil
	}
	return entries
}

// markAbove marks the candidates at floor or above: only they gain from
// relatives.
func (q *queryTerms) markAbove(floor float64) {
	sc := q.sc
	n := (len(sc.slot) + 63) / 64 // words of a bit an entry
	if len(sc.above) < n {
		sc.above = make([]uint64, n)
	}
	// Only candidates at the floor or above gain, and no other fact's
	// score changes here. The others can reach the strongest and the
	// hits only by gaining later (as a neighbour), which marks them too;
	// when they are most candidates, reading the list of the rest saves
	// nothing.
	for k, v := range sc.v {
		if v >= floor {
			i := sc.touched[k]
			sc.above[i>>6] |= 1 << (i & 63)
			sc.live = append(sc.live, int32(k))
		}
	}
	sc.sorted = len(sc.live)
	sc.narrowed = len(sc.live) <= len(sc.touched)/4
}

// Tests compare the hits with and without pruning, and see it happen
// (and from which term), and see relatives' postings looked up for the
// candidates above.
var (
	pruneRelatives      = true
	relativesPruned     = func() {}
	relativesPrunedFrom = func(term int) {}
	relativesLookedUp   = func() {}
)

// relatedFloor returns the score a fact needs before relatives adding at
// most bound could bring it among the candidates a search reads (the
// strongest, maxLenders, or the hits collect weighs, if more), 0 when
// that rules out no fact: when fewer are candidates, or when relatives
// alone could reach them; and the cut it found, 0 if it did not look.
// Tier factors count at their most for the fact gaining and their least
// for the others, and the cut is lowered by more than what collect takes
// for a tie.
func (q *queryTerms) relatedFloor(bound float64) (floor, cut float64) {
	sc := q.sc
	depth := max(maxLenders, q.depth)
	if len(sc.touched) < depth || !pruneRelatives {
		return 0, 0
	}
	cut, sc.spare = largest(sc.v, depth, sc.spare)
	cut *= 1 - tieMargin
	if !q.couldPrune(cut, bound) {
		return 0, cut
	}
	least, most := slices.Min(q.x.factors), slices.Max(q.x.factors)
	relativesPruned()
	return cut*least/most - bound, cut
}

// couldPrune tells whether a cut rules out the facts relatives adding at
// most bound cannot lift to it (see relatedFloor).
func (q *queryTerms) couldPrune(cut, bound float64) bool {
	least, most := slices.Min(q.x.factors), slices.Max(q.x.factors)
	return cut*least > bound*most
}

// tieMargin is far wider than the share within which collect takes two
// scores for a tie, and than the rounding of a sum of a few terms.
const tieMargin = 1e-6

// relateNeighbours adds to the conversation neighbours of the strongest
// candidates what their relatives add, where scoreRelated passed them by
// (below its floor, from the term it began pruning at on; the terms
// before gave every fact its gain): a neighbour borrows context by the lead a candidate
// has over it, and that lead is what it is with its relatives. Those
// holding a relative are found in the relatives' postings, which say how
// often each holds it: the postings count a fact's terms as reading its
// text would, and tokenizing the texts of a few hundred neighbours was
// most of this pass.
func (q *queryTerms) relateNeighbours(near []neighbour) {
	if !q.pruned || !slices.ContainsFunc(q.relatives[q.prunedFrom:], func(rs []relative) bool { return len(rs) > 0 }) {
		return
	}
	sc := q.sc
	// The neighbours it passed by, each once, marked; then those of them
	// holding a relative instead. The marks are cleared however this
	// returns: the scores are kept for the next search.
	below := sc.below[:0]
	holdings := sc.holdings[:0]
	marks := sc.marked(nil)
	defer func() {
		sc.unmark(below)
		for _, h := range holdings {
			marks[h.j>>6] = 0
		}
	}()
	for _, nb := range near {
		if j := nb.j; sc.above[j>>6]&(1<<(j&63)) == 0 && marks[j>>6]&(1<<(j&63)) == 0 && q.ok(j) {
			marks[j>>6] |= 1 << (j & 63)
			below = append(below, j)
		}
	}
	sc.below = below
	holdings = q.holdingRelatives(below, marks, holdings)
	sc.holdings = holdings
	sc.unmark(below)
	slices.SortFunc(holdings, compareHoldings)
	for _, h := range holdings {
		marks[h.j>>6] |= 1 << (h.j & 63)
	}
	for _, nb := range near {
		j := nb.j
		if marks[j>>6]&(1<<(j&63)) == 0 {
			continue // at the floor or above, holding no relative, or done
		}
		marks[j>>6] &^= 1 << (j & 63)
		first, _ := slices.BinarySearchFunc(holdings, j, func(h holding, j int32) int { return cmp.Compare(h.j, j) })
		q.gainFrom(j, holdings[first:])
	}
}

// holding says a fact holds a relative, and how often: q.relatives[n][r].
type holding struct {
	j    int32
	n, r int32
	tf   int32
}

// compareHoldings orders holdings by fact, then by term and relative.
func compareHoldings(a, b holding) int {
	return cmp.Or(cmp.Compare(a.j, b.j), cmp.Compare(a.n, b.n), cmp.Compare(a.r, b.r))
}

// gainFrom adds to neighbour j what its relatives add, given its holdings
// first in hs (sorted), term by term in the order scored, each term's
// relatives summed in their order, as scoreRelated sums them.
func (q *queryTerms) gainFrom(j int32, hs []holding) {
	sc := q.sc
	for n, t := range q.scored {
		// The term's holdings, passed whether they count or not: the
		// next term's follow them.
		k := 0
		for k < len(hs) && hs[k].j == j && hs[k].n == int32(n) {
			k++
		}
		term := hs[:k]
		hs = hs[k:]
		if own := q.bits[t]; own != 0 && sc.termsOf(j)&own != 0 || n < q.prunedFrom {
			// A fact holding the term gains nothing from its relatives;
			// the terms before pruning began gave every fact its gain.
			continue
		}
		gain := 0.0
		for _, h := range term {
			gain += q.bm25(q.relatives[n][h.r].idf, float64(h.tf), j)
		}
		if gain == 0 {
			continue
		}
		v := math.Min(gain, relatedCap*q.idf(t))
		sc.addLate(j, v)
		if p := sc.explain(j); p != nil {
			p.Terms = append(p.Terms, memd.TermScore{Term: "~" + t, Weight: v})
		}
	}
}

// holdingRelatives appends to holdings the entries of below (each once,
// marked in marks) holding a relative of a term scored, with how often:
// below looked up in a relative's postings when they are far fewer
// (sorted in place for it), else the postings read against the marks.
func (q *queryTerms) holdingRelatives(below []int32, marks []uint64, holdings []holding) []holding {
	sorted := false
	for n := q.prunedFrom; n < len(q.scored); n++ {
		for r, rel := range q.relatives[n] {
			hold := func(p posting) {
				holdings = append(holdings, holding{j: p.doc(), n: int32(n), r: int32(r), tf: int32(p.tf())})
			}
			for _, part := range q.st.parts {
				var one [1]posting
				ps := part.postings(rel.term, &one)
				if fewerThan(len(below), ps) {
					if !sorted {
						slices.Sort(below)
						sorted = true
					}
					eachIn(ps, below, hold)
					continue
				}
				for _, p := range ps {
					if i := p.doc(); marks[i>>6]&(1<<(i&63)) != 0 {
						hold(p)
					}
				}
			}
		}
	}
	return holdings
}
