package odb

import (
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Objects nobody read since a time go; those read since stay, whenever
// they were put.
func TestCache_DropUnused(t *testing.T) {
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c := NewCache(1 << 20)
	c.now = func() time.Time { return clock }
	obj := func(s string) Object { return Object{Type: plumbing.BlobObject, Data: []byte(s)} }
	a, b, d := NewHash("aa"), NewHash("bb"), NewHash("dd")
	c.put(a, obj("first"))
	c.put(b, obj("second"))
	clock = clock.Add(time.Minute)
	c.put(d, obj("third"))
	if _, ok := c.get(a); !ok {
		t.Fatal("a is not cached")
	}
	c.DropUnused(clock) // b alone was not used in the last minute
	for id, want := range map[Hash]bool{a: true, b: false, d: true} {
		if _, ok := c.get(id); ok != want {
			t.Errorf("after DropUnused, %s cached = %v, want %v", id, ok, want)
		}
	}
	if want := len("first") + len("third") + 2*64; c.Size() != want {
		t.Errorf("size %d, want %d", c.Size(), want)
	}
	c.DropUnused(clock.Add(time.Second))
	if c.Size() != 0 || c.order.Len() != 0 || len(c.items) != 0 {
		t.Errorf("a cache unused since the time still holds %d bytes, %d objects", c.Size(), len(c.items))
	}
}
