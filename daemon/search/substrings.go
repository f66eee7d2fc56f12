package search

import (
	"bytes"
	"iter"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
)

// The substring fallback. A query word no fact holds whole ("lisb", a
// typo, a piece of a code) is looked for inside the facts' words. In a
// small search every text is read; in a large one that costs tens of
// milliseconds (a million texts), so the words that could hold it are
// found first, and only the facts holding those are read.
//
// A fact's text holds a needle (one word: letters and digits) exactly when
// one of its folded words does, and every word w of a fact gives the fact
// the term stem(w). So the facts holding the needle are among those
// holding the terms of the words containing it. Those words are the
// terms themselves where stem(w) is w, and otherwise the part's surface
// words: each word whose stem differs, with its term. The candidates are
// then read as the small part's are, so the answer is the same.
//
// Most need no reading: a term whose name holds the needle, and each of
// whose surface words does too, is held only by facts holding the
// needle. Only the facts found through the other terms ("happi" holds
// "ppi", but its word "happy" does not) are read. (This trusts a part's
// postings to be its texts' terms, as scoring by them does already; a
// snapshot's are used only when made by the same analysis for as many
// facts.)

// minPrefiltered is how many facts a fallback reads, in the parts it
// searches, from which their words are looked through first, in an engine
// that keeps them (KeepWords): below it, reading every text costs a
// millisecond or less. A part that large on its own has its words built
// as soon as it is read at a commit; smaller ones (an agent's own shard,
// its user's and its projects', 10,000 facts each) when a fallback first
// searches them, so that memory goes to the parts searched this way.
// Parts under minSurfaced facts are always read whole: their texts cost
// less than their words would.
var (
	minPrefiltered = 20000
	minSurfaced    = 1000
)

// surface holds a part's surface words, each word as a term of a
// dictionary whose refs are the numbers of its term in the part's
// dictionary. They are built in the background once the part is read at
// a commit, or by the first fallback that wants them (reading every text
// of the part: half a second at a million facts; meanwhile fallbacks read
// the texts), kept up to date as facts are put, and dropped when the
// part's dictionary changes under them. Only an engine that keeps words
// builds them.
type surface struct {
	words    atomic.Pointer[surfaceWords]
	building atomic.Bool
	drops    atomic.Uint64 // a build asked for before a drop is thrown away
	// unsure is set when a replace of the part failed half way, leaving
	// facts put without their terms: its texts are read until the index
	// is compacted (a new part).
	unsure atomic.Bool
}

// surfaceWords are a part's surface words, and how many each term has.
type surfaceWords struct {
	termDict
	per map[int32]int32 // by the number of a term with surface words
}

func newSurfaceWords() *surfaceWords { return &surfaceWords{per: make(map[int32]int32)} }

// surfaceChunk is how many facts a build reads per hold of the index's
// read lock: a few milliseconds, which a put waits at most.
const surfaceChunk = 4096

// scoreSubstrings finds facts containing a query word as part of a word,
// such as "lisb" or a product code, when no whole word matched. It looks
// only for the words no fact holds whole: a word every fact holds, left
// unscored as uninformative, would otherwise match every fact here.
func (x *Engine) scoreSubstrings(sc *scores, st stats, content []string) {
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
	// One or two needles are looked for in each text as it is, in any
	// case; more in the text folded once for all of them, which costs a
	// copy but lets each be found at the speed of a plain search: eight
	// pieces such as "ing ion ent" took half a second over a million
	// facts, 0.19 s folded once.
	foldOnce := len(needles) > 2
	var buf []byte
	for _, part := range st.parts {
		entries := slices.Values(part.entries)
		sure := make([]entrySet, len(needles)) // none certain: every candidate is read
		// st.live: the texts reading every one would read.
		if x.keepWords && st.live >= minPrefiltered && len(part.entries) >= minSurfaced && !part.surface.unsure.Load() {
			if surf := part.surface.words.Load(); surf == nil {
				x.buildSurfaceLater(part)
			} else if held, certain, some := x.mayHold(part, surf, needles); !some {
				continue // no word of the part holds one
			} else if held.bits != nil {
				entries, sure = held.each(), certain // a part's entries rise: the same order
			}
		}
		for i := range entries {
			if !x.alive[i] { // a part's facts are of a shard searched
				continue
			}
			var text string
			folded := false
			for j, n := range needles {
				held := sure[j].has(i)
				switch {
				case held:
				case !foldOnce:
					held = x.holds(i, n)
				default:
					if !folded {
						text, buf = x.foldedString(i, buf)
						folded = true
					}
					held = strings.Contains(text, n)
				}
				if !held {
					continue
				}
				sc.add(i, 1)
				if p := sc.explain(i); p != nil {
					p.Substring++
				}
			}
		}
	}
}

// holds tells whether entry i's folded words hold n, a folded word or
// words joined by single spaces: in an ASCII text it is found as in the
// text's folded words, without folding them.
func (x *Engine) holds(i int32, n string) bool {
	if e := x.entries.at(i); !e.foldKept {
		return containsFold(x.texts.get(e.text), n)
	}
	return strings.Contains(x.texts.get(x.folded[i]), n)
}

// entrySet is a set of a part's entries, a bit each from the part's
// first: a part of ten thousand facts in an index of a million needs
// bits for its own entries alone. The zero set is empty.
type entrySet struct {
	base int32 // the entry of bit 0, a multiple of 64
	bits []uint64
}

// newEntrySet makes an empty set with room for part p's entries.
func newEntrySet(p *part) entrySet {
	first, last := p.entries[0], p.entries[len(p.entries)-1]
	base := first &^ 63
	return entrySet{base: base, bits: make([]uint64, (last-base)/64+1)}
}

func (s entrySet) add(i int32) {
	i -= s.base
	s.bits[i>>6] |= 1 << (i & 63)
}

func (s entrySet) has(i int32) bool {
	i -= s.base
	return s.bits != nil && s.bits[i>>6]&(1<<(i&63)) != 0
}

// each yields the entries of the set, rising.
func (s entrySet) each() iter.Seq[int32] {
	return func(yield func(int32) bool) {
		for w, word := range s.bits {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				if !yield(s.base + int32(w<<6|b)) {
					return
				}
				word &^= 1 << b
			}
		}
	}
}

// mayHold marks the entries of a part holding a term of a word that
// contains one of the needles, a bit each in held, and tells whether any
// does. Those certain to hold needle j (sure terms: see above) are marked
// in sure[j] too. Marking costs about what reading a text does, a
// posting: when the postings marked outnumber a quarter of the part's
// entries (a piece such as "ing"), it gives up, with nothing marked, for
// the texts to be read.
func (x *Engine) mayHold(p *part, surf *surfaceWords, needles []string) (held entrySet, sure []entrySet, some bool) {
	budget := len(p.entries) / 4
	postingsOf := func(k int32) []posting {
		var one [1]posting
		return p.listOf(p.terms.refs[k], &one)
	}
	sure = make([]entrySet, len(needles))
	// mark marks the facts holding term k, and in sure[j] too unless j is
	// -1; false once the budget is spent.
	mark := func(k int32, j int) bool {
		ps := postingsOf(k)
		if budget -= len(ps); budget < 0 {
			return false
		}
		if held.bits == nil {
			held = newEntrySet(p)
		}
		var certain entrySet
		if j >= 0 {
			if sure[j].bits == nil {
				sure[j] = newEntrySet(p)
			}
			certain = sure[j]
		}
		for _, q := range ps {
			i := q.doc()
			held.add(i)
			if certain.bits != nil {
				certain.add(i)
			}
		}
		return true
	}
	for j, n := range needles {
		// The terms with surface words holding n, and how many each has.
		// Each will be marked: once their postings outrun the budget, the
		// rest need not be looked through.
		bySurface := make(map[int32]int32)
		pending := 0
		if !surf.eachContaining(n, func(k int32) bool {
			t := int32(surf.refs[k])
			if bySurface[t] == 0 {
				pending += len(postingsOf(t))
			}
			bySurface[t]++
			return pending <= budget
		}) {
			return entrySet{}, nil, true
		}
		if !p.terms.eachContaining(n, func(k int32) bool {
			certainOf := -1
			if bySurface[k] == surf.per[k] {
				certainOf = j // every word of the term holds n
			}
			delete(bySurface, k)
			return mark(k, certainOf)
		}) {
			return entrySet{}, nil, true
		}
		for k := range bySurface {
			if !mark(k, -1) {
				return entrySet{}, nil, true
			}
		}
	}
	return held, sure, held.bits != nil
}

// buildSurfaceLater builds a part's surface words in the background,
// unless a build is under way. The caller holds the index's lock (to
// read or to write): what the part and the index are now is what the
// build must find when it takes the lock, else a writer changed them
// first.
func (x *Engine) buildSurfaceLater(p *part) {
	if p.surface.building.CompareAndSwap(false, true) {
		drops, epoch := p.surface.drops.Load(), x.epoch
		x.building.Add(1)
		go surfaceBuild(func() {
			defer x.building.Done()
			defer p.surface.building.Store(false)
			x.buildSurface(p, drops, epoch)
		})
	}
}

// surfaceBuild runs a build in the background; tests hold one back until
// a writer has gone first.
var surfaceBuild = func(build func()) { build() }

// buildSurface reads the texts of a part's live facts, a chunk per hold of the
// index's read lock, and keeps their surface words once it has read them
// all. Facts are only ever appended to a part, so those put meanwhile are
// read in a later chunk; a part whose dictionary changed (a drop) or that
// the index no longer holds (a reset: another epoch) since the build was
// asked for is given up, as is one with a word whose term it lacks:
// fallbacks read every text until a later build.
func (x *Engine) buildSurface(p *part, drops, epoch uint64) {
	b := surfaceBuilder{x: x, p: p, drops: drops, epoch: epoch, words: newSurfaceWords()}
	for b.chunk() {
	}
}

// surfaceBuilder is a build of a part's surface words under way.
type surfaceBuilder struct {
	x            *Engine
	p            *part
	drops, epoch uint64
	words        *surfaceWords
	done         int // the part's entries read
	buf          []byte
}

// chunk reads the next entries under the read lock, and keeps the words
// once all are read; false when the build is over, kept or given up.
func (b *surfaceBuilder) chunk() bool {
	x, p := b.x, b.p
	x.mu.RLock()
	defer x.mu.RUnlock()
	if p.surface.drops.Load() != b.drops || x.epoch != b.epoch || p.surface.unsure.Load() {
		return false
	}
	end := min(len(p.entries), b.done+surfaceChunk)
	for _, i := range p.entries[b.done:end] {
		if !x.alive[i] {
			// Searched for no one; and one put by a replace that failed
			// half way has no terms, and would give the build up.
			continue
		}
		var folded string
		folded, b.buf = x.foldedString(i, b.buf)
		if !addSurface(b.words, &p.terms, strings.Clone(folded)) { // the words keep pieces of it
			return false
		}
	}
	if b.done = end; b.done < len(p.entries) {
		return true
	}
	p.surface.words.Store(b.words)
	return false
}

// noteSurface adds the surface words of a folded text just put in a
// part, if it keeps them; a word whose term the part lacks (its postings
// are installed after its facts are put) drops them, to be built again.
func noteSurface(p *part, folded string) {
	if w := p.surface.words.Load(); w != nil && !addSurface(w, &p.terms, folded) {
		dropSurface(p)
	}
}

// dropSurface forgets a part's surface words: its dictionary changed
// under them.
func dropSurface(p *part) {
	p.surface.drops.Add(1)
	p.surface.words.Store(nil)
}

// addSurface adds to w the words of a folded text whose stem differs,
// each with the number of its term in terms; false if a term is missing.
func addSurface(w *surfaceWords, terms *termDict, folded string) bool {
	for _, word := range words(folded) {
		_, slot, tag, found := w.place(word)
		if found {
			continue
		}
		s := stem(word)
		if s == word {
			continue // the term itself
		}
		k, _, _, found := terms.find(s)
		if !found {
			return false
		}
		w.add(word, termRef(k), slot, tag)
		w.per[k]++
	}
	return true
}

// eachContaining calls fn with the number of each term holding s, in no
// set order, until fn returns false, and tells whether it called fn with
// every one. The terms' bytes lie in the blocks of the dictionary's
// arena, so a block is searched whole first, and only the terms of blocks
// holding s are read.
func (d *termDict) eachContaining(s string, fn func(k int32) bool) bool {
	needle := []byte(s)
	for b, block := range d.text.blocks {
		if !bytes.Contains(block, needle) {
			continue
		}
		for k := d.spans[b].first; k <= d.spans[b].last; k++ {
			if r := d.names[k]; int(r.block) == b && strings.Contains(d.text.get(r), s) && !fn(k) {
				return false
			}
		}
	}
	return true
}
