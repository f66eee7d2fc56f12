package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// main's commit is remembered with its ref file's stat data; a commit
// made with git right after must still be seen at once. With the settle
// time at zero every read of main may come from what was remembered, so
// each of these commits must be told apart by the stat data alone.
func TestMainHead_SeesEveryCommitMadeWithGit(t *testing.T) {
	old := settled
	settled = 0
	t.Cleanup(func() { settled = old })
	_, sh := aliceShard(t)
	run := func(args ...string) string { return strings.TrimSpace(memdtest.Git(t, sh.Dir(), args...)) }
	for i := 0; i < 20; i++ {
		path := filepath.Join(sh.Dir(), "hand.txt")
		if err := os.WriteFile(path, []byte(strings.Repeat("x", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", "hand.txt")
		run("commit", "-qm", "by hand")
		head, err := sh.Head()
		if err != nil {
			t.Fatal(err)
		}
		if want := run("rev-parse", "main"); head.String() != want {
			t.Fatalf("commit %d: Head says %s, main is %s", i, head, want)
		}
	}
	// Packed away, the ref file is gone: main is read from packed-refs.
	run("pack-refs", "--all")
	run("commit", "-qm", "after packing", "--allow-empty")
	run("pack-refs", "--all")
	head, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	if want := run("rev-parse", "main"); head.String() != want {
		t.Fatalf("after pack-refs: Head says %s, main is %s", head, want)
	}
}

// The index lock is the marker file memd keeps, linked: it holds memd's
// marker whatever became of that file, and taking it leaves no lock behind.
func TestShard_IndexLockHoldsTheMarker(t *testing.T) {
	dir := t.TempDir()
	sh := &Shard{gitDir: dir}
	marker := filepath.Join(dir, indexMarkerName)
	lock := filepath.Join(dir, "index.lock")
	for _, spoil := range []func(){
		func() { os.WriteFile(marker, []byte("DIRC"), 0o644) }, // before the first lock
		func() {},
		func() { os.Remove(marker) },
		func() {},
	} {
		spoil()
		l, err := sh.acquireIndexLock(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(lock); string(b) != indexLockMarker {
			t.Fatalf("the index lock holds %q", b)
		}
		l.release()
		if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("the index lock is still there once released")
		}
	}
	// A lock git holds is waited for, then reported.
	os.WriteFile(lock, []byte("DIRC"), 0o644)
	if _, err := sh.acquireIndexLock(10 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "has been held") {
		t.Fatalf("taking a lock git holds: %v", err)
	}
	if b, _ := os.ReadFile(lock); string(b) != "DIRC" {
		t.Fatalf("git's lock became %q", b)
	}
}

// memd's index lock is told from git's by being a link to the marker, even
// once a person changed the marker's content, and it bears the time it was
// taken, not the marker's: a tool removing old index locks leaves it be.
func TestShard_IndexLockIsMemdsWhateverTheMarkerHolds(t *testing.T) {
	dir := t.TempDir()
	sh := &Shard{gitDir: dir}
	marker := filepath.Join(dir, indexMarkerName)
	l, err := sh.acquireIndexLock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l.release()
	os.WriteFile(marker, []byte("edited by hand\n"), 0o644) // in place: the same file
	long := time.Now().Add(-48 * time.Hour)
	os.Chtimes(marker, long, long)
	if _, err := sh.acquireIndexLock(time.Second); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "index.lock")
	if fi, err := os.Stat(lock); err != nil || time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("the lock taken now bears the time %v (%v)", fi.ModTime(), err)
	}
	if !ownIndexLock(dir) {
		t.Error("a lock linked to the marker is not taken for memd's once the marker changed")
	}
	os.Remove(lock)
	os.WriteFile(lock, []byte("edited by hand\n"), 0o644) // the same content, another file
	if ownIndexLock(dir) {
		t.Error("a lock that is not the marker is taken for memd's")
	}
	os.WriteFile(lock, []byte(indexLockMarker), 0o644) // as an older memd wrote it
	if !ownIndexLock(dir) {
		t.Error("an older memd's lock is not taken for memd's")
	}
}

// A lock on main another program holds refuses a write with unavailable,
// naming the lock, once memd has waited for it; one older than a minute is
// a program's that stopped, and is removed, as a start removes it.
func TestShard_WriteBesideALockOnMain(t *testing.T) {
	defer func(was time.Duration) { lockTimeout = was }(lockTimeout)
	lockTimeout = 50 * time.Millisecond
	_, sh := agentShardWith(t, "erin", Options{NoSync: true, RepackAt: -1})
	if _, err := addFact(sh, "Erin one"); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(sh.gitDir, "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := addFact(sh, "Erin two")
	if memd.ErrorCode(err) != memd.EUNAVAILABLE || !strings.Contains(memd.ErrorMessage(err), "refs/heads/main.lock") {
		t.Fatalf("write beside a held lock on main: %v, want unavailable naming the lock", err)
	}
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(lock, old, old)
	if _, err := addFact(sh, "Erin two"); err != nil {
		t.Fatalf("write beside a lock on main left two minutes ago: %v", err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the stale lock is still there: %v", err)
	}
}
