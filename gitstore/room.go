package gitstore

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Room on disk: how much memd may still write where a shard lives, and
// whether a move of main fits in it before any of its files is written.

// roomLeft is the room left to memd on the file system holding dir, in
// bytes (as much as an int64 holds if it cannot be read).
func roomLeft(dir string) int64 { return diskOf(dir).left }

// roomOf is the room statfs st gives memd: what it gives others, and for
// root also what a file system keeps for root (ext4 keeps 5% by default),
// but for ext4's own reserve, which statfs counts as free and nobody may
// write in (2% of the disk, at most 16 MiB), and a tenth of that again
// for what the reserve's reckoning leaves out.
func roomOf(st *syscall.Statfs_t) int64 {
	room := int64(st.Bavail) * st.Bsize
	if os.Geteuid() == 0 {
		size := int64(st.Blocks) * st.Bsize
		own := min(size/50, 16<<20) + size/500
		room = max(room, int64(st.Bfree)*st.Bsize-own)
	}
	return room
}

// disk is what statfs says of the file system holding the working tree:
// the room memd may write in, its block, and whether it is a tmpfs (whose
// folders take no blocks).
type disk struct {
	left, block int64
	tmpfs       bool
}

// tmpfsMagic is statfs's type of a tmpfs.
const tmpfsMagic = 0x01021994

func diskOf(dir string) disk {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return disk{left: math.MaxInt64, block: 4096}
	}
	return disk{left: roomOf(&st), block: max(int64(st.Bsize), 512), tmpfs: st.Type == tmpfsMagic}
}

// inBlocks is n bytes rounded up to whole blocks.
func (d disk) inBlocks(n int64) int64 { return (max(n, 0) + d.block - 1) / d.block * d.block }

// roomForMove refuses, before any of its files is written, a move whose
// working files and index the disk has no room for, as far as can be told
// beforehand. Without it, a move whose first file fitted and whose second
// did not would go ahead, the second file behind main (errMoveRefused
// refuses only while nothing was written). It counts, in the disk's
// blocks:
//   - a file memd only adds lines to: the blocks they add to the working
//     file, which keeps whatever a person wrote in it (an append in place);
//   - a file memd writes again: its new version beside the old (which
//     stays open a moment); a fact file a person is editing, their file
//     grown by memd's change; a note a person is editing, only its
//     growth (memd keeps theirs where the two cannot be merged);
//   - a new file: its folders (but on a tmpfs) and its folder's entry;
//   - the index (withIndex: memd writes it now), grown by the new paths;
//
// less the room removed files free (removals go first), where no person
// edited them. Where it cannot tell, it counts the less: a write refused
// that would have fitted is worse than the case it guards; a version a
// person staged, merged with memd's change into an object compressed
// beyond telling, is not counted. It returns the first file, in the order
// they are written, there is no room for; room taken by others meanwhile
// is met as before, by the write that finds none.
func (sh *Shard) roomForMove(idx *index.Index, move, touched, files map[string]*factFile, withIndex bool) (string, error) {
	if len(move) == 0 {
		return "", nil
	}
	d := diskOf(sh.dir)
	left, need, first := d.left, int64(0), ""
	oldOf := func(path string) *factFile {
		if old, ahead := sh.worktreeAt[path]; ahead {
			return old
		}
		return touched[path]
	}
	workingSize := func(path string) int64 {
		if st, err := os.Lstat(filepath.Join(sh.dir, filepath.FromSlash(path))); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
		return -1
	}
	paths := slices.Sorted(mapKeys(move))
	for _, path := range paths {
		if old := oldOf(path); files[path] == nil && old != nil && workingSize(path) == int64(len(old.data)) {
			left += d.inBlocks(int64(len(old.data)))
		}
	}
	newFolders := make(map[string]bool)
	var indexGrows, entries int64
	for _, path := range paths {
		next := files[path]
		if next == nil {
			continue
		}
		old := oldOf(path)
		size, oldSize := int64(len(next.data)), int64(0)
		if old != nil {
			oldSize = int64(len(old.data))
		}
		working := workingSize(path)
		switch {
		case working < 0:
			need += d.inBlocks(size)
			entries += (8 + int64(len(filepath.Base(path))) + 3) &^ 3
			need += sh.newFolderBlocks(d, path, newFolders)
		case old != nil && bytes.HasPrefix(next.data, old.data):
			need += d.inBlocks(working+size-oldSize) - d.inBlocks(working) // lines added
		case working != oldSize && !IsFactFile(path):
			need += d.inBlocks(max(0, size-oldSize)) // a note a person is editing
		case working != oldSize:
			need += d.inBlocks(working + size - oldSize) // into a person's edit
		default:
			need += d.inBlocks(size)
		}
		if idx != nil {
			if _, err := idx.Entry(path); err != nil {
				indexGrows += 64 + int64(len(path)) // an entry: some 62 bytes and its path
			}
		}
		if need > left && first == "" {
			first = path
		}
	}
	if !d.tmpfs && entries > 0 {
		need += d.inBlocks(entries) // the folders' entries for the new files
	}
	if st, err := os.Stat(filepath.Join(sh.gitDir, "index")); err == nil && withIndex {
		need += d.inBlocks(st.Size() + indexGrows)
	}
	if need > left && first == "" {
		first = paths[0] // the index or the folders' entries: a path of the move, so that it is refused
	}
	if first != "" {
		return first, fmt.Errorf("write %s and the commit's other files: %d bytes needed, %d left: %w", first, need, left, syscall.ENOSPC)
	}
	return "", nil
}

// newFolderBlocks is what the folders a new file needs take on disk d, a
// block each (nothing on a tmpfs), but for those that exist or that made
// holds, counted for another file; it adds its own to made.
func (sh *Shard) newFolderBlocks(d disk, path string, made map[string]bool) int64 {
	var need int64
	for dir := filepath.Dir(filepath.FromSlash(path)); dir != "." && !made[dir]; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(sh.dir, dir)); err == nil {
			break
		}
		made[dir] = true
		if !d.tmpfs {
			need += d.block
		}
	}
	return need
}
