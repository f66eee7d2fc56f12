// Package search is memd's in-memory search over facts: an inverted index
// with BM25 ranking over stemmed words of any length, phrase and substring
// fallbacks, context borrowed from neighbouring facts, dates named in the
// query, and the rank-ordered lists the memory section of a prompt is cut
// from. It knows nothing of git; the index package feeds it.
package search

import (
	"cmp"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search/thesaurus"
)

// Doc is one fact as the index keeps it, or one passage of a note: then
// Note names the note (its path under notes/), Text is the passage, Date
// the day the note last changed, and Tier is empty. Passages are searched
// like facts but stay out of the memory section's lists.
type Doc struct {
	memd.Fact
	Offset   int      // byte offset of the fact's line (or passage) in its file
	Commit   string   // the commit that introduced it, when known
	Messages []string // the Source-Message trailers of that commit
	Chat     string   // the Source-Chat trailer of that commit
	When     int64    // that commit's time, Unix seconds (0: not yet known)
	Note     string
}

// entry is a fact or passage as the index holds it: what a Doc holds,
// less what the dense arrays of Index hold (shard, day, offset, length, tier),
// in as few bytes as a million of them should take.
type entry struct {
	id, text ref
	origin   ref // the commit and its messages, when known (see originOf)
	when     int64
	file     uint32 // into Engine.fileNames
	chat     uint32 // into Engine.chatNames; 0 for none
	dated    bool   // the date is set (its day is in Engine.days)
	passage  bool   // a note's passage; the note is in Engine.noteOf
	foldKept bool   // the text is not plain ASCII; its folded words are in Engine.folded
}

// posting is one fact holding a term: the entry's number in its low
// postingDocBits bits, how often the fact holds the term above them. Four
// bytes rather than eight: postings are most of a large index. A term held
// more than maxTF times counts maxTF times; BM25 gives each further time
// next to nothing anyway.
type posting uint32

const (
	postingDocBits = 27 // entries up to 134 million
	maxTF          = 1<<(32-postingDocBits) - 1
)

func newPosting(doc int32, tf int) posting {
	return posting(uint32(doc) | uint32(min(tf, maxTF))<<postingDocBits)
}

func (p posting) doc() int32 { return int32(p & (1<<postingDocBits - 1)) }
func (p posting) tf() int    { return int(p >> postingDocBits) }

// noteKey names a note of a shard by its path under notes/.
type noteKey struct {
	shard memd.ShardID
	path  string
}

// shardFile names a file of a shard by their numbers: no key of the files'
// lists is a string, let alone a piece of what a fact was read from.
type shardFile struct{ shard, file uint32 }

// shardFileOf is the file entry i is in.
func (x *Engine) shardFileOf(i int32) shardFile { return shardFile{x.shardOf[i], x.entries.at(i).file} }

// chatKey names one chat's day in one shard: a group chat several agents
// remember is one conversation in each of their shards. It holds numbers
// alone, quick to hash: recall looks up the chat of each strong candidate.
type chatKey struct {
	shard uint32 // into Engine.shardIDs
	chat  uint32 // into Engine.chatNames
	days  int32
}

func (x *Engine) chatKeyOf(i int32) chatKey {
	return chatKey{x.shardOf[i], x.entries.at(i).chat, x.days[i]}
}

// shardDocs lists a shard's facts by rank, lasting facts (profile) and
// dated ones (log, note, episode) apart. Each list is kept lowest first
// (ascending) and read from its end, highest first: a fact written now
// ranks highest and goes at the end, where a list of a million facts
// takes it without moving the rest (at its front, each write moved 4 MB).
type shardDocs struct {
	profile []int32
	recent  []int32
}

// smallBatch is the most facts PutAll inserts one by one.
const smallBatch = 256

// maxLength is the most terms a fact counts for in BM25's length
// normalisation: a longer one, a long note's passage, scores as if it were
// that long.
const maxLength = 1<<16 - 1

// Engine is safe for concurrent use.
type Engine struct {
	mu      sync.RWMutex
	entries entries // by value, in pages (see entries)
	// The files facts are in, and the chats they were learned in, each
	// named once; chat 0 is none.
	fileNames, chatNames names
	// Room to encode an origin in before it goes into texts, and the last
	// origin encoded.
	originBuf  []byte
	lastOrigin ref
	// Dense arrays of what scoring reads for every posting, by entry.
	alive   []bool
	shardOf []uint32
	lengths []uint16 // terms in the fact, up to maxLength: half the memory a search reads most
	days    []int32
	offsets []int32
	idKeys  []uint64 // the first eight bytes of each ID, to order ties cheaply
	tier    []uint8  // into tiers
	// The tiers entries name, and the weight factor of each in the final
	// score.
	tiers   []memd.Tier
	factors []float64
	logs    []float64 // the base-2 log of each tier's weight, for Rank
	// The folded text of entries whose text is not plain ASCII; the
	// others' is folded when needed (see foldInto).
	folded map[int32]string
	// The note each passage is of.
	noteOf   map[int32]string
	shardIDs []memd.ShardID
	shardNum map[memd.ShardID]uint32
	// Each shard's place in the order of shard names, to order ties
	// without comparing strings.
	shardOrder []uint32
	byName     []uint32 // shard numbers in the order of their names
	dead       int
	// What a search reads, by shard number: a search costs what the
	// shards it may read hold, not what the store holds.
	parts  []*part
	live   int
	shards map[memd.ShardID]*shardDocs
	files  map[shardFile][]int32 // by offset
	chats  map[chatKey][]int32
	notes  map[noteKey][]int32     // passages by note
	heads  map[memd.ShardID]string // the commit each shard was indexed from
	texts  arena                   // the strings of the facts held
	epoch  uint64                  // counts resets: marks of FactsSince from before one start over
}

// part is what one shard adds to the index. BM25's statistics are taken
// over the shards a search reads, so an answer depends on nothing else
// (another agent's memory, facts removed but not yet compacted).
type part struct {
	live, length int                 // live facts and passages, and their terms
	passages     int                 // live passages of notes
	ids          idMap               // ID -> live entry
	terms        termDict            // term -> its postings
	lists        [][]posting         // the entries holding terms held more than once
	prefixes     map[string][]string // first five letters of a term -> terms
	dates        map[int][]int32     // day -> the facts dated that day
	entries      []int32             // every entry, dead ones until compaction
	removed      []string            // IDs of the facts removed, in order, until compaction
}

// noneDead tells whether every entry the part's postings hold is live:
// none was removed since the last compaction.
func (x *part) noneDead() bool { return len(x.entries) == x.live }

func newPart() *part {
	return &part{ids: newIDMap(0), prefixes: make(map[string][]string), dates: make(map[int][]int32)}
}

// termRef is where a term's postings are: most terms of a large store
// (numbers, names, codes) are held by one fact, whose posting the ref
// holds itself rather than a list of one.
type termRef uint64

const single termRef = 1 << 63

func singleRef(p posting) termRef { return single | termRef(p) }

func (r termRef) single() (posting, bool) {
	return posting(uint32(r)), r&single != 0
}

// postings returns the entries holding a term; one, it is put in one.
func (x *part) postings(t string, one *[1]posting) []posting {
	r, ok := x.terms.get(t)
	if !ok {
		return nil
	}
	return x.listOf(r, one)
}

// listOf returns the postings a ref names; one, it is put in one.
func (x *part) listOf(r termRef, one *[1]posting) []posting {
	if p, ok := r.single(); ok {
		one[0] = p
		return one[:]
	}
	return x.lists[r]
}

// newTerm records a term the part did not hold, which its dictionary's
// place put at slot with tag.
func (x *part) newTerm(t string, r termRef, slot int, tag uint32) {
	t = x.terms.add(t, r, slot, tag) // the dictionary's copy
	// Numbers and codes match whole: "4242" is not "42421".
	if len(t) >= prefixLen && !hasDigit(t) {
		x.prefixes[t[:prefixLen]] = append(x.prefixes[t[:prefixLen]], t)
	}
}

// New returns an empty index.
func New() *Engine {
	thesaurus.Preload()
	x := &Engine{heads: make(map[memd.ShardID]string)}
	x.reset()
	return x
}

// epochs numbers the resets of every engine of the process, so that a
// mark of one engine is never taken for another's.
var epochs atomic.Uint64

func (x *Engine) reset() {
	x.epoch = epochs.Add(1)
	x.entries = entries{}
	x.texts = arena{}
	x.fileNames, x.chatNames = names{}, names{}
	x.chatNames.of("") // chat 0 is none
	x.lastOrigin = ref{}
	x.alive, x.shardOf, x.shardIDs, x.shardOrder, x.byName, x.parts, x.idKeys, x.tier = nil, nil, nil, nil, nil, nil, nil, nil
	x.lengths, x.days, x.offsets = nil, nil, nil
	x.tiers, x.factors, x.logs = nil, nil, nil
	x.folded = make(map[int32]string)
	x.noteOf = make(map[int32]string)
	x.shardNum = make(map[memd.ShardID]uint32)
	x.dead, x.live = 0, 0
	x.shards = make(map[memd.ShardID]*shardDocs)
	x.files = make(map[shardFile][]int32)
	x.chats = make(map[chatKey][]int32)
	x.notes = make(map[noteKey][]int32)
}

// Reset empties the index.
func (x *Engine) Reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.reset()
	clear(x.heads)
}

// SetHead records the commit a shard's facts were indexed from; searches
// report it as the commit they read the shard at.
func (x *Engine) SetHead(shard memd.ShardID, head string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.setHead(shard, head)
}

func (x *Engine) setHead(shard memd.ShardID, head string) {
	if head == "" {
		delete(x.heads, shard)
		return
	}
	x.heads[shard] = head
}

// Heads returns the commit each of the shards was indexed from (a shard
// never indexed, or without a commit, is absent).
func (x *Engine) Heads(shards []memd.ShardID) map[memd.ShardID]string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.headsOf(shards)
}

func (x *Engine) headsOf(shards []memd.ShardID) map[memd.ShardID]string {
	out := make(map[memd.ShardID]string, len(shards))
	for _, s := range shards {
		if h := x.heads[s]; h != "" {
			out[s] = h
		}
	}
	return out
}

// Update is one catch-up of a shard. A search sees all of it or none of
// it, so the commit it reports a shard read at names what it found.
type Update struct {
	Shard   memd.ShardID
	Head    string // the commit the shard is at after the update
	Replace bool   // drop every fact and note of the shard first
	Delete  []string
	Put     []Doc
	Notes   map[string][]Doc // the passages of each changed note, by path; none: the note is gone
	// Postings, with Replace, are those ExportShard gave with the facts
	// of Put, in that order: their texts are not analysed again. Postings
	// that cannot be those (made by another analysis, damaged, for another
	// number of facts) are ignored. (Lists found damaged only after the
	// facts were put fail ReplaceInParts; Apply then puts the facts again,
	// analysed, and a search in between finds the shard half read.)
	Postings string
	// KeepNewer leaves a fact of Put as the index holds it when it holds
	// it at a date not before Put's: a fact a person wrote in two files is
	// indexed where it is newest.
	KeepNewer bool
}

// Apply makes an update, and reports whether it used the postings given
// with it.
func (x *Engine) Apply(u Update) (usedPostings bool) {
	foreign := slices.ContainsFunc(u.Put, func(d Doc) bool { return d.Shard != u.Shard })
	// Postings are installed in the shard's part: every fact must be its.
	if u.Replace && u.Postings != "" && !foreign {
		used, err := x.ReplaceInParts(u, len(u.Put), func(put func([]Doc)) error { put(u.Put); return nil })
		if err == nil {
			return used // one part of them all cannot disagree with the count
		}
		u.Postings = "" // their lists are damaged: the texts are analysed after all
	}
	x.ApplyPrepared(Prepare(u))
	return false
}

// Prepared is an update whose texts are analysed: a reader of a large
// shard analyses its next facts while the index puts the last ones.
type Prepared struct {
	u     Update
	facts []analysed
	notes map[string][]analysed
}

// Prepare analyses the texts of an update's facts and passages, spread
// over the processors, without the index's lock. The update's postings,
// if any, are not used.
func Prepare(u Update) Prepared {
	notes := make(map[string][]analysed, len(u.Notes))
	for path, ps := range u.Notes {
		notes[path] = analyzeAll(ps)
	}
	return Prepared{u: u, facts: analyzeAll(u.Put), notes: notes}
}

// ApplyPrepared makes a prepared update.
func (x *Engine) ApplyPrepared(pu Prepared) {
	u := pu.u
	x.mu.Lock()
	defer x.mu.Unlock()
	if u.Replace {
		x.dropShard(u.Shard)
	}
	for _, id := range u.Delete {
		x.remove(u.Shard, id)
	}
	if u.Replace && len(u.Put) > smallBatch {
		_, p := x.partOf(u.Shard)
		p.reserve(len(u.Put)+len(u.Put)/16, 0) // room for the first writes too
	}
	x.putAll(u.Put, pu.facts, u.KeepNewer)
	for path, ps := range u.Notes {
		x.putNote(u.Shard, path, ps, pu.notes[path])
	}
	x.setHead(u.Shard, u.Head)
	x.maybeCompact()
}

// ReplaceInParts replaces a shard as Apply does with u.Replace, taking its
// facts from parts a part at a time instead of u.Put (Apply uses it for
// postings too, with one part): n facts in all, in
// the order of u.Postings. A large shard's snapshot is so read without
// all its facts held at once. put keeps copies of what it is given, so a
// part's memory may be reused; the shard's facts are taken as u.Shard's.
// When parts fails, gives other than n facts with postings, or the
// postings' lists are damaged (their start was read before any fact was
// put), the shard is left half read, at no commit, for the caller to
// replace again.
//
// It is long for the steps that share the index's lock and the shard's
// part: the room reserved, the lists read while the facts are put, the
// checks of both, and what is taken on once they pass.
func (x *Engine) ReplaceInParts(u Update, n int, parts func(put func([]Doc)) error) (usedPostings bool, err error) {
	head, perr := readPostingsHead(u.Postings, n)
	postings := u.Postings != "" && perr == nil
	// Read: a large shard's encoded postings (37 MB at a million facts)
	// are garbage once their lists are, not held while its facts are put.
	u.Postings = ""
	notes := make(map[string][]analysed, len(u.Notes))
	for path, ps := range u.Notes {
		notes[path] = analyzeAll(ps)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dropShard(u.Shard)
	if n > smallBatch {
		_, p := x.partOf(u.Shard)
		// Room beyond the facts for the notes' passages and their terms,
		// and the first writes: a table filled to its size doubles at the
		// next.
		passages := 0
		for _, ps := range u.Notes {
			passages += len(ps)
		}
		p.reserve(n+n/16+passages, 0)
		x.reserve(n + passages)
	}
	first, put := x.entries.len(), 0
	var lists chan builtTerms
	lengths := head.lengths
	if postings {
		lists = make(chan builtTerms, 1)
		_, p := x.partOf(u.Shard)
		fresh := p.terms.len() == 0 && len(p.lists) == 0 && len(p.prefixes) == 0
		room := int(head.terms + head.terms/16 + 64) // and the first writes'
		// Given the head, not sharing it: the encoded postings it reads
		// are held there until read, not here until every fact is put.
		go func(head postingsHead) { lists <- buildTerms(head, first, fresh, room) }(head)
	}
	err = parts(func(docs []Doc) {
		for i := range docs {
			docs[i].Shard = u.Shard
		}
		var facts []analysed
		switch {
		case !postings:
			facts = analyzeAll(docs)
		case put+len(docs) <= n:
			facts = foldedOnly(docs, lengths[put:put+len(docs)])
		default:
			return // more facts than postings: an error below
		}
		x.putAll(docs, facts, false)
		put += len(docs)
	})
	var terms builtTerms
	if postings {
		if terms = <-lists; err == nil {
			err = terms.err
		}
	}
	if err == nil && postings && (put != n || x.entries.len()-first != int32(n)) {
		// Facts put without terms of their own would be found by nothing.
		err = errBadPostings
	}
	if num, ok := x.shardNum[u.Shard]; ok && postings && err == nil {
		p := x.parts[num]
		if terms.built != nil {
			p.terms, p.lists, p.prefixes = terms.built.terms, terms.built.lists, terms.built.prefixes
		} else {
			p.installPostings(first, terms.imp)
		}
	}
	for path, ps := range u.Notes {
		x.putNote(u.Shard, path, ps, notes[path])
	}
	if err == nil {
		x.setHead(u.Shard, u.Head)
	} else {
		x.setHead(u.Shard, "") // read at no commit: what it held is gone
	}
	x.maybeCompact()
	return postings, err
}

// builtTerms are the terms of a shard's postings, read while its facts
// are put: as a part's dictionary, lists and prefixes, built apart, for a
// part that holds no terms; otherwise as read, for installPostings once
// every fact is put.
type builtTerms struct {
	built *part
	imp   imported
	err   error
}

// buildTerms reads the lists of the postings head begins, for the facts
// put from entry first on, and builds a part's terms of them when fresh.
func buildTerms(head postingsHead, first int32, fresh bool, room int) builtTerms {
	imp, err := head.lists()
	if err != nil || !fresh {
		return builtTerms{imp: imp, err: err}
	}
	p := &part{prefixes: make(map[string][]string)}
	p.terms.reserve(room)
	p.installPostings(first, imp)
	return builtTerms{built: p}
}

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

// analysed is a fact's text prepared for the index: its folded text (only
// for a text that is not plain ASCII: foldASCII gives the others' when
// needed), its terms, and how many terms it has. Facts whose postings
// come from a snapshot have no terms here, only their number.
type analysed struct {
	folded string
	terms  []string
	length int
}

// analyzeDoc analyses a fact's text.
func analyzeDoc(d Doc) analysed {
	if isASCII(d.Text) {
		ts := terms(fold(d.Text))
		return analysed{terms: ts, length: len(ts)}
	}
	f, ts := analyze(d.Text)
	return analysed{f, ts, len(ts)}
}

// foldedOnly prepares facts whose terms are known already: only the texts
// that are not plain ASCII are folded.
func foldedOnly(docs []Doc, lengths []int) []analysed {
	out := make([]analysed, len(docs))
	for i, d := range docs {
		out[i].length = lengths[i]
		if !isASCII(d.Text) {
			out[i].folded, _ = foldWords(d.Text)
		}
	}
	return out
}

// foldedText returns entry i's folded words joined by single spaces,
// folded into buf when not kept; it returns buf for reuse.
func (x *Engine) foldedText(i int32, buf []byte) (folded, reuse []byte) {
	if x.entries.at(i).foldKept {
		return []byte(x.folded[i]), buf
	}
	buf = foldASCII(buf[:0], x.textOf(i))
	return buf, buf
}

// analyzeAll analyses many facts, spread over the processors.
func analyzeAll(docs []Doc) []analysed {
	out := make([]analysed, len(docs))
	workers := runtime.GOMAXPROCS(0)
	if len(docs) < 1000 || workers == 1 {
		for i, d := range docs {
			out[i] = analyzeDoc(d)
		}
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(docs) + workers - 1) / workers
	for w := 0; w < len(docs); w += chunk {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			for i := from; i < to; i++ {
				out[i] = analyzeDoc(docs[i])
			}
		}(w, min(w+chunk, len(docs)))
	}
	wg.Wait()
	return out
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

// Delete removes a fact; it is not an error if the index lacks it.
func (x *Engine) Delete(shard memd.ShardID, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.remove(shard, id)
	x.maybeCompact()
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

func (x *Engine) dropNote(nk noteKey) {
	for _, i := range slices.Clone(x.notes[nk]) {
		x.remove(nk.shard, x.idOf(i))
	}
}

// dropShard removes every fact and note of a shard.
func (x *Engine) dropShard(shard memd.ShardID) {
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

// SetProvenance records where a fact came from, once that is known.
func (x *Engine) SetProvenance(shard memd.ShardID, id, commit string, messages []string, chat string, when int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i, ok := x.lookup(shard, id)
	if !ok {
		return
	}
	e := x.entries.at(i)
	if e.chat != 0 {
		x.dropChat(x.chatKeyOf(i), i)
	}
	e.origin, e.chat, e.when = x.originOf(commit, messages), x.chatNames.of(chat), when
	if e.chat != 0 && !e.passage {
		x.insertChat(x.chatKeyOf(i), i)
	}
}

// Get returns a fact by shard and ID.
func (x *Engine) Get(shard memd.ShardID, id string) (Doc, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i, ok := x.lookup(shard, id); ok {
		return x.docOf(i), true
	}
	return Doc{}, false
}

// lookup finds the live entry of a fact or passage.
func (x *Engine) lookup(shard memd.ShardID, id string) (int32, bool) {
	n, ok := x.shardNum[shard]
	if !ok {
		return 0, false
	}
	return x.parts[n].ids.get(x.idOf, id)
}

// docOf returns entry i as a Doc.
func (x *Engine) docOf(i int32) Doc {
	e := x.entries.at(i)
	d := Doc{
		Fact:   memd.Fact{ID: x.texts.get(e.id), Shard: x.shardIDs[x.shardOf[i]], Tier: x.tiers[x.tier[i]], Text: x.texts.get(e.text), File: x.fileNames.list[e.file]},
		Offset: int(x.offsets[i]), Chat: x.chatNames.list[e.chat], When: e.when, Note: x.noteOf[i],
	}
	d.Commit, d.Messages = originParts(x.texts.get(e.origin))
	d.Date = x.dateOf(i)
	return d
}

// dateOf returns entry i's date, zero for an undated one.
func (x *Engine) dateOf(i int32) memd.Date {
	if !x.entries.at(i).dated {
		return memd.Date{}
	}
	return memd.DateFromDays(int(x.days[i]))
}

// names numbers names (of files, of chats), each held once.
type names struct {
	list []string
	num  map[string]uint32
}

// of returns the number of a name, adding it if new.
func (ns *names) of(name string) uint32 {
	n, ok := ns.num[name]
	if !ok {
		n = uint32(len(ns.list))
		name = strings.Clone(name) // not a piece of what it was read from
		ns.list = append(ns.list, name)
		if ns.num == nil {
			ns.num = make(map[string]uint32)
		}
		ns.num[name] = n
	}
	return n
}

// originOf encodes a commit and the messages it names as one string in
// the index's arena: each a length, then its bytes. One string in an
// entry rather than a string and a list: a million entries, most with an
// origin of their own, are 40 bytes each lighter.
func (x *Engine) originOf(commit string, messages []string) ref {
	if commit == "" && len(messages) == 0 {
		return ref{}
	}
	if sameOrigin(x.texts.get(x.lastOrigin), commit, messages) {
		return x.lastOrigin // the facts of one commit, read one after another
	}
	b := binary.AppendUvarint(x.originBuf[:0], uint64(len(commit)))
	b = append(b, commit...)
	for _, m := range messages {
		b = binary.AppendUvarint(b, uint64(len(m)))
		b = append(b, m...)
	}
	x.originBuf = b
	x.lastOrigin = x.texts.put(unsafe.String(&b[0], len(b))) // copied, so b may be reused
	return x.lastOrigin
}

// originFor is the origin of a fact put in place of entry before (if
// replaced): before's when it is the same (the fact put again, its line
// moved), rather than a copy that would leave before's dead in the arena.
func (x *Engine) originFor(d *Doc, before int32, replaced bool) ref {
	if replaced {
		if held := x.entries.at(before).origin; sameOrigin(x.texts.get(held), d.Commit, d.Messages) {
			return held
		}
	}
	return x.originOf(d.Commit, d.Messages)
}

// sameOrigin tells whether an origin encodes a commit and messages.
func sameOrigin(origin, commit string, messages []string) bool {
	if origin == "" {
		return commit == "" && len(messages) == 0
	}
	r := postingsReader{s: origin}
	if r.take(r.uvarint()) != commit {
		return false
	}
	for _, m := range messages {
		if r.s == "" || r.take(r.uvarint()) != m {
			return false
		}
	}
	return r.s == ""
}

// originParts decodes what originOf encoded.
func originParts(origin string) (commit string, messages []string) {
	r := postingsReader{s: origin}
	if r.s != "" {
		commit = r.take(r.uvarint())
	}
	for r.s != "" {
		messages = append(messages, r.take(r.uvarint()))
	}
	return commit, messages
}

// tierOf returns the number of a tier in x.tiers, adding it if new.
func (x *Engine) tierOf(t memd.Tier) uint8 {
	if j := slices.Index(x.tiers, t); j >= 0 {
		return uint8(j)
	}
	if len(x.tiers) == 255 {
		panic("search: more than 255 tiers")
	}
	x.tiers = append(x.tiers, t)
	x.factors = append(x.factors, 1+0.05*math.Log2(t.Weight()))
	x.logs = append(x.logs, math.Log2(t.Weight()))
	return uint8(len(x.tiers) - 1)
}

// Len returns the number of facts.
func (x *Engine) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Facts returns the number of facts the given shards hold, their notes'
// passages apart.
func (x *Engine) Facts(shards ...memd.ShardID) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	facts := 0
	for _, shard := range shards {
		if n, ok := x.shardNum[shard]; ok {
			facts += x.parts[n].live - x.parts[n].passages
		}
	}
	return facts
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
	x.offsets = append(x.offsets, int32(d.Offset))
	x.idKeys = append(x.idKeys, idKey(d.ID))
	x.tier = append(x.tier, tier)
	if a.folded != "" {
		x.folded[i] = a.folded
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
	p.addPostings(i, ts)
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

// addPostings records the terms of entry i.
func (x *part) addPostings(i int32, ts []string) {
	for j, t := range ts {
		if slices.Contains(ts[:j], t) {
			continue // counted at its first occurrence
		}
		n := 1
		for _, u := range ts[j+1:] {
			if u == t {
				n++
			}
		}
		k, slot, tag, known := x.terms.place(t)
		var r termRef
		if known {
			r = x.terms.refs[k]
		}
		switch {
		case !known:
			x.newTerm(t, singleRef(newPosting(i, n)), slot, tag)
		case r&single != 0:
			first, _ := r.single()
			x.terms.refs[k] = termRef(len(x.lists))
			x.lists = append(x.lists, []posting{first, newPosting(i, n)})
		default:
			x.lists[r] = append(x.lists[r], newPosting(i, n))
		}
	}
}

// before orders facts by rank, then date, newest first, then ID.
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

func (x *Engine) dropChat(k chatKey, i int32) {
	if x.chats[k] = without(x.chats[k], i); len(x.chats[k]) == 0 {
		delete(x.chats, k)
	}
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
	delete(x.folded, i)
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
