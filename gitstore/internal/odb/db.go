package odb

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// ErrNotFound is returned when the repository has no object with an ID.
var ErrNotFound = errors.New("object not found")

// Object is a git object's type and content.
type Object struct {
	Type plumbing.ObjectType
	Data []byte
}

// DB is the object database of one repository (its .git/objects directory).
// It is safe for concurrent use. Packs other programs add or remove (a git
// commit, git gc) are noticed when an object is not found where it was.
type DB struct {
	dir   string // .git/objects
	cache scope
	sync  bool

	mu    sync.RWMutex
	packs []*pack // newest first
}

// Open opens the object database in dir (a .git/objects directory). cache
// may be shared between databases; sync makes written packs durable with
// fsync before they are used.
func Open(dir string, cache *Cache, sync bool) (*DB, error) {
	db := &DB{dir: dir, cache: scope{cache, repos.Add(1)}, sync: sync}
	if err := db.rescan(); err != nil {
		return nil, err
	}
	return db, nil
}

// OpenRepaired opens the database as its only writer, first removing what
// a crash while publishing a pack left behind: staged files, and a pack
// index whose pack was never renamed into place. git itself never leaves
// an index without its pack, since it renames the pack first.
func OpenRepaired(dir string, cache *Cache, sync bool) (*DB, int, error) {
	packDir := filepath.Join(dir, "pack")
	entries, err := os.ReadDir(packDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("read pack directory: %w", err)
	}
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		names[e.Name()] = true
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		stem, isIdx := strings.CutSuffix(name, ".idx")
		leftover := strings.HasPrefix(name, stagePrefix) || strings.HasPrefix(name, ".tmp-idx-") ||
			(isIdx && strings.HasPrefix(name, "pack-") && !names[stem+".pack"])
		if !leftover {
			continue
		}
		if err := os.Remove(filepath.Join(packDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, removed, fmt.Errorf("remove %s a crash left: %w", name, err)
		}
		removed++
	}
	db, err := Open(dir, cache, sync)
	return db, removed, err
}

// Close releases the open pack files.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, p := range db.packs {
		p.close()
	}
	db.packs = nil
	return nil
}

// PackCount returns the number of packs in the repository.
func (db *DB) PackCount() int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return len(db.packs)
}

// Get returns the object with ID id, or ErrNotFound.
func (db *DB) Get(id Hash) (Object, error) {
	if obj, ok := db.cache.get(id); ok {
		return obj, nil
	}
	obj, err := db.lookup(id)
	// Another program may have added or repacked objects. A pack that
	// vanished under the lookup was repacked into another, which a busy
	// shard may repack again before the next look: try a few times.
	for try := 0; try < 5 && (try == 0 && errors.Is(err, ErrNotFound) || errors.Is(err, fs.ErrNotExist)); try++ {
		if rerr := db.rescan(); rerr != nil {
			return Object{}, rerr
		}
		obj, err = db.lookup(id)
	}
	return obj, err
}

// Has reports whether the repository holds an object.
func (db *DB) Has(id Hash) bool {
	_, err := db.Get(id)
	return err == nil
}

func (db *DB) lookup(id Hash) (Object, error) {
	db.mu.RLock()
	packs := db.packs
	db.mu.RUnlock()
	for _, p := range packs {
		off, err := p.idx.FindOffset(plumbing.Hash(id))
		if err != nil {
			continue
		}
		return p.read(off, db.cache, db.Get)
	}
	obj, err := db.readLoose(id)
	if err != nil {
		return Object{}, err
	}
	db.cache.put(id, obj)
	return obj, nil
}

// maxLoose bounds the size a loose object's header may claim.
const maxLoose = 1 << 30

func (db *DB) readLoose(id Hash) (Object, error) {
	hex := id.String()
	raw, err := os.ReadFile(filepath.Join(db.dir, hex[:2], hex[2:]))
	if errors.Is(err, fs.ErrNotExist) {
		return Object{}, fmt.Errorf("%w: %s", ErrNotFound, hex)
	}
	if err != nil {
		return Object{}, err
	}
	z, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return Object{}, fmt.Errorf("loose object %s: %w", hex, err)
	}
	defer z.Close()
	// "<type> <size>\x00" and then exactly size bytes: read the header, then
	// the content into a buffer of its size (a monthly log runs to
	// hundreds of KB, and growing a buffer to that is most of the garbage).
	var head []byte
	one := make([]byte, 1)
	for len(head) < 32 {
		if _, err := io.ReadFull(z, one); err != nil {
			return Object{}, fmt.Errorf("loose object %s: %w", hex, err)
		}
		if one[0] == 0 {
			break
		}
		head = append(head, one[0])
	}
	typ, size, ok := strings.Cut(string(head), " ")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n < 0 || n > maxLoose {
		return Object{}, fmt.Errorf("loose object %s: malformed header", hex)
	}
	t, err := plumbing.ParseObjectType(typ)
	if err != nil {
		return Object{}, fmt.Errorf("loose object %s: %w", hex, err)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(z, data); err != nil {
		return Object{}, fmt.Errorf("loose object %s: %w", hex, err)
	}
	if k, _ := z.Read(one); k != 0 {
		return Object{}, fmt.Errorf("loose object %s: longer than its header says", hex)
	}
	return Object{Type: t, Data: data}, nil
}

// rescan brings the list of packs in step with the pack directory.
func (db *DB) rescan() error {
	dir := filepath.Join(db.dir, "pack")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read pack directory: %w", err)
	}
	present := make(map[Hash]bool)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "pack-") || !strings.HasSuffix(name, ".idx") {
			continue
		}
		h := NewHash(strings.TrimSuffix(strings.TrimPrefix(name, "pack-"), ".idx"))
		if !h.IsZero() {
			present[h] = true
		}
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	kept := db.packs[:0:0]
	known := make(map[Hash]bool)
	for _, p := range db.packs {
		if present[p.name] {
			kept = append(kept, p)
			known[p.name] = true
		} else {
			p.close()
		}
	}
	var added []*pack
	for h := range present {
		if known[h] {
			continue
		}
		p, err := loadPack(dir, h)
		if err != nil {
			// Removed while we looked, or left half-written by a crash
			// before anything referenced it: either way it holds nothing
			// we need, and git ignores it too.
			continue
		}
		added = append(added, p)
	}
	db.packs = append(added, kept...)
	return nil
}

func loadPack(dir string, name Hash) (*pack, error) {
	base := filepath.Join(dir, "pack-"+name.String())
	if _, err := os.Stat(base + ".pack"); err != nil {
		return nil, err
	}
	f, err := os.Open(base + ".idx")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	// Buffered: the decoder reads the index four bytes at a time, each a
	// system call on a bare file.
	if err := idxfile.NewDecoder(bufio.NewReaderSize(f, 32<<10)).Decode(idx); err != nil {
		return nil, fmt.Errorf("pack index %s: %w", name, err)
	}
	return &pack{name: name, path: base + ".pack", idx: idx}, nil
}

// StagedPack is a pack written to disk but not yet visible: pack and index
// wait under temporary names. Publish makes them visible; Abort removes them.
type StagedPack struct {
	db      *DB
	name    Hash
	base    string // final path without extension
	tmpBase string // temporary path without extension
	idx     *idxfile.MemoryIndex
	files   []*os.File
}

// Names of the files of a pack being written: they must not end in .pack
// or .idx, which git repack and git fsck take for packs. A crash can leave
// them behind; OpenRepaired removes them.
const (
	stagePrefix = "tmp-memd-"
	stagedPack  = "-pack"
	stagedIdx   = "-idx"
)

// Name returns the pack's checksum, which names it.
func (sp *StagedPack) Name() Hash { return sp.name }

// Files returns the open pack and index files, for the caller to make them
// durable before publishing.
func (sp *StagedPack) Files() []*os.File { return sp.files }

// StagePack writes a finished pack and its index into the pack directory
// without making them visible.
func (db *DB) StagePack(b *Builder) (*StagedPack, error) {
	data, name, idx, err := b.Finish()
	if err != nil {
		return nil, fmt.Errorf("finish pack: %w", err)
	}
	var idxBuf bytes.Buffer
	if _, err := idxfile.NewEncoder(&idxBuf).Encode(idx); err != nil {
		return nil, fmt.Errorf("encode pack index: %w", err)
	}
	dir := filepath.Join(db.dir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sp := &StagedPack{db: db, name: name, idx: idx,
		base:    filepath.Join(dir, "pack-"+name.String()),
		tmpBase: filepath.Join(dir, stagePrefix+name.String())}
	for _, part := range []struct {
		ext  string
		data []byte
	}{{stagedPack, data}, {stagedIdx, idxBuf.Bytes()}} {
		f, err := os.OpenFile(sp.tmpBase+part.ext, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o444)
		if err != nil {
			sp.Abort()
			return nil, fmt.Errorf("write pack: %w", err)
		}
		sp.files = append(sp.files, f)
		if _, err := f.Write(part.data); err != nil {
			sp.Abort()
			return nil, fmt.Errorf("write pack: %w", err)
		}
	}
	b.recycle() // the pack is in its file now
	return sp, nil
}

// Publish renames index and pack into place and makes the objects
// readable. The index goes first: git, and memd, skip an index whose pack
// is missing, while git fsck fails on a pack without its index, so a crash
// between the two renames leaves only what OpenRepaired clears away.
// The files stay open, to be made durable, until Close.
func (sp *StagedPack) Publish() error {
	if err := os.Rename(sp.tmpBase+stagedIdx, sp.base+".idx"); err != nil {
		return fmt.Errorf("publish pack index: %w", err)
	}
	if err := os.Rename(sp.tmpBase+stagedPack, sp.base+".pack"); err != nil {
		os.Remove(sp.base + ".idx")
		return fmt.Errorf("publish pack: %w", err)
	}
	db := sp.db
	db.mu.Lock()
	db.packs = append([]*pack{{name: sp.name, path: sp.base + ".pack", idx: sp.idx}}, db.packs...)
	db.mu.Unlock()
	return nil
}

// Abort removes a staged pack.
func (sp *StagedPack) Abort() {
	sp.close()
	os.Remove(sp.tmpBase + stagedIdx)
	os.Remove(sp.tmpBase + stagedPack)
}

// Close closes the pack's files.
func (sp *StagedPack) Close() { sp.close() }

func (sp *StagedPack) close() {
	for _, f := range sp.files {
		f.Close()
	}
	sp.files = nil
}

// WritePack writes a pack and its index and makes its objects readable,
// fsyncing both first when the database syncs.
func (db *DB) WritePack(b *Builder) (Hash, error) {
	sp, err := db.StagePack(b)
	if err != nil {
		return Hash{}, err
	}
	if db.sync {
		for _, f := range sp.files {
			if err := f.Sync(); err != nil {
				sp.Abort()
				return Hash{}, err
			}
		}
	}
	if err := sp.Publish(); err != nil {
		sp.Abort()
		return Hash{}, err
	}
	sp.Close()
	return sp.name, nil
}

// writeFileAtomic writes data to a temporary file beside path, optionally
// fsyncs it, and renames it into place.
func writeFileAtomic(path string, data []byte, perm os.FileMode, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// WriteLoose writes one object as a loose file (for the rare object that is
// not part of a commit, such as a merged file staged in the index).
func (db *DB) WriteLoose(t plumbing.ObjectType, data []byte) (Hash, error) {
	id := HashObject(t, data)
	hex := id.String()
	path := filepath.Join(db.dir, hex[:2], hex[2:])
	if _, err := os.Stat(path); err == nil {
		return id, nil
	}
	var buf bytes.Buffer
	z := zlib.NewWriter(&buf)
	fmt.Fprintf(z, "%s %d\x00", t, len(data))
	z.Write(data)
	z.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return id, err
	}
	return id, writeFileAtomic(path, buf.Bytes(), 0o444, db.sync)
}
