package search

import (
	"strconv"
	"testing"
)

// Entries keep their numbers and their places as pages are added: an
// entry held while more arrive is the one the index reads.
func TestEntries_GrowWithoutMoving(t *testing.T) {
	var es entries
	first := es.at(es.add(entry{id: "0"}))
	const n = 3<<entryPageBits + 5
	for i := 1; i < n; i++ {
		if got := es.add(entry{id: strconv.Itoa(i)}); got != int32(i) {
			t.Fatalf("entry %d numbered %d", i, got)
		}
	}
	if es.len() != n {
		t.Fatalf("len %d, want %d", es.len(), n)
	}
	for _, i := range []int32{0, 1, 1<<entryPageBits - 1, 1 << entryPageBits, n - 1} {
		if got := es.at(i).id; got != strconv.Itoa(int(i)) {
			t.Errorf("entry %d holds %q", i, got)
		}
	}
	if first != es.at(0) {
		t.Error("the first entry moved as others were added")
	}
}
