package feed

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// A start reads the end of each shard's file of heads alone: the heads of
// earlier runs wait for a resume. 200 shards, each with a full file,
// published once as the hub's first check does, hold about one head each
// (read whole, they held 20 MB).
func TestHub_AStartHoldsOneHeadOfAnIdleShard(t *testing.T) {
	store, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var file strings.Builder
	for i := range maxSent {
		fmt.Fprintf(&file, "%040x\n", i+1)
	}
	const shards = 200
	var ids []memd.ShardID
	for i := range shards {
		id := memd.AgentShard(fmt.Sprintf("a%03d", i))
		if _, err := store.CreateShard(id); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store.ShardDir(id), ".git", "memd-feed-heads"), []byte(file.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	h, err := New(store, slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	before := heap()
	for _, id := range ids { // as Run's first check does
		if err := h.publish(id); err != nil {
			t.Fatal(err)
		}
	}
	after := heap()
	runtime.KeepAlive(h)
	if per := (int64(after) - int64(before)) / shards; per > 4<<10 {
		t.Errorf("after publishing %d idle shards once, the hub holds %d KB more a shard (%d MB in all)", shards, per>>10, (int64(after)-int64(before))>>20)
	}
}

// heap is the bytes the heap holds after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
