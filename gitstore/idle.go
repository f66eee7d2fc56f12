package gitstore

import (
	"runtime/debug"
	"time"
)

// A shard's state is what a write needs: where every fact is, by ID, and
// the files the writer changed, parsed. Most shards of a large store go
// unwritten for hours, so a shard whose state has not been used for
// idleAfter gives it up, and the next write or lookup reads its files again
// from HEAD (a few at a time, from the object cache).
var (
	idleAfter = time.Minute
	idleCheck = 10 * time.Second
)

// freeAfter is how many facts' states one check must give up before their
// memory is handed back to the system at once.
const freeAfter = 100000

// dropIdleStates runs until the store closes, giving up the state of each
// shard unused for idleAfter, and the cached objects unread as long.
func (s *Store) dropIdleStates() {
	t := time.NewTicker(idleCheck)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.mu.Lock()
			shards := make([]*Shard, 0, len(s.shards))
			for _, sh := range s.shards {
				shards = append(shards, sh)
			}
			s.mu.Unlock()
			dropped := 0
			for _, sh := range shards {
				dropped += sh.dropIfIdle(time.Now())
			}
			s.cache.DropUnused(time.Now().Add(-idleAfter))
			if dropped >= freeAfter {
				// Hand the pages back now: memory a large store's files
				// held would otherwise stay resident for minutes. Not for
				// a few: a forced collection costs the writers.
				debug.FreeOSMemory()
			}
		}
	}
}

// touch records that the shard's state was used now.
func (sh *Shard) touch() { sh.used.Store(time.Now().UnixNano()) }

// Release gives up the shard's state now unless a write is under way: a
// caller that read the shard once (a rebuild of the index) says it is done
// with it.
func (sh *Shard) Release() { sh.drop() }

// Parsed reports whether the shard's state is held now.
func (sh *Shard) Parsed() bool { return sh.cur.Load() != nil }

// dropIfIdle gives up the shard's state if it has not been used for
// idleAfter and nobody is using it now, and returns how many facts it
// held (0: kept).
func (sh *Shard) dropIfIdle(now time.Time) int {
	if now.Sub(time.Unix(0, sh.used.Load())) < idleAfter {
		return 0
	}
	return sh.drop()
}

// drop gives up the shard's state unless a write is under way, saving
// where its facts are in the background, and returns how many facts it
// held (0: kept).
func (sh *Shard) drop() int {
	if !sh.mu.TryLock() {
		return 0 // a writer is at work
	}
	defer sh.mu.Unlock()
	st := sh.cur.Load()
	if st == nil {
		sh.dropBases() // held past a state a failed read gave up
		return 0
	}
	sh.qmu.Lock()
	queued := len(sh.queue)
	sh.qmu.Unlock()
	if queued > 0 || sh.cur.Load() != st {
		return 0
	}
	sh.cur.Store(nil)
	sh.proposed, sh.written = nil, nil
	sh.dropBases()
	// No writer changes st from here: the next builds its own state.
	sh.saving = sh.savePlacesLater(st)
	return max(st.facts(), 1)
}

// lockedState returns the shard's state, reading it again if it was given
// up. The caller holds sh.mu.
func (sh *Shard) lockedState() (*state, error) {
	sh.touch()
	if st := sh.cur.Load(); st != nil {
		return st, nil
	}
	head, err := readRef(sh.gitDir, mainRef)
	if err != nil {
		return nil, err
	}
	return sh.catchUp(head)
}
