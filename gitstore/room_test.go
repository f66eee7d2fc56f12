package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// A person has 600 KB of uncommitted prose in profile.md; memd appends
// one profile fact. memd writes it into the person's file as their file
// plus one line, appended in place (a block at most): with 300 KB free the
// remember goes through, not refused as if the disk were full.
// asPat runs git in dir as a person, pat.
func asPat(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return memdtest.Git(t, dir, append([]string{"-c", "user.name=pat", "-c", "user.email=pat@example.com"}, args...)...)
}

// fromPeer clones the shard into a peer's repository, lets change edit
// and commit there, and fetches the peer's main into the shard, as a
// remote's fetch does: the commit to integrate.
func fromPeer(t *testing.T, sh *Shard, change func(peer string)) Hash {
	t.Helper()
	peer := t.TempDir()
	asPat(t, peer, "clone", "-q", sh.Dir(), ".")
	change(peer)
	asPat(t, sh.Dir(), "fetch", "-q", peer, "+refs/heads/main:refs/remotes/peer/main")
	theirs, err := sh.Ref("refs/remotes/peer/main")
	if err != nil {
		t.Fatal(err)
	}
	return theirs
}

// noteByHand has a person write a note and commit it with git.
func noteByHand(t *testing.T, sh *Shard, name, text string) {
	t.Helper()
	os.MkdirAll(filepath.Join(sh.Dir(), "notes"), 0o755)
	os.WriteFile(filepath.Join(sh.Dir(), "notes", name), []byte(text), 0o644)
	asPat(t, sh.Dir(), "add", "notes")
	asPat(t, sh.Dir(), "commit", "-q", "-m", "a note by hand")
}

// integrateInStep integrates theirs and fails the test where main moved
// yet git status is not clean (a person's commit would then take part of
// the move back), or where main stayed without an error.
func integrateInStep(t *testing.T, sh *Shard, theirs Hash) {
	t.Helper()
	head := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")
	in, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"})
	now := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")
	if status := memdtest.Git(t, sh.Dir(), "status", "--porcelain"); now != head && status != "" {
		t.Errorf("main moved to the fetch (%+v), yet the working tree and index are not in step: %d paths staged for deletion (a person's git commit removes them), %d untracked",
			in, strings.Count("\n"+status, "\nD "), strings.Count("\n"+status, "\n??"))
	}
	if now == head && err == nil {
		t.Errorf("main stayed, without an error")
	}
}

func TestShard_RoomForAnAppendToAFileAPersonIsEditing(t *testing.T) {
	disk := memdtest.SmallDisk(t, "8m")
	sh, who, d := aliceOn(t, disk)
	if _, err := sh.Apply(Change{Author: who, Message: "remember", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: "Lives in Lisbon", Date: d, Tier: memd.TierProfile}}}}); err != nil {
		t.Fatal(err)
	}
	profilePath := filepath.Join(sh.Dir(), "profile.md")
	committed, _ := os.ReadFile(profilePath)
	var prose strings.Builder
	for i := 0; prose.Len() < 600<<10; i++ {
		fmt.Fprintf(&prose, "A paragraph the person is writing by hand, number %d, about seats.\n", i)
	}
	edited := append(committed, prose.String()...)
	if err := os.WriteFile(profilePath, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	free := memdtest.LeaveFree(t, disk, 300<<10)
	defer free()
	_, err := sh.Apply(Change{Author: who, Message: "remember", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: "Prefers tea", Date: d, Tier: memd.TierProfile}}}})
	if err != nil {
		t.Fatalf("one fact appended to a profile a person is editing, with 300 KB free: %v", err)
	}
	got, _ := os.ReadFile(profilePath)
	if !strings.HasPrefix(string(got), string(edited)) || !strings.Contains(string(got), "Prefers tea") {
		t.Errorf("the working file is not the person's with memd's line appended")
	}
}

// A fetch bringing 200 new notes, each in a folder of its own. On ext4
// every new folder takes a block of its own, which the room check counts:
// the move is refused on a disk with room for the files alone, where a
// later file would have found no room, behind main. The same 200 notes in
// one folder fit.
func TestShard_RoomForNewNotesInNewFolders(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("a folder each %v", own), func(t *testing.T) {
			disk := memdtest.Ext4Disk(t, "64M")
			sh, _, _ := aliceOn(t, disk)
			dir := sh.Dir()
			const n = 200
			theirs := newNotesFromPeer(t, sh, n, own)
			st, _ := os.Stat(filepath.Join(dir, ".git", "index"))
			// Room for what roomForMove counts (a block a file, the index)
			// and 200 KB more.
			free := memdtest.LeaveFree(t, disk, n*4096+diskOf(disk).inBlocks(st.Size())+200<<10)
			defer free()
			integrateInStep(t, sh, theirs)
		})
	}
}

// A move adding many files grows the index by their entries: the room
// check counts them, so that on a disk with room for every file but not
// the larger index the move is refused, not let through to leave the
// index behind (the new notes staged for deletion).
func TestShard_RoomForTheIndexAMoveGrows(t *testing.T) {
	disk := memdtest.SmallDisk(t, "16m")
	sh, _, _ := aliceOn(t, disk)
	dir := sh.Dir()
	noteByHand(t, sh, "start.md", "start\n")
	const n = 2000
	theirs := fromPeer(t, sh, func(remote string) {
		for i := range n {
			os.WriteFile(filepath.Join(remote, "notes", fmt.Sprintf("n%04d.md", i)), []byte(fmt.Sprintf("note %d\n", i)), 0o644)
		}
		asPat(t, remote, "add", "notes")
		asPat(t, remote, "commit", "-q", "-m", "new notes")
	})
	st, _ := os.Stat(filepath.Join(dir, ".git", "index"))
	// What the move writes before the check (about 130 bytes a file), and
	// half the 160 KB the index grows by.
	free := memdtest.LeaveFree(t, disk, n*4096+diskOf(disk).inBlocks(st.Size())+n*130+80<<10)
	defer free()
	integrateInStep(t, sh, theirs)
}

// A fetch that renames a 300 KB note (git mv on the peer): the old file
// is removed before the new one is written, so the move needs next to no
// room, and with 150 KB free it goes through.
func TestShard_RoomForANoteRenamed(t *testing.T) {
	disk := memdtest.SmallDisk(t, "8m")
	sh, _, _ := aliceOn(t, disk)
	var text strings.Builder
	for i := 0; text.Len() < 300<<10; i++ {
		fmt.Fprintf(&text, "Step %d of the runbook, written out at some length.\n", i)
	}
	noteByHand(t, sh, "runbook.md", text.String())
	theirs := fromPeer(t, sh, func(remote string) {
		asPat(t, remote, "mv", "notes/runbook.md", "notes/deploy-runbook.md")
		asPat(t, remote, "commit", "-q", "-m", "rename")
	})
	free := memdtest.LeaveFree(t, disk, 150<<10)
	defer free()
	if _, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"}); err != nil {
		t.Errorf("a fetch renaming a 300 KB note, with 150 KB free: %v", err)
	}
}
