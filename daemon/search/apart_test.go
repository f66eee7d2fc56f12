package search

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memd/memd"
)

// partsShard is parts3000's shard, with a fact written again (in another
// file, newer) and a note; and an index of them put at once.
func partsShard(shard memd.ShardID, now time.Time) (facts, note []Doc, whole *Engine) {
	facts = parts3000(shard, now)
	again := facts[42]
	again.Date, again.File = memd.DateOf(now), "log/"+memd.DateOf(now).Month()+".md"
	facts = append(facts, again)
	note = []Doc{{Fact: memd.Fact{ID: "trip#1", Shard: shard, Text: "The Lisbon trip runs on the travel budget"}}}
	whole = New()
	whole.Apply(Update{Shard: shard, Put: facts, Head: "head", KeepNewer: true, Notes: map[string][]Doc{"trip.md": note}})
	return facts, note, whole
}

// readInParts reads a shard as a start does: replaced, its terms recorded
// apart, its facts put a part at a time, the last with its head and note;
// between parts, between is called.
func readInParts(x *Engine, shard memd.ShardID, facts, note []Doc, size int, between func()) {
	x.Apply(Update{Shard: shard, Replace: true})
	x.RecordTermsApart(shard)
	parts := slices.Collect(slices.Chunk(facts, size))
	for k, part := range parts {
		u := Update{Shard: shard, Put: part, KeepNewer: true, More: true}
		if k == len(parts)-1 {
			u.Head, u.Notes, u.More = "head", map[string][]Doc{"trip.md": note}, false
		}
		x.ApplyPrepared(Prepare(u))
		if k < len(parts)-1 && between != nil {
			between()
		}
	}
}

// sameSearches fails the test where a search of got differs from want's.
func sameSearches(t *testing.T, got, want *Engine, shard memd.ShardID, now time.Time) {
	t.Helper()
	for _, q := range []string{"travel budget Lisbon", "hiring Tokyo", "Fact 42", "Fact 999", "hardwa"} {
		query := Query{Text: q, Shards: []memd.ShardID{shard}, K: 30, Now: now, Explain: true}
		w, g := want.Search(query).Hits, got.Search(query).Hits
		if len(w) == 0 {
			t.Fatalf("%q finds nothing in the index put at once", q)
		}
		if !slices.EqualFunc(g, w, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score && a.Date == b.Date }) {
			t.Errorf("%q read in parts:\n%v\nwant\n%v", q, texts(g), texts(w))
		}
	}
}

// A shard read in parts with its terms recorded apart is searched as the
// same facts put at once, whatever the size of the parts. A search while
// it is read (memd's recall waits for the read) races nothing.
func TestRecordTermsApart_SearchedAsPutAtOnce(t *testing.T) {
	shard := memd.ProjectShard("parts")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	facts, note, whole := partsShard(shard, now)
	for _, size := range []int{100, 700, 5000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			x := New()
			x.KeepWords()
			readInParts(x, shard, facts, note, size, func() {
				x.Search(Query{Text: "travel budget hardwa", Shards: []memd.ShardID{shard}, K: 5, Now: now})
			})
			if n := recordingApart(x); n != 0 {
				t.Errorf("%d parts still recording terms apart", n)
			}
			sameSearches(t, x, whole, shard, now)
		})
	}
}

// A shard replaced or an index reset while a shard's terms are recorded
// apart drops them: the shard read again is searched as put at once,
// with nothing of the half read left, and no builder is left running.
func TestRecordTermsApart_DroppedWithTheShard(t *testing.T) {
	shard := memd.ProjectShard("parts")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	facts, note, whole := partsShard(shard, now)
	for name, stop := range map[string]func(x *Engine){
		"replaced": func(x *Engine) { x.Apply(Update{Shard: shard, Replace: true}) },
		"reset":    func(x *Engine) { x.Reset() },
	} {
		t.Run(name, func(t *testing.T) {
			x := New()
			x.Apply(Update{Shard: shard, Replace: true})
			x.RecordTermsApart(shard)
			builder := x.parts[x.shardNum[shard]].apart
			x.ApplyPrepared(Prepare(Update{Shard: shard, Put: facts[:1000], More: true}))
			stop(x)
			if n := recordingApart(x); n != 0 {
				t.Fatalf("%d parts still recording terms apart after the shard went", n)
			}
			select {
			case <-builder.done:
			default:
				t.Fatal("the builder of the terms dropped is still running")
			}
			readInParts(x, shard, facts, note, 700, nil)
			sameSearches(t, x, whole, shard, now)
		})
	}
}

// A part holding terms, even only dead facts', records them in place:
// what it holds and what is put go into one dictionary.
func TestRecordTermsApart_NotForAPartHoldingTerms(t *testing.T) {
	shard := memd.ProjectShard("parts")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	facts, note, whole := partsShard(shard, now)
	x := New()
	x.Apply(Update{Shard: shard, Put: facts[:300], Head: "old"})
	readInParts(x, shard, facts, note, 200, func() {
		if recordingApart(x) != 0 {
			t.Fatal("terms recorded apart for a part holding dead facts' terms")
		}
	})
	sameSearches(t, x, whole, shard, now)
}

// The last update of a read installs its terms whether or not it names
// a commit (a shard with none has no head); facts put after are found
// with the rest.
func TestRecordTermsApart_InstalledByTheLastUpdate(t *testing.T) {
	shard := memd.ProjectShard("parts")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	facts, _, _ := partsShard(shard, now)
	x := New()
	x.Apply(Update{Shard: shard, Replace: true})
	x.RecordTermsApart(shard)
	x.ApplyPrepared(Prepare(Update{Shard: shard, Put: facts[:600], More: true}))
	x.ApplyPrepared(Prepare(Update{Shard: shard, Put: facts[600:900]}))
	if recordingApart(x) != 0 {
		t.Fatal("terms still recorded apart after the last update")
	}
	x.Apply(Update{Shard: shard, Put: facts[900:]})
	whole := New()
	whole.Apply(Update{Shard: shard, Put: facts, KeepNewer: true})
	sameSearches(t, x, whole, shard, now)
}

// recordingApart counts the parts whose terms are being recorded apart.
func recordingApart(x *Engine) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for _, p := range x.parts {
		if p.apart != nil {
			n++
		}
	}
	return n
}
