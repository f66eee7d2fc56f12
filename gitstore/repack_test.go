package gitstore_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

// shardToRepack returns a small disk and a shard on it holding notes that
// neither compress nor delta, 24 packs of them: a repack's pack holds them
// all, about 1.5 MB.
func shardToRepack(t *testing.T) (disk string, sh *gitstore.Shard) {
	t.Helper()
	disk = memdtest.SmallDisk(t, "8m")
	return disk, notesToRepack(t, disk, gitstore.Options{NoSync: true, RepackAt: -1})
}

// notesToRepack opens a store in dir with opts and writes shardToRepack's
// notes into its shard agent/alice, with background repacks off; the store
// is opened again with opts for the shard it returns.
func notesToRepack(t *testing.T, dir string, opts gitstore.Options) *gitstore.Shard {
	t.Helper()
	seeding := opts
	seeding.RepackAt = -1
	s, err := gitstore.Open(dir, seeding)
	if err != nil {
		t.Fatal(err)
	}
	sh := createShard(t, s, "agent/alice")
	for i := range 24 {
		b := make([]byte, 45<<10)
		rand.Read(b)
		if _, err := sh.Apply(noteChange(fmt.Sprintf("notes/n%02d.md", i), "note-edit: create", setNote(base64.StdEncoding.EncodeToString(b)+"\n"))); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = gitstore.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if sh, err = s.Shard(memd.AgentShard("alice")); err != nil {
		t.Fatal(err)
	}
	return sh
}

// A background repack that found no room pauses the next ones: each fills
// the disk for a moment, and a write landing in that moment fails, though
// there is room for it.
func TestShard_BackgroundRepacksPauseAfterOneFindsNoRoom(t *testing.T) {
	disk := memdtest.SmallDisk(t, "8m")
	var failed atomic.Int32
	log := slog.New(countingHandler{"background repack failed", &failed})
	sh := notesToRepack(t, disk, gitstore.Options{NoSync: true, RepackAt: 2, Logger: log})
	free := memdtest.LeaveFree(t, disk, 512<<10) // room for writes, not the repack
	defer free()
	write := func(i int) {
		t.Helper()
		if _, err := sh.Apply(noteChange(fmt.Sprintf("notes/small%d.md", i), "note-edit: create", setNote("# Small\n"))); err != nil {
			t.Fatal(err)
		}
	}
	write(1) // a repack follows once the shard is idle for a second, and fails
	for deadline := time.Now().Add(10 * time.Second); failed.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no background repack failed; the test shows nothing")
		}
	}
	write(2)
	time.Sleep(2 * time.Second) // the idle second, and the repack that would follow
	if n := failed.Load(); n != 1 {
		t.Errorf("%d background repacks failed for want of room, one after each write, where the first should pause them", n)
	}
}

// countingHandler counts the log records whose message starts with msg.
type countingHandler struct {
	msg string
	n   *atomic.Int32
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.msg) {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

// memd's background repack on a disk without room for the pack it would
// write fails, and git leaves the part it wrote behind, holding the room
// that was left. memd takes it away: the writes that had room before the
// repack still have it.
func TestShard_ARepackThatFindsNoRoomGivesItBack(t *testing.T) {
	disk, sh := shardToRepack(t)
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

// A person's git fetch into the shard (git index-pack writing
// objects/pack/tmp_pack_*) runs while memd's repack fails for want of
// room: memd removes its own temporary pack, not the fetch's, which then
// finishes. (A wrapper around git makes the repack start 0.5 s late, so
// that the fetch's file appears while it runs.)
func TestShard_AFailedRepackLeavesAPersonsFetchAlone(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip(err)
	}
	wrap := t.TempDir()
	os.WriteFile(filepath.Join(wrap, "git"), []byte("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = repack ] && sleep 0.5; done\nexec "+realGit+" \"$@\"\n"), 0o755)

	disk, sh := shardToRepack(t)
	// The pack the person's fetch brings: one small blob, from elsewhere.
	other := t.TempDir()
	memdtest.Git(t, other, "init", "-q")
	os.WriteFile(filepath.Join(other, "x.md"), []byte("from the person's other clone\n"), 0o644)
	memdtest.Git(t, other, "add", "x.md")
	memdtest.Git(t, other, "-c", "user.name=pat", "-c", "user.email=p@x", "commit", "-qm", "x")
	packCmd := exec.Command(realGit, "-C", other, "pack-objects", "--stdout", "--revs")
	packCmd.Stdin = stringsReader("HEAD\n")
	pack, err := packCmd.Output()
	if err != nil {
		t.Fatal(err)
	}

	free := memdtest.LeaveFree(t, disk, 512<<10) // room for writes, not the repack
	defer free()
	t.Setenv("PATH", wrap+string(os.PathListSeparator)+os.Getenv("PATH"))
	repacked := make(chan error, 1)
	go func() { repacked <- sh.Repack() }()
	time.Sleep(100 * time.Millisecond)

	// The person's fetch starts writing its pack.
	fetch := exec.Command(realGit, "-C", sh.Dir(), "index-pack", "--stdin")
	in, _ := fetch.StdinPipe()
	out, _ := os.CreateTemp(t.TempDir(), "out")
	fetch.Stdout, fetch.Stderr = out, out
	if err := fetch.Start(); err != nil {
		t.Fatal(err)
	}
	var theirs []string
	for deadline := time.Now().Add(2 * time.Second); len(theirs) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		theirs, _ = filepath.Glob(filepath.Join(sh.Dir(), ".git", "objects", "pack", "tmp_pack_*"))
	}
	if len(theirs) == 0 {
		t.Fatal("the person's index-pack wrote no tmp_pack_ file")
	}
	if err := <-repacked; err == nil {
		t.Skip("the repack found room; this test shows nothing")
	} else {
		t.Logf("memd's repack failed: %.200v", err)
	}
	_, statErr := os.Stat(theirs[0])
	in.Write(pack)
	in.Close()
	ferr := fetch.Wait()
	msg, _ := os.ReadFile(out.Name())
	if statErr != nil || ferr != nil {
		t.Errorf("memd's failed repack removed %s, the pack a person's git fetch was writing: %v\nthe person's index-pack then: %v\n%s", filepath.Base(theirs[0]), statErr, ferr, msg)
	}
}

func stringsReader(s string) *os.File {
	r, w, _ := os.Pipe()
	go func() { w.WriteString(s); w.Close() }()
	return r
}
