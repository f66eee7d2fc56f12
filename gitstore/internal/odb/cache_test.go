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
	cache := NewCache(1 << 20)
	cache.now = func() time.Time { return clock }
	c := scope{cache, 1}
	obj := func(s string) Object { return Object{Type: plumbing.BlobObject, Data: []byte(s)} }
	a, b, d := NewHash("aa"), NewHash("bb"), NewHash("dd")
	c.put(a, obj("first"))
	c.put(b, obj("second"))
	clock = clock.Add(time.Minute)
	c.put(d, obj("third"))
	if _, ok := c.get(a); !ok {
		t.Fatal("a is not cached")
	}
	cache.DropUnused(clock) // b alone was not used in the last minute
	for id, want := range map[Hash]bool{a: true, b: false, d: true} {
		if _, ok := c.get(id); ok != want {
			t.Errorf("after DropUnused, %s cached = %v, want %v", id, ok, want)
		}
	}
	if want := len("first") + len("third") + 2*64; cache.Size() != want {
		t.Errorf("size %d, want %d", cache.Size(), want)
	}
	cache.DropUnused(clock.Add(time.Second))
	if cache.Size() != 0 || cache.order.Len() != 0 || len(cache.items) != 0 {
		t.Errorf("a cache unused since the time still holds %d bytes, %d objects", cache.Size(), len(cache.items))
	}
}

// One repository is never served another's objects from the cache they
// share.
func TestCache_EachRepositoryItsOwnObjects(t *testing.T) {
	cache := NewCache(1 << 20)
	bob, alice := scope{cache, 1}, scope{cache, 2}
	id := NewHash("bb")
	bob.put(id, Object{Type: plumbing.CommitObject, Data: []byte("bob's commit")})
	if _, ok := alice.get(id); ok {
		t.Error("alice's repository is served bob's commit")
	}
	if _, ok := bob.get(id); !ok {
		t.Error("bob's commit is not cached for bob")
	}
}
