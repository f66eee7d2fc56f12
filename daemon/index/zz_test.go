package index

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

func TestZZRead(t *testing.T) {
	dir := os.Getenv("ZZSTORE")
	if dir == "" {
		t.Skip()
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	x, err := Open(filepath.Join(dir, "index.db"), s, log)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	t.Logf("open %v", time.Since(t0))
	id := memd.AgentShard("bench")
	t1 := time.Now()
	main, postings, tail, err := readSnapshotFile(x.snapshotPath(id))
	t.Logf("read file %v %v", time.Since(t1), err)
	t1 = time.Now()
	snap, err := openSnapshotParts(id, main, postings, tail)
	t.Logf("open parts %v %v n=%d", time.Since(t1), err, snap.n)
	t1 = time.Now()
	x.mu.Lock()
	x.unread[id] = true
	x.mu.Unlock()
	err = x.readSnapshot(id)
	t.Logf("readSnapshot %v %v", time.Since(t1), err)
}
