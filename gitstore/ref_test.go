package gitstore

import (
	"github.com/memd/memd/internal/memdtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
