package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Only main's last reflog entry counts, and only git's abort of a rebase
// of main; a reflog of any length is read by its tail.
func TestLastReflogMove(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	entry := func(why string) string { return a + " " + b + " p <p@x> 1796657124 +0000\t" + why + "\n" }
	long := strings.Repeat(entry("commit: something"), 2000)
	for _, c := range []struct {
		name, log string
		ok        bool
	}{
		{"an abort", entry("rebase (abort): returning to refs/heads/main"), true},
		{"an abort of an older git", entry("rebase -i (abort): returning to refs/heads/main"), true},
		{"an abort last of many", long + entry("rebase (abort): returning to refs/heads/main"), true},
		{"an abort without a line end", strings.TrimSuffix(entry("rebase (abort): returning to refs/heads/main"), "\n"), true},
		{"an abort before memd's move", entry("rebase (abort): returning to refs/heads/main") + entry("memd: remember: x"), false},
		{"an abort of another branch", entry("rebase (abort): returning to refs/heads/mine"), false},
		{"a finished rebase", entry("rebase (finish): refs/heads/main onto " + a), false},
		{"a reset", entry("reset: moving to HEAD~3"), false},
		{"a malformed hash", "zz " + b + " p <p@x> 1 +0000\trebase (abort): returning to refs/heads/main\n", false},
		{"empty", "", false},
	} {
		path := filepath.Join(t.TempDir(), "main")
		if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
			t.Fatal(err)
		}
		old, next, ok := lastReflogMove(path)
		if ok != c.ok || ok && (old.String() != a || next.String() != b) {
			t.Errorf("%s: %s %s %v, want ok %v", c.name, old, next, ok, c.ok)
		}
	}
	if _, _, ok := lastReflogMove(filepath.Join(t.TempDir(), "absent")); ok {
		t.Error("an absent reflog reads as an abort")
	}
}
