package gitstore_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

// memd's background repack on a disk without room for the pack it would
// write fails, and git leaves the part it wrote behind, holding the room
// that was left. memd takes it away: the writes that had room before the
// repack still have it.
func TestShard_ARepackThatFindsNoRoomGivesItBack(t *testing.T) {
	disk := memdtest.SmallDisk(t, "8m")
	s, err := gitstore.Open(disk, gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := createShard(t, s, "agent/alice")
	// Notes that neither compress nor delta: a repack's pack holds them all.
	for i := range 24 {
		b := make([]byte, 45<<10)
		rand.Read(b)
		if _, err := sh.Apply(noteChange(fmt.Sprintf("notes/n%02d.md", i), "note-edit: create", setNote(base64.StdEncoding.EncodeToString(b)+"\n"))); err != nil {
			t.Fatal(err)
		}
	}
	free := memdtest.LeaveFree(t, disk, 512<<10) // room for writes, not the repack
	defer free()
	if err := sh.Repack(); err == nil {
		t.Fatal("the repack found room; this test shows nothing")
	}
	if left, _ := filepath.Glob(filepath.Join(sh.Dir(), ".git", "objects", "pack", "tmp_*")); len(left) > 0 {
		t.Errorf("a failed repack left %v", left)
	}
	if _, err := sh.Apply(noteChange("notes/small.md", "note-edit: create", setNote("# Small\n\nOne line.\n"))); err != nil {
		t.Errorf("a small note after the failed repack: %v (%s)", err, memd.ErrorCode(err))
	}
	if _, err := os.Stat(filepath.Join(sh.Dir(), "notes", "small.md")); err != nil {
		t.Error(err)
	}
}
