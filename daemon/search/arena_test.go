package search

import (
	"strings"
	"testing"
)

// Strings put in an arena come back as they were, whatever their length
// (empty, packed into blocks, one a block of its own), however many
// blocks they fill.
func TestArena_GivesBackWhatWasPut(t *testing.T) {
	var a arena
	var put []string
	var refs []ref
	for i := range 5000 {
		s := strings.Repeat(string(rune('a'+i%26)), []int{0, 1, 12, 80, arenaChunk / 8, arenaChunk/8 + 1, 70000}[i%7])
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
