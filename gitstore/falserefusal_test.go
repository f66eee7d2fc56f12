package gitstore

// Writes the room check (roomForMove) must not refuse as if the disk were
// full: on these disks, without the check, the same write goes through
// with the working tree and index in step. Each names the room it leaves
// free; the workloads are in roomprobe_test.go.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memd/memd/internal/memdtest"
)

func shapeNamed(t *testing.T, name string) probeShape {
	for _, s := range probeShapes {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no shape %s", name)
	return probeShape{}
}

// goesThrough runs the shape's write with free bytes left and fails the
// test unless main moved and git status is as it was (the working files
// and index in step with the commit).
func goesThrough(t *testing.T, name string, free int64) {
	t.Helper()
	s := shapeNamed(t, name)
	disk := s.disk(t)
	sh, who, d := aliceOn(t, disk)
	act := s.setup(t, sh, who, d)
	head := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")
	status := memdtest.Git(t, sh.Dir(), "status", "--porcelain")
	freeFn := memdtest.LeaveFree(t, disk, free)
	before := roomLeft(disk)
	err := act()
	after := roomLeft(disk)
	freeFn()
	moved := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD") != head
	now := memdtest.Git(t, sh.Dir(), "status", "--porcelain")
	t.Logf("%s with %d bytes free (statfs Bavail): err %v; main moved %v; status as before %v; Bavail went from %d to %d",
		name, free, err, moved, now == status, before, after)
	if err != nil || !moved || now != status {
		t.Errorf("%s refused with %d bytes free, where without the room check it goes through: %v", name, free, err)
	}
}

// memd runs as root (here, and in a container by default). ext4 made with
// mkfs's defaults keeps 5% of the disk for root, which statfs leaves out
// of Bavail; root writes into it. With Bavail at 0 and 3 MB of the 64 MB
// disk still writable by root, one remembered fact (an append to a small
// log) is refused: "12288 bytes needed, 0 left". Without the check it goes
// through.
func TestShard_FalseRefusal_RootOnExt4WithItsReserve(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	goesThrough(t, "rootReserveLogAppend", 0)
}

// Every move counts two blocks for the ref lock and the index marker,
// which are on disk before the check runs (lockRef and acquireIndexLock
// precede syncWorktree): a remember whose write fits in the room left is
// refused while the room is within 8 KB of what it needs.
func TestShard_FalseRefusal_TwoBlocksTooMany(t *testing.T) {
	t.Run("tmpfs", func(t *testing.T) { goesThrough(t, "logAppendSmall", 16<<10) })
	t.Run("ext4", func(t *testing.T) { goesThrough(t, "ext4LogAppendSmall", 20<<10) })
}

// A person has git-added a change to the log (1 MB of their lines, or
// one line of a 180 KB log). memd merges its fact into the staged
// version, written as a zlib-compressed loose object; the check counts it
// at its full, uncompressed size.
func TestShard_FalseRefusal_AFileAPersonStaged(t *testing.T) {
	t.Run("1MB staged log, remember", func(t *testing.T) { goesThrough(t, "logStagedProseAppend", 256<<10) })
	t.Run("1MB staged log on ext4, remember", func(t *testing.T) { goesThrough(t, "ext4LogStagedProseAppend", 256<<10) })
	t.Run("one staged line in a 180KB log, remember", func(t *testing.T) { goesThrough(t, "logStagedSmallAppend", 256<<10) })
	t.Run("one staged line in a 180KB log, forget", func(t *testing.T) { goesThrough(t, "logStagedForget", 448<<10) })
	t.Run("1MB staged note, note edit", func(t *testing.T) { goesThrough(t, "noteStagedEdit", 1600<<10) })
}

// A fetch changes a 300 KB note a person is editing, on the same lines
// (or the person's copy has CRLF line ends, without core.autocrlf): memd
// keeps the person's file as it is and writes nothing to it, but the
// check counts the whole file written again.
func TestShard_FalseRefusal_AFetchIntoANotePersonIsEditing(t *testing.T) {
	t.Run("overlapping edit", func(t *testing.T) { goesThrough(t, "fetchNoteConflictPersonEdit", 128<<10) })
	t.Run("CRLF copy", func(t *testing.T) { goesThrough(t, "fetchNoteCRLF", 128<<10) })
}

// On tmpfs a folder takes no blocks; the check counts 4 KB for each new
// one. A fetch of 300 small notes, each in a folder of its own.
func TestShard_FalseRefusal_NewFoldersOnTmpfs(t *testing.T) {
	goesThrough(t, "fetch300NotesOwnFolders", 1800<<10)
}

// mkfs.ext4 makes a file system under 512 MB with 1 KB blocks (the
// "small" type of mke2fs.conf): a small note takes 1 KB, the check counts
// 4 KB. A fetch of 300 small notes.
func TestShard_FalseRefusal_SmallFilesOn1KBlocks(t *testing.T) {
	goesThrough(t, "fetch300NotesExt4_1k", 768<<10)
}

// The other way: a fetch removes a 300 KB note a person has an
// uncommitted edit in and adds another 300 KB note. The check counts the
// removed note's blocks as freed, but memd keeps the person's file: the
// new note finds no room, and main moves with it missing from the working
// tree and staged for deletion (a person's git commit removes it).
func TestShard_RoomForAFetchRemovingANotePersonKeeps(t *testing.T) {
	s := shapeNamed(t, "fetchDeleteEditedAndAdd")
	disk := s.disk(t)
	sh, who, d := aliceOn(t, disk)
	act := s.setup(t, sh, who, d)
	head := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")
	free := memdtest.LeaveFree(t, disk, 128<<10)
	err := act()
	free()
	moved := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD") != head
	_, statErr := os.Stat(filepath.Join(sh.Dir(), "notes", "b.md"))
	status := memdtest.Git(t, sh.Dir(), "status", "--porcelain")
	if moved && statErr != nil {
		t.Errorf("main moved (err %v), but notes/b.md is not in the working tree (%v); git status:\n%s", err, statErr, status)
	}
	_, _ = who, d
}
