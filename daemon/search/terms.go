package search

import "hash/maphash"

// termDict holds a part's terms and where each one's postings are (see
// termRef): a table of one word a slot (the top half of the term's hash,
// and the term's number plus one; 0 is empty) over the terms by number,
// whose bytes are in an arena of the dictionary's own. A large shard holds
// about as many terms as facts, most of them numbers and codes held once;
// as a Go map of strings a million took 58 MB and a million strings for
// the collector to follow, here about 32 MB and none. Terms are never
// removed: a part is rebuilt whole when it is compacted.
type termDict struct {
	slots []uint64
	names []ref
	refs  []termRef
	text  arena
}

var termSeed = maphash.MakeSeed()

// reserve makes room for n terms in a dictionary that holds none.
func (d *termDict) reserve(n int) {
	if len(d.names) == 0 && n > 0 {
		d.slots = make([]uint64, slotsFor(n))
		d.names, d.refs = make([]ref, 0, n), make([]termRef, 0, n)
	}
}

func (d *termDict) len() int { return len(d.names) }

// name returns term k.
func (d *termDict) name(k int32) string { return d.text.get(d.names[k]) }

// find returns the number of term t, or the slot it would take and the
// top half of its hash.
func (d *termDict) find(t string) (k int32, slot int, tag uint32, found bool) {
	tag = uint32(maphash.String(termSeed, t) >> 32)
	if len(d.slots) == 0 {
		return 0, 0, tag, false
	}
	for j := homeOf(tag, len(d.slots)); ; j = nextOf(j, len(d.slots)) {
		s := d.slots[j]
		if s == 0 {
			return 0, j, tag, false
		}
		if k := int32(uint32(s)) - 1; uint32(s>>32) == tag && d.name(k) == t {
			return k, j, tag, true
		}
	}
}

// get returns where term t's postings are.
func (d *termDict) get(t string) (termRef, bool) {
	k, _, _, found := d.find(t)
	if !found {
		return 0, false
	}
	return d.refs[k], true
}

// add adds term t, which find did not find but placed at slot with tag,
// and returns its name as the dictionary holds it.
func (d *termDict) add(t string, r termRef, slot int, tag uint32) string {
	if (len(d.names)+1)*5 > len(d.slots)*4 {
		d.grow()
		_, slot, _, _ = d.find(t)
	}
	k := int32(len(d.names))
	d.names = append(d.names, d.text.put(t))
	d.refs = append(d.refs, r)
	d.slots[slot] = uint64(tag)<<32 | uint64(uint32(k+1))
	return d.name(k)
}

// grow moves the terms into a table for twice as many.
func (d *termDict) grow() {
	old := d.slots
	d.slots = make([]uint64, slotsFor(2*max(len(d.names), 4)))
	for _, s := range old {
		if s == 0 {
			continue
		}
		j := homeOf(uint32(s>>32), len(d.slots))
		for d.slots[j] != 0 {
			j = nextOf(j, len(d.slots))
		}
		d.slots[j] = s
	}
}

// each calls fn with every term and where its postings are, by number.
func (d *termDict) each(fn func(t string, r termRef)) {
	for k := range d.names {
		fn(d.name(int32(k)), d.refs[k])
	}
}
