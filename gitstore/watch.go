package gitstore

import (
	"errors"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/memd/memd"
)

// RefWatcher tells when a shard's main branch may have moved, from the
// kernel's notices of changes to its refs (inotify on Linux), so that a
// commit made with git is seen at once without reading every shard's ref
// on a timer. A shard it could not watch (the kernel's limit reached) is
// left to the caller's slow poll: see Watching.
type RefWatcher struct {
	w       *fsnotify.Watcher
	store   *Store
	moved   func(memd.ShardID)
	mu      sync.Mutex
	byDir   map[string]memd.ShardID // watched directories
	watched map[memd.ShardID]bool   // false: tried, and the kernel refused
	done    chan struct{}
}

// WatchRefs starts watching; moved is called, from the watcher's own
// goroutine, with a shard whose branch may have moved. Add each shard.
func (s *Store) WatchRefs(moved func(memd.ShardID)) (*RefWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	rw := &RefWatcher{w: w, store: s, moved: moved, byDir: make(map[string]memd.ShardID), watched: make(map[memd.ShardID]bool), done: make(chan struct{})}
	go rw.run()
	return rw, nil
}

// Add watches a shard's refs: refs/heads, where git renames main's lock
// over main, and the git directory, where packed-refs is rewritten.
func (rw *RefWatcher) Add(id memd.ShardID) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.watched[id] {
		return
	}
	git := filepath.Join(rw.store.ShardDir(id), ".git")
	for _, dir := range []string{filepath.Join(git, "refs", "heads"), git} {
		if err := rw.w.Add(dir); err != nil {
			rw.watched[id] = false
			return
		}
		rw.byDir[dir] = id
	}
	rw.watched[id] = true
}

// Watching reports whether a shard's refs are watched.
func (rw *RefWatcher) Watching(id memd.ShardID) bool {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.watched[id]
}

// Close stops watching.
func (rw *RefWatcher) Close() error {
	err := rw.w.Close()
	<-rw.done
	return err
}

func (rw *RefWatcher) run() {
	defer close(rw.done)
	for {
		select {
		case ev, ok := <-rw.w.Events:
			if !ok {
				return
			}
			name := filepath.Base(ev.Name)
			if name != "main" && name != "packed-refs" && name != "HEAD" {
				continue // the index, locks, objects: not a move of main
			}
			rw.mu.Lock()
			id, found := rw.byDir[filepath.Dir(ev.Name)]
			rw.mu.Unlock()
			if found && name == "HEAD" {
				go rw.store.checkedOut(id)
			}
			if found {
				rw.moved(id)
			}
		case err, ok := <-rw.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: every shard may have moved.
				rw.mu.Lock()
				var ids []memd.ShardID
				for id, ok := range rw.watched {
					if ok {
						ids = append(ids, id)
					}
				}
				rw.mu.Unlock()
				for _, id := range ids {
					rw.moved(id)
				}
			}
		}
	}
}
