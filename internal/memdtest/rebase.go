package memdtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// RebaseInEditor starts a person's `git rebase -i HEAD~1` of main in dir
// and returns once its editor is open, every state of the rebase written
// (git has read main); the list is kept as it is. finish closes the
// editor and returns when the rebase has ended, however it ended.
func RebaseInEditor(t testing.TB, dir string) (finish func()) {
	t.Helper()
	tmp := t.TempDir()
	fifo, ready := filepath.Join(tmp, "go"), filepath.Join(tmp, "ready")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skip("mkfifo:", err)
	}
	cmd := exec.Command("git", "-c", "user.name=p", "-c", "user.email=p@x", "rebase", "-i", "HEAD~1")
	cmd.Dir = dir
	// The editor says it is open, then waits for the test, as a person's
	// would.
	cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=touch "+ready+"; read x < "+fifo+"; true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case <-done:
			t.Fatal("git rebase ended before its editor opened")
		default:
			runtime.Gosched()
		}
	}
	return func() {
		os.WriteFile(fifo, []byte("\n"), 0o644)
		<-done
	}
}
