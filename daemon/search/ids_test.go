package search

import (
	"fmt"
	"math/rand/v2"
	"strconv"
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
	ids := []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb"}
	es := func(i int32) string { return ids[i] }
	a, b := int32(0), int32(1)
	m := newIDMap(0)
	put(&m, es, "aaaaaaaaaaaa", a)
	put(&m, es, "bbbbbbbbbbbb", b) // clashes
	m.remove(es, "aaaaaaaaaaaa")
	put(&m, es, "bbbbbbbbbbbb", b)
	m.remove(es, "bbbbbbbbbbbb")
	if i, ok := m.get(es, "bbbbbbbbbbbb"); ok {
		t.Errorf("a removed ID is found at %d", i)
	}
	if m.len() != 0 {
		t.Errorf("%d IDs left, want none", m.len())
	}
}

// A fact put again, by any way in, is held once, as it was put last:
// found once by its words, walked once, counted once. With every ID's
// hash alike too, where IDs are told apart by their strings.
func TestPut_AFactPutAgainIsHeldOnce(t *testing.T) {
	shard := memd.ProjectShard("again")
	day := memd.DateOf(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	fact := func(n, offset int) Doc {
		text := fmt.Sprintf("Fact number %d about walruses", n)
		return Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: day, Tier: memd.TierLog, Text: text, File: "log/" + day.Month() + ".md"}, Offset: offset}
	}
	// many facts, the first of them put again at the end, moved
	batch := func(many int) []Doc {
		var docs []Doc
		for n := range many {
			docs = append(docs, fact(n, n*40))
		}
		return append(docs, fact(0, many*40))
	}
	ways := []struct {
		name string
		many int
		put  func(x *Engine, docs []Doc)
	}{
		{"Put, one by one", 10, func(x *Engine, docs []Doc) {
			for _, d := range docs {
				x.Put(d)
			}
		}},
		{"PutAll, a few", 10, func(x *Engine, docs []Doc) { x.PutAll(docs) }},
		{"PutAll, many", 2 * smallBatch, func(x *Engine, docs []Doc) { x.PutAll(docs) }},
		{"PutAll, in two batches", 2 * smallBatch, func(x *Engine, docs []Doc) {
			x.PutAll(docs[:len(docs)-1])
			x.PutAll(docs[len(docs)-1:])
		}},
		{"Apply, replacing the shard", 2 * smallBatch, func(x *Engine, docs []Doc) {
			x.Apply(Update{Shard: shard, Replace: true, Put: docs})
		}},
		{"ReplaceInParts, again in a later part", 2 * smallBatch, func(x *Engine, docs []Doc) {
			x.ReplaceInParts(Update{Shard: shard}, len(docs), func(put func([]Doc)) error {
				put(docs[:smallBatch+1])
				put(docs[smallBatch+1:])
				return nil
			})
		}},
		{"ReplaceInParts, again in the same part", 2 * smallBatch, func(x *Engine, docs []Doc) {
			x.ReplaceInParts(Update{Shard: shard}, len(docs), func(put func([]Doc)) error {
				put(docs)
				return nil
			})
		}},
	}
	for _, clash := range []bool{false, true} {
		for _, w := range ways {
			t.Run(fmt.Sprintf("%s, hashes clash %v", w.name, clash), func(t *testing.T) {
				if clash {
					was := hashID
					hashID = func(string) uint64 { return 7 }
					defer func() { hashID = was }()
				}
				x := New()
				docs := batch(w.many)
				w.put(x, docs)
				if got := x.Facts(shard); got != w.many {
					t.Errorf("%d facts held, want %d", got, w.many)
				}
				again := docs[len(docs)-1]
				if d, ok := x.Get(shard, again.ID); !ok || d.Offset != again.Offset {
					t.Errorf("the fact put again is held at %d (found %v), want %d", d.Offset, ok, again.Offset)
				}
				res := x.Search(Query{Text: "fact number 0", Shards: []memd.ShardID{shard}, K: 50, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
				found := 0
				for _, h := range res.Hits {
					if h.ID == again.ID {
						found++
					}
				}
				if found != 1 {
					t.Errorf("found %d times by its words, want once", found)
				}
				walked := 0
				x.Walk(shard, false, func(d Doc) bool {
					if d.ID == again.ID {
						walked++
					}
					return true
				})
				if walked != 1 {
					t.Errorf("walked %d times, want once", walked)
				}
			})
		}
	}
}

// The map answers as a Go map of the same IDs does, through any sequence
// of puts and removes, with hashes that agree often and tables that wrap.
func TestIDMap_AnswersAsAMap(t *testing.T) {
	was := hashID
	defer func() { hashID = was }()
	for _, spread := range []uint64{1, 3, 1 << 30, 1 << 63, 0} {
		hashID = func(id string) uint64 { return was(id) % spread << 32 }
		switch spread {
		case 1 << 63:
			hashID = was
		case 0: // homes in the last slots: the table wraps
			hashID = func(id string) uint64 { return (1<<32 - 1 - was(id)%5) << 32 }
		}
		rng := rand.New(rand.NewPCG(spread, 1))
		var ids []string // by entry
		idOf := func(i int32) string { return ids[i] }
		var m idMap
		want := map[string]int32{}
		for range 20000 {
			id := strconv.Itoa(rng.IntN(600))
			switch rng.IntN(3) {
			case 0, 1:
				ids = append(ids, id)
				before, replaced := put(&m, idOf, id, int32(len(ids)-1))
				if w, ok := want[id]; ok != replaced || ok && w != before {
					t.Fatalf("spread %d: put %s replaced %d %v, want %d %v", spread, id, before, replaced, w, ok)
				}
				want[id] = int32(len(ids) - 1)
			case 2:
				m.remove(idOf, id)
				delete(want, id)
			}
			if m.len() != len(want) {
				t.Fatalf("spread %d: %d IDs, want %d", spread, m.len(), len(want))
			}
		}
		for n := range 600 {
			id := strconv.Itoa(n)
			i, ok := m.get(idOf, id)
			if w, held := want[id]; ok != held || ok && i != w {
				t.Fatalf("spread %d: get %s = %d %v, want %d %v", spread, id, i, ok, w, held)
			}
		}
	}
}

// put records entry i as the one holding id, as add does (place, then
// set), and returns the entry it replaced.
func put(m *idMap, idOf func(int32) string, id string, i int32) (before int32, replaced bool) {
	slot, tag, before, replaced := m.place(idOf, id)
	m.set(slot, tag, i)
	return before, replaced
}
