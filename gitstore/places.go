package gitstore

import (
	"slices"
	"strconv"
)

// factPlaces maps each fact ID a shard holds to the files holding it: what
// the writer asks to dedup a new fact and to find the line of one it edits,
// without holding every file parsed. A fact ID is 12 hex digits (see
// memd.FactID), kept as the number they spell; a million facts take about
// 30 MB here, where strings and a map of path lists took ten times that.
type factPlaces struct {
	one   map[uint64]uint32   // ID → the number of its file
	more  map[uint64][]uint32 // IDs a person wrote into several files
	odd   map[string][]uint32 // IDs that are not 12 hex digits (none memd writes)
	paths []string            // file numbers → paths
	of    map[string]uint32   // paths → file numbers
	// base holds IDs of one file each as a saved state read them back:
	// keys rising, with their files' numbers, a third of what one takes
	// and read without hashing a key. An ID in base and in gone is held
	// no longer there (it moved to one or more, or went); the maps hold
	// what changed since.
	baseKeys  []uint64
	baseFiles []uint32
	gone      map[uint64]bool
}

func newFactPlaces() *factPlaces {
	return &factPlaces{one: make(map[uint64]uint32), of: make(map[string]uint32)}
}

// idKey is a fact ID as a number, false when the ID is not 12 lowercase
// hex digits.
func idKey(id string) (uint64, bool) {
	if len(id) != 12 {
		return 0, false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, false
		}
	}
	k, err := strconv.ParseUint(id, 16, 64)
	return k, err == nil
}

func (p *factPlaces) number(path string) uint32 {
	if n, ok := p.of[path]; ok {
		return n
	}
	n := uint32(len(p.paths))
	p.paths = append(p.paths, path)
	p.of[path] = n
	return n
}

// reserve makes room for n facts in places that hold none yet, rather
// than grow a doubling at a time.
func (p *factPlaces) reserve(n int) {
	if p.len() == 0 {
		p.one = make(map[uint64]uint32, n)
	}
}

// len is how many distinct fact IDs the shard holds.
func (p *factPlaces) len() int {
	return len(p.one) + len(p.more) + len(p.odd) + len(p.baseKeys) - len(p.gone)
}

// oneFile returns the number of the one file holding the fact whose ID
// is k, false when none or several hold it.
func (p *factPlaces) oneFile(k uint64) (uint32, bool) {
	if n, ok := p.one[k]; ok {
		return n, true
	}
	if len(p.baseKeys) == 0 || p.gone[k] {
		return 0, false
	}
	if i, found := slices.BinarySearch(p.baseKeys, k); found {
		return p.baseFiles[i], true
	}
	return 0, false
}

// unsetOne records that the fact whose ID is k, found by oneFile, is no
// longer held by that file alone.
func (p *factPlaces) unsetOne(k uint64) {
	if _, ok := p.one[k]; ok {
		delete(p.one, k)
		return
	}
	if p.gone == nil {
		p.gone = make(map[uint64]bool)
	}
	p.gone[k] = true
}

// has reports whether some file holds id.
func (p *factPlaces) has(id string) bool {
	k, ok := idKey(id)
	if !ok {
		return len(p.odd[id]) > 0
	}
	if _, ok := p.oneFile(k); ok {
		return true
	}
	return len(p.more[k]) > 0
}

// get returns the paths of the files holding id, in the order they came.
func (p *factPlaces) get(id string) []string {
	k, ok := idKey(id)
	var nums []uint32
	switch {
	case !ok:
		nums = p.odd[id]
	default:
		if n, ok := p.oneFile(k); ok {
			return []string{p.paths[n]}
		}
		nums = p.more[k]
	}
	if len(nums) == 0 {
		return nil
	}
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = p.paths[n]
	}
	return out
}

// add records that path holds id.
func (p *factPlaces) add(id, path string) {
	k, ok := idKey(id)
	if !ok {
		n := p.number(path)
		if nums := p.odd[id]; !slices.Contains(nums, n) {
			if p.odd == nil {
				p.odd = make(map[string][]uint32)
			}
			p.odd[id] = append(nums, n)
		}
		return
	}
	p.addKey(k, path)
}

// addKey records that path holds the fact whose ID is k (memd.FactKey).
func (p *factPlaces) addKey(k uint64, path string) {
	n := p.number(path)
	if m, ok := p.oneFile(k); ok {
		if m != n {
			p.unsetOne(k)
			if p.more == nil {
				p.more = make(map[uint64][]uint32)
			}
			p.more[k] = []uint32{m, n}
		}
		return
	}
	switch nums := p.more[k]; {
	case len(nums) == 0:
		p.one[k] = n
	case !slices.Contains(nums, n):
		p.more[k] = append(nums, n)
	}
}

// drop records that path no longer holds id.
func (p *factPlaces) drop(id, path string) {
	n, known := p.of[path]
	if !known {
		return
	}
	k, ok := idKey(id)
	if !ok {
		nums := p.odd[id]
		if i := slices.Index(nums, n); i >= 0 {
			if len(nums) == 1 {
				delete(p.odd, id)
			} else {
				p.odd[id] = slices.Delete(slices.Clone(nums), i, i+1)
			}
		}
		return
	}
	if m, ok := p.oneFile(k); ok {
		if m == n {
			p.unsetOne(k)
		}
		return
	}
	nums := p.more[k]
	i := slices.Index(nums, n)
	if i < 0 {
		return
	}
	rest := slices.Delete(slices.Clone(nums), i, i+1)
	if len(rest) == 1 {
		delete(p.more, k)
		p.one[k] = rest[0]
	} else {
		p.more[k] = rest
	}
}

// set makes paths the files holding id (none: the shard no longer holds
// it).
func (p *factPlaces) set(id string, paths []string) {
	for _, old := range p.get(id) {
		if !slices.Contains(paths, old) {
			p.drop(id, old)
		}
	}
	for _, path := range paths {
		p.add(id, path)
	}
}
