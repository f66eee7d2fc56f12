package search

import (
	"bytes"
	"cmp"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search/thesaurus"
)

// Query is a recall query.
type Query struct {
	Text    string
	Shards  []memd.ShardID // the shards the caller may read; none means none
	K       int            // at most this many hits
	Budget  int            // at most this many characters of fact text
	Now     time.Time      // anchors dates named without a year
	Explain bool           // say why each hit ranked
	Literal bool           // the query's words alone, none of their relatives
}

// Hit is a fact recall found, with its score.
type Hit struct {
	Doc
	Score   float64
	Explain *memd.ScoreParts // with Query.Explain: the parts of Score
}

// Result is what a search found, and the commit each searched shard was
// read at (shards never indexed, or without a commit, are absent).
type Result struct {
	Hits   []Hit
	ReadAt map[memd.ShardID]string
	// Full is the score of a fact holding each of the query's words once,
	// at the length of most: how much there was to find by words (an
	// unknown word weighs the most). Fuse scales word scores by it.
	Full float64
}

// Tuning of the ranking, chosen on the tuning part of the judged sets in
// testdata/recall (see quality_test.go).
const (
	k1                = 1.2
	b                 = 0.75
	phraseBoost       = 0.5 // added share of the score when the words appear as a phrase
	dateWindow        = 3   // days around a named date that still count
	maxLenders        = 256
	minIDF            = 0.3 // below this a word is in most facts (about 70% or more)
	prefixLen         = 5   // letters two terms must share to match by prefix
	prefixShare       = 0.6 // weight of a term matched by prefix
	namedShardBoost   = 0.5 // added share for facts of a shard the query names
	namedProfileScore = 1.0 // score of a named shard's lasting facts, about one matched word
	maxNeedles        = 8   // words the substring fallback looks for, at most
)

// spareScores keeps score arrays between searches. Not a sync.Pool: two
// arrays are as long as the index (8 bytes a fact), and a pool emptied at
// every collection would have a search clear megabytes again. Two are
// kept, one a core.
var spareScores = make(chan *scores, 2)

func getScores() *scores {
	select {
	case sc := <-spareScores:
		return sc
	default:
		return new(scores)
	}
}

func putScores(sc *scores) {
	select {
	case spareScores <- sc:
	default:
	}
}

// scores holds the candidates of a search, compactly: the entries touched,
// in the order first scored, with each one's score and the query terms it
// holds (bit j: term j), and a dense array leading from an entry to its
// place. The passes over the candidates (the strongest, the cut, collect)
// read the compact arrays in order; only scoring a posting looks an entry
// up, in an array of four bytes a fact.
type scores struct {
	// slot holds, by entry, its place in touched plus one, stamped with
	// the search it is of (the bits above shift): clearing the candidates
	// moves to the next stamp instead of writing to every place a search
	// touched, a tenth of a large search. The array is wiped only when
	// the stamps run out; in an index too large for stamps (stamp 0),
	// each place is cleared.
	slot    []uint32
	shift   uint
	stamp   uint32
	cur     uint32 // stamp<<shift
	touched []int32
	v       []float64                  // by place
	terms   []uint64                   // by place
	parts   map[int32]*memd.ScoreParts // only when explaining
	spare   []float64                  // room for strongest's selection
	// loan holds, for each entry lent context, its loan's place in loans
	// plus one; 0 for the others.
	loan  []int32
	loans []loan
	inTop []uint64    // lendContext's marks of the candidates, a bit each
	near  []neighbour // the strongest candidates' neighbours
	// gain holds what a query term's relatives add to each candidate
	// before the cap, by place, for the places in gained (scoreRelated).
	gain   []float64
	gained []int32
	// skipped marks the entries holding a relative that scoreRelated
	// skipped (a bit each), for relateNeighbours; any set while skipping.
	skipped    []uint64
	anySkipped bool
	// above marks, once scoreRelated prunes, the candidates at its floor
	// or above, a bit each; live lists their places. Only they can reach
	// the strongest or the hits, and those that gain later: when they are
	// few (narrowed), the latter are marked and listed too, and the
	// passes that choose the strongest and the hits read live, not every
	// candidate.
	above    []uint64
	live     []int32
	sorted   int     // live[:sorted] is in place order
	merged   []int32 // room for contenders' merge
	narrowed bool
	liveV    []float64 // room for strongest's scores of live
	best     []ranked  // room for collect's choice
}

// add adds v to entry i's score, making it a candidate, and returns its
// place. After scoreRelated, addLate adds instead. (add is kept small
// enough to be inlined where postings are scored.)
func (s *scores) add(i int32, v float64) int {
	k := (s.slot[i] ^ s.cur) - 1 // as in place
	if k >= uint32(len(s.touched)) {
		k = uint32(len(s.touched))
		s.slot[i] = s.cur | (k + 1)
		s.touched = append(s.touched, i)
		s.v = append(s.v, 0)
		s.terms = append(s.terms, 0)
		s.gain = append(s.gain, 0)
	}
	s.v[k] += v
	return int(k)
}

// addLate adds as add does, after scoreRelated: once it narrowed the
// candidates, entry i becomes one that may reach the strongest and the
// hits.
func (s *scores) addLate(i int32, v float64) int {
	k := s.add(i, v)
	if s.narrowed && s.above[i>>6]&(1<<(i&63)) == 0 {
		s.above[i>>6] |= 1 << (i & 63)
		s.live = append(s.live, int32(k))
	}
	return k
}

// contenders returns how many candidates may still reach the strongest
// or the hits; placeOf(j) is the place of the j-th, in the order first
// scored.
func (s *scores) contenders() int {
	if !s.narrowed {
		return len(s.touched)
	}
	// live is in place order up to sorted; the candidates that gained
	// since were appended, few, and only those are sorted.
	if tail := s.live[s.sorted:]; len(tail) > 0 {
		slices.Sort(tail)
		if s.sorted > 0 && tail[0] < s.live[s.sorted-1] {
			s.merged = mergeSorted(s.merged[:0], s.live[:s.sorted], tail)
			s.live, s.merged = s.merged, s.live
		}
		s.sorted = len(s.live)
	}
	return len(s.live)
}

// mergeSorted appends to out the numbers of a and b, both rising, in
// rising order.
func mergeSorted(out, a, b []int32) []int32 {
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

func (s *scores) placeOf(j int) int {
	if s.narrowed {
		return int(s.live[j])
	}
	return j
}

// place is candidate i's place, -1 if i is no candidate.
//
// A place of this search's stamp gives back its place plus one; one of
// another stamp, or none, gives a number of at least 1<<shift, past
// every place.
func (s *scores) place(i int32) int32 {
	if k := (s.slot[i] ^ s.cur) - 1; k < uint32(len(s.touched)) {
		return int32(k)
	}
	return -1
}

// size makes room for n entries, with no candidate.
func (s *scores) size(n int) {
	n += n / 4
	s.slot, s.loan, s.skipped = make([]uint32, n), make([]int32, n), nil
	// Places up to n, and the stamp in the bits left: 2,047 searches
	// between wipes at a million entries. Past 13 million, too few
	// searches would share a wipe of the whole array, and each place is
	// cleared (stamp 0).
	s.shift = uint(bits.Len(uint(n)))
	s.stamp = 1
	if s.shift > maxPlaceBits {
		s.stamp = 0
	}
	s.cur = s.stamp << s.shift
}

// maxPlaceBits leaves at least 255 stamps between wipes.
const maxPlaceBits = 24

// value is entry i's score, 0 if it is no candidate.
func (s *scores) value(i int32) float64 {
	if k := s.place(i); k >= 0 {
		return s.v[k]
	}
	return 0
}

// termsOf are the query terms entry i holds, by bit.
func (s *scores) termsOf(i int32) uint64 {
	if k := s.place(i); k >= 0 {
		return s.terms[k]
	}
	return 0
}

// clear forgets every candidate, for the next search.
func (s *scores) clear() {
	for _, k := range s.live {
		i := s.touched[k]
		s.above[i>>6] = 0
	}
	s.live, s.sorted, s.narrowed = s.live[:0], 0, false
	switch {
	case s.stamp == 0:
		for _, i := range s.touched {
			s.slot[i] = 0
		}
	case len(s.touched) > 0:
		s.stamp++
		if s.stamp == 1<<(32-s.shift) {
			clear(s.slot)
			s.stamp = 1
		}
		s.cur = s.stamp << s.shift
	}
	s.touched, s.v, s.terms, s.gain = s.touched[:0], s.v[:0], s.terms[:0], s.gain[:0]
}

// explain returns the parts of entry i's score, or nil when its parts
// are not wanted.
func (s *scores) explain(i int32) *memd.ScoreParts {
	if s.parts == nil {
		return nil
	}
	p, ok := s.parts[i]
	if !ok {
		return nil
	}
	if p == nil {
		p = &memd.ScoreParts{}
		s.parts[i] = p
	}
	return p
}

// Search ranks the facts of the allowed shards against a query: BM25 over
// stemmed words, a bonus when the words appear as a phrase, a substring
// fallback when no word matches, facts near a date the query names, and
// context from the conversation a fact was learned in (see context.go).
// Ties go to the newer fact. BM25's statistics are those of the shards
// searched, so the answer depends on nothing else.
func (x *Engine) Search(q Query) Result {
	x.mu.RLock()
	defer x.mu.RUnlock()
	res := Result{ReadAt: x.headsOf(q.Shards)}
	sc := getScores()
	defer putScores(sc)
	res.Hits, res.Full = x.search(sc, q, nil)
	if q.Explain && len(res.Hits) > 0 {
		// Scoring again, recording the parts of the hits alone, costs less
		// than recording the parts of every candidate; it is the same
		// scoring, so the same hits come back.
		want := make(map[int32]*memd.ScoreParts, len(res.Hits))
		for _, h := range res.Hits {
			if i, ok := x.lookup(h.Shard, h.ID); ok {
				want[i] = nil
			}
		}
		res.Hits, _ = x.search(sc, q, want)
	}
	return res
}

// search scores and collects the hits of a query; with parts, it records
// the parts of the scores of the entries parts names.
func (x *Engine) search(sc *scores, q Query, parts map[int32]*memd.ScoreParts) (hits []Hit, full float64) {
	if len(q.Shards) == 0 || x.live == 0 {
		return nil, 0
	}
	allowed, allowedNum, st := x.statsOf(q.Shards)
	if st.live == 0 {
		return nil, 0
	}
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	// Dates the query names favour facts of those days. Spelled-out dates
	// ("March 14") still count as words, for facts that mention the date in
	// their text; numeric ones (2026-03-14) rarely appear in text and do not.
	spans, _ := queryDates(q.Text, now)
	content := contentWords(q.Text)

	defer func() {
		sc.clear()
		sc.gained = sc.gained[:0] // only if scoreRelated stopped half way
		if sc.anySkipped {
			clear(sc.skipped)
			sc.anySkipped = false
		}
		sc.parts = nil
	}()
	if len(sc.slot) < int(x.entries.len()) {
		sc.size(int(x.entries.len()))
	}
	sc.parts = parts
	ok := func(i int32) bool { return x.alive[i] && allowedNum[x.shardOf[i]] }

	qt := x.queryTerms(sc, content, st, ok)
	qt.depth = collected(q.K)
	qt.scoreRare()
	x.boostNamedShards(sc, content, allowed)
	if len(sc.touched) == 0 && len(spans) == 0 {
		// Parts of words before words of like meaning: "kube" is more
		// likely the start of "kubecorp" than anything a thesaurus knows.
		x.scoreSubstrings(sc, st, qt.unknown, ok)
		if len(sc.touched) == 0 {
			qt.scoreCommon()
		}
	}
	x.scoreDates(sc, st, spans, ok)
	if len(spans) == 0 && !q.Literal {
		// A query naming a date asks what happened then; its other words
		// ("happened", "did") have relatives in most facts.
		qt.scoreRelated()
	}
	// The phrase and the context only change the order of the strongest
	// candidates; weaker ones could not reach the results anyway.
	top := x.strongest(sc, maxLenders)
	if len(content) >= 2 {
		x.boostPhrase(sc, strings.Join(content, " "), top, qt.inner(content))
	}
	// Both passes read the strongest candidates' neighbours: found once.
	sc.near = x.neighboursOf(top, sc.near[:0])
	qt.relateNeighbours(sc.near)
	top = x.lendContext(sc, top, sc.near, ok)
	x.liftChatDays(sc, top, qt.weights)
	for _, w := range qt.weights {
		full += w // BM25 of one occurrence at the average length is the IDF
	}
	return x.collect(sc, q), full
}

// stats are BM25's statistics over the shards a search reads, and their
// parts of the index.
type stats struct {
	live, length int // facts, and terms in them
	parts        []*part
}

// statsOf returns the shards a search reads, as a set and by their numbers
// in the index, and the statistics over them.
func (x *Engine) statsOf(shards []memd.ShardID) (allowed map[memd.ShardID]bool, allowedNum []bool, st stats) {
	allowed = make(map[memd.ShardID]bool, len(shards))
	allowedNum = make([]bool, len(x.shardIDs))
	for _, s := range shards {
		if allowed[s] {
			continue
		}
		allowed[s] = true
		if n, ok := x.shardNum[s]; ok {
			allowedNum[n] = true
			st.parts = append(st.parts, x.parts[n])
			st.live += x.parts[n].live
			st.length += x.parts[n].length
		}
	}
	return allowed, allowedNum, st
}

// contentWords returns the folded words of a query but its stop words and
// numeric dates, or all its words when it has nothing else.
func contentWords(query string) []string {
	qwords := words(fold(isoDate.ReplaceAllString(query, " ")))
	content := make([]string, 0, len(qwords))
	for _, w := range qwords {
		if !isStop(w) {
			content = append(content, w)
		}
	}
	if len(content) == 0 {
		return qwords
	}
	return content
}

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
	terms []string // stemmed, each once, in the query's order
	// unknown holds the query's words no fact searched holds; common the
	// terms left unscored as in nearly every fact.
	unknown, common []string
	// weights holds the weight (IDF) of each term scored, by its bit in
	// scores.terms; bits the bit of each.
	weights []float64
	bits    map[string]uint64
	scored  []string // the terms scored, in order
	// depth is how many of the strongest candidates a search reads;
	// relatives holds the relatives scored for each term of scored.
	depth     int
	relatives [][]relative
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
	for _, w := range content {
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

// inner returns the bits of the terms of the phrase's inner words: a text
// holding the phrase holds those whole, while its first and last words
// may end or start a longer word ("lisbon air" is in "Lisbon airport").
func (q *queryTerms) inner(phrase []string) uint64 {
	var all uint64
	for _, w := range phrase[1 : len(phrase)-1] {
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
	q.x.scoreTerm(q.sc, q.st, t, q.idf(t), q.norm, bit, q.ok)
	if len(t) < prefixLen {
		return
	}
	var others []string
	for _, p := range q.st.parts {
		for _, other := range p.prefixes[t[:prefixLen]] {
			if other != t && !q.seen[other] && !slices.Contains(others, other) && (strings.HasPrefix(other, t) || strings.HasPrefix(t, other)) {
				others = append(others, other)
			}
		}
	}
	// In the order of the words, whatever shard holds them first.
	slices.Sort(others)
	for _, other := range others {
		q.x.scoreTerm(q.sc, q.st, other, prefixShare*q.idf(other), q.norm, bit, q.ok)
	}
}

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
func (q *queryTerms) scoreRelated() {
	sc := q.sc
	relatives, bound := q.findRelatives()
	floor, pruned := q.relatedFloor(bound)
	if pruned {
		q.markAbove(floor)
	}
	for n, t := range q.scored {
		own := q.bits[t]
		for _, r := range relatives[n] {
			q.eachPosting(r.term, func(i int32, tf float64) {
				if pruned && sc.above[i>>6]&(1<<(i&63)) == 0 {
					// Marked for relateNeighbours even when it holds the
					// term itself: that one reads a neighbour's words and
					// skips the terms it holds.
					sc.skipped[i>>6] |= 1 << (i & 63)
					sc.anySkipped = true
					return
				}
				if own != 0 && sc.termsOf(i)&own != 0 {
					return
				}
				// A fact first reached here becomes a candidate now, at
				// the place it would take when its gain is added.
				k := sc.add(i, 0)
				if sc.gain[k] == 0 {
					sc.gained = append(sc.gained, int32(k)) // in the order first reached, for stable ties
				}
				sc.gain[k] += q.bm25(r.idf, tf, i)
			})
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

// findRelatives lists the words related to each scored term that are
// worth scoring, and bounds what they can add to a fact.
func (q *queryTerms) findRelatives() (relatives [][]relative, bound float64) {
	relatives = make([][]relative, len(q.scored))
	q.relatives = relatives
	done := map[string]bool{}
	limit := max(minRelatedBound, int(maxRelatedShare*float64(q.st.live)))
	for n, t := range q.scored {
		e := thesaurus.Lookup(t)
		if e == nil {
			continue
		}
		most := 0.0
		for kind, list := range e.ByKind() {
			for _, r := range list {
				if q.seen[r] || done[r] {
					continue
				}
				// Each part's postings are looked up once, for both counts.
				lists := q.lists(r)
				if held(lists) > limit || q.freqIn(r, lists) == 0 {
					continue
				}
				done[r] = true
				idf := relatedShares[kind] * math.Min(q.idf(r), q.idf(t))
				relatives[n] = append(relatives[n], relative{r, idf})
				most += idf * (k1 + 1) // BM25 never reaches idf × (k1+1)
			}
		}
		bound += math.Min(most, relatedCap*q.idf(t))
	}
	return relatives, bound
}

// markAbove marks the candidates at floor or above: only they gain from
// relatives.
func (q *queryTerms) markAbove(floor float64) {
	sc := q.sc
	n := (len(sc.slot) + 63) / 64 // words of a bit an entry
	if len(sc.skipped) < n || len(sc.above) < n {
		sc.skipped, sc.above = make([]uint64, n), make([]uint64, n)
	}
	// Only candidates at the floor or above gain, and no other fact's
	// score changes here: they are marked once, so that most postings,
	// of facts below it, cost a test of a bit and not a look-up. The
	// others can reach the strongest and the hits only by gaining
	// later (as a neighbour), which marks them too; when they are
	// most candidates, reading the list of the rest saves nothing.
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

// Tests compare the hits with and without pruning, and see it happen.
var (
	pruneRelatives  = true
	relativesPruned = func() {}
)

// relatedFloor returns the score a fact needs before relatives adding at
// most bound could bring it among the candidates a search reads (the
// strongest, maxLenders, or the hits collect weighs, if more), and whether
// that rules out any fact: not when fewer are candidates, or when
// relatives alone could reach them. Tier factors count at their most for
// the fact gaining and their least for the others, and the cut is lowered
// by more than what collect takes for a tie.
func (q *queryTerms) relatedFloor(bound float64) (float64, bool) {
	sc := q.sc
	depth := max(maxLenders, q.depth)
	if len(sc.touched) < depth || !pruneRelatives {
		return 0, false
	}
	var cut float64
	cut, sc.spare = largest(sc.v, depth, sc.spare)
	cut *= 1 - tieMargin
	least, most := slices.Min(q.x.factors), slices.Max(q.x.factors)
	if cut*least <= bound*most {
		return 0, false
	}
	relativesPruned()
	return cut*least/most - bound, true
}

// tieMargin is far wider than the share within which collect takes two
// scores for a tie, and than the rounding of a sum of a few terms.
const tieMargin = 1e-6

// relateNeighbours adds to the conversation neighbours of the strongest
// candidates what their relatives add, where scoreRelated skipped them: a
// neighbour borrows context by the lead a candidate has over it, and that
// lead is what it is with its relatives. The facts skipped are few here,
// so their words are read from their texts rather than from postings.
func (q *queryTerms) relateNeighbours(near []neighbour) {
	if !q.sc.anySkipped {
		return
	}
	sc, x := q.sc, q.x
	var buf []byte
	seen := map[int32]bool{}
	tfs := map[string]int{}
	for _, nb := range near {
		j := nb.j
		if seen[j] || sc.skipped[j>>6]&(1<<(j&63)) == 0 || !q.ok(j) {
			continue // related already, or holding no relative
		}
		seen[j] = true
		var folded []byte
		folded, buf = x.foldedText(j, buf)
		clear(tfs)
		for _, t := range terms(string(folded)) {
			tfs[t]++
		}
		for n, t := range q.scored {
			if own := q.bits[t]; own != 0 && sc.termsOf(j)&own != 0 {
				continue
			}
			gain := 0.0
			for _, r := range q.relatives[n] {
				if tf := min(tfs[r.term], maxTF); tf > 0 {
					gain += q.bm25(r.idf, float64(tf), j)
				}
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
}

// eachPosting calls fn with each fact searched holding a term, and how
// often it does.
func (q *queryTerms) eachPosting(t string, fn func(i int32, tf float64)) {
	for _, part := range q.st.parts {
		var one [1]posting
		all := part.noneDead()
		for _, p := range part.postings(t, &one) {
			if i := p.doc(); all || q.ok(i) {
				fn(i, float64(p.tf()))
			}
		}
	}
}

// bm25 is what a term of weight idf, tf times in fact i, scores.
func (q *queryTerms) bm25(idf, tf float64, i int32) float64 {
	return idf * tf * (k1 + 1) / (tf + k1*(1-b) + q.norm*float64(q.x.lengths[i]))
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
		n = docFreq(lists, q.st, q.ok)
		q.freqs[t] = n
	}
	return n
}

// docFreq counts the live facts of the shards searched that hold a term,
// given its lists.
func docFreq(lists [][]posting, st stats, ok func(int32) bool) int {
	n := 0
	for k, ps := range lists {
		if st.parts[k].noneDead() {
			n += len(ps) // every posting of a part searched is of a fact searched
			continue
		}
		for _, p := range ps {
			if ok(p.doc()) {
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

func (x *Engine) scoreTerm(sc *scores, st stats, t string, idf, norm float64, bit uint64, ok func(int32) bool) {
	if idf == 0 {
		return
	}
	for _, part := range st.parts {
		var one [1]posting
		all := part.noneDead() // every posting is of a fact searched
		for _, p := range part.postings(t, &one) {
			i := p.doc()
			if !all && !ok(i) {
				continue
			}
			tf := float64(p.tf())
			v := idf * tf * (k1 + 1) / (tf + k1*(1-b) + norm*float64(x.lengths[i]))
			sc.terms[sc.add(i, v)] |= bit
			if e := sc.explain(i); e != nil {
				e.Terms = append(e.Terms, memd.TermScore{Term: t, Weight: v})
			}
		}
	}
}

// boostNamedShards favours the facts of a shard the query names: facts in
// user/pat are about Pat even when they do not say "Pat".
func (x *Engine) boostNamedShards(sc *scores, content []string, allowed map[memd.ShardID]bool) {
	named := make(map[memd.ShardID]bool)
	for _, w := range content {
		for _, k := range []memd.Kind{memd.KindUser, memd.KindAgent, memd.KindProject} {
			if id := (memd.ShardID{Kind: k, Name: w}); allowed[id] {
				named[id] = true
			}
		}
	}
	if len(named) == 0 {
		return
	}
	for k, i := range sc.touched {
		if named[x.shardIDs[x.shardOf[i]]] {
			more := sc.v[k] * namedShardBoost
			sc.v[k] += more
			if e := sc.explain(i); e != nil {
				e.NamedShard += more
			}
		}
	}
	// What a shard says lastingly answers "what does Alice do". In the
	// shards' order, not a map's: the passes that read candidates in the
	// order first scored then do the same in every search.
	var nums []uint32
	for id := range named {
		if n, ok := x.shardNum[id]; ok {
			nums = append(nums, n)
		}
	}
	slices.SortFunc(nums, func(a, b uint32) int { return cmp.Compare(x.shardOrder[a], x.shardOrder[b]) })
	for _, n := range nums {
		if sd := x.shards[x.shardIDs[n]]; sd != nil {
			for _, i := range slices.Backward(sd.profile) {
				sc.add(i, namedProfileScore)
				if e := sc.explain(i); e != nil {
					e.NamedShard += namedProfileScore
				}
			}
		}
	}
}

// scoreSubstrings finds facts containing a query word as part of a word,
// such as "lisb" or a product code, when no whole word matched. It looks
// only for the words no fact holds whole: a word every fact holds, left
// unscored as uninformative, would otherwise match every fact here.
func (x *Engine) scoreSubstrings(sc *scores, st stats, content []string, ok func(int32) bool) {
	// Each needle costs a pass over every fact: a query repeating one word
	// two hundred times, or naming two hundred, would cost seconds. The
	// few longest distinct words say the most.
	var words []string
	for _, w := range content {
		if len(w) >= 3 && !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return
	}
	slices.SortStableFunc(words, func(a, b string) int { return len(b) - len(a) })
	needles := words[:min(len(words), maxNeedles)]
	for _, part := range st.parts {
		for _, i := range part.entries {
			if !ok(i) {
				continue
			}
			e := x.entries.at(i)
			for _, n := range needles {
				// A needle is one word: in an ASCII text it is found as
				// in the text's folded words, without folding them.
				if e.foldKept && strings.Contains(x.folded[i], n) || !e.foldKept && containsFold(x.texts.get(e.text), n) {
					sc.add(i, 1)
					if p := sc.explain(i); p != nil {
						p.Substring++
					}
				}
			}
		}
	}
}

// scoreDates favours facts dated within or near the spans the query names:
// they join the candidates, and matching ones weigh more.
func (x *Engine) scoreDates(sc *scores, st stats, spans []dateSpan, ok func(int32) bool) {
	if len(spans) == 0 {
		return
	}
	best := 1.0
	for _, v := range sc.v {
		best = math.Max(best, v)
	}
	for _, sp := range spans {
		for d := sp.from - dateWindow; d <= sp.to+dateWindow; d++ {
			dist := max(0, sp.from-d, d-sp.to)
			w := 1 / (1 + float64(dist))
			for _, part := range st.parts {
				for _, i := range part.dates[d] {
					if ok(i) {
						sc.add(i, 0.5*best*w)
						if e := sc.explain(i); e != nil {
							e.Date += 0.5 * best * w
						}
					}
				}
			}
		}
	}
}

// boostPhrase favours the candidates holding the query's words in its
// order. A fact holding the phrase holds the terms of its inner words
// (each has a bit of all), so the others are not read.
func (x *Engine) boostPhrase(sc *scores, phrase string, top []int32, all uint64) {
	want := []byte(phrase)
	var buf []byte
	for _, i := range top {
		k := sc.place(i) // a candidate: top holds only those
		if sc.terms[k]&all != all {
			continue
		}
		var folded []byte
		folded, buf = x.foldedText(i, buf)
		if bytes.Contains(folded, want) {
			more := sc.v[k] * phraseBoost
			sc.v[k] += more
			if e := sc.explain(i); e != nil {
				e.Phrase += more
			}
		}
	}
}

// strongest returns the n best candidates (all of them if fewer). Among
// candidates tied at the cut, those collect would rank first: the order
// facts were indexed in, which differs between a first start and a
// restart, must not decide which of them the phrase and the context lift.
func (x *Engine) strongest(sc *scores, n int) []int32 {
	m := sc.contenders()
	vs := sc.v
	if sc.narrowed {
		vs = sc.liveV[:0]
		for j := range m {
			vs = append(vs, sc.v[sc.placeOf(j)])
		}
		sc.liveV = vs
	}
	top := make([]int32, 0, min(n, m))
	// Narrowed, there are at least n, chosen below.
	if m <= n && !sc.narrowed {
		for j := range m {
			top = append(top, sc.touched[sc.placeOf(j)])
		}
		return top
	}
	var floor float64
	floor, sc.spare = largest(vs, n, sc.spare)
	for j := range m {
		if k := sc.placeOf(j); sc.v[k] > floor {
			top = append(top, sc.touched[k])
		}
	}
	room := n - len(top)
	if room == 0 {
		return top
	}
	c := x.chooser(sc, room)
	for j, step := newerEndFirst(x, sc, m); j >= 0 && j < m; j += step {
		if k := sc.placeOf(j); sc.v[k] == floor {
			c.consider(sc.touched[k], floor)
		}
	}
	for _, r := range c.chosen() {
		top = append(top, r.i)
	}
	return top
}

// largest returns the k-th largest of vs (0 < k ≤ len(vs)), vs unchanged,
// and heap for reuse: one pass keeping the k largest in a min-heap, which
// most values, smaller than the least of them, pass with one comparison.
// It replaced copying vs to select in place, a tenth of a large search.
func largest(vs []float64, k int, heap []float64) (float64, []float64) {
	h := heap[:0]
	less := func(a, b float64) bool { return a < b }
	for _, v := range vs {
		switch {
		case len(h) < k:
			h = append(h, v)
			up(h, len(h)-1, less)
		case v > h[0]:
			h[0] = v
			down(h, 0, less)
		}
	}
	return h[0], h
}

// ranked is a candidate with its final score.
type ranked struct {
	i    int32
	v    float64
	days int
}

// better orders candidates: higher score (scores within a hair are a tie),
// then the newer fact, then shard and ID for a stable order.
func (x *Engine) better(a, b ranked) bool {
	if math.Abs(a.v-b.v) > 1e-9*max(a.v, b.v) { // max, not math.Max: inlined
		return a.v > b.v
	}
	if a.days != b.days {
		return a.days > b.days
	}
	return x.precedes(a.i, b.i)
}

// precedes orders entries alike in all else: by shard, then ID.
func (x *Engine) precedes(a, b int32) bool {
	if sa, sb := x.shardOf[a], x.shardOf[b]; sa != sb {
		return x.shardOrder[sa] < x.shardOrder[sb]
	}
	return x.compareIDs(a, b) < 0
}

// collected is how many of the best candidates collect weighs for k
// hits: room for hits the budget skips.
func collected(k int) int { return k*4 + 32 }

// collect takes the best scored facts that fit the budget.
func (x *Engine) collect(sc *scores, q Query) []Hit {
	if len(sc.touched) == 0 || q.K <= 0 {
		return nil
	}
	m := sc.contenders()
	if m == 0 {
		return nil
	}
	c := x.chooser(sc, collected(q.K))
	for j, step := newerEndFirst(x, sc, m); j >= 0 && j < m; j += step {
		k := sc.placeOf(j)
		c.consider(sc.touched[k], sc.v[k])
	}
	h := c.chosen()
	slices.SortFunc(h, func(a, b ranked) int {
		if x.better(a, b) {
			return -1
		}
		if x.better(b, a) {
			return 1
		}
		return 0
	})
	// Only the hits that fit become Docs.
	kept := fitting(len(h), q.K, q.Budget, func(j int) int { return len(x.textOf(h[j].i)) })
	hits := make([]Hit, len(kept))
	for n, j := range kept {
		r := h[j]
		hits[n] = Hit{Doc: x.docOf(r.i), Score: r.v}
		if e := sc.explain(r.i); e != nil {
			e.Tier = r.v - sc.value(r.i)
			hits[n].Explain = e
		}
	}
	return hits
}

// chooser keeps the limit best candidates it is given, by better.
//
// The candidates that pass the bar gather in a buffer; when it is full,
// the best of them are moved to its front and the worst of those becomes
// the bar. A heap does not bear ties: when many tie on score and come
// oldest first, each one pushes its root out.
type chooser struct {
	x      *Engine
	h      []ranked
	limit  int
	most   float64 // the factor of the tier weighed most
	bar    ranked  // the worst kept, once barred
	barred bool
}

// chooser returns a chooser of limit candidates, its buffer the search's.
func (x *Engine) chooser(sc *scores, limit int) *chooser {
	// Eight times what is kept: each choice then costs little per
	// candidate that passed the bar, even when all pass.
	if cap(sc.best) < 8*limit {
		sc.best = make([]ranked, 0, 8*limit)
	}
	return &chooser{x: x, h: sc.best[: 0 : 8*limit], limit: limit, most: slices.Max(x.factors)}
}

// consider gives it entry i, of score v before its tier's factor. Its tier
// and day, in arrays as long as the index, are read only when the bar
// cannot turn it away without them: v times the largest factor bounds
// its final score, scores and factors being positive.
func (c *chooser) consider(i int32, v float64) {
	x := c.x
	if c.barred {
		best := v * c.most // what its tier could make of it, at most
		if best < c.bar.v*(1-1e-9) {
			return
		}
		if best <= c.bar.v {
			// No better a score: only a newer day, or on the same day
			// the shard and ID better gives precedence, could save it.
			if d := int(x.days[i]); d < c.bar.days || d == c.bar.days && !x.precedes(i, c.bar.i) {
				return
			}
		}
	}
	r := ranked{i: i, v: v * x.factors[x.tier[i]], days: int(x.days[i])}
	if c.barred && !x.better(r, c.bar) {
		return
	}
	c.h = append(c.h, r)
	if len(c.h) == cap(c.h) {
		c.x.bestFirst(c.h, c.limit)
		c.h = c.h[:c.limit]
		c.bar, c.barred = c.h[c.limit-1], true
	}
}

// chosen returns the best candidates given, in no particular order.
func (c *chooser) chosen() []ranked {
	if len(c.h) > c.limit {
		c.x.bestFirst(c.h, c.limit)
		c.h = c.h[:c.limit]
	}
	return c.h
}

// newerEndFirst returns where to start reading the m contenders, and the
// step: from the end whose fact is newer. Postings run in the order facts
// were indexed, which in a store is mostly the order they were written:
// oldest first. Read newest first, a chooser's bar rises to the tied
// ones' newest days early and the older ones stop at it; read oldest
// first, each would pass the bar and be weighed again.
func newerEndFirst(x *Engine, sc *scores, m int) (j, step int) {
	if m > 0 && x.days[sc.touched[sc.placeOf(0)]] > x.days[sc.touched[sc.placeOf(m-1)]] {
		return 0, 1
	}
	return m - 1, -1
}

// bestFirst moves the n best of rs, by better, to its front, in no
// particular order among themselves, with the n-th best at rs[n-1]: a
// quickselect, each pass keeping the side that holds the n-th place.
func (x *Engine) bestFirst(rs []ranked, n int) {
	lo, hi := 0, len(rs)-1
	for lo < hi {
		p := rs[lo+(hi-lo)/2]
		// Each scan stops at the pivot or at what the other scan swapped
		// over, so neither leaves [lo, hi].
		i, j := lo, hi
		for i <= j {
			for x.better(rs[i], p) {
				i++
			}
			for x.better(p, rs[j]) {
				j--
			}
			if i <= j {
				rs[i], rs[j] = rs[j], rs[i]
				i++
				j--
			}
		}
		switch {
		case n-1 <= j:
			hi = j
		case n-1 >= i:
			lo = i
		default:
			return // between j and i, every one ties with the pivot
		}
	}
}

// Fit keeps the first hits, at most k, whose texts fit the budget.
func Fit(hits []Hit, k, budget int) []Hit {
	kept := fitting(len(hits), k, budget, func(j int) int { return len(hits[j].Text) })
	out := make([]Hit, len(kept))
	for n, j := range kept {
		out[n] = hits[j]
	}
	return out
}

// fitting returns the first of n texts, at most k, whose lengths fit the
// budget (none: no limit), skipping those that would overflow it.
func fitting(n, k, budget int, length func(j int) int) []int {
	var kept []int
	used := 0
	for j := 0; j < n && len(kept) < k; j++ {
		if budget > 0 && used+length(j) > budget {
			continue
		}
		used += length(j)
		kept = append(kept, j)
	}
	return kept
}

// up and down keep h a heap whose root is the least by less.
func up[T any](h []T, j int, less func(a, b T) bool) {
	for j > 0 {
		p := (j - 1) / 2
		if !less(h[j], h[p]) {
			return
		}
		h[j], h[p] = h[p], h[j]
		j = p
	}
}

func down[T any](h []T, j int, less func(a, b T) bool) {
	for {
		l := 2*j + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[j]) {
			return
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
}

// Walk calls fn for a shard's facts of one kind in rank order, highest
// first, until fn returns false: lasting facts (profile) when profile is
// true, dated ones (log, note, episode) otherwise. It returns how many such
// facts the shard holds.
func (x *Engine) Walk(shard memd.ShardID, profile bool, fn func(Doc) bool) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.walk(shard, profile, fn)
}

// Walker walks one shard's facts of one kind in rank order, as Walk does.
type Walker func(shard memd.ShardID, profile bool, fn func(Doc) bool) int

// Snapshot calls fn with a Walker over the index held still, and returns
// the commit each of the shards was read at: what fn read is exactly
// memory at those commits.
func (x *Engine) Snapshot(shards []memd.ShardID, fn func(Walker)) map[memd.ShardID]string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	fn(x.walk)
	return x.headsOf(shards)
}

// Indexed names every shard the engine holds and the commit it was read
// at.
func (x *Engine) Indexed() map[memd.ShardID]string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return maps.Clone(x.heads)
}

// Mark is where FactsSince stopped in a shard's facts.
type Mark struct {
	epoch      uint64
	next, gone int // into the part's entries and removed IDs
}

// FactsSince tells what a shard's facts became since mark: gone with the
// ID of each fact removed, then fn with each live fact (not a note's
// passage) gained, in the order they came, until fn returns false. It
// returns the mark to pass next, past what it told, and whether it started
// over: from the zero mark, or one from before the index was compacted,
// every fact is told as gained and none as gone.
func (x *Engine) FactsSince(shard memd.ShardID, mark Mark, gone func(id string), fn func(id, text string) bool) (next Mark, restarted bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n, ok := x.shardNum[shard]
	if !ok {
		return Mark{epoch: x.epoch}, mark.epoch != x.epoch
	}
	p := x.parts[n]
	if mark.epoch != x.epoch || mark.next > len(p.entries) || mark.gone > len(p.removed) {
		mark, restarted = Mark{epoch: x.epoch, gone: len(p.removed)}, true
	}
	for _, id := range p.removed[mark.gone:] {
		gone(id)
	}
	next = Mark{epoch: x.epoch, next: len(p.entries), gone: len(p.removed)}
	for k, i := range p.entries[mark.next:] {
		if e := x.entries.at(i); x.alive[i] && !e.passage && !fn(x.texts.get(e.id), x.texts.get(e.text)) {
			next.next = mark.next + k
			break
		}
	}
	return next, restarted
}

// EachFact calls fn with each fact of a shard, lasting ones first, until fn
// returns false.
func (x *Engine) EachFact(shard memd.ShardID, fn func(id, text string) bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	goOn := true
	for _, profile := range []bool{true, false} {
		x.walk(shard, profile, func(d Doc) bool {
			goOn = fn(d.ID, d.Text)
			return goOn
		})
		if !goOn {
			return
		}
	}
}

func (x *Engine) walk(shard memd.ShardID, profile bool, fn func(Doc) bool) int {
	sd := x.shards[shard]
	if sd == nil {
		return 0
	}
	list := sd.recent
	if profile {
		list = sd.profile
	}
	for _, i := range slices.Backward(list) { // highest first
		if !fn(x.docOf(i)) {
			break
		}
	}
	return len(list)
}
