package search

import "hash/maphash"

// idMap finds a part's live entry by its ID, in a slotTable: IDs whose
// hashes agree are told apart by the entries' IDs.
type idMap struct{ t slotTable }

var idSeed = maphash.MakeSeed()

// hashID is a variable for the test that makes every ID clash.
var hashID = func(id string) uint64 { return maphash.String(idSeed, id) }

// newIDMap returns a map with room for n IDs.
func newIDMap(n int) idMap { return idMap{newSlotTable(n)} }

func (m *idMap) len() int { return m.t.n }

// find returns the slot of id (or where it would go), its tag, and its
// entry.
func (m *idMap) find(idOf func(int32) string, id string) (slot int, tag uint32, i int32, found bool) {
	tag = uint32(hashID(id) >> 32)
	slot, i, found = m.t.find(tag, func(i int32) bool { return idOf(i) == id })
	return slot, tag, i, found
}

// get returns the entry holding id.
func (m *idMap) get(idOf func(int32) string, id string) (int32, bool) {
	_, _, i, found := m.find(idOf, id)
	return i, found
}

// place is find for an ID about to be set (slotTable.makeRoom).
func (m *idMap) place(idOf func(int32) string, id string) (slot int, tag uint32, i int32, found bool) {
	m.t.makeRoom()
	return m.find(idOf, id)
}

// set records entry i at a slot place returned, with its tag.
func (m *idMap) set(slot int, tag uint32, i int32) { m.t.set(slot, tag, i) }

// remove forgets id.
func (m *idMap) remove(idOf func(int32) string, id string) {
	if slot, _, _, found := m.find(idOf, id); found {
		m.t.remove(slot)
	}
}
