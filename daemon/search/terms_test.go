package search

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// A part's dictionary answers as a Go map of the same terms does, grown
// from nothing or made at its size, whatever the terms' lengths, and holds
// copies of them, not pieces of the texts they came from.
func TestTermDict_AnswersAsAMap(t *testing.T) {
	for _, reserved := range []int{0, 5000} {
		var d termDict
		d.reserve(reserved)
		want := map[string]termRef{}
		rng := rand.New(rand.NewPCG(uint64(reserved), 2))
		text := strings.Repeat("x", arenaChunk)
		for n := range 20000 {
			term := strconv.Itoa(rng.IntN(8000))
			if n%1000 == 0 {
				term = text[:arenaChunk/8+n/1000] // a block of its own
			}
			r := termRef(n)
			name := term
			if k, slot, tag, found := d.place(term); found {
				d.refs[k] = r
				name = d.name(k)
			} else {
				name = d.add(term, r, slot, tag)
			}
			if name != term || unsafe.StringData(name) == unsafe.StringData(term) {
				t.Fatalf("%q is named %q, a piece of it: %v", term[:min(len(term), 9)], name[:min(len(name), 9)], unsafe.StringData(name) == unsafe.StringData(term))
			}
			want[term] = r
		}
		if d.len() != len(want) {
			t.Fatalf("reserved %d: %d terms, want %d", reserved, d.len(), len(want))
		}
		for term, r := range want {
			if got, ok := d.get(term); !ok || got != r {
				t.Fatalf("reserved %d: get %q = %d %v, want %d", reserved, term[:min(len(term), 9)], got, ok, r)
			}
		}
		if _, ok := d.get("8001"); ok {
			t.Fatal("a term never set is found")
		}
		seen := 0
		d.each(func(term string, r termRef) {
			if want[term] != r {
				t.Fatalf("each: %q %d, want %d", term[:min(len(term), 9)], r, want[term])
			}
			seen++
		})
		if seen != len(want) {
			t.Fatalf("each gave %d terms, want %d", seen, len(want))
		}
	}
}
