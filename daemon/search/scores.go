package search

import (
	"slices"

	"github.com/memd/memd"
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
// holds (bit j: term j), and dense arrays leading from an entry to its
// place. The passes over the candidates (the strongest, the cut, collect)
// read the compact arrays in order; only scoring a posting looks an entry
// up.
type scores struct {
	// member marks the candidates, a bit an entry; slot holds, by entry,
	// a candidate's place in touched, and is read only where member has
	// its bit. Most postings a search scores are of facts not yet
	// candidates: the bits (156 KB at a million entries) answer that from
	// the processor's cache, where slot, 32 times larger, was read from
	// memory at each posting.
	member  []uint64
	slot    []uint32
	touched []int32
	v       []float64                  // by place
	terms   []uint64                   // by place
	parts   map[int32]*memd.ScoreParts // only when explaining
	spare   []float64                  // room for strongest's selection
	first   []int32                    // room for best's strongest, each once
	finals  []float64                  // and their final scores
	// loan holds, for each entry lent context, its loan's place in loans
	// plus one; 0 for the others.
	loan  []int32
	loans []loan
	marks []uint64    // a bit an entry, all clear but while marked's caller runs
	near  []neighbour // the strongest candidates' neighbours
	// gain holds what a query term's relatives add to each candidate
	// before the cap, by place, for the places in gained (scoreRelated);
	// it reaches as far as a place gained (gainOf), not every candidate.
	gain   []float64
	gained []int32
	// above marks, once scoreRelated prunes, the candidates at its floor
	// or above, a bit each; live lists their places. Only they can reach
	// the strongest or the hits, and those that gain later: when they are
	// few (narrowed), the latter are marked and listed too, and the
	// passes that choose the strongest and the hits read live, not every
	// candidate. aboveEntries lists their entries, rising, once a
	// relative's postings are many more; below is room for
	// relateNeighbours.
	above        []uint64
	live         []int32
	aboveEntries []int32
	below        []int32
	holdings     []holding // room for relateNeighbours
	sorted       int       // live[:sorted] is in place order
	merged       []int32   // room for contenders' merge
	narrowed     bool
	liveV        []float64 // room for strongest's scores of live
	best         []ranked  // room for collect's choice
}

// add adds v to entry i's score, making it a candidate, and returns its
// place. After scoreRelated, addLate adds instead. (add is kept small
// enough to be inlined where postings are scored.)
func (s *scores) add(i int32, v float64) int {
	if m, bit := &s.member[i>>6], uint64(1)<<(i&63); *m&bit == 0 {
		*m |= bit
		s.slot[i] = uint32(len(s.touched))
		s.touched = append(s.touched, i)
		s.v = append(s.v, 0)
		s.terms = append(s.terms, 0)
	}
	k := s.slot[i]
	s.v[k] += v
	return int(k)
}

// fill makes candidates of the entries of a list, none of them one yet:
// each takes the next place, with no look-up.
func (s *scores) fill(ps []posting, score termScore, bit uint64) {
	base, n := len(s.touched), len(ps)
	s.touched = slices.Grow(s.touched, n)[:base+n]
	s.v = slices.Grow(s.v, n)[:base+n]
	s.terms = slices.Grow(s.terms, n)[:base+n]
	touched, v, terms, member, slot := s.touched[base:], s.v[base:], s.terms[base:], s.member, s.slot
	for k, p := range ps {
		i := p.doc()
		member[i>>6] |= 1 << (i & 63)
		slot[i] = uint32(base + k)
		touched[k] = i
		v[k] = score.of(i, float64(p.tf()))
		terms[k] = bit
	}
}

// merge adds a list's scores to the candidates, making a candidate of
// each entry not yet one at the next place, as add does; the room for
// the new ones is made once for the whole list rather than at each, no
// more than the entries not yet candidates (the arrays are kept from one
// search to the next).
func (s *scores) merge(ps []posting, score termScore, bit uint64) {
	n := len(s.touched)
	room := n + min(len(ps), len(s.slot)-n)
	touched := slices.Grow(s.touched, room-n)[:room]
	v := slices.Grow(s.v, room-n)[:room]
	terms := slices.Grow(s.terms, room-n)[:room]
	member, slot := s.member, s.slot
	for _, p := range ps {
		i := p.doc()
		add := score.of(i, float64(p.tf()))
		if m, b := &member[i>>6], uint64(1)<<(i&63); *m&b == 0 {
			*m |= b
			slot[i] = uint32(n)
			touched[n], v[n], terms[n] = i, add, bit
			n++
			continue
		}
		k := slot[i]
		v[k] += add
		terms[k] |= bit
	}
	s.touched, s.v, s.terms = touched[:n], v[:n], terms[:n]
}

// gainOf returns where the gain of the candidate at place k is held.
func (s *scores) gainOf(k int) *float64 {
	for len(s.gain) <= k {
		s.gain = append(s.gain, 0)
	}
	return &s.gain[k]
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

// contends tells whether candidate i is one of the contenders.
func (s *scores) contends(i int32) bool {
	return !s.narrowed || s.above[i>>6]&(1<<(i&63)) != 0
}

// place is candidate i's place, -1 if i is no candidate.
func (s *scores) place(i int32) int32 {
	if s.member[i>>6]&(1<<(i&63)) == 0 {
		return -1
	}
	return int32(s.slot[i])
}

// size makes room for n entries, with no candidate.
func (s *scores) size(n int) {
	n += n / 4
	s.slot, s.loan = make([]uint32, n), make([]int32, n)
	s.member = make([]uint64, (n+63)/64)
}

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
	s.live, s.sorted, s.narrowed, s.aboveEntries = s.live[:0], 0, false, s.aboveEntries[:0]
	// A word a candidate, or, past one candidate for eight words (where
	// clearing the whole array sequentially costs less than a write to
	// each), all at once. slot is left as it is: member says what of it
	// holds.
	if len(s.touched) > len(s.member)/8 {
		clear(s.member)
	} else {
		for _, i := range s.touched {
			s.member[i>>6] = 0
		}
	}
	s.touched, s.v, s.terms, s.gain = s.touched[:0], s.v[:0], s.terms[:0], s.gain[:0]
}

// marked sets the marks of the given entries and returns them.
func (s *scores) marked(entries []int32) []uint64 {
	if n := (len(s.slot) + 63) / 64; len(s.marks) < n {
		s.marks = make([]uint64, n)
	}
	for _, i := range entries {
		s.marks[i>>6] |= 1 << (i & 63)
	}
	return s.marks
}

// unmark clears the marks marked set.
func (s *scores) unmark(entries []int32) {
	for _, i := range entries {
		s.marks[i>>6] = 0
	}
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
