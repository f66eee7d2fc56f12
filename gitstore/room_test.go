package gitstore

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
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
			noteByHand(t, sh, "start.md", "start\n")
			const n = 200
			theirs := fromPeer(t, sh, func(remote string) {
				for i := range n {
					p := filepath.Join(remote, "notes", fmt.Sprintf("n%03d.md", i))
					if own {
						p = filepath.Join(remote, "notes", fmt.Sprintf("t%03d", i), "n.md")
					}
					os.MkdirAll(filepath.Dir(p), 0o755)
					os.WriteFile(p, []byte(fmt.Sprintf("# Note %d\n\nfirst line\n", i)), 0o644)
				}
				asPat(t, remote, "add", "notes")
				asPat(t, remote, "commit", "-q", "-m", "new notes")
			})
			st, _ := os.Stat(filepath.Join(dir, ".git", "index"))
			// Room for what roomForMove counts (a block a file, the index)
			// and 200 KB more.
			free := memdtest.LeaveFree(t, disk, n*4096+inBlocks(st.Size())+200<<10)
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
	free := memdtest.LeaveFree(t, disk, n*4096+inBlocks(st.Size())+n*130+80<<10)
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

// A file a person has staged (git add) gets memd's change merged into
// their staged version too, written as an object of its own: the room
// check counts it. Here the log, which the person staged with 400 KB of
// their own lines, takes a forget, and so does the profile after it: the
// move is refused, not let through to find no room for the profile and
// leave the forgotten fact in its working file.
func TestShard_RoomForAFileAPersonStaged(t *testing.T) {
	for _, margin := range []int64{160 << 10, 240 << 10} {
		t.Run(fmt.Sprint(margin>>10, "K"), func(t *testing.T) { aFileAPersonStaged(t, margin) })
	}
}

func aFileAPersonStaged(t *testing.T, margin int64) {
	disk := memdtest.SmallDisk(t, "8m")
	sh, who, d := aliceOn(t, disk)
	forgotten, logFact := longProfile(t, sh, who, d)
	logPath := filepath.Join(sh.Dir(), "log", "2026-11.md")
	committed, _ := os.ReadFile(logPath)
	// The person's lines: hard to compress, as a loose object is.
	rnd := rand.New(rand.NewPCG(1, 2))
	var mine strings.Builder
	buf := make([]byte, 48)
	for mine.Len() < 400<<10 {
		for i := range buf {
			buf[i] = byte(rnd.Uint32())
		}
		mine.WriteString(base64.StdEncoding.EncodeToString(buf) + "\n")
	}
	os.WriteFile(logPath, append(committed, mine.String()...), 0o644)
	memdtest.Git(t, sh.Dir(), "add", "log/2026-11.md")
	profilePath := filepath.Join(sh.Dir(), "profile.md")
	profileBefore, _ := os.ReadFile(profilePath)
	head := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")

	logNow, _ := os.Stat(logPath)
	idx, _ := os.Stat(filepath.Join(sh.Dir(), ".git", "index"))
	// What roomForMove counts, and 80 KB more.
	counted := inBlocks(logNow.Size()) + inBlocks(int64(len(profileBefore))) + inBlocks(idx.Size())
	change := Change{Author: who, Message: "forget two", Edits: []Edit{
		{Op: RemoveFact, Fact: memd.Fact{ID: logFact}},
		{Op: RemoveFact, Fact: memd.Fact{ID: forgotten}},
	}}
	// How much the commit writes before the check (its pack): a first try
	// on a disk with room for what is counted alone, refused.
	room0 := roomLeft(disk)
	free := memdtest.LeaveFree(t, disk, counted)
	_, err := sh.Apply(change)
	var needed, left int64
	if msg := fmt.Sprint(err); !strings.Contains(msg, "bytes needed") {
		t.Fatalf("the first try: %v", err)
	} else {
		head := msg[:strings.Index(msg, " bytes needed")]
		fmt.Sscanf(msg[strings.LastIndex(head, " ")+1:], "%d bytes needed, %d left", &needed, &left)
	}
	free()
	t.Logf("room before the first try %d, after %d", room0, roomLeft(disk))
	before := counted - left
	t.Logf("counted %d, written before the check %d", counted, before)
	free = memdtest.LeaveFree(t, disk, counted+margin)
	defer free()
	_, err = sh.Apply(change)
	now := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")
	profile, _ := os.ReadFile(profilePath)
	t.Logf("apply: %v; main moved %v", err, now != head)
	if now != head && strings.Contains(string(profile), "flight number 0 of the season") {
		t.Errorf("main moved past the forget, but profile.md's working file still holds the forgotten fact (no room for it): a person's git commit -a takes the forget back")
	}
}
