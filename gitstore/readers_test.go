package gitstore

import (
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
