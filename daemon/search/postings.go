package search

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/memd/memd"
)

// A shard's postings are saved beside its facts (the index's snapshot
// holds both) and given back with them at a start, so that a start does
// not analyse every fact's text again. ExportShard writes them, naming
// each fact by its place in the order it gave the facts in; an Update
// that replaces a shard with the facts in that order takes them back.
//
// The postings depend on how texts are analysed (fold, words, stem, and
// the Unicode tables and stemmer beneath them): they start with a digest
// of the analysis that made them, and postings made by another are not
// used.
//
// Format: the analysis's digest (8 bytes); the number of facts; each
// fact's number of terms; the number of terms, of postings, and of bytes
// in the terms (so a reader makes room once); each term with the number
// of facts holding it and, for each, its place and how often it holds the
// term, places rising. Numbers are uvarints.

var errBadPostings = errors.New("postings do not match the facts given with them")

// maxTerms bounds the terms of one fact read back: a fact's text is at
// most 500 characters.
const maxTerms = 1 << 16

// ExportShard calls begin with the number of facts of a shard, then fn
// with each of them, lasting ones first, then dated ones, each in rank order
// (as Walk gives them), and returns those facts' postings.
//
// The postings are measured before they are encoded, into a buffer of
// their size: a million facts' take 37 MB, which growing a buffer by
// doubling would leave twice over as garbage.
func (x *Engine) ExportShard(shard memd.ShardID, begin func(facts int), fn func(Doc)) []byte {
	x.mu.RLock()
	defer x.mu.RUnlock()
	sd, n := x.shards[shard], x.shardNum[shard]
	if sd == nil {
		begin(0)
		return binary.AppendUvarint(binary.LittleEndian.AppendUint64(nil, analysis()), 0)
	}
	lists := [][]int32{sd.profile, sd.recent}
	facts := len(sd.profile) + len(sd.recent)
	begin(facts)
	place := newPlaces(lists, facts)
	size := 8 + uvarintLen(uint64(facts))
	// Each list highest first (see shardDocs), as Walk gives them.
	highestFirst := func(yield func(int32) bool) {
		for _, list := range lists {
			for _, i := range slices.Backward(list) {
				if !yield(i) {
					return
				}
			}
		}
	}
	for i := range highestFirst {
		place.add(i)
		fn(x.docOf(i))
		size += uvarintLen(uint64(x.lengths[i]))
	}
	p := x.parts[n]
	var held []posting // a term's postings, by place
	placed := func(r termRef) []posting {
		var one [1]posting
		held = held[:0]
		// Dead entries and passages of notes have no place.
		for _, q := range p.listOf(r, &one) {
			if at := place.of(q.doc()); at >= 0 {
				held = append(held, newPosting(at, q.tf()))
			}
		}
		return held
	}
	count, postings, termBytes := 0, 0, 0
	p.terms.each(func(t string, r termRef) {
		list := placed(r)
		if len(list) == 0 {
			return
		}
		count, postings, termBytes = count+1, postings+len(list), termBytes+len(t)
		size += uvarintLen(uint64(len(t))) + len(t) + uvarintLen(uint64(len(list)))
		for _, q := range list {
			size += uvarintLen(uint64(q.doc())) + uvarintLen(uint64(q.tf()))
		}
	})
	size += uvarintLen(uint64(count)) + uvarintLen(uint64(postings)) + uvarintLen(uint64(termBytes))

	b := make([]byte, 0, size)
	b = binary.LittleEndian.AppendUint64(b, analysis())
	b = binary.AppendUvarint(b, uint64(facts))
	for i := range highestFirst {
		b = binary.AppendUvarint(b, uint64(x.lengths[i]))
	}
	b = binary.AppendUvarint(b, uint64(count))
	b = binary.AppendUvarint(b, uint64(postings))
	b = binary.AppendUvarint(b, uint64(termBytes))
	p.terms.each(func(t string, r termRef) {
		list := placed(r)
		if len(list) == 0 {
			return
		}
		slices.SortFunc(list, func(a, b posting) int { return int(a.doc() - b.doc()) })
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, q := range list {
			b = binary.AppendUvarint(b, uint64(q.doc()))
			b = binary.AppendUvarint(b, uint64(q.tf()))
		}
	})
	return b
}

// uvarintLen is how many bytes binary.AppendUvarint takes for v.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// analysis is a digest of how texts are analysed: what fold, words and
// stem make of words that exercise them, and the Unicode version.
var analysis = sync.OnceValue(func() uint64 {
	h := fnv.New64a()
	h.Write([]byte(unicode.Version))
	h.Write([]byte(norm.Version))
	for _, w := range words(fold("Running flights migrated auditors' allergies generously; CAFÉ naïve Straße İstanbul ǅemal 東京 Q3-4242 e-mail don't ﬁnance Ωmega 年会在东京举办 サーバーの証明書 ｶﾞ 서울에서 \u1109\u1165\u110b\u116e\u11af 가\u0301\u11a8 Москве красный Й ёлка हिन्दी ข้าว 1\ufe0f\u20e3 二〇二四年 猫， ㄅㄆㄇ שָׁלוֹם مَرْحَبًا")) {
		h.Write([]byte(w))
		h.Write([]byte{0})
		h.Write([]byte(stem(w)))
		h.Write([]byte{0})
	}
	return h.Sum64()
})

// places numbers a shard's facts in the order they are exported. A
// shard's entries are mostly side by side (a shard is read in one go), so
// an array over their span serves, and a map when they are scattered.
type places struct {
	lo     int32
	dense  []int32 // place+1 of entry lo+k; 0: none
	sparse map[int32]int32
	n      int32
}

func newPlaces(lists [][]int32, n int) *places {
	lo, hi := int32(math.MaxInt32), int32(-1)
	for _, list := range lists {
		for _, i := range list {
			lo, hi = min(lo, i), max(hi, i)
		}
	}
	if hi < lo {
		return &places{}
	}
	if span := int(hi-lo) + 1; span <= 4*n+1024 {
		return &places{lo: lo, dense: make([]int32, span)}
	}
	return &places{sparse: make(map[int32]int32, n)}
}

func (p *places) add(i int32) {
	p.n++
	if p.sparse != nil {
		p.sparse[i] = p.n
	} else {
		p.dense[i-p.lo] = p.n
	}
}

// of returns entry i's place, or -1 if it has none.
func (p *places) of(i int32) int32 {
	if p.sparse != nil {
		return p.sparse[i] - 1
	}
	if i < p.lo || int(i-p.lo) >= len(p.dense) {
		return -1
	}
	return p.dense[i-p.lo] - 1
}

// imported is what ExportShard wrote, read back for n facts.
type imported struct {
	lengths []int
	terms   []string
	lists   [][]posting // each term's, by place, in order
}

// readPostings reads postings ExportShard wrote for n facts.
func readPostings(s string, n int) (imported, error) {
	head, err := readPostingsHead(s, n)
	if err != nil {
		return imported{}, err
	}
	return head.lists()
}

// postingsHead is the start of the postings of n facts: how many terms
// each fact has, which a fact is put with, and how many terms there are
// in all. The rest, each term's list, is read by lists.
type postingsHead struct {
	lengths                   []int // one a fact
	terms, postings, termSize uint64
	rest                      postingsReader
}

func readPostingsHead(s string, n int) (postingsHead, error) {
	if len(s) < 8 || binary.LittleEndian.Uint64([]byte(s[:8])) != analysis() {
		return postingsHead{}, errBadPostings
	}
	r := postingsReader{s: s[8:]}
	if r.uvarint() != uint64(n) || r.bad {
		return postingsHead{}, errBadPostings
	}
	h := postingsHead{lengths: make([]int, n)}
	for i := range h.lengths {
		length := r.uvarint()
		if length > maxTerms {
			return postingsHead{}, errBadPostings
		}
		h.lengths[i] = int(length)
	}
	// Each term takes two bytes at least, each posting two.
	h.terms, h.postings, h.termSize = r.uvarint(), r.uvarint(), r.uvarint()
	if r.bad || h.terms > uint64(len(r.s))/2 || h.postings > uint64(len(r.s))/2 || h.termSize > uint64(len(r.s)) {
		return postingsHead{}, errBadPostings
	}
	h.rest = r
	return h, nil
}

// lists reads each term's list. The terms share one new string: pieces
// of the postings would hold all of them, numbers too.
func (h postingsHead) lists() (imported, error) {
	r, n := h.rest, len(h.lengths)
	imp := imported{lengths: h.lengths}
	// One array holds every posting; each term's list is a piece of it.
	all := make([]posting, 0, h.postings)
	ends := make([]int, 0, 2*h.terms)
	var words strings.Builder
	words.Grow(int(h.termSize))
	for terms := h.terms; terms > 0 && !r.bad; terms-- {
		t := r.take(r.uvarint())
		held := r.uvarint()
		if t == "" || held == 0 || held > uint64(n) {
			return imported{}, errBadPostings
		}
		for last := -1; held > 0 && !r.bad; held-- {
			at, tf := r.uvarint(), r.uvarint()
			if at >= uint64(n) || int(at) <= last || tf == 0 || tf > 0xffff {
				return imported{}, errBadPostings
			}
			last = int(at)
			all = append(all, newPosting(int32(at), int(tf)))
		}
		words.WriteString(t)
		ends = append(ends, len(all), words.Len())
	}
	if r.bad || len(r.s) != 0 {
		return imported{}, errBadPostings
	}
	text := words.String()
	imp.terms = make([]string, len(ends)/2)
	for k, at := 0, 0; k < len(imp.terms); k++ {
		imp.terms[k] = text[at:ends[2*k+1]]
		at = ends[2*k+1]
	}
	imp.lists = make([][]posting, len(imp.terms))
	from := 0
	for k := range imp.lists {
		end := ends[2*k]
		// Capped, so that a later append to one list copies it rather
		// than writing over the next.
		imp.lists[k] = all[from:end:end]
		from = end
	}
	return imp, nil
}

// installPostings gives the facts put from entry first on, in the order
// the postings were written, the terms imp holds.
func (p *part) installPostings(first int32, imp imported) {
	for k, t := range imp.terms {
		list := imp.lists[k]
		for j := range list {
			list[j] = newPosting(list[j].doc()+first, list[j].tf())
		}
		k, slot, tag, known := p.terms.place(t)
		var r termRef
		if known {
			r = p.terms.refs[k]
		}
		switch {
		case !known && len(list) == 1:
			p.newTerm(t, singleRef(list[0]), slot, tag)
		case !known:
			p.newTerm(t, termRef(len(p.lists)), slot, tag)
			p.lists = append(p.lists, list)
		case r&single != 0:
			held, _ := r.single()
			p.terms.refs[k] = termRef(len(p.lists))
			p.lists = append(p.lists, append([]posting{held}, list...))
		default:
			p.lists[r] = append(p.lists[r], list...)
		}
	}
}

// postingsReader reads uvarints and strings (of a snapshot's postings, or
// an entry's origin); the first fault sticks.
type postingsReader struct {
	s   string
	bad bool
}

func (r *postingsReader) uvarint() uint64 {
	v, n := binary.Uvarint([]byte(r.s[:min(len(r.s), binary.MaxVarintLen64)]))
	if n <= 0 {
		r.bad, r.s = true, ""
		return 0
	}
	r.s = r.s[n:]
	return v
}

func (r *postingsReader) take(n uint64) string {
	if n > uint64(len(r.s)) {
		r.bad, r.s = true, ""
		return ""
	}
	out := r.s[:n]
	r.s = r.s[n:]
	return out
}
