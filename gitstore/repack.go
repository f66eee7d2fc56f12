package gitstore

import (
	"context"
	"os/exec"
	"time"
)

// maybeRepack compacts a shard's packs in the background once group commits
// have left many of them. Each group commit writes one small pack whose
// first version of a file is stored whole; git's geometric repack rolls them
// into few packs with deltas and compression, and is safe to run while memd
// and people keep committing. Without the git CLI, packs are left as they
// are (a warning says so once).
func (sh *Shard) maybeRepack() {
	at := sh.store.opts.RepackAt
	if at < 0 || sh.db.PackCount() < at || !sh.repacking.CompareAndSwap(false, true) {
		return
	}
	s := sh.store
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.bg.Add(1)
	}
	s.mu.Unlock()
	if closed {
		sh.repacking.Store(false)
		return
	}
	go func() {
		defer s.bg.Done()
		defer sh.repacking.Store(false)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", "-C", sh.dir, "repack", "-d", "-q", "--geometric=2")
		out, err := cmd.CombinedOutput()
		if err != nil {
			s.log.Warn("background repack failed; packs accumulate until it succeeds",
				"shard", sh.id, "err", err, "output", string(out))
			return
		}
		s.log.Debug("repacked shard", "shard", sh.id, "took", time.Since(start))
	}()
}
