package search

import (
	"fmt"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Facts whose IDs hash alike are found, replaced and removed each as its
// own: with one hash for every ID, every ID but one clashes.
func TestIDMap_IDsThatClash(t *testing.T) {
	was := hashID
	hashID = func(string) uint64 { return 7 }
	defer func() { hashID = was }()
	shard := memd.ProjectShard("clash")
	day := memd.DateOf(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	fact := func(n int) Doc {
		text := fmt.Sprintf("Fact number %d", n)
		return Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: day, Tier: memd.TierLog, Text: text, File: "log/" + day.Month() + ".md"}, Offset: n * 20}
	}
	x := New()
	for n := range 10 {
		x.Put(fact(n))
	}
	gone := map[int]bool{0: true, 3: true, 9: true}
	for n := range gone {
		x.Delete(shard, fact(n).ID)
	}
	x.Put(fact(3)) // back again
	delete(gone, 3)
	for n := range 10 {
		_, found := x.Get(shard, fact(n).ID)
		if found == gone[n] {
			t.Errorf("fact %d found %v, want %v", n, found, !gone[n])
		}
	}
	if got := x.Facts(shard); got != 8 {
		t.Errorf("%d facts, want 8", got)
	}
}

// An ID kept by its string, put again once its hash is free, is still
// found once: removed, it is gone.
func TestIDMap_AClashPutAgain(t *testing.T) {
	was := hashID
	hashID = func(string) uint64 { return 7 }
	defer func() { hashID = was }()
	es := &entries{}
	a, b := es.add(entry{id: "aaaaaaaaaaaa"}), es.add(entry{id: "bbbbbbbbbbbb"})
	m := newIDMap(0)
	m.put(es, "aaaaaaaaaaaa", a)
	m.put(es, "bbbbbbbbbbbb", b) // clashes
	m.remove(es, "aaaaaaaaaaaa")
	m.put(es, "bbbbbbbbbbbb", b)
	m.remove(es, "bbbbbbbbbbbb")
	if i, ok := m.get(es, "bbbbbbbbbbbb"); ok {
		t.Errorf("a removed ID is found at %d", i)
	}
	if m.len() != 0 {
		t.Errorf("%d IDs left, want none", m.len())
	}
}
