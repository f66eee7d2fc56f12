package search

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/memd/memd"
)

// Rank is the rank of a dated fact in the memory section: its date in
// 30-day units plus the base-2 log of its tier's weight, so a note ranks like
// a fact 30 days older and an episode like one about 18 days newer.
func Rank(d memd.Date, t memd.Tier) float64 { return rank(d.Days(), math.Log2(t.Weight())) }

// rank is Rank of a day and the base-2 log of a tier's weight.
func rank(days int, logWeight float64) float64 { return float64(days)/30 + logWeight }

// Put adds a fact, replacing the fact with the same shard and ID.
func (x *Engine) Put(d Doc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.add(d, analyzeDoc(d), true, false)
	x.maybeCompact()
}

// PutAll adds many facts at once: their words are analysed in parallel
// before the index is locked, and each list is sorted once rather than
// inserted into fact by fact.
func (x *Engine) PutAll(docs []Doc) {
	analysed := analyzeAll(docs)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.putAll(docs, analysed, false)
	x.maybeCompact()
}

// reserve makes room for n more entries at once. A snapshot read in
// parts reserves for all its facts: past a few hundred entries append
// grows a slice by a quarter, so each part would copy every array again.
// (Not more: room kept for entries never put stays held, 24 bytes each.)
func (x *Engine) reserve(n int) {
	x.alive, x.shardOf = slices.Grow(x.alive, n), slices.Grow(x.shardOf, n)
	x.lengths, x.days = slices.Grow(x.lengths, n), slices.Grow(x.days, n)
	x.newest = slices.Grow(x.newest, n/newestRun+1)
	x.offsets, x.idKeys, x.tier = slices.Grow(x.offsets, n), slices.Grow(x.idKeys, n), slices.Grow(x.tier, n)
}

// putAll puts facts in; with keepNewer, a fact held at a date not before
// its own (put earlier, or earlier in docs) is left as it is.
func (x *Engine) putAll(docs []Doc, analysed []analysed, keepNewer bool) {
	if len(docs) <= smallBatch {
		// A few facts go into their places; sorting would cost more.
		for i, d := range docs {
			x.add(d, analysed[i], true, keepNewer)
		}
		return
	}
	x.reserve(len(docs))
	shards := make(map[memd.ShardID]bool)
	files := make(map[shardFile]bool)
	chats := make(map[chatKey]bool)
	first := x.entries.len() // the entries of this batch are numbered from here
	for i, d := range docs {
		j, put := x.add(d, analysed[i], false, keepNewer)
		if put && d.Note == "" {
			shards[d.Shard] = true
			files[x.shardFileOf(j)] = true
			if d.Chat != "" {
				chats[x.chatKeyOf(j)] = true
			}
		}
	}
	// Each list was in order before the batch, and its entries follow:
	// a start reading a large shard in parts merges each part in.
	for s := range shards {
		sd := x.shards[s]
		sd.profile = sortAppended(sd.profile, first, x.ascending)
		sd.recent = sortAppended(sd.recent, first, x.ascending)
	}
	for fk := range files {
		x.files[fk] = sortAppended(x.files[fk], first, func(a, b int32) int { return int(x.offsets[a] - x.offsets[b]) })
	}
	for ck := range chats {
		x.chats[ck] = sortAppended(x.chats[ck], first, x.chatOrder)
	}
}

// sortAppended puts in order a list that was in order until entries
// numbered from first on were appended to it: they are sorted and merged
// in, rather than the whole list sorted again.
func sortAppended(list []int32, first int32, cmp func(a, b int32) int) []int32 {
	k := len(list)
	for k > 0 && list[k-1] >= first {
		k--
	}
	old, added := list[:k], list[k:]
	slices.SortFunc(added, cmp)
	if len(old) == 0 || len(added) == 0 || cmp(old[len(old)-1], added[0]) <= 0 {
		return list
	}
	if cmp(added[len(added)-1], old[0]) < 0 {
		// All go first, as the older parts of a snapshot (written highest
		// first) do, read after the newer: moved in place without a
		// comparison of each.
		front := slices.Clone(added)
		copy(list[len(front):], old)
		copy(list, front)
		return list
	}
	merged := make([]int32, 0, len(list))
	i, j := 0, 0
	for i < len(old) && j < len(added) {
		if cmp(added[j], old[i]) < 0 {
			merged = append(merged, added[j])
			j++
		} else {
			merged = append(merged, old[i])
			i++
		}
	}
	merged = append(merged, old[i:]...)
	return append(merged, added[j:]...)
}

func (x *Engine) compare(a, b int32) int {
	switch {
	case x.before(a, b):
		return -1
	case x.before(b, a):
		return 1
	}
	return 0
}

// ascending orders a shard's ranked lists: lowest rank first (see
// shardDocs).
func (x *Engine) ascending(a, b int32) int { return x.compare(b, a) }

func (x *Engine) sortShard(sd *shardDocs) {
	slices.SortFunc(sd.profile, x.ascending)
	slices.SortFunc(sd.recent, x.ascending)
}

func (x *Engine) sortFile(fk shardFile) {
	slices.SortFunc(x.files[fk], func(a, b int32) int { return int(x.offsets[a] - x.offsets[b]) })
}

// PutNote replaces the passages of a note (none: the note is gone).
func (x *Engine) PutNote(shard memd.ShardID, note string, passages []Doc) {
	analysed := analyzeAll(passages)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.putNote(shard, note, passages, analysed)
	x.maybeCompact()
}

func (x *Engine) putNote(shard memd.ShardID, note string, passages []Doc, analysed []analysed) {
	x.dropNote(noteKey{shard, note})
	for i, d := range passages {
		d.Shard, d.Note = shard, note
		x.add(d, analysed[i], true, false) // in place of any entry of its ID
	}
}

// partOf returns a shard's number and part, making them if it has none.
func (x *Engine) partOf(shard memd.ShardID) (uint32, *part) {
	n, ok := x.shardNum[shard]
	if !ok {
		n = uint32(len(x.shardIDs))
		x.shardIDs = append(x.shardIDs, shard)
		x.shardNum[shard] = n
		x.parts = append(x.parts, newPart())
		x.placeShard(n)
	}
	return n, x.parts[n]
}

// reserve makes room in a part that holds nothing for facts and terms
// put in bulk, rather than grow its maps a doubling at a time.
func (p *part) reserve(facts, terms int) {
	if p.ids.len() == 0 && facts > 0 {
		p.ids = newIDMap(facts)
	}
	p.terms.reserve(terms)
}

// keepFolded keeps entry i's folded text beside the texts. By entry, not
// in a map: a store in Chinese or Japanese keeps one for every fact, and
// a map of a million, with a string of its own each, took half a second
// of a start and about 100 MB more; a store of plain ASCII keeps none.
func (x *Engine) keepFolded(i int32, folded string) {
	for len(x.folded) <= int(i) {
		x.folded = append(x.folded, ref{})
	}
	x.folded[i] = x.texts.put(folded)
}

// add indexes a fact and returns its entry. With sorted, it goes into its
// place in the ordered lists; otherwise it is appended and the caller
// sorts them. With keepNewer, a fact the index holds at a date not before
// d's is left as it is, and add returns its entry and false.
func (x *Engine) add(d Doc, a analysed, sorted, keepNewer bool) (int32, bool) {
	ts := a.terms
	days := d.Date.Days()
	n, p := x.partOf(d.Shard)
	// The entry is named in the part's IDs first: a fact put in place of
	// itself (its line moved) keeps the strings the arena holds rather
	// than copies that would leave those dead there. A fact kept as held
	// names nothing: no file, no tier.
	slot, tag, before, replaced := p.ids.place(x.idOf, d.ID)
	if replaced && keepNewer && !x.dateOf(before).Before(d.Date) {
		return before, false
	}
	file, tier := x.fileNames.of(d.File), x.tierOf(d.Tier) // before the ID is named: they may panic
	next := x.entries.len()
	p.ids.set(slot, tag, next)
	var id, text ref
	kept := false // the held fact's strings, for the same text
	if replaced {
		held := x.entries.at(before)
		id, text, kept = held.id, held.text, x.texts.get(held.text) == d.Text
	}
	if !kept {
		id, text = x.texts.put(d.ID), x.texts.put(d.Text)
	}
	i := x.entries.add(entry{
		id: id, text: text, origin: x.originFor(&d, before, replaced),
		file: file, passage: d.Note != "",
		chat: x.chatNames.of(d.Chat), when: d.When,
		dated: !d.Date.IsZero(),
	})
	e := x.entries.at(i)
	x.alive = append(x.alive, true)
	x.shardOf = append(x.shardOf, n)
	length := uint16(min(a.length, maxLength))
	x.lengths = append(x.lengths, length)
	x.days = append(x.days, int32(days))
	x.noteNewest(i, int32(days))
	x.offsets = append(x.offsets, int32(d.Offset))
	x.idKeys = append(x.idKeys, idKey(d.ID))
	x.tier = append(x.tier, tier)
	if a.folded != "" {
		x.keepFolded(i, a.folded)
		e.foldKept = true
	}
	if d.Note != "" {
		x.noteOf[i] = d.Note
	}
	if replaced {
		x.kill(d.Shard, before)
	}
	x.live++
	p.live++
	if e.passage {
		p.passages++
	}
	p.length += int(length)
	p.entries = append(p.entries, i)
	if p.apart != nil {
		p.apart.note(i, ts)
	} else {
		p.addPostings(i, ts)
	}
	if p.surface.words.Load() != nil {
		folded := a.folded
		if folded == "" {
			folded = string(foldASCII(nil, d.Text))
		}
		noteSurface(p, folded)
	}
	if d.Note != "" {
		nk := noteKey{d.Shard, d.Note}
		x.notes[nk] = append(x.notes[nk], i)
		return i, true
	}
	x.list(d, i, sorted)
	p.dates[days] = append(p.dates[days], i)
	return i, true
}

// list puts fact d, entry i, in its shard's list of its tier, its file's
// and its chat's: in its place with sorted, else at their ends.
func (x *Engine) list(d Doc, i int32, sorted bool) {
	sd := x.shards[d.Shard]
	if sd == nil {
		sd = &shardDocs{}
		x.shards[d.Shard] = sd
	}
	list := &sd.recent
	if d.Tier == memd.TierProfile {
		list = &sd.profile
	}
	fk := x.shardFileOf(i)
	if sorted {
		*list = x.insertRanked(*list, i)
		files := x.files[fk]
		at, _ := slices.BinarySearchFunc(files, int32(d.Offset), func(j, off int32) int { return int(x.offsets[j] - off) })
		x.files[fk] = slices.Insert(files, at, i)
	} else {
		*list = append(*list, i)
		x.files[fk] = append(x.files[fk], i)
	}
	if x.entries.at(i).chat != 0 {
		k := x.chatKeyOf(i)
		if sorted {
			x.insertChat(k, i)
		} else {
			x.chats[k] = append(x.chats[k], i)
		}
	}
}

// placeShard puts new shard n in the order of shard names, moving the
// shards after it one place on: a start that adds 10,000 shards one by
// one does not sort them all each time.
func (x *Engine) placeShard(n uint32) {
	name := x.shardIDs[n].String()
	at, _ := slices.BinarySearchFunc(x.byName, name, func(m uint32, name string) int { return strings.Compare(x.shardIDs[m].String(), name) })
	x.byName = slices.Insert(x.byName, at, n)
	x.shardOrder = append(x.shardOrder, 0)
	for place := at; place < len(x.byName); place++ {
		x.shardOrder[x.byName[place]] = uint32(place)
	}
}

// idKey is the first eight bytes of an ID, which order IDs as their
// strings do wherever the keys differ.
func idKey(id string) uint64 {
	var b [8]byte
	copy(b[:], id)
	return binary.BigEndian.Uint64(b[:])
}

// compareIDs orders entries a and b by ID.
func (x *Engine) compareIDs(a, b int32) int {
	if c := cmp.Compare(x.idKeys[a], x.idKeys[b]); c != 0 || x.entries.at(a).id.n <= 8 && x.entries.at(b).id.n <= 8 {
		return c
	}
	return strings.Compare(x.idOf(a), x.idOf(b))
}

// addPostings records the terms of entry i. A term the fact holds again
// finds its posting last in the term's list, and counts there once more:
// asking the dictionary again costs less than telling each term from the
// fact's others.
func (x *part) addPostings(i int32, ts []string) {
	for _, t := range ts {
		k, slot, tag, known := x.terms.place(t)
		if !known {
			x.newTerm(t, singleRef(newPosting(i, 1)), slot, tag)
			continue
		}
		r := x.terms.refs[k]
		if first, one := r.single(); one {
			if first.doc() == i {
				x.terms.refs[k] = singleRef(first.again())
				continue
			}
			x.terms.refs[k] = termRef(len(x.lists))
			x.lists = append(x.lists, []posting{first, newPosting(i, 1)})
			continue
		}
		ps := x.lists[r]
		if n := len(ps); n > 0 && ps[n-1].doc() == i {
			ps[n-1] = ps[n-1].again()
			continue
		}
		x.lists[r] = append(ps, newPosting(i, 1))
	}
}

// before orders facts by rank, then date, newest first, then by file,
// and in one file the later line first (memd appends: the later
// written), then ID.
//
// A snapshot lists a shard's facts in this order and a restart numbers
// them so: the facts of a file of one tier then run backwards by number
// as they run forwards by line, and finding a fact's neighbours in its
// file is a search of one array by number (see indexOf), not of each
// candidate's offset, a read in another part of memory at each step.
func (x *Engine) before(a, b int32) bool {
	if ra, rb := x.rankOf(a), x.rankOf(b); ra != rb {
		return ra > rb
	}
	if x.days[a] != x.days[b] {
		return x.days[a] > x.days[b]
	}
	if sa, sb := x.shardOf[a], x.shardOf[b]; sa != sb {
		return x.shardOrder[sa] < x.shardOrder[sb]
	}
	// By the files' names, not their numbers, which differ between a
	// first start and a restart.
	if fa, fb := x.entries.at(a).file, x.entries.at(b).file; fa != fb {
		return x.fileNames.list[fa] < x.fileNames.list[fb]
	}
	if oa, ob := x.offsets[a], x.offsets[b]; oa != ob {
		return oa > ob
	}
	return x.compareIDs(a, b) < 0
}

// rankOf is entry i's Rank, from its day and tier.
func (x *Engine) rankOf(i int32) float64 {
	return rank(int(x.days[i]), x.logs[x.tier[i]])
}

// chatOrder orders the facts of one chat and day as the conversation went:
// by the time of the commit that wrote them, then file and line (memd
// appends to a month's log, so within a file line order is commit order).
func (x *Engine) chatOrder(a, b int32) int {
	da, db := x.entries.at(a), x.entries.at(b)
	if da.when != db.when {
		return cmp.Compare(da.when, db.when)
	}
	if da.file != db.file {
		return strings.Compare(x.fileNames.list[da.file], x.fileNames.list[db.file])
	}
	return int(x.offsets[a] - x.offsets[b])
}

func (x *Engine) insertChat(k chatKey, i int32) {
	list := x.chats[k]
	at, _ := slices.BinarySearchFunc(list, i, x.chatOrder)
	x.chats[k] = slices.Insert(list, at, i)
}

func (x *Engine) insertRanked(list []int32, i int32) []int32 {
	at, _ := slices.BinarySearchFunc(list, i, x.ascending)
	return slices.Insert(list, at, i)
}
