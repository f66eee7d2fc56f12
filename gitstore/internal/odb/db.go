package odb

import (
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
	cache *Cache
	sync  bool

	mu    sync.RWMutex
	packs []*pack // newest first
}

// Open opens the object database in dir (a .git/objects directory). cache
// may be shared between databases; sync makes written packs durable with
// fsync before they are used.
func Open(dir string, cache *Cache, sync bool) (*DB, error) {
	db := &DB{dir: dir, cache: cache, sync: sync}
	if err := db.rescan(); err != nil {
		return nil, err
	}
	return db, nil
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
func (db *DB) Get(id plumbing.Hash) (Object, error) {
	if obj, ok := db.cache.get(id); ok {
		return obj, nil
	}
	obj, err := db.lookup(id)
	if errors.Is(err, ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		// Another program may have added or repacked objects.
		if rerr := db.rescan(); rerr != nil {
			return Object{}, rerr
		}
		obj, err = db.lookup(id)
	}
	return obj, err
}

// Has reports whether the repository holds an object.
func (db *DB) Has(id plumbing.Hash) bool {
	_, err := db.Get(id)
	return err == nil
}

func (db *DB) lookup(id plumbing.Hash) (Object, error) {
	db.mu.RLock()
	packs := db.packs
	db.mu.RUnlock()
	for _, p := range packs {
		off, err := p.idx.FindOffset(id)
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

func (db *DB) readLoose(id plumbing.Hash) (Object, error) {
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
	all, err := io.ReadAll(z)
	if err != nil {
		return Object{}, fmt.Errorf("loose object %s: %w", hex, err)
	}
	head, data, ok := bytes.Cut(all, []byte{0})
	typ, size, ok2 := strings.Cut(string(head), " ")
	n, err := strconv.Atoi(size)
	if !ok || !ok2 || err != nil || n != len(data) {
		return Object{}, fmt.Errorf("loose object %s: malformed header", hex)
	}
	t, err := plumbing.ParseObjectType(typ)
	if err != nil {
		return Object{}, fmt.Errorf("loose object %s: %w", hex, err)
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
	present := make(map[plumbing.Hash]bool)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "pack-") || !strings.HasSuffix(name, ".idx") {
			continue
		}
		h := plumbing.NewHash(strings.TrimSuffix(strings.TrimPrefix(name, "pack-"), ".idx"))
		if !h.IsZero() {
			present[h] = true
		}
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	kept := db.packs[:0:0]
	known := make(map[plumbing.Hash]bool)
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
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while we looked
		}
		if err != nil {
			return err
		}
		added = append(added, p)
	}
	db.packs = append(added, kept...)
	return nil
}

func loadPack(dir string, name plumbing.Hash) (*pack, error) {
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
	if err := idxfile.NewDecoder(f).Decode(idx); err != nil {
		return nil, fmt.Errorf("pack index %s: %w", name, err)
	}
	return &pack{name: name, path: base + ".pack", idx: idx}, nil
}

// WritePack writes a finished pack and its index into the repository and
// makes its objects readable. The index is written last: git ignores a pack
// without one, so a crash leaves at most an unused file.
func (db *DB) WritePack(b *Builder) (plumbing.Hash, error) {
	data, name, idx, err := b.Finish()
	if err != nil {
		return name, fmt.Errorf("finish pack: %w", err)
	}
	var idxBuf bytes.Buffer
	if _, err := idxfile.NewEncoder(&idxBuf).Encode(idx); err != nil {
		return name, fmt.Errorf("encode pack index: %w", err)
	}
	dir := filepath.Join(db.dir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return name, err
	}
	base := filepath.Join(dir, "pack-"+name.String())
	if err := writeFileAtomic(base+".pack", data, 0o444, db.sync); err != nil {
		return name, err
	}
	if err := writeFileAtomic(base+".idx", idxBuf.Bytes(), 0o444, db.sync); err != nil {
		os.Remove(base + ".pack")
		return name, err
	}
	db.mu.Lock()
	db.packs = append([]*pack{{name: name, path: base + ".pack", idx: idx}}, db.packs...)
	db.mu.Unlock()
	return name, nil
}

// RemovePack deletes a pack this process wrote but never referenced, such as
// one built on a HEAD that moved before the ref could be updated.
func (db *DB) RemovePack(name plumbing.Hash) {
	db.mu.Lock()
	for i, p := range db.packs {
		if p.name == name {
			p.close()
			db.packs = append(db.packs[:i:i], db.packs[i+1:]...)
			break
		}
	}
	db.mu.Unlock()
	base := filepath.Join(db.dir, "pack", "pack-"+name.String())
	os.Remove(base + ".idx")
	os.Remove(base + ".pack")
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
func (db *DB) WriteLoose(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	id := Hash(t, data)
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
