package search

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memd/memd"
)

// The shard the tests read in parts, and their now.
var (
	partsID  = memd.ProjectShard("parts")
	partsNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
)

// partsShard is parts3000's shard, with a fact written again (in another
// file, newer) and a note; and an index of them put at once.
func partsShard() (facts, note []Doc, whole *Engine) {
	facts = parts3000(partsID, partsNow)
	again := facts[42]
	again.Date, again.File = memd.DateOf(partsNow), "log/"+memd.DateOf(partsNow).Month()+".md"
	facts = append(facts, again)
	note = []Doc{{Fact: memd.Fact{ID: "trip#1", Shard: partsID, Text: "The Lisbon trip runs on the travel budget"}}}
	whole = New()
	whole.Apply(Update{Shard: partsID, Put: facts, Head: "head", KeepNewer: true, Notes: map[string][]Doc{"trip.md": note}})
	return facts, note, whole
}

// readInParts reads a shard as a start does: replaced, its terms recorded
// apart, its facts put a part at a time, the last with its head and note;
// between parts, between is called.
func readInParts(x *Engine, facts, note []Doc, size int, between func()) {
	x.Apply(Update{Shard: partsID, Replace: true})
	x.RecordTermsApart(partsID)
	parts := slices.Collect(slices.Chunk(facts, size))
	for k, part := range parts {
		u := Update{Shard: partsID, Put: part, KeepNewer: true, More: true}
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
func sameSearches(t *testing.T, got, want *Engine) {
	t.Helper()
	for _, q := range []string{"travel budget Lisbon", "hiring Tokyo", "Fact 42", "Fact 999", "hardwa"} {
		query := Query{Text: q, Shards: []memd.ShardID{partsID}, K: 30, Now: partsNow, Explain: true}
		w, g := want.Search(query).Hits, got.Search(query).Hits
		if len(w) == 0 {
			t.Fatalf("%q finds nothing in the index put at once", q)
		}
		if !slices.EqualFunc(g, w, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score && a.Date == b.Date }) {
			t.Errorf("%q read in parts:\n%v\nwant\n%v", q, texts(g), texts(w))
		}
	}
}

// A partsID read in parts with its terms recorded apart is searched as the
// same facts put at once, whatever the size of the parts. A search while
// it is read (memd's recall waits for the read) races nothing.
func TestRecordTermsApart_SearchedAsPutAtOnce(t *testing.T) {
	facts, note, whole := partsShard()
	for _, size := range []int{100, 700, 5000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			x := New()
			x.KeepWords()
			readInParts(x, facts, note, size, func() {
				x.Search(Query{Text: "travel budget hardwa", Shards: []memd.ShardID{partsID}, K: 5, Now: partsNow})
			})
			if n := recordingApart(x); n != 0 {
				t.Errorf("%d parts still recording terms apart", n)
			}
			sameSearches(t, x, whole)
		})
	}
}

// A partsID replaced or an index reset while a partsID's terms are recorded
// apart drops them: the partsID read again is searched as put at once,
// with nothing of the half read left, and no builder is left running.
func TestRecordTermsApart_DroppedWithTheShard(t *testing.T) {
	facts, note, whole := partsShard()
	for name, stop := range map[string]func(x *Engine){
		"replaced": func(x *Engine) { x.Apply(Update{Shard: partsID, Replace: true}) },
		"reset":    func(x *Engine) { x.Reset() },
	} {
		t.Run(name, func(t *testing.T) {
			x := New()
			x.Apply(Update{Shard: partsID, Replace: true})
			x.RecordTermsApart(partsID)
			builder := x.parts[x.shardNum[partsID]].apart
			x.ApplyPrepared(Prepare(Update{Shard: partsID, Put: facts[:1000], More: true}))
			stop(x)
			if n := recordingApart(x); n != 0 {
				t.Fatalf("%d parts still recording terms apart after the partsID went", n)
			}
			select {
			case <-builder.done:
			default:
				t.Fatal("the builder of the terms dropped is still running")
			}
			readInParts(x, facts, note, 700, nil)
			sameSearches(t, x, whole)
		})
	}
}

// A part holding terms, even only dead facts', records them in place:
// what it holds and what is put go into one dictionary.
func TestRecordTermsApart_NotForAPartHoldingTerms(t *testing.T) {
	facts, note, whole := partsShard()
	x := New()
	x.Apply(Update{Shard: partsID, Put: facts[:300], Head: "old"})
	readInParts(x, facts, note, 200, func() {
		if recordingApart(x) != 0 {
			t.Fatal("terms recorded apart for a part holding dead facts' terms")
		}
	})
	sameSearches(t, x, whole)
}

// The last update of a read installs its terms whether or not it names
// a commit (a partsID with none has no head); facts put after are found
// with the rest.
func TestRecordTermsApart_InstalledByTheLastUpdate(t *testing.T) {
	facts, _, _ := partsShard()
	x := New()
	x.Apply(Update{Shard: partsID, Replace: true})
	x.RecordTermsApart(partsID)
	x.ApplyPrepared(Prepare(Update{Shard: partsID, Put: facts[:600], More: true}))
	x.ApplyPrepared(Prepare(Update{Shard: partsID, Put: facts[600:900]}))
	if recordingApart(x) != 0 {
		t.Fatal("terms still recorded apart after the last update")
	}
	x.Apply(Update{Shard: partsID, Put: facts[900:]})
	whole := New()
	whole.Apply(Update{Shard: partsID, Put: facts, KeepNewer: true})
	sameSearches(t, x, whole)
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
