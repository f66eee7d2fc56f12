package gitstore

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
)

// shardRead is what the reads of a shard found at one moment.
type shardRead struct {
	head   Hash
	at     Hash // the commit Lookup read at
	looked []string
	fact   error // Fact of the fact being written
	lines  int   // FactLines of the fact written before
	facts  int
	err    error
}

// readShard reads sh every way a recall or a reviewer does.
func readShard(sh *Shard, before, writing memd.Fact) (r shardRead) {
	if r.head, r.err = sh.Head(); r.err != nil {
		return r
	}
	found, at, err := sh.Lookup([]string{before.ID, writing.ID})
	if r.err = err; err != nil {
		return r
	}
	r.at = at
	for _, id := range []string{before.ID, writing.ID} {
		if _, ok := found[id]; ok {
			r.looked = append(r.looked, id)
		}
	}
	_, r.fact = sh.Fact(writing.ID)
	lines, err := sh.FactLines(before.ID)
	if r.err = err; err != nil {
		return r
	}
	r.lines = len(lines)
	facts, _, err := sh.Facts()
	r.facts, r.err = len(facts), err
	return r
}

// A read of a shard does not wait for a commit under way: not while the
// writer writes the working tree (it holds the shard for the whole
// commit), nor once main names the new commit and the writer has yet to
// put its state in step. The read sees the shard as it was; the write is
// not answered yet. Once it is, reads see it.
func TestShard_ReadsDoNotWaitForACommitUnderWay(t *testing.T) {
	for _, pause := range []struct {
		name string
		hook *atomic.Pointer[func(string)]
	}{
		{"writing the working tree", &testHookBeforeAppend},
		{"main moved", &testHookMainMoved},
	} {
		t.Run(pause.name, func(t *testing.T) {
			_, sh := aliceShard(t)
			res, err := addFact(sh, "Booked a flight to Lisbon")
			if err != nil {
				t.Fatal(err)
			}
			before := res.Facts[0]
			writing := memd.Fact{ID: memd.FactID("Packed a raincoat")}

			paused, resume := make(chan struct{}), make(chan struct{})
			var once sync.Once
			setHook(pause.hook, func(string) {
				once.Do(func() {
					close(paused)
					<-resume
				})
			})
			t.Cleanup(func() { setHook(pause.hook, nil) })
			written := make(chan error, 1)
			go func() {
				_, err := addFact(sh, "Packed a raincoat")
				written <- err
			}()
			<-paused

			read := make(chan shardRead, 1)
			go func() { read <- readShard(sh, before, writing) }()
			var during shardRead
			select {
			case during = <-read:
			case <-time.After(20 * time.Second):
				close(resume)
				t.Fatal("a read waited for the commit under way")
			}
			close(resume)
			if err := <-written; err != nil {
				t.Fatal(err)
			}
			if during.err != nil {
				t.Fatal(during.err)
			}
			if during.head != res.Commit || during.at != res.Commit {
				t.Errorf("during the write: head %s, looked up at %s; want the commit before it, %s", short(during.head), short(during.at), short(res.Commit))
			}
			if len(during.looked) != 1 || during.looked[0] != before.ID || memd.ErrorCode(during.fact) != memd.ENOTFOUND || during.lines != 1 || during.facts != 1 {
				t.Errorf("during the write: looked up %v, Fact of the new one %v, %d lines of the old, %d facts; want the old fact alone", during.looked, during.fact, during.lines, during.facts)
			}

			after := readShard(sh, before, writing)
			if after.err != nil {
				t.Fatal(after.err)
			}
			if after.head == res.Commit || after.at != after.head || len(after.looked) != 2 || after.fact != nil || after.facts != 2 {
				t.Errorf("after the write: head %s, looked up at %s, found %v, Fact %v, %d facts; want both facts at the new commit", short(after.head), short(after.at), after.looked, after.fact, after.facts)
			}
		})
	}
}

// lookedUp is what one Lookup of every fact found, and the commit it read.
type lookedUp struct {
	at    Hash
	found []string
}

// Reads beside writers each see one commit whole: what a Lookup finds is
// exactly what the commit it names holds, though the places of the facts
// change under it; a write answered is seen by the next read. Readers also
// give the state up (as an idle shard does) and count the facts, so that
// states are read back from the saved places, too. Under -race, a change
// of places outside the writers' lock on them shows here.
func TestShard_ReadsBesideWritersSeeEachCommitWhole(t *testing.T) {
	was := savePlacesAt
	savePlacesAt = 1
	t.Cleanup(func() { savePlacesAt = was })
	_, sh := aliceShard(t)
	const writers, each = 3, 25
	var ids []string
	for w := range writers {
		for i := range each {
			ids = append(ids, memd.FactID(fmt.Sprintf("fact %d of writer %d", i, w)))
		}
	}
	var (
		stop    atomic.Bool
		mu      sync.Mutex
		samples []lookedUp
		failed  = make(chan error, writers+3)
		readers sync.WaitGroup
	)
	for r := range 3 {
		readers.Go(func() {
			for !stop.Load() {
				found, at, err := sh.Lookup(ids)
				if err != nil {
					failed <- err
					return
				}
				mu.Lock()
				samples = append(samples, lookedUp{at, slices.Sorted(maps.Keys(found))})
				mu.Unlock()
				if _, err := sh.FactLines(ids[1]); err != nil {
					failed <- err
					return
				}
				if r == 0 {
					if _, _, err := sh.Facts(); err != nil {
						failed <- err
						return
					}
					sh.Release()
				}
			}
		})
	}
	var written sync.WaitGroup
	for w := range writers {
		written.Go(func() {
			for i := range each {
				res, err := addFact(sh, fmt.Sprintf("fact %d of writer %d", i, w))
				if err != nil {
					failed <- err
					return
				}
				head, err := sh.Head()
				if err == nil {
					var holds bool
					if holds, err = sh.IsAncestor(res.Commit, head); err == nil && !holds {
						err = fmt.Errorf("HEAD %s after the write of %s was answered", short(head), short(res.Commit))
					}
				}
				if err == nil {
					_, err = sh.Fact(res.Facts[0].ID)
				}
				if err != nil {
					failed <- fmt.Errorf("a read after a write was answered: %w", err)
					return
				}
			}
		})
	}
	written.Wait()
	stop.Store(true)
	readers.Wait()
	close(failed)
	for err := range failed {
		t.Fatal(err)
	}
	held := make(map[Hash][]string) // what each commit read holds
	for _, s := range samples {
		want, ok := held[s.at]
		if !ok {
			facts, err := sh.FactsAt(s.at)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range facts {
				want = append(want, f.ID)
			}
			slices.Sort(want)
			held[s.at] = want
		}
		if !slices.Equal(s.found, want) {
			t.Fatalf("a lookup at %s found %d facts; the commit holds %d", short(s.at), len(s.found), len(want))
		}
	}
	if len(held) < 2 {
		t.Errorf("the lookups read %d commits; want them to have run beside the writes", len(held))
	}
}

// A write whose last step fails (main's directory cannot be synced) is
// refused, yet main names its commit: reads see it at once, and what a
// commit wakes (the index, the feed) is woken, as by any other.
func TestShard_MainMovedByAFailedWriteIsSeen(t *testing.T) {
	var woken atomic.Int32
	// Synced: main's directory is synced only then.
	_, sh := agentShardWith(t, "alice", Options{RepackAt: -1, OnCommit: func(memd.ShardID) { woken.Add(1) }})
	if _, err := addFact(sh, "Booked a flight to Lisbon"); err != nil {
		t.Fatal(err)
	}
	heads := filepath.Join(sh.gitDir, "refs", "heads")
	setHook(&testHookMainMoved, func(string) {
		if err := os.Rename(heads, heads+".away"); err != nil {
			t.Error(err)
		}
	})
	_, err := addFact(sh, "Packed a raincoat")
	setHook(&testHookMainMoved, nil)
	if rerr := os.Rename(heads+".away", heads); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("the write went through; want it refused")
	}
	main, err := readRef(sh.gitDir, mainRef)
	if err != nil {
		t.Fatal(err)
	}
	if head, err := sh.Head(); err != nil || head != main {
		t.Errorf("Head %s (%v); main names %s", short(head), err, short(main))
	}
	if n := woken.Load(); n != 2 {
		t.Errorf("woken %d times; want once a commit, the refused one too", n)
	}
	if _, err := sh.Fact(memd.FactID("Packed a raincoat")); err != nil {
		t.Errorf("the fact main holds: %v", err)
	}
}
