package search

import (
	"slices"

	"github.com/memd/memd"
)

// Delete removes a fact; it is not an error if the index lacks it.
func (x *Engine) Delete(shard memd.ShardID, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.remove(shard, id)
	x.maybeCompact()
}

func (x *Engine) dropNote(nk noteKey) {
	for _, i := range slices.Clone(x.notes[nk]) {
		x.remove(nk.shard, x.idOf(i))
	}
}

// dropShard removes every fact and note of a shard.
func (x *Engine) dropShard(shard memd.ShardID) {
	if n, ok := x.shardNum[shard]; ok {
		x.installApart(x.parts[n], true) // of facts dropped here
	}
	for nk := range x.notes {
		if nk.shard == shard {
			x.dropNote(nk)
		}
	}
	sd := x.shards[shard]
	if sd == nil {
		return
	}
	// Its facts all at once, their lists dropped whole: taken out one by
	// one, each would cost the length of its lists, and a shard of 40,000
	// facts took 0.3 s (a million, minutes) under the index's lock.
	for _, list := range [][]int32{sd.profile, sd.recent} {
		for _, i := range list {
			x.retire(i)
		}
	}
	n := x.shardNum[shard]
	p := x.parts[n]
	p.ids = newIDMap(0) // its notes went above: no live entry is left
	// Nor one put without its terms by a replace that failed half way.
	p.surface.unsure.Store(false)
	p.dates = make(map[int][]int32)
	for fk := range x.files {
		if fk.shard == n {
			delete(x.files, fk)
		}
	}
	for ck := range x.chats {
		if ck.shard == n {
			delete(x.chats, ck)
		}
	}
	delete(x.shards, shard)
}

func (x *Engine) dropChat(k chatKey, i int32) {
	if x.chats[k] = without(x.chats[k], i); len(x.chats[k]) == 0 {
		delete(x.chats, k)
	}
}

func (x *Engine) remove(shard memd.ShardID, id string) {
	i, ok := x.lookup(shard, id)
	if !ok {
		return
	}
	x.parts[x.shardOf[i]].ids.remove(x.idOf, id)
	x.kill(shard, i)
}

// kill marks entry i of a shard dead, its ID already taken from the ID
// map (removed, or put again: add replaces a fact or passage by its ID).
func (x *Engine) kill(shard memd.ShardID, i int32) {
	x.retire(i)
	// Postings keep dead entries until the next compaction; the lists a
	// caller walks in order drop them now.
	if x.entries.at(i).passage {
		nk := noteKey{shard, x.noteOf[i]}
		delete(x.noteOf, i)
		if x.notes[nk] = without(x.notes[nk], i); len(x.notes[nk]) == 0 {
			delete(x.notes, nk)
		}
		return
	}
	if sd := x.shards[shard]; sd != nil {
		if x.tiers[x.tier[i]] == memd.TierProfile {
			sd.profile = x.withoutRanked(sd.profile, i)
		} else {
			sd.recent = x.withoutRanked(sd.recent, i)
		}
	}
	fk := x.shardFileOf(i)
	x.files[fk] = without(x.files[fk], i)
	if x.entries.at(i).chat != 0 {
		x.dropChat(x.chatKeyOf(i), i)
	}
	p := x.parts[x.shardOf[i]]
	p.dates[int(x.days[i])] = without(p.dates[int(x.days[i])], i)
}

// retire counts entry i out of the index: dead, its terms out of its
// part's length, a fact's ID recorded as removed. Taking it out of the
// lists it is in is the caller's.
func (x *Engine) retire(i int32) {
	e := x.entries.at(i)
	p := x.parts[x.shardOf[i]]
	if int(i) < len(x.folded) {
		x.folded[i] = ref{}
	}
	x.alive[i] = false
	x.live--
	x.dead++
	p.live--
	p.length -= int(x.lengths[i])
	if e.passage {
		p.passages--
		return
	}
	p.removed = append(p.removed, x.texts.get(e.id))
}

// withoutRanked removes entry i from a ranked list (ascending),
// found by halving: a shard's list holds all its facts. Where halving
// lands elsewhere (the end of a list putAll is filling, not yet in order)
// it looks as without does.
func (x *Engine) withoutRanked(list []int32, i int32) []int32 {
	if at, found := slices.BinarySearchFunc(list, i, x.ascending); found && list[at] == i {
		return slices.Delete(list, at, at+1)
	}
	return without(list, i)
}

// without removes entry i from list. It looks from the end: the entries
// most often removed are the newest (a line written again soon after, a
// fact written twice in the files read in one batch, which putAll appends).
func without(list []int32, i int32) []int32 {
	for j := len(list) - 1; j >= 0; j-- {
		if list[j] == i {
			return slices.Delete(list, j, j+1)
		}
	}
	return list
}

// maybeCompact rebuilds the index once dead entries outnumber live ones.
func (x *Engine) maybeCompact() {
	if x.dead < 1024 || x.dead < x.live {
		return
	}
	docs := make([]Doc, 0, x.live)
	for i := range x.entries.len() {
		if x.alive[i] {
			docs = append(docs, x.docOf(i))
		}
	}
	// The docs' strings are pieces of the old arena, copied into a new one:
	// the dead facts' strings go with the old.
	x.reset()
	for _, d := range docs {
		x.add(d, analyzeDoc(d), false, false)
	}
	for _, sd := range x.shards {
		x.sortShard(sd)
	}
	for fk := range x.files {
		x.sortFile(fk)
	}
	for _, list := range x.chats {
		slices.SortFunc(list, x.chatOrder)
	}
}
