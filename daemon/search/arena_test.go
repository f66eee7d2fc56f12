package search

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/memd/memd"
)

// Strings put in an arena come back as they were, whatever their length
// (empty, packed into blocks, one a block of its own), however many
// blocks they fill.
func TestArena_GivesBackWhatWasPut(t *testing.T) {
	var a arena
	var put []string
	var refs []ref
	for i := range 5000 {
		// The first has a block of its own.
		s := strings.Repeat(string(rune('a'+i%26)), []int{arenaChunk/8 + 1, 0, 1, 12, 80, arenaChunk / 8, 70000}[i%7])
		put = append(put, s)
		refs = append(refs, a.put(s))
	}
	for i, r := range refs {
		if got := a.get(r); got != put[i] {
			t.Fatalf("string %d: %d bytes back, %d put", i, len(got), len(put[i]))
		}
	}
	if len(a.blocks) < 2 {
		t.Fatalf("%d blocks: the strings did not fill one", len(a.blocks))
	}
}

// The index names a fact's file with its own copy of the name, however
// often the file comes again: a piece of what the facts were read from (a
// snapshot's window, a file's blob) would keep all of that in memory.
func TestIndex_KeysNoPieceOfWhatItRead(t *testing.T) {
	data := []byte("log/2026-11.md log/2026-12.md")
	start, end := uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&data[0]))+uintptr(len(data))
	shard := memd.AgentShard("alice")
	day := memd.DateOf(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	var docs []Doc
	for n := range 2 * smallBatch {
		file := unsafe.String(&data[15*(n%2)], 14)
		text := fmt.Sprintf("Fact number %d", n)
		docs = append(docs, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: day, Tier: memd.TierLog, Text: text, File: file}, Offset: n * 20})
	}
	x := New()
	x.PutAll(docs[:smallBatch+1])
	x.PutAll(docs[smallBatch+1:])
	x.Put(docs[0])
	for _, name := range x.fileNames.list {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(name))); p >= start && p < end {
			t.Errorf("the files are named by %q, a piece of what was read", name)
		}
	}
}
