package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

const (
	modeFile = "100644"
	modeExec = "100755"
	modeDir  = "40000"
)

// treeEntry is one entry of a git tree.
type treeEntry struct {
	name string
	mode string
	hash Hash
}

func (e treeEntry) isDir() bool { return e.mode == modeDir }

func decodeTree(data []byte) ([]treeEntry, error) {
	var entries []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+21 {
			return nil, errors.New("malformed tree")
		}
		var h Hash
		copy(h[:], data[nul+1:nul+21])
		mode := string(data[:sp])
		if mode == "040000" {
			mode = modeDir
		}
		entries = append(entries, treeEntry{name: string(data[sp+1 : nul]), mode: mode, hash: h})
		data = data[nul+21:]
	}
	return entries, nil
}

// encodeTree renders entries in git's order: by name, with directories
// compared as if their name ended in "/".
func encodeTree(entries []treeEntry) []byte {
	slices.SortFunc(entries, func(a, b treeEntry) int {
		return strings.Compare(sortName(a), sortName(b))
	})
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(e.mode)
		b.WriteByte(' ')
		b.WriteString(e.name)
		b.WriteByte(0)
		b.Write(e.hash[:])
	}
	return b.Bytes()
}

func sortName(e treeEntry) string {
	if e.isDir() {
		return e.name + "/"
	}
	return e.name
}

// trees reads trees from a repository, and from a pack being built.
type trees struct {
	db    *odb.DB
	built map[Hash][]treeEntry
}

func (t *trees) read(h Hash) ([]treeEntry, error) {
	if h.IsZero() || h == emptyTree {
		// The empty tree a change that removed the last file made is in
		// its pack only once the group is written.
		return nil, nil
	}
	if e, ok := t.built[h]; ok {
		return e, nil
	}
	obj, err := t.db.Get(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	if obj.Type != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s is a %s, not a tree", h, obj.Type)
	}
	return decodeTree(obj.Data)
}

// emptyTree is the hash of the tree of no entries.
var emptyTree = NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// lookup returns the entry at a slash-separated path under the tree root.
func (t *trees) lookup(root Hash, path string) (treeEntry, bool, error) {
	dir, rest, nested := strings.Cut(path, "/")
	entries, err := t.read(root)
	if err != nil {
		return treeEntry{}, false, err
	}
	for _, e := range entries {
		if e.name != dir {
			continue
		}
		if !nested {
			return e, true, nil
		}
		if !e.isDir() {
			return treeEntry{}, false, nil
		}
		return t.lookup(e.hash, rest)
	}
	return treeEntry{}, false, nil
}

// set returns a new root tree with the file at path set to blob, or removed
// when blob is zero, adding the new trees to b. Trees left empty are removed,
// as git has no empty directories.
func (t *trees) set(b *odb.Builder, root Hash, path string, blob Hash) (Hash, error) {
	entries, err := t.read(root)
	if err != nil {
		return Hash{}, err
	}
	entries = slices.Clone(entries)
	name, rest, nested := strings.Cut(path, "/")
	i := slices.IndexFunc(entries, func(e treeEntry) bool { return e.name == name })

	var h Hash
	mode := modeFile
	if nested {
		mode = modeDir
		var sub Hash
		switch {
		case i >= 0 && entries[i].isDir():
			sub = entries[i].hash
		case i >= 0 && !blob.IsZero():
			// A person's file of that name stays: git cannot hold both.
			return Hash{}, memd.Errorf(memd.ECONFLICT, "%q is a file, so it cannot also be a folder", name)
		case i >= 0:
			return root, nil // no folder of that name to remove a file from
		}
		if h, err = t.set(b, sub, rest, blob); err != nil {
			return Hash{}, err
		}
	} else {
		switch {
		case i >= 0 && entries[i].isDir() && !blob.IsZero():
			// Setting it would drop every file in the folder.
			return Hash{}, memd.Errorf(memd.ECONFLICT, "%q is a folder, so it cannot also be a file", name)
		case i >= 0 && entries[i].isDir():
			return root, nil // no file of that name to remove
		}
		h = blob
		if i >= 0 && entries[i].mode == modeExec {
			mode = modeExec
		}
	}
	switch {
	case h.IsZero() && i >= 0:
		entries = slices.Delete(entries, i, i+1)
	case h.IsZero():
	case i >= 0:
		entries[i] = treeEntry{name: name, mode: mode, hash: h}
	default:
		entries = append(entries, treeEntry{name: name, mode: mode, hash: h})
	}
	if len(entries) == 0 {
		return Hash{}, nil
	}
	data := encodeTree(entries)
	id := b.Add(plumbing.TreeObject, data)
	if t.built == nil {
		t.built = make(map[Hash][]treeEntry)
	}
	t.built[id] = entries
	return id, nil
}

// walkFiles calls fn for every file under root whose path passes keep,
// descending only into directories that keep(dir+"/") accepts.
func (t *trees) walkFiles(root Hash, prefix string, keep func(string) bool, fn func(path string, blob Hash) error) error {
	entries, err := t.read(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := prefix + e.name
		if e.isDir() {
			if keep(p + "/") {
				if err := t.walkFiles(e.hash, p+"/", keep, fn); err != nil {
					return err
				}
			}
			continue
		}
		if keep(p) {
			if err := fn(p, e.hash); err != nil {
				return err
			}
		}
	}
	return nil
}

// diffFiles calls fn for every file that differs between trees a and b,
// with zero hashes for a side where the file is absent.
func (t *trees) diffFiles(a, b Hash, prefix string, keep func(string) bool, fn func(path string, from, to Hash) error) error {
	return t.diffEntries(a, b, prefix, keep, func(path string, from, to treeEntry) error {
		if from.hash == to.hash {
			return nil // the mode alone changed
		}
		return fn(path, from.hash, to.hash)
	})
}

// diffEntries calls fn for every file whose entry differs between trees a
// and b (its blob or its mode), with a zero entry for a side where the file
// is absent.
func (t *trees) diffEntries(a, b Hash, prefix string, keep func(string) bool, fn func(path string, from, to treeEntry) error) error {
	if a == b {
		return nil
	}
	ea, err := t.read(a)
	if err != nil {
		return err
	}
	eb, err := t.read(b)
	if err != nil {
		return err
	}
	type pair struct{ a, b treeEntry }
	byName := make(map[string]*pair)
	var names []string
	for _, e := range ea {
		byName[e.name] = &pair{a: e}
		names = append(names, e.name)
	}
	for _, e := range eb {
		if p, ok := byName[e.name]; ok {
			p.b = e
		} else {
			byName[e.name] = &pair{b: e}
			names = append(names, e.name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		p := byName[name]
		if p.a.hash == p.b.hash && p.a.mode == p.b.mode {
			continue
		}
		path := prefix + name
		var dirA, dirB Hash
		var fileA, fileB treeEntry
		if p.a.isDir() {
			dirA = p.a.hash
		} else {
			fileA = p.a
		}
		if p.b.isDir() {
			dirB = p.b.hash
		} else {
			fileB = p.b
		}
		if (!dirA.IsZero() || !dirB.IsZero()) && keep(path+"/") {
			if err := t.diffEntries(dirA, dirB, path+"/", keep, fn); err != nil {
				return err
			}
		}
		if (!fileA.hash.IsZero() || !fileB.hash.IsZero()) && fileA != fileB && keep(path) {
			if err := fn(path, fileA, fileB); err != nil {
				return err
			}
		}
	}
	return nil
}

// unfit returns the first path that tree b adds or changes relative to
// tree a that a shard cannot hold, and what it is; "" when there is none.
// memd's working tree and index hold regular files: a symbolic link, an
// executable or a submodule would be written as something else. A
// .gitmodules file would be read by git fetch in every clone, memd's
// own syncs among them, and one git cannot parse fails them all; a file
// named as memd's temporary files are would be removed as one at a start.
func (t *trees) unfit(a, b Hash) (path, what string, err error) {
	err = t.diffEntries(a, b, "", everyPath, func(p string, _, to treeEntry) error {
		if to.hash.IsZero() {
			return nil
		}
		if what = unfitFile(p, to.mode); what == "" {
			return nil
		}
		path = p
		return ErrStop
	})
	if errors.Is(err, ErrStop) {
		err = nil
	}
	return path, what, err
}

// unfitFile says what a file at path of a mode is that a shard may not
// hold (see unfit), "" for a file it may.
func unfitFile(path, mode string) string {
	name := path[strings.LastIndexByte(path, '/')+1:]
	switch {
	case mode != modeFile:
		return modeName(mode)
	case strings.EqualFold(name, ".gitmodules"):
		return "a submodule list (.gitmodules)"
	case strings.HasPrefix(name, worktreeTempPrefix):
		return "named as memd's temporary files are (" + worktreeTempPrefix + "*)"
	}
	return ""
}
