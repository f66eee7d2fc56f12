package search

import (
	"maps"
	"slices"

	"github.com/memd/memd"
)

// Walk calls fn for a shard's facts of one kind in rank order, highest
// first, until fn returns false: lasting facts (profile) when profile is
// true, dated ones (log, note, episode) otherwise. It returns how many such
// facts the shard holds.
func (x *Engine) Walk(shard memd.ShardID, profile bool, fn func(Doc) bool) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.walk(shard, profile, fn)
}

// Walker walks one shard's facts of one kind in rank order, as Walk does.
type Walker func(shard memd.ShardID, profile bool, fn func(Doc) bool) int

// Snapshot calls fn with a Walker over the index held still, and returns
// the commit each of the shards was read at: what fn read is exactly
// memory at those commits.
func (x *Engine) Snapshot(shards []memd.ShardID, fn func(Walker)) map[memd.ShardID]string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	fn(x.walk)
	return x.headsOf(shards)
}

// Indexed names every shard the engine holds and the commit it was read
// at.
func (x *Engine) Indexed() map[memd.ShardID]string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return maps.Clone(x.heads)
}

// Mark is where FactsSince stopped in a shard's facts.
type Mark struct {
	epoch      uint64
	next, gone int // into the part's entries and removed IDs
}

// FactsSince tells what a shard's facts became since mark: gone with the
// ID of each fact removed, then fn with each live fact (not a note's
// passage) gained, in the order they came, until fn returns false. It
// returns the mark to pass next, past what it told, and whether it started
// over: from the zero mark, or one from before the index was compacted,
// every fact is told as gained and none as gone.
func (x *Engine) FactsSince(shard memd.ShardID, mark Mark, gone func(id string), fn func(id, text string) bool) (next Mark, restarted bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n, ok := x.shardNum[shard]
	if !ok {
		return Mark{epoch: x.epoch}, mark.epoch != x.epoch
	}
	p := x.parts[n]
	if mark.epoch != x.epoch || mark.next > len(p.entries) || mark.gone > len(p.removed) {
		mark, restarted = Mark{epoch: x.epoch, gone: len(p.removed)}, true
	}
	for _, id := range p.removed[mark.gone:] {
		gone(id)
	}
	next = Mark{epoch: x.epoch, next: len(p.entries), gone: len(p.removed)}
	for k, i := range p.entries[mark.next:] {
		if e := x.entries.at(i); x.alive[i] && !e.passage && !fn(x.texts.get(e.id), x.texts.get(e.text)) {
			next.next = mark.next + k
			break
		}
	}
	return next, restarted
}

// EachFact calls fn with each fact of a shard, lasting ones first, until fn
// returns false.
func (x *Engine) EachFact(shard memd.ShardID, fn func(id, text string) bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	goOn := true
	for _, profile := range []bool{true, false} {
		x.walk(shard, profile, func(d Doc) bool {
			goOn = fn(d.ID, d.Text)
			return goOn
		})
		if !goOn {
			return
		}
	}
}

func (x *Engine) walk(shard memd.ShardID, profile bool, fn func(Doc) bool) int {
	sd := x.shards[shard]
	if sd == nil {
		return 0
	}
	list := sd.recent
	if profile {
		list = sd.profile
	}
	for _, i := range slices.Backward(list) { // highest first
		if !fn(x.docOf(i)) {
			break
		}
	}
	return len(list)
}
