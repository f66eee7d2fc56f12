package gitstore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Where a large shard's facts are is saved in its .git when its state is
// given up (idle, or read once for the index) and when memd stops, and
// read back by the next write: naming a million facts means hashing every
// text (0.4 s), reading them back a twentieth of that. Only what changed
// since the commit saved is read from the files. The save is a cache: it
// is written whole and renamed in, and one that does not read back, or
// names a tree the shard no longer has, is passed over for the files.
const placesFile = "memd-places"

// savePlacesAt is the fewest facts a shard holds for its places to be
// saved: below it, its files are read as fast. A variable for tests.
var savePlacesAt = 20000

// placingAll is called whenever a state is built by reading every file;
// tests count it.
var placingAll = func() {}

var placesMagic = []byte("memd places 1\n")

var errBadPlaces = errors.New("saved places do not read back")

// savePlaces writes st's places unless they are few or saved already.
// st is one no writer will change again (given up, or at close).
func (sh *Shard) savePlaces(st *state) {
	if st == nil || st.root.IsZero() || st.where.len() < savePlacesAt {
		return
	}
	sh.saveMu.Lock()
	defer sh.saveMu.Unlock()
	if sh.placesSaved == st.head {
		return
	}
	start := time.Now()
	b := encodePlaces(st)
	path := filepath.Join(sh.gitDir, placesFile)
	tmp := path + ".tmp"
	err := os.WriteFile(tmp, b, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		sh.store.log.Warn("saving where facts are; the next write reads every file", "shard", sh.id, "err", err)
		return
	}
	sh.placesSaved, sh.placesGone = st.head, false
	sh.store.log.Debug("saved where facts are", "shard", sh.id, "facts", st.where.len(), "bytes", len(b), "took", time.Since(start))
}

// savePlacesLater saves st's places in the background, unless they are
// few or the store is closing (it saves what is held itself then), and
// returns a channel closed when the save is done (nil: none).
func (sh *Shard) savePlacesLater(st *state) chan struct{} {
	if st.where.len() < savePlacesAt {
		// A save from when the shard held more would be read, and
		// every change since diffed, at each next write.
		sh.saveMu.Lock()
		if !sh.placesGone {
			if err := os.Remove(filepath.Join(sh.gitDir, placesFile)); err == nil || errors.Is(err, fs.ErrNotExist) {
				sh.placesGone = true // not looked for again at each idle minute
			}
			sh.placesSaved = Hash{}
		}
		sh.saveMu.Unlock()
		return nil
	}
	done := make(chan struct{})
	if !sh.store.background(func() {
		defer close(done)
		sh.savePlaces(st)
	}) {
		return nil
	}
	return done
}

// savedState returns the state saved last, with no file parsed, or nil
// when there is none that reads back.
func (sh *Shard) savedState() *state {
	b, err := os.ReadFile(filepath.Join(sh.gitDir, placesFile))
	if err != nil {
		return nil
	}
	st, err := decodePlaces(b)
	if err != nil {
		sh.store.log.Warn("where facts are, as saved, does not read back; reading every file", "shard", sh.id, "err", err)
		return nil
	}
	return st
}

// Format: the magic line; the commit and its tree (20 bytes each); the
// number of fact files, each with its path, blob (20 bytes) and size;
// the number of paths where numbers, each path; the IDs held by one file,
// each its key (6 bytes) and file's number; those held by several, each
// its key and numbers; other IDs, each spelled out with its numbers; a
// CRC-32C of all before it. Numbers and lengths are uvarints.
func encodePlaces(st *state) []byte {
	p := st.where
	b := make([]byte, 0, 64+len(st.files)*48+(p.len()-len(p.more))*8+len(p.more)*12)
	b = append(b, placesMagic...)
	b = append(b, st.head[:]...)
	b = append(b, st.root[:]...)
	b = binary.AppendUvarint(b, uint64(len(st.files)))
	for path, f := range st.files {
		b = appendString(b, path)
		b = append(b, f.blob[:]...)
		b = binary.AppendUvarint(b, uint64(f.size))
	}
	b = binary.AppendUvarint(b, uint64(len(p.paths)))
	for _, path := range p.paths {
		b = appendString(b, path)
	}
	// The IDs of one file each go with their keys rising, so that reading
	// them back is a copy into the base of places, not a map built.
	type keyFile struct {
		k uint64
		n uint32
	}
	ones := make([]keyFile, 0, len(p.one)+len(p.baseKeys)-len(p.gone))
	for i, k := range p.baseKeys {
		if !p.gone[k] {
			ones = append(ones, keyFile{k, p.baseFiles[i]})
		}
	}
	for k, n := range p.one {
		ones = append(ones, keyFile{k, n})
	}
	slices.SortFunc(ones, func(a, b keyFile) int { return cmp.Compare(a.k, b.k) })
	b = binary.AppendUvarint(b, uint64(len(ones)))
	for _, o := range ones {
		b = appendKey(b, o.k)
		b = binary.AppendUvarint(b, uint64(o.n))
	}
	// The files of an ID held by several go in the order of their paths,
	// the tree's, as reading every file would find them: the first is the
	// one an edit rewrites, and a save must not make that depend on when
	// memd last let the state go.
	inTreeOrder := func(nums []uint32) []uint32 {
		nums = slices.Clone(nums)
		slices.SortFunc(nums, func(a, b uint32) int { return strings.Compare(p.paths[a], p.paths[b]) })
		return nums
	}
	b = binary.AppendUvarint(b, uint64(len(p.more)))
	for k, nums := range p.more {
		b = appendKey(b, k)
		b = appendNumbers(b, inTreeOrder(nums))
	}
	b = binary.AppendUvarint(b, uint64(len(p.odd)))
	for id, nums := range p.odd {
		b = appendString(b, id)
		b = appendNumbers(b, inTreeOrder(nums))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendKey appends a fact key (memd.FactKey: six bytes).
func appendKey(b []byte, k uint64) []byte {
	return append(b, byte(k>>40), byte(k>>32), byte(k>>24), byte(k>>16), byte(k>>8), byte(k))
}

func appendNumbers(b []byte, nums []uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(nums)))
	for _, n := range nums {
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

// decodePlaces reads what encodePlaces wrote; anything else is an error,
// never a panic or a state that names a file number it does not have.
func decodePlaces(b []byte) (*state, error) {
	if len(b) < len(placesMagic)+4 || string(b[:len(placesMagic)]) != string(placesMagic) {
		return nil, errBadPlaces
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum", errBadPlaces)
	}
	r := placesReader{b: body[len(placesMagic):]}
	st := &state{files: make(map[string]fileAt), parsed: make(map[string]*factFile), where: newFactPlaces()}
	r.hash(&st.head)
	r.hash(&st.root)
	r.files(st.files)
	r.places(st.where)
	if r.bad || len(r.b) != 0 {
		return nil, fmt.Errorf("%w: malformed", errBadPlaces)
	}
	return st, nil
}

// placesReader reads a saved places file; a read past its end or a count
// larger than what is left marks it bad and reads nothing further.
type placesReader struct {
	b    []byte
	bad  bool
	held uint64 // how many fact files the places name
}

// files reads the table of files: each path with its blob and size.
func (r *placesReader) files(into map[string]fileAt) {
	n := r.count(1 + 20 + 1)
	for range n {
		path := r.string()
		var f fileAt
		r.hash(&f.blob)
		size := r.uvarint()
		if size > math.MaxInt32 {
			r.bad = true
		}
		f.size = int(size)
		into[path] = f
	}
	if len(into) != n {
		r.bad = true // a path twice
	}
}

// places reads where each fact ID stands: the fact files by number, then
// the IDs in one file, in several, and the IDs that are not memd's.
func (r *placesReader) places(p *factPlaces) {
	for i := range r.count(1) {
		if p.number(r.string()) != uint32(i) {
			r.bad = true // a path twice
		}
	}
	r.held = uint64(len(p.paths))
	ones := r.count(6 + 1)
	p.baseKeys, p.baseFiles = make([]uint64, ones), make([]uint32, ones)
	for i := range ones {
		p.baseKeys[i], p.baseFiles[i] = r.key(), r.fileNumber()
		if i > 0 && p.baseKeys[i] <= p.baseKeys[i-1] {
			r.bad = true // keys rise, each once
		}
	}
	mores := r.count(6 + 1)
	if mores > 0 {
		p.more = make(map[uint64][]uint32, mores)
	}
	for range mores {
		k := r.key()
		if _, twice := p.oneFile(k); twice {
			r.bad = true
		}
		p.more[k] = r.fileNumbers(2)
	}
	odds := r.count(1 + 1)
	if odds > 0 {
		p.odd = make(map[string][]uint32, odds)
	}
	for range odds {
		id := r.string()
		if _, ok := idKey(id); ok {
			r.bad = true // memd's IDs are keys
		}
		p.odd[id] = r.fileNumbers(1)
	}
	if len(p.more)+len(p.odd) != mores+odds {
		r.bad = true // an ID twice
	}
}

// fileNumber reads the number of a fact file the places hold.
func (r *placesReader) fileNumber() uint32 {
	n := r.uvarint()
	if n >= r.held {
		r.bad = true
		return 0
	}
	return uint32(n)
}

// fileNumbers reads the files of an ID: an ID of several files names two
// or more; any other, one or more; none twice.
func (r *placesReader) fileNumbers(least int) []uint32 {
	nums := make([]uint32, r.count(1))
	for i := range nums {
		nums[i] = r.fileNumber()
		if slices.Contains(nums[:i], nums[i]) {
			r.bad = true
		}
	}
	if len(nums) < least {
		r.bad = true
	}
	return nums
}

func (r *placesReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of things of at least least bytes each: 0 when more
// than the bytes left could hold.
func (r *placesReader) count(least int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/least) {
		r.bad, r.b = true, nil
		return 0
	}
	return int(n)
}

func (r *placesReader) take(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *placesReader) string() string { return string(r.take(r.uvarint())) }

func (r *placesReader) hash(h *Hash) { copy(h[:], r.take(uint64(len(h)))) }

func (r *placesReader) key() uint64 {
	k := r.take(6)
	if len(k) < 6 {
		return 0
	}
	return uint64(k[0])<<40 | uint64(k[1])<<32 | uint64(k[2])<<24 | uint64(k[3])<<16 | uint64(k[4])<<8 | uint64(k[5])
}
