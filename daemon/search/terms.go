package search

import "hash/maphash"

// termDict holds a part's terms and where each one's postings are (see
// termRef), in a slotTable over the terms by number, whose bytes are in an
// arena of the dictionary's own. A large shard holds about as many terms
// as facts, most of them numbers and codes held once; as a Go map of
// strings a million took 58 MB and a million strings for the collector to
// follow, here about 32 MB and none. Terms are never removed: a part is
// rebuilt whole when it is compacted.
type termDict struct {
	t     slotTable
	names []ref
	refs  []termRef
	text  arena
	// spans holds, by block of text, the first and last term whose bytes
	// are in it: eachContaining reads the terms of the blocks holding a
	// piece, not all of a million.
	spans []termSpan
}

// termSpan is the terms of one block of a dictionary's arena: first to
// last, with a few of other blocks among them (a term too long for a
// block has one of its own).
type termSpan struct{ first, last int32 }

var termSeed = maphash.MakeSeed()

// reserve makes room for n terms in a dictionary that holds none.
func (d *termDict) reserve(n int) {
	if len(d.names) == 0 && n > 0 {
		d.t = newSlotTable(n)
		d.names, d.refs = make([]ref, 0, n), make([]termRef, 0, n)
	}
}

func (d *termDict) len() int { return len(d.names) }

// name returns term k.
func (d *termDict) name(k int32) string { return d.text.get(d.names[k]) }

// find returns the number of term t, or the slot it would take; and the
// top half of its hash.
func (d *termDict) find(t string) (k int32, slot int, tag uint32, found bool) {
	tag = uint32(maphash.String(termSeed, t) >> 32)
	slot, k, found = d.t.find(tag, func(k int32) bool { return d.name(k) == t })
	return k, slot, tag, found
}

// place is find for a term about to be added (slotTable.makeRoom).
func (d *termDict) place(t string) (k int32, slot int, tag uint32, found bool) {
	d.t.makeRoom()
	return d.find(t)
}

// get returns where term t's postings are.
func (d *termDict) get(t string) (termRef, bool) {
	k, _, _, found := d.find(t)
	if !found {
		return 0, false
	}
	return d.refs[k], true
}

// add adds term t, which place did not find but placed at slot with tag,
// and returns its name as the dictionary holds it.
func (d *termDict) add(t string, r termRef, slot int, tag uint32) string {
	k := int32(len(d.names))
	name := d.text.put(t)
	if int(name.block) == len(d.spans) { // a block put opened for it
		d.spans = append(d.spans, termSpan{first: k})
	}
	d.spans[name.block].last = k
	d.names = append(d.names, name)
	d.refs = append(d.refs, r)
	d.t.set(slot, tag, k)
	return d.name(k)
}

// each calls fn with every term and where its postings are, by number.
func (d *termDict) each(fn func(t string, r termRef)) {
	for k := range d.names {
		fn(d.name(int32(k)), d.refs[k])
	}
}
