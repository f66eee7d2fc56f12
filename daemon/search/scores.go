package search

import (
	"math/bits"
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
