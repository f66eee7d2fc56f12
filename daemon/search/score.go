package search

import (
	"math"
	"slices"
	"strings"

	"github.com/memd/memd"
)

// queryTerms scores a query's terms: BM25 for each, and a share of it for
// terms of the index that extend or shorten one (the stemmer keeps
// "auditor" and "audit", "allergi" and "allerg" apart).
type queryTerms struct {
	x     *Engine
	sc    *scores
	st    stats
	ok    func(int32) bool
	norm  float64        // BM25's length normalisation over the facts searched
	freqs map[string]int // facts searched holding each term
	seen  map[string]bool
	words []string // the query's content words, CJK runs paired (see words)
	terms []string // stemmed, each once, in the query's order
	// unknown holds the query's words no fact searched holds; common the
	// terms left unscored as in nearly every fact.
	unknown, common []string
	// weights holds the weight (IDF) of each term scored, by its bit in
	// scores.terms; bits the bit of each.
	weights []float64
	bits    map[string]uint64
	// padding holds the bits of terms whose weight says nothing of what
	// there was to find (see isPadding).
	padding uint64
	scored  []string // the terms scored, in order
	// depth is how many of the strongest candidates a search reads;
	// relatives holds the relatives scored for each term of scored.
	depth     int
	relatives [][]relative
	// pruned says scoreRelated gave the relatives of the terms from
	// prunedFrom on only to the candidates at its floor or above.
	pruned     bool
	prunedFrom int
	// listed and ones are room for lists.
	listed [][]posting
	ones   [][1]posting
}

// relative is a term related to a query term, with its weight: a share of
// the lesser IDF of the two.
type relative struct {
	term string
	idf  float64
}

func (x *Engine) queryTerms(sc *scores, content []string, st stats, ok func(int32) bool) *queryTerms {
	q := &queryTerms{x: x, sc: sc, st: st, ok: ok, freqs: make(map[string]int), seen: make(map[string]bool, len(content)), bits: make(map[string]uint64)}
	q.norm = k1 * b / (float64(st.length) / math.Max(1, float64(st.live)))
	q.words = paired(content)
	for _, w := range q.words {
		t := stem(w)
		if q.freq(t) == 0 && !slices.Contains(q.unknown, w) {
			q.unknown = append(q.unknown, w)
		}
		if !q.seen[t] {
			q.seen[t] = true
			q.terms = append(q.terms, t)
		}
	}
	return q
}

func (q *queryTerms) freq(t string) int {
	if n, seen := q.freqs[t]; seen {
		return n
	}
	return q.freqIn(t, q.lists(t))
}

func (q *queryTerms) idf(t string) float64 { return idfOf(q.freq(t), q.st) }

// isPadding tells whether t is a pair of CJK characters no fact searched
// holds while some fact holds each of the two: most often one word's end
// and the next one's start rather than a word, it says nothing of how
// much there was to find.
func (q *queryTerms) isPadding(t string) bool {
	first, second, ok := cjkPair(t)
	return ok && q.freq(t) == 0 && q.freq(first) > 0 && q.freq(second) > 0
}

// full is the score of a fact holding each of the query's terms once, at
// the length of most (BM25 of one occurrence at the average length is
// the IDF), but the padding.
func (q *queryTerms) full() float64 {
	full := 0.0
	for _, w := range q.meant() {
		full += w
	}
	return full
}

// meant returns the weights of the terms scored, by bit, the padding's 0.
func (q *queryTerms) meant() []float64 {
	if q.padding == 0 {
		return q.weights
	}
	out := slices.Clone(q.weights)
	for j := range out {
		if q.padding&(1<<j) != 0 {
			out[j] = 0
		}
	}
	return out
}

// inner returns the bits of the terms of the phrase's inner words: a text
// holding the phrase holds those whole, while its first and last words
// may end or start a longer word ("lisbon air" is in "Lisbon airport").
func (q *queryTerms) inner(phrase []string) uint64 {
	var all uint64
	if len(phrase) < 3 {
		return 0
	}
	for _, w := range paired(phrase[1 : len(phrase)-1]) {
		all |= q.bits[stem(w)]
	}
	return all
}

// scoreRare scores the terms, but for those nearly every fact holds when
// the query has rarer ones: such a word says nothing, and reading its
// postings would cost the most for the least. Those are kept in common.
func (q *queryTerms) scoreRare() {
	informative := slices.ContainsFunc(q.terms, func(t string) bool { return q.idf(t) >= minIDF })
	for _, t := range q.terms {
		if informative && q.idf(t) < minIDF {
			q.common = append(q.common, t)
			continue
		}
		q.score(t)
	}
}

// scoreCommon scores the terms scoreRare left: when the rarer words match
// nothing, not even inside a word, the common ones are all the query has.
func (q *queryTerms) scoreCommon() {
	for _, t := range q.common {
		q.score(t)
	}
	q.common = nil
}

func (q *queryTerms) score(t string) {
	q.scored = append(q.scored, t)
	var bit uint64
	if len(q.weights) < 63 {
		bit = 1 << len(q.weights)
		q.weights = append(q.weights, q.idf(t))
		q.bits[t] = bit
	}
	if q.isPadding(t) {
		q.padding |= bit
	}
	q.x.scoreTerm(q.sc, q.st, t, q.idf(t), q.norm, bit)
	prefix, ok := prefixOf(t)
	if !ok {
		return
	}
	var others []string
	for _, p := range q.st.parts {
		for _, other := range p.prefixes[prefix] {
			if other != t && !q.seen[other] && !slices.Contains(others, other) && (strings.HasPrefix(other, t) || strings.HasPrefix(t, other)) {
				others = append(others, other)
			}
		}
	}
	// In the order of the words, whatever shard holds them first.
	slices.Sort(others)
	for _, other := range others {
		q.x.scoreTerm(q.sc, q.st, other, prefixShare*q.idf(other), q.norm, bit)
	}
}

// eachPosting calls fn with each fact searched holding a term, and how
// often it does.
func (q *queryTerms) eachPosting(t string, fn func(i int32, tf float64)) {
	for _, part := range q.st.parts {
		var one [1]posting
		all := part.noneDead()
		for _, p := range part.postings(t, &one) {
			if i := p.doc(); all || q.x.alive[i] {
				fn(i, float64(p.tf()))
			}
		}
	}
}

// termScore is BM25 of one term in a fact, the one place it is written:
// a method the compiler puts inline in the passes over a term's postings,
// where a function value cost a call a posting.
type termScore struct {
	idf, norm float64
	lengths   []uint16 // by entry
}

func (t termScore) of(i int32, tf float64) float64 {
	return t.idf * tf * (k1 + 1) / (tf + k1*(1-b) + t.norm*float64(t.lengths[i]))
}

// bm25 is what a term of weight idf, tf times in fact i, scores.
func (q *queryTerms) bm25(idf, tf float64, i int32) float64 {
	return termScore{idf, q.norm, q.x.lengths}.of(i, tf)
}

// lists returns a term's postings in each part searched, in a buffer
// the next call reuses.
func (q *queryTerms) lists(t string) [][]posting {
	if len(q.ones) < len(q.st.parts) {
		q.ones = make([][1]posting, len(q.st.parts))
	}
	q.listed = q.listed[:0]
	for n, part := range q.st.parts {
		q.listed = append(q.listed, part.postings(t, &q.ones[n]))
	}
	return q.listed
}

// held is how many facts of the shards searched hold a term, given its
// lists, the deleted ones among them: at least its frequency, and cheaper
// to count.
func held(lists [][]posting) int {
	n := 0
	for _, ps := range lists {
		n += len(ps)
	}
	return n
}

// freqIn is freq, given the term's lists.
func (q *queryTerms) freqIn(t string, lists [][]posting) int {
	n, seen := q.freqs[t]
	if !seen {
		n = docFreq(lists, q.st, q.x.alive)
		q.freqs[t] = n
	}
	return n
}

// docFreq counts the live facts of the shards searched that hold a term,
// given its lists and which entries are alive.
func docFreq(lists [][]posting, st stats, alive []bool) int {
	n := 0
	for k, ps := range lists {
		if st.parts[k].noneDead() {
			n += len(ps) // every posting of a part searched is of a fact searched
			continue
		}
		for _, p := range ps {
			if alive[p.doc()] {
				n++
			}
		}
	}
	return n
}

// idfOf is the inverse document frequency of a term n of the facts
// searched hold, as BM25 weighs it.
func idfOf(n int, st stats) float64 {
	return math.Log(1 + (float64(st.live)-float64(n)+0.5)/(float64(n)+0.5))
}

// scoreTerm adds a term's BM25 to the live facts of the shards searched
// holding it. A part's postings are all of its own shard, which is
// searched, so only whether a fact is live is asked: one read of an array
// as long as the index for each posting, where asking for its shard too
// made two.
func (x *Engine) scoreTerm(sc *scores, st stats, t string, idf, norm float64, bit uint64) {
	if idf == 0 {
		return
	}
	// The first term scored makes every fact holding it a candidate, and
	// parts hold distinct facts: none is one yet.
	fresh := len(sc.touched) == 0 && sc.parts == nil
	score := termScore{idf, norm, x.lengths}
	for _, part := range st.parts {
		var one [1]posting
		all := part.noneDead() // every posting is of a fact searched
		ps := part.postings(t, &one)
		switch {
		case all && fresh:
			sc.fill(ps, score, bit)
			continue
		case all && sc.parts == nil:
			sc.merge(ps, score, bit)
			continue
		}
		for _, p := range ps {
			i := p.doc()
			if !all && !x.alive[i] {
				continue
			}
			v := score.of(i, float64(p.tf()))
			sc.terms[sc.add(i, v)] |= bit
			if e := sc.explain(i); e != nil {
				e.Terms = append(e.Terms, memd.TermScore{Term: t, Weight: v})
			}
		}
	}
}
