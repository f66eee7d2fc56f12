package search

import "hash/maphash"

// idMap finds a part's live entry by its ID. It is keyed by a hash of the
// ID, so the collector has nothing to follow in it: keyed by the IDs, a
// million facts are a million strings marked at every collection, which
// was most of the time a restart spent reading a large shard. The rare ID
// whose hash a live one already holds is kept by its string.
type idMap struct {
	byHash map[uint64]int32
	clash  map[string]int32
}

var idSeed = maphash.MakeSeed()

// hashID is a variable for the test that makes every ID clash.
var hashID = func(id string) uint64 { return maphash.String(idSeed, id) }

func newIDMap(n int) idMap {
	return idMap{byHash: make(map[uint64]int32, n)}
}

func (m *idMap) len() int { return len(m.byHash) + len(m.clash) }

// get returns the entry holding id.
func (m *idMap) get(idOf func(int32) string, id string) (int32, bool) {
	if i, ok := m.byHash[hashID(id)]; ok && idOf(i) == id {
		return i, true
	}
	i, ok := m.clash[id]
	return i, ok
}

// put records entry i as the one holding id, in place of the entry
// before it, which it returns (replaced true).
func (m *idMap) put(idOf func(int32) string, id string, i int32) (before int32, replaced bool) {
	if j, ok := m.clash[id]; ok {
		m.clash[id] = i
		return j, true
	}
	h := hashID(id)
	j, ok := m.byHash[h]
	if ok && idOf(j) != id {
		if m.clash == nil {
			m.clash = make(map[string]int32)
		}
		m.clash[id] = i
		return 0, false
	}
	m.byHash[h] = i
	return j, ok
}

// remove forgets id.
func (m *idMap) remove(idOf func(int32) string, id string) {
	h := hashID(id)
	if j, ok := m.byHash[h]; ok && idOf(j) == id {
		delete(m.byHash, h)
		return
	}
	delete(m.clash, id)
}
