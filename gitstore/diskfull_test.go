package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd/internal/memdtest"
)

// memd's append to a working file that runs out of room leaves none of
// its line there: half a line would read as a fact of its own, and a
// person's git commit -a would take it in.
func TestRewriteWorking_AnAppendThatRunsOutOfRoomLeavesNothing(t *testing.T) {
	disk := memdtest.SmallDisk(t, "64k")
	const path = "log/2026-11.md"
	// A file whose last page has room for part of memd's line only.
	head := "# Log 2026-11\n\n" + strings.Repeat("- (2026-11-03) Booked a flight to Lisbon\n", 4096/41) + "- (2026-11-03) x\n"
	for len(head)%4096 > 4096-20 || len(head)%4096 < 4096-60 {
		head += "- (2026-11-03) y\n"
	}
	mine := head + "- (2026-11-03) Packed a raincoat for the trip to Lisbon in March\n"
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	full := filepath.Join(disk, "2026-11.md")
	if err := os.WriteFile(full, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	free := memdtest.FillDisk(t, disk)
	_, err := rewriteWorking(full, func(cur []byte, exists bool) ([]byte, bool) { return mergeWorking(path, old, next, cur, exists) })
	if err == nil {
		t.Fatal("the append to a full disk did not fail; the test did not fill it")
	}
	if got, _ := os.ReadFile(full); string(got) != head {
		t.Errorf("after a failed append the file ends %q, want it as it was (ending %q)", got[max(0, len(got)-80):], head[len(head)-40:])
	}
	free()
	if _, err := rewriteWorking(full, func(cur []byte, exists bool) ([]byte, bool) { return mergeWorking(path, old, next, cur, exists) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(full); string(got) != mine {
		t.Errorf("with room again the file ends %q", got[max(0, len(got)-80):])
	}
}
