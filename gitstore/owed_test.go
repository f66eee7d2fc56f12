package gitstore_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

// owedShard makes a shard on a small disk whose restore of a fact a stale
// index dropped ("Packed a raincoat") found no room: it is owed. The disk
// is full on return; free gives the room back.
func owedShard(t *testing.T, opts gitstore.Options) (s *gitstore.Store, sh *gitstore.Shard, disk string, free func()) {
	t.Helper()
	disk = memdtest.SmallDisk(t, "8m")
	opts.NoSync, opts.RepackAt, opts.Restore = true, -1, restoreMessage
	s, err := gitstore.Open(disk, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sh = createShard(t, s, "agent/alice")
	return s, sh, disk, dropOnAFullDisk(t, sh, disk)
}

// dropOnAFullDisk has a person's commit from a stale index drop memd's
// fact "Packed a raincoat", and memd's restore of it find the disk full.
// The disk is full on return; the function returned gives the room back.
func dropOnAFullDisk(t *testing.T, sh *gitstore.Shard, disk string) (free func()) {
	t.Helper()
	dir := sh.Dir()
	remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "m1")
	index := filepath.Join(dir, ".git", "index")
	stale := filepath.Join(t.TempDir(), "index")
	copyFile(t, index, stale)
	remember(t, sh, "Packed a raincoat", memd.TierLog, "m2")
	copyFile(t, stale, index)
	os.WriteFile(filepath.Join(dir, "todo.md"), []byte("call mum\n"), 0o644)
	git(t, dir, "add", "todo.md")
	git(t, dir, "commit", "-qm", "todo")
	if show := git(t, dir, "show", "HEAD:log/2026-11.md"); strings.Contains(show, "raincoat") {
		t.Fatalf("the person's commit did not drop the fact; this test shows nothing")
	}
	free = memdtest.FillDisk(t, disk)
	sh.Refresh() // the restore finds no room
	if got := texts(t, sh); slices.Contains(got, "Packed a raincoat") {
		t.Fatalf("the restore found room on a full disk; this test shows nothing: %v", got)
	}
	return free
}

// A push or fetch that fast-forwards main, arriving while a restore is
// owed: the integration's catch-up makes the owed restore, and the
// integration must keep it, not move main past it to the commit fetched.
func TestShard_AnIntegrationKeepsTheOwedRestoreItMade(t *testing.T) {
	*gitstore.OwedRetryAfter = 0
	t.Cleanup(func() { *gitstore.OwedRetryAfter = 2 * time.Second })
	_, sh, _, free := owedShard(t, gitstore.Options{})
	free()
	dir := sh.Dir()
	// A clone elsewhere takes main (with the person's commit) and adds a
	// note; memd fetches it and fast-forwards.
	peer := filepath.Join(t.TempDir(), "peer")
	git(t, "", "clone", "--quiet", dir, peer)
	os.WriteFile(filepath.Join(peer, "todo2.md"), []byte("water plants\n"), 0o644)
	git(t, peer, "add", "todo2.md")
	git(t, peer, "commit", "-qm", "todo2")
	git(t, dir, "fetch", "--quiet", peer, "+refs/heads/main:refs/remotes/peer/main")
	theirs, err := sh.Ref("refs/remotes/peer/main")
	if err != nil {
		t.Fatal(err)
	}
	in, err := sh.Integrate(theirs, gitstore.IntegrateOptions{From: "peer"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("integration: %+v", in)
	log := git(t, dir, "log", "--format=%h %an %s", "-6")
	reflog := git(t, dir, "reflog", "-6", "main")
	if got := texts(t, sh); !slices.Contains(got, "Packed a raincoat") {
		t.Errorf("facts after the integration: %v; the restore is gone\nlog:\n%s\nreflog:\n%s", got, log, reflog)
	}
	work, _ := os.ReadFile(filepath.Join(dir, "log", "2026-11.md"))
	if !strings.Contains(string(work), "raincoat") {
		t.Errorf("the working file lost the fact too (no later restore can find it):\n%s", work)
	}
}

// Refresh reads a shard's files only if main moved since memd last looked;
// a shard given up (Release) stays given up. With a restore owed, and its
// next try not due, a Refresh must neither read the files again nor retry.
func TestShard_ARefreshOfAReleasedShardWithARestoreOwed(t *testing.T) {
	*gitstore.OwedRetryAfter = time.Hour
	t.Cleanup(func() { *gitstore.OwedRetryAfter = 2 * time.Second })
	var warned atomic.Int32
	log := slog.New(countingHandler{"restoring facts a stale index dropped", &warned})
	_, sh, _, free := owedShard(t, gitstore.Options{Logger: log})
	defer free()
	if warned.Load() != 1 {
		t.Fatalf("%d warnings for the failed restore, want 1", warned.Load())
	}
	for i := range 5 {
		sh.Release()
		if sh.Parsed() {
			t.Fatal("Release kept the state")
		}
		if err := sh.Refresh(); err != nil {
			t.Fatal(err)
		}
		if sh.Parsed() {
			t.Errorf("refresh %d of a released shard whose main has not moved read its files again", i)
		}
	}
	if n := warned.Load(); n != 1 {
		t.Errorf("%d failed restores: a retry at each Refresh of a released shard, where it is due only after an hour", n)
	}
}

// The owed restore is tried again at most every OwedRetryAfter; memd's own
// writes go on meanwhile (the disk had room again). A burst of them must
// not make the owed restore silently lapse.
func TestShard_AnOwedRestoreOutlastsABurstOfWrites(t *testing.T) {
	const burst = 70 // more than staleLookback of memd's own commits
	*gitstore.OwedRetryAfter = 3 * time.Second
	t.Cleanup(func() { *gitstore.OwedRetryAfter = 2 * time.Second })
	_, sh, _, free := owedShard(t, gitstore.Options{})
	start := time.Now()
	free()
	for i := range burst {
		remember(t, sh, "Burst fact "+string(rune('A'+i/26))+string(rune('a'+i%26)), memd.TierLog, "b")
	}
	if time.Since(start) > 3*time.Second {
		t.Skip("the writes took longer than the retry interval; this test shows nothing")
	}
	time.Sleep(time.Until(start.Add(3200 * time.Millisecond)))
	if err := sh.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, sh); !slices.Contains(got, "Packed a raincoat") {
		t.Errorf("the owed restore lapsed without a word after memd's own writes: raincoat missing; owed file present: %v",
			fileExists(filepath.Join(sh.Dir(), ".git", "memd-restore-owed")))
	}
}

// fileExists reports whether there is a file at p.
func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// A person's commit from a stale index drops memd's fact while the disk is
// full, so memd's restore cannot be written. It is owed: tried again once
// there is room, though main has not moved since, and though memd wrote
// first; and at a start, if memd stopped before it could.
func TestShard_ARestoreThatFoundNoRoomIsTriedAgain(t *testing.T) {
	*gitstore.OwedRetryAfter = 0
	t.Cleanup(func() { *gitstore.OwedRetryAfter = 2 * time.Second })
	for _, when := range []string{"at the next write", "at a start", "at a start after memd wrote"} {
		t.Run(when, func(t *testing.T) {
			if when == "at a start after memd wrote" {
				*gitstore.OwedRetryAfter = time.Hour // memd's write does not try it again
				defer func() { *gitstore.OwedRetryAfter = 0 }()
			}
			disk := memdtest.SmallDisk(t, "8m")
			open := reopenableAt(t, disk)
			s, sh := open()
			defer func() { s.Close() }()
			dir := sh.Dir()
			free := dropOnAFullDisk(t, sh, disk)
			if when == "at a start" {
				s.Close()
			}
			free()
			want := []string{"Booked a flight to Lisbon", "Packed a raincoat"}
			if when != "at a start" {
				remember(t, sh, "Took the night train", memd.TierLog, "m3")
				want = append(want, "Took the night train")
			}
			if when == "at a start after memd wrote" {
				s.Close()
			}
			if strings.HasPrefix(when, "at a start") {
				s, sh = open()
			}
			if err := sh.Refresh(); err != nil {
				t.Fatal(err)
			}
			if got := texts(t, sh); !slices.Equal(got, want) {
				t.Errorf("facts once the disk has room again: %v, want %v\n%s", got, want, git(t, dir, "log", "--format=%an %s", "-4"))
			}
			// After a start, the line restored goes at the end of main's
			// file, while the person's working file holds it where it was:
			// the same lines, in another order.
			work, _ := os.ReadFile(filepath.Join(dir, "log", "2026-11.md"))
			head := git(t, dir, "show", "HEAD:log/2026-11.md")
			if a, b := strings.Split(string(work), "\n"), strings.Split(head, "\n"); !sameLines(a, b) {
				t.Errorf("the working file %q, main's %q", work, head)
			}
		})
	}
}

// sameLines reports whether a and b hold the same lines, in any order.
func sameLines(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
