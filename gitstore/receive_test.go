package gitstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

// packOf returns a pack of the commit HEAD of a new repository holding one
// file, as a git client pushes it, and that commit.
func packOf(t *testing.T, text string) (pack []byte, commit string) {
	t.Helper()
	other := t.TempDir()
	memdtest.Git(t, other, "init", "-q")
	os.WriteFile(filepath.Join(other, "x.md"), []byte(text), 0o644)
	memdtest.Git(t, other, "add", "x.md")
	memdtest.Git(t, other, "-c", "user.name=pat", "-c", "user.email=p@x", "commit", "-qm", "x")
	cmd := exec.Command("git", "-C", other, "pack-objects", "--stdout", "--revs")
	cmd.Stdin = bytes.NewBufferString("HEAD\n")
	pack, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	head, err := memdtest.GitOut(other, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return pack, string(bytes.TrimSpace([]byte(head)))
}

// packFiles lists the files of a shard's pack folder.
func packFiles(t *testing.T, sh *gitstore.Shard) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(sh.Dir(), ".git", "objects", "pack", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// whileReading calls fn once the first n bytes of r have been read, as a
// push that is still coming in.
type whileReading struct {
	r    io.Reader
	n    int
	fn   func()
	done bool
}

func (w *whileReading) Read(p []byte) (int, error) {
	if !w.done && w.n <= 0 {
		w.done = true
		w.fn()
	}
	if len(p) > w.n && w.n > 0 {
		p = p[:w.n]
	}
	n, err := w.r.Read(p)
	w.n -= n
	return n, err
}

// A push that fails removes what it wrote and nothing else: a person's git
// fetch into the same repository writes its pack in the same folder at the
// same moment, under a temporary name of git's, and must find it there.
func TestShard_AFailedPushLeavesAPersonsFetchAlone(t *testing.T) {
	_, _, sh := stoppableShard(t)
	pack, _ := packOf(t, "pushed\n")
	theirs := filepath.Join(sh.Dir(), ".git", "objects", "pack", "tmp_pack_person")
	broken := append(bytes.Clone(pack[:len(pack)/2]), bytes.Repeat([]byte{0xff}, 64)...)
	in := &whileReading{r: bytes.NewReader(broken), n: 16, fn: func() {
		if err := os.WriteFile(theirs, []byte("the person's fetch, half way"), 0o444); err != nil {
			t.Fatal(err)
		}
	}}
	_, err := sh.Receive(in)
	if memd.ErrorCode(err) != memd.EINVALID {
		t.Fatalf("a broken pack: %v, want %s", err, memd.EINVALID)
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Errorf("memd's failed push removed the pack a person's fetch was writing: %v", err)
	}
	for _, f := range packFiles(t, sh) {
		if f != theirs {
			t.Errorf("a failed push left %s", filepath.Base(f))
		}
	}
	entries, _ := os.ReadDir(filepath.Join(sh.Dir(), ".git"))
	for _, e := range entries {
		if bytes.HasPrefix([]byte(e.Name()), []byte("memd-receive")) {
			t.Errorf("a failed push left .git/%s", e.Name())
		}
	}
}

// A pushed pack is kept under git's own name, its objects readable by git;
// discarded, it is gone, and a pack that was there before stays.
func TestShard_APushedPackIsKeptOrDiscarded(t *testing.T) {
	_, _, sh := stoppableShard(t)
	before := packFiles(t, sh)
	pack, commit := packOf(t, "pushed\n")
	r, err := sh.Receive(bytes.NewReader(pack))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := memdtest.GitOut(sh.Dir(), "cat-file", "-t", commit); err != nil || string(bytes.TrimSpace([]byte(out))) != "commit" {
		t.Fatalf("git cat-file -t %s after the push: %q %v", commit, out, err)
	}
	added := len(packFiles(t, sh)) - len(before)
	if added < 2 {
		t.Fatalf("the push added %d files to the pack folder, want its pack and index: %v", added, packFiles(t, sh))
	}
	r.Discard()
	r.Close()
	if got := packFiles(t, sh); len(got) != len(before) {
		t.Errorf("after a discard the pack folder holds %v, want %v", got, before)
	}
	if _, err := memdtest.GitOut(sh.Dir(), "cat-file", "-t", commit); err == nil {
		t.Errorf("the discarded push's commit %s is still there", commit)
	}

	// The same pack pushed twice: the second is not the first's owner.
	r, err = sh.Receive(bytes.NewReader(pack))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	again, err := sh.Receive(bytes.NewReader(pack))
	if err != nil {
		t.Fatal(err)
	}
	again.Discard()
	again.Close()
	if _, err := memdtest.GitOut(sh.Dir(), "cat-file", "-t", commit); err != nil {
		t.Errorf("discarding a push of a pack already there removed it: %v", err)
	}
}

// A kill in the middle of a push leaves memd's folder for it behind; the
// next start removes it.
func TestStore_StartRemovesAPushAKillCutShort(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	left := filepath.Join(sh.Dir(), ".git", "memd-receive-123")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(left, "incoming.pack"), []byte("PACK"), 0o444)
	reopen(t, dir, s)
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the start left %s: %v", left, err)
	}
}

// A git that writes reverse indexes (pack.writeReverseIndex, the default
// from git 2.41): the .rev moves in with the pack, and a discard takes it
// out again.
func TestShard_APushedPackWithAReverseIndex(t *testing.T) {
	_, _, sh := stoppableShard(t)
	git(t, sh.Dir(), "config", "pack.writeReverseIndex", "true")
	before := packFiles(t, sh)
	pack, commit := packOf(t, "pushed\n")
	r, err := sh.Receive(bytes.NewReader(pack))
	if err != nil {
		t.Fatal(err)
	}
	var rev bool
	for _, f := range packFiles(t, sh) {
		rev = rev || strings.HasSuffix(f, ".rev")
	}
	if !rev {
		t.Errorf("no .rev moved in: %v", packFiles(t, sh))
	}
	if out, err := memdtest.GitOut(sh.Dir(), "cat-file", "-t", commit); err != nil {
		t.Fatalf("cat-file: %q %v", out, err)
	}
	r.Discard()
	r.Close()
	if got := packFiles(t, sh); len(got) != len(before) {
		t.Errorf("after a discard: %v, want %v", got, before)
	}
}

// A kill while a pushed pack moves in, after its .pack (and .rev) but
// before its index: the start takes them out again, as it removes memd's
// folder for the push. Left, git ignores a pack without an index but warns
// of it ("no corresponding .idx"), and it holds the push's room.
func TestStore_StartRemovesAPackAKillLeftWithoutItsIndex(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	git(t, sh.Dir(), "config", "pack.writeReverseIndex", "true")
	before := packFiles(t, sh)
	pack, _ := packOf(t, "pushed\n")
	// What index-pack writes in memd's folder, as Receive runs it.
	left := filepath.Join(sh.Dir(), ".git", "memd-receive-123")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-C", sh.Dir(), "index-pack", "--stdin", "--strict", filepath.Join(left, "incoming.pack"))
	cmd.Stdin = bytes.NewReader(pack)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	name := "pack-" + strings.TrimPrefix(strings.TrimSpace(string(out)), "pack\t")
	// adoptPack's first renames, then the kill.
	os.WriteFile(filepath.Join(left, "adopting"), []byte(name), 0o600)
	os.WriteFile(filepath.Join(left, "incoming.keep"), nil, 0o444)
	for _, ext := range []string{".keep", ".pack", ".rev"} {
		if err := os.Rename(filepath.Join(left, "incoming"+ext), filepath.Join(sh.Dir(), ".git", "objects", "pack", name+ext)); err != nil {
			t.Fatal(err)
		}
	}
	_, sh = reopen(t, dir, s)
	if got := packFiles(t, sh); len(got) != len(before) {
		t.Errorf("after the start the pack folder holds %v, want %v", got, before)
	}
	if out := git(t, sh.Dir(), "count-objects", "-v"); !strings.Contains("\n"+out, "\ngarbage: 0\n") {
		t.Errorf("git count-objects -v after the start:\n%s", out)
	}
}

// Between Receive and the integration that makes main point at the pushed
// commit, the pushed objects are unreachable: a person's git repack -a -d
// then (memd holds back only its own) would drop them, and the push fail.
// The pack has a .keep until Close, as git receive-pack keeps its own; so
// does the same pack pushed again (after a kill took the first push's
// keep away at the next start, say), which, there before, a discard
// leaves.
func TestShard_APersonsRepackDuringAPushKeepsThePushedObjects(t *testing.T) {
	for _, again := range []bool{false, true} {
		t.Run(fmt.Sprintf("pushed again %v", again), func(t *testing.T) {
			_, _, sh := stoppableShard(t)
			remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
			pack, commit := packOf(t, "pushed\n")
			r, err := sh.Receive(bytes.NewReader(pack))
			if err != nil {
				t.Fatal(err)
			}
			if again {
				r.Close()
				if r, err = sh.Receive(bytes.NewReader(pack)); err != nil {
					t.Fatal(err)
				}
			}
			git(t, sh.Dir(), "repack", "-a", "-d", "-q")
			if out, err := memdtest.GitOut(sh.Dir(), "cat-file", "-t", commit); err != nil {
				t.Errorf("after a person's git repack -a -d the pushed commit %s, not yet integrated, is gone: %q %v", commit, out, err)
			}
			if again {
				r.Discard()
			}
			r.Close()
			if keeps, _ := filepath.Glob(filepath.Join(sh.Dir(), ".git", "objects", "pack", "*.keep")); len(keeps) > 0 {
				t.Errorf("after Close the pack folder still keeps %v", keeps)
			}
		})
	}
}

// A kill while the same pack is pushed again leaves the .keep memd made
// for it; the next start takes it away, and leaves a .keep of another's.
func TestStore_StartRemovesTheKeepOfAPackPushedAgain(t *testing.T) {
	dir, s, sh := stoppableShard(t)
	pack, _ := packOf(t, "pushed\n")
	r, err := sh.Receive(bytes.NewReader(pack))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := sh.Receive(bytes.NewReader(pack)); err != nil { // then the kill: no Close
		t.Fatal(err)
	}
	keeps, _ := filepath.Glob(filepath.Join(sh.Dir(), ".git", "objects", "pack", "*.keep"))
	if len(keeps) != 1 {
		t.Fatalf("while the push is checked, the pack folder keeps %v", keeps)
	}
	theirs := filepath.Join(sh.Dir(), ".git", "objects", "pack", "pack-0000000000000000000000000000000000000000.keep")
	os.WriteFile(theirs, []byte("a person's\n"), 0o444)
	s.Close() // no Close of the push: its folder stays, as after a kill
	_, sh = reopen(t, dir, s)
	left, _ := filepath.Glob(filepath.Join(sh.Dir(), ".git", "objects", "pack", "*.keep"))
	if !slices.Equal(left, []string{theirs}) {
		t.Errorf("after the start the pack folder keeps %v, want only %v", left, theirs)
	}
}
