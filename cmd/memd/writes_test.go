package main_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memd/memd/internal/scalebench"
)

// The comparison of writes memd bench --scale prints, scaled down: every
// fact each writer was timed for is a commit of its own, in memd's shard
// for the HTTP clients, and the git CLI's copy is gone after.
func TestScaleWrites_EveryFactTimedIsACommit(t *testing.T) {
	data := filepath.Join(t.TempDir(), "store")
	if err := scalebench.Build(data, scalebench.Shape{Facts: 300, Shards: 1}); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(data, "shards", "agent", "bench")
	before := commits(t, shard)
	n := scalebench.WriteCounts{GitCLI: 6, OneClient: 10, EightClients: 21}
	w, err := scalebench.CompareWrites(context.Background(), memdBin, data, n, []string{"--no-fsync"}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name        string
		facts, want int
	}{{"git CLI", w.GitCLI.Facts, n.GitCLI}, {"one client", w.OneClient.Facts, n.OneClient}, {"eight clients", w.EightClients.Facts, n.EightClients}} {
		if r.facts != r.want {
			t.Errorf("%s: %d facts timed, want %d", r.name, r.facts, r.want)
		}
	}
	if w.GitCLI.PerSecond() <= 0 || w.OneClient.PerSecond() <= 0 || w.EightClients.PerSecond() <= 0 {
		t.Errorf("a rate of nothing: %+v", w)
	}
	// And one untimed first write.
	if got, want := commits(t, shard)-before, n.OneClient+n.EightClients+1; got != want {
		t.Errorf("memd's shard gained %d commits, want %d, one a fact", got, want)
	}
	if _, err := os.Stat(data + "-git"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the git CLI's copy of the shard: %v, want it removed", err)
	}
	// The same series again would find every fact there and commit
	// nothing: a rate of no commits is refused, not printed.
	if _, err := scalebench.CompareWrites(context.Background(), memdBin, data, n, []string{"--no-fsync"}, func(string) {}); err == nil || !strings.Contains(err.Error(), "already there") {
		t.Errorf("writing the same facts again: %v, want an error naming facts already there", err)
	}
}

// commits counts the commits on a repository's HEAD.
func commits(t *testing.T, dir string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-list", "--count", "HEAD").CombinedOutput()
	if err != nil {
		t.Fatalf("git rev-list in %s: %v: %s", dir, err, out)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
