package search

import "hash/maphash"

// idMap finds a part's live entry by its ID: a table of one word a slot
// (the top half of the ID's hash, and the entry's number plus one; 0 is
// empty), where an ID sits at or after the slot its hash places it in.
// It holds no pointers for the collector to follow, and a million IDs take
// 10 MB: a Go map of the hashes took 36, its slots twice the size and its
// table doubling in steps. IDs whose hashes agree are told apart by the
// entries' IDs.
type idMap struct {
	slots []uint64
	n     int
}

var idSeed = maphash.MakeSeed()

// hashID is a variable for the test that makes every ID clash.
var hashID = func(id string) uint64 { return maphash.String(idSeed, id) }

// newIDMap returns a map with room for n IDs.
func newIDMap(n int) idMap {
	if n == 0 {
		return idMap{}
	}
	return idMap{slots: make([]uint64, slotsFor(n))}
}

// slotsFor is the size of a table for n IDs: at most four fifths full.
func slotsFor(n int) int { return max(8, n+n/4+1) }

func (m *idMap) len() int { return m.n }

func (m *idMap) home(tag uint32) int { return homeOf(tag, len(m.slots)) }
func (m *idMap) next(j int) int      { return nextOf(j, len(m.slots)) }

// homeOf is the slot of a table of size slots a key whose hash's top half
// is tag is first looked for in: tag scaled to the table, so growing it
// needs no hash again.
func homeOf(tag uint32, size int) int { return int(uint64(tag) * uint64(size) >> 32) }

// nextOf is the slot after j, the first after the last.
func nextOf(j, size int) int {
	if j++; j == size {
		return 0
	}
	return j
}

// find returns the slot holding id, or the empty slot where it would go,
// and the top half of id's hash.
func (m *idMap) find(idOf func(int32) string, id string) (j int, tag uint32, found bool) {
	tag = uint32(hashID(id) >> 32)
	for j = m.home(tag); ; j = m.next(j) {
		s := m.slots[j]
		if s == 0 {
			return j, tag, false
		}
		if uint32(s>>32) == tag && idOf(int32(uint32(s))-1) == id {
			return j, tag, true
		}
	}
}

// get returns the entry holding id.
func (m *idMap) get(idOf func(int32) string, id string) (int32, bool) {
	if m.n == 0 {
		return 0, false
	}
	j, _, found := m.find(idOf, id)
	return int32(uint32(m.slots[j])) - 1, found
}

// put records entry i as the one holding id, in place of the entry
// before it, which it returns (replaced true).
func (m *idMap) put(idOf func(int32) string, id string, i int32) (before int32, replaced bool) {
	if (m.n+1)*5 > len(m.slots)*4 {
		m.grow()
	}
	j, tag, found := m.find(idOf, id)
	if found {
		before = int32(uint32(m.slots[j])) - 1
	} else {
		m.n++
	}
	m.slots[j] = uint64(tag)<<32 | uint64(uint32(i+1))
	return before, found
}

// grow moves the IDs into a table for twice as many.
func (m *idMap) grow() {
	old := m.slots
	m.slots = make([]uint64, slotsFor(2*max(m.n, 4)))
	for _, s := range old {
		if s == 0 {
			continue
		}
		j := m.home(uint32(s >> 32))
		for m.slots[j] != 0 {
			j = m.next(j)
		}
		m.slots[j] = s
	}
}

// remove forgets id. The IDs after it that would not be found past the
// slot it leaves empty move back into it, so none is lost.
func (m *idMap) remove(idOf func(int32) string, id string) {
	if m.n == 0 {
		return
	}
	j, _, found := m.find(idOf, id)
	if !found {
		return
	}
	m.slots[j] = 0
	m.n--
	size := len(m.slots)
	for k := m.next(j); m.slots[k] != 0; k = m.next(k) {
		home := m.home(uint32(m.slots[k] >> 32))
		// k's ID moves to the hole when the hole lies on its way from home.
		if (k-home+size)%size >= (k-j+size)%size {
			m.slots[j], m.slots[k] = m.slots[k], 0
			j = k
		}
	}
}
