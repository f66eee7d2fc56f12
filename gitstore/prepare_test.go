package gitstore

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Two daemons making the same local remote at once both find one whole
// bare repository.
func TestPrepareLocal_TwoAtOnce(t *testing.T) {
	for round := range 20 {
		url := filepath.Join(t.TempDir(), "remotes", "agent", "alice.git")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = prepareLocal(context.Background(), url)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if out, err := exec.Command("git", "-C", url, "rev-parse", "--is-bare-repository").CombinedOutput(); err != nil || string(out) != "true\n" {
			t.Fatalf("round %d: %s %v", round, out, err)
		}
		if m, _ := filepath.Glob(filepath.Join(filepath.Dir(url), ".alice.git.new-*")); len(m) != 0 {
			t.Fatalf("round %d: left %v", round, m)
		}
	}
}
