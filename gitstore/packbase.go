package gitstore

import (
	"bytes"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd/gitstore/internal/odb"
)

// Packed bases. Each group commit writes its objects into a pack of its
// own, and git reads a delta only from a base in the same pack, so a commit
// that appended a line to a day's log of 400 KB wrote the whole new
// version: 400 KB checksummed, written and synced for one line, and as much
// more on disk for each fact until a repack. A shard keeps instead, for
// each large file it writes, one version compressed once (a log shrinks to
// about a fifth); a commit's pack carries that copy and a delta from it to
// the new version. Once the versions since have moved far from it, the next
// one is written whole and compressed in its place, after its writers have
// their answer.

const (
	// minPackedBase is the size from which a file gets a base: smaller
	// ones cost less to write whole than a sync of the disk does anyway.
	minPackedBase = 32 << 10
	// maxPackedBases bounds the files of one shard that hold a base.
	maxPackedBases = 4
	// maxPackedBaseFile is the largest file given a base: compressing it
	// takes about 40 ms, while the shard's next group waits.
	maxPackedBaseFile = 4 << 20
	// packedBaseBudget bounds the memory the bases of a store take.
	packedBaseBudget = 64 << 20
)

// packedBase is a version of a file kept compressed for the packs of the
// commits after it.
type packedBase struct {
	data  []byte // the version (shared with its factFile, whose bytes never change)
	entry *odb.Entry
	used  uint64 // the shard's count of uses when this one was last used
}

// cost is the memory the base holds: its version's whole array (which
// appends in place may have grown), and its entry.
func (pb *packedBase) cost() int64 { return int64(cap(pb.data) + pb.entry.Size()) }

// deltaFromBase returns the base of path and a delta from it to next, or
// nil when the shard holds no base of path or next has moved far from it.
// The caller holds sh.mu.
func (sh *Shard) deltaFromBase(path string, next []byte) (*packedBase, []byte) {
	pb := sh.bases[path]
	if pb == nil {
		return nil, nil
	}
	if len(next) < minPackedBase {
		sh.dropBase(path) // the file shrank: whole, it costs less than its base
		return nil, nil
	}
	edits := editsFrom(pb.data, next)
	inserted := 0
	for _, e := range edits {
		inserted += len(e.Ins)
	}
	if inserted > max(len(pb.data)/16, 4<<10) {
		return nil, nil // far: written whole, and taken as the next base
	}
	delta := odb.Delta(len(pb.data), edits)
	if pb.entry.Size()+len(delta) >= len(next) {
		sh.dropBase(path) // text that does not compress: whole costs no more
		return nil, nil
	}
	sh.useBase(pb)
	return pb, delta
}

// editsFrom returns edits that turn base into next. They keep the start
// the two share, and the rest of base where next holds it further on, as
// a log does that has grown since base and had a line changed above (a
// fact forgotten or reworded); or else the end the two share.
func editsFrom(base, next []byte) []odb.Edit {
	n := min(len(base), len(next))
	start := commonPrefix(base[:n], next[:n])
	const probe = 64 // the end of base looked for in next
	if len(base)-start >= probe {
		if j := bytes.Index(next[start:], base[len(base)-probe:]); j >= 0 {
			// base[k:] is next[m:after], with k and m as low as they go.
			k, m, after := len(base)-probe, start+j, start+j+probe
			back := commonSuffix(base[start:k], next[start:m])
			k, m = k-back, m-back
			return []odb.Edit{{Pos: start, Del: k - start, Ins: next[start:m]}, {Pos: len(base), Ins: next[after:]}}
		}
	}
	end := min(commonSuffix(base, next), n-start)
	return []odb.Edit{{Pos: start, Del: len(base) - start - end, Ins: next[start : len(next)-end]}}
}

// takeAsBases makes the versions a group wrote whole, of files large
// enough, the bases of their files, as far as the bounds allow. It runs
// once the group's writers are answered, and compresses no more files than
// a shard keeps bases of, none past maxPackedBaseFile: the next group
// waits for it. The caller holds sh.mu.
func (sh *Shard) takeAsBases(files []*factFile) {
	for _, f := range files[:min(len(files), maxPackedBases)] {
		sh.dropBase(f.path) // an older version's
		if len(f.data) > maxPackedBaseFile || sh.store.baseBytes.Load()+int64(cap(f.data)) > packedBaseBudget {
			continue
		}
		if len(sh.bases) >= maxPackedBases {
			sh.dropBase(sh.leastUsedBase())
		}
		// Its blob ID the group hashed: a version's bytes never change.
		entry, err := odb.Compressed(plumbing.BlobObject, f.blob, f.data)
		if err != nil {
			continue
		}
		if entry.Size() > len(f.data)*3/4 {
			continue // text that hardly compresses: written whole, it costs about as much
		}
		pb := &packedBase{data: f.data, entry: entry}
		if sh.store.baseBytes.Add(pb.cost()) > packedBaseBudget {
			sh.store.baseBytes.Add(-pb.cost()) // another shard's came first
			continue
		}
		if sh.bases == nil {
			sh.bases = make(map[string]*packedBase)
		}
		sh.useBase(pb)
		sh.bases[f.path] = pb
	}
}

// useBase marks pb as the shard's base used last.
func (sh *Shard) useBase(pb *packedBase) {
	sh.baseUses++
	pb.used = sh.baseUses
}

// leastUsedBase returns the path of the base used longest ago.
func (sh *Shard) leastUsedBase() string {
	var path string
	var used uint64
	for p, pb := range sh.bases {
		if path == "" || pb.used < used {
			path, used = p, pb.used
		}
	}
	return path
}

// dropBase gives up the base of path, if the shard holds one. The caller
// holds sh.mu.
func (sh *Shard) dropBase(path string) {
	if pb, ok := sh.bases[path]; ok {
		sh.store.baseBytes.Add(-pb.cost())
		delete(sh.bases, path)
	}
}

// dropBases gives up every base of the shard. The caller holds sh.mu.
func (sh *Shard) dropBases() {
	for path := range sh.bases {
		sh.dropBase(path)
	}
}
