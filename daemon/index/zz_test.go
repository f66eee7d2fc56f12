package index

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

func TestZZFirst(t *testing.T) {
	dir := os.Getenv("ZZ_DIR")
	if dir == "" {
		t.Skip()
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := gitstore.Open(dir, gitstore.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	x, err := Open(t.TempDir()+"/index.db", store, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var peak uint64
	stop := make(chan bool)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}()
	defer collectOftenWhileReading(readingGC)()
	start := time.Now()
	id := memd.AgentShard("bench")
	sh, _ := store.Shard(id)
	switch os.Getenv("ZZ_MODE") {
	case "follow":
		err = x.CatchUp(id)
	case "head":
		_, err = x.readHead(sh, false)
	}
	took := time.Since(start)
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %v, heap peak %d MB, facts %d", os.Getenv("ZZ_MODE"), took, peak>>20, x.search.Len())
	start = time.Now()
	if os.Getenv("ZZ_MODE") == "head" {
		err = x.attribute(context.Background(), sh, x.Head(id), nil)
		t.Logf("attribute: %v %v", time.Since(start), err)
	}
}
