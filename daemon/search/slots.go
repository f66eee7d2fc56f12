package search

// slotTable is a hash table of one word a slot: the top half of a key's
// hash (its tag) and the number of what the key names, plus one (0 is an
// empty slot). A key sits at or after its home slot, its tag scaled to the
// table, so growing needs no hash again; keys whose tags agree are told
// apart by what they name (find's is). It holds no pointers for the
// collector to follow and is at most four fifths full: a million keys take
// 10 MB, where a Go map's slots are twice the size and its table doubles
// in steps. The part's IDs (idMap) and terms (termDict) are kept in one.
type slotTable struct {
	slots []uint64
	n     int
}

// newSlotTable returns a table with room for n keys.
func newSlotTable(n int) slotTable {
	if n == 0 {
		return slotTable{}
	}
	return slotTable{slots: make([]uint64, slotsFor(n))}
}

// slotsFor is the size of a table for n keys: at most four fifths full.
func slotsFor(n int) int { return max(8, n+n/4+1) }

// full tells whether one more key needs a larger table (grow).
func (t *slotTable) full() bool { return (t.n+1)*5 > len(t.slots)*4 }

// home is the slot a key of tag is first looked for in.
func (t *slotTable) home(tag uint32) int { return int(uint64(tag) * uint64(len(t.slots)) >> 32) }

// next is the slot after j, the first after the last.
func (t *slotTable) next(j int) int {
	if j++; j == len(t.slots) {
		return 0
	}
	return j
}

// find returns the slot holding the key of tag whose number is says yes
// to, and the number; or the empty slot where the key would go.
func (t *slotTable) find(tag uint32, is func(k int32) bool) (slot int, k int32, found bool) {
	if len(t.slots) == 0 {
		return 0, 0, false
	}
	for j := t.home(tag); ; j = t.next(j) {
		s := t.slots[j]
		if s == 0 {
			return j, 0, false
		}
		if k := int32(uint32(s)) - 1; uint32(s>>32) == tag && is(k) {
			return j, k, true
		}
	}
}

// makeRoom grows a full table: done before find for a key about to be
// set, the slot find returns stays where set may put the key.
func (t *slotTable) makeRoom() {
	if t.full() {
		t.grow()
	}
}

// set puts number k with tag in slot, as find gave it after makeRoom.
func (t *slotTable) set(slot int, tag uint32, k int32) {
	if t.slots[slot] == 0 {
		t.n++
	}
	t.slots[slot] = uint64(tag)<<32 | uint64(uint32(k+1))
}

// grow moves the keys into a table for twice as many.
func (t *slotTable) grow() {
	old := t.slots
	t.slots = make([]uint64, slotsFor(2*max(t.n, 4)))
	for _, s := range old {
		if s == 0 {
			continue
		}
		j := t.home(uint32(s >> 32))
		for t.slots[j] != 0 {
			j = t.next(j)
		}
		t.slots[j] = s
	}
}

// remove empties slot j. The keys after it that would not be found past
// the hole move back into it, so none is lost.
func (t *slotTable) remove(j int) {
	t.slots[j] = 0
	t.n--
	size := len(t.slots)
	for k := t.next(j); t.slots[k] != 0; k = t.next(k) {
		home := t.home(uint32(t.slots[k] >> 32))
		// k's key moves to the hole when the hole lies on its way from home.
		if (k-home+size)%size >= (k-j+size)%size {
			t.slots[j], t.slots[k] = t.slots[k], 0
			j = k
		}
	}
}
