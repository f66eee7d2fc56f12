package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// Repacking. Each group commit writes one small pack holding a copy of
// each file it touches (compressed, for a large one: see packbase.go) and
// deltas from it; git's geometric repack rolls such packs into few, with
// deltas and compression, and is safe to run while memd and people keep
// committing. It costs about a millisecond of CPU per
// small pack, so it runs when a shard has been idle for a moment, or, under
// sustained writes, once packs pile up past a ceiling. Without the git CLI,
// packs are left as they are (a warning says so).

// repackIdle is how long a shard must go without writes before it is
// repacked; repackCeiling is the pack count that forces a repack anyway;
// repackBackoff is how long background repacks pause after one failed.
// A repack that finds no room writes until the disk is full, and a write
// of memd's or a person's in that moment fails: on a nearly full disk,
// one after every burst of writes would fail such writes again and again.
const (
	repackIdle    = time.Second
	repackCeiling = 1024
	repackBackoff = 10 * time.Minute
)

// maybeRepack schedules a repack after a group commit. The caller holds sh.mu.
func (sh *Shard) maybeRepack() {
	at := sh.store.opts.RepackAt
	if at < 0 || time.Now().UnixNano() < sh.repackAfter.Load() {
		return
	}
	n := sh.db.PackCount()
	switch {
	case n >= repackCeiling:
		sh.startRepack()
	case n >= at:
		if sh.repackTimer == nil {
			sh.repackTimer = time.AfterFunc(repackIdle, sh.repackIfIdle)
		} else {
			sh.repackTimer.Reset(repackIdle)
		}
	}
}

func (sh *Shard) repackIfIdle() {
	sh.qmu.Lock()
	busy := sh.draining
	sh.qmu.Unlock()
	if busy {
		return // the next group commit schedules it again
	}
	sh.startRepack()
}

// startRepack runs git repack in the background unless one is running.
func (sh *Shard) startRepack() {
	if !sh.repacking.CompareAndSwap(false, true) {
		return
	}
	s := sh.store
	started := s.background(func() {
		defer sh.repacking.Store(false)
		if err := sh.repack(); err != nil {
			sh.repackAfter.Store(time.Now().Add(repackBackoff).UnixNano())
			s.log.Warn("background repack failed; packs accumulate until it succeeds", "shard", sh.id, "err", err, "next try", repackBackoff)
			return
		}
		sh.repackAfter.Store(0)
	})
	if !started {
		sh.repacking.Store(false)
	}
}

// Repack rolls the shard's small packs together now, after any repack
// already running, and cancels one that was scheduled. git fsck, and other
// readers that list the pack directory once, want a shard nobody repacks.
func (sh *Shard) Repack() error {
	sh.mu.Lock()
	if sh.repackTimer != nil {
		sh.repackTimer.Stop()
	}
	sh.mu.Unlock()
	return sh.repack()
}

func (sh *Shard) repack() error {
	if err := sh.errIfClosed(); err != nil {
		return err
	}
	sh.repackMu.Lock()
	defer sh.repackMu.Unlock()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// One thread: the other processor keeps serving writes.
	cmd := exec.CommandContext(ctx, "git", "-C", sh.dir, "-c", "pack.threads=1", "repack", "-d", "-q", "--geometric=2")
	if out, err := cmd.CombinedOutput(); err != nil {
		// git leaves the pack it was writing when it fails (a full disk),
		// holding what room there was, and prunes it only weeks later. It
		// names the file; only that one goes, not one a person's git
		// fetch may be writing at this moment.
		if name := leftTempPack(out); name != "" {
			os.Remove(filepath.Join(sh.gitDir, "objects", "pack", name))
		}
		return fmt.Errorf("git repack: %w: %s", err, bytes.TrimSpace(out))
	}
	sh.store.log.Debug("repacked shard", "shard", sh.id, "took", time.Since(start))
	return nil
}

// leftTempPack returns the name of the temporary pack file git's message
// says it failed to write ("sha1 file '.git/objects/pack/tmp_pack_x'
// write error"), or "".
func leftTempPack(out []byte) string {
	m := tempPackInMessage.FindSubmatch(out)
	if m == nil {
		return ""
	}
	return string(m[1])
}

var tempPackInMessage = regexp.MustCompile(`'(?:[^']*/)?objects/pack/(tmp_(?:pack|idx|rev)_[A-Za-z0-9]+)'`)
