// Package search is memd's in-memory search over facts: an inverted index
// with BM25 ranking over stemmed words of any length, phrase and substring
// fallbacks, context borrowed from neighbouring facts, dates named in the
// query, and the rank-ordered lists the memory section of a prompt is cut
// from. It knows nothing of git; the index package feeds it.
package search

import (
	"sync"
	"sync/atomic"

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

// again is p with its fact holding the term once more.
func (p posting) again() posting { return newPosting(p.doc(), p.tf()+1) }

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
	mu sync.RWMutex
	// keepWords keeps a large shard's words for the substring fallback
	// (see KeepWords).
	keepWords bool
	building  sync.WaitGroup // the builds of words under way (WaitWords)
	entries   entries        // by value, in pages (see entries)
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
	// newest holds, for each run of 64 entries, the newest day among
	// them: a bound that lets a chooser turn away a tied candidate older
	// than its bar without reading the candidate's own day. Among
	// thousands of ties (a one-word query over facts of one length),
	// those reads, each in another cache line, were a fifth to a third
	// of such a search.
	newest  []int32
	offsets []int32
	idKeys  []uint64 // the first eight bytes of each ID, to order ties cheaply
	tier    []uint8  // into tiers
	// The tiers entries name, and the weight factor of each in the final
	// score.
	tiers   []memd.Tier
	factors []float64
	logs    []float64 // the base-2 log of each tier's weight, for Rank
	// The folded text of entries whose text is not plain ASCII, in texts,
	// by entry up to the last such (see keepFolded); the others' is folded
	// when needed (see foldedString).
	folded []ref
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
	prefixes     map[string][]string // by prefixOf: the terms starting so, but codes
	dates        map[int][]int32     // day -> the facts dated that day
	entries      []int32             // every entry, dead ones until compaction
	removed      []string            // IDs of the facts removed, in order, until compaction
	surface      surface             // its words whose stems differ, for the substring fallback
	apart        *termsApart         // its terms being recorded apart, if they are
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
	// Numbers and codes are not listed: "4242" is not the start of
	// "42421" (a query's "postgres16" still finds "postgres").
	if hasDigit(t) {
		return // a start puts a million numbers: asked first
	}
	if p, ok := prefixOf(t); ok {
		x.prefixes[p] = append(x.prefixes[p], t)
	}
}

// KeepWords has the engine keep the words of each large shard for the
// substring fallback (see substrings.go), built in the background as soon
// as the shard is read at a commit: for an index that serves many
// queries. An engine made for one view of history reads the texts.
func (x *Engine) KeepWords() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.keepWords = true
}

// WaitWords waits for the builds of shards' words under way: a benchmark
// of searches times them against the words, not the texts read while the
// words are built. It is for a caller that starts no search meanwhile (a
// search may start a build).
func (x *Engine) WaitWords() { x.building.Wait() }

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
	for _, p := range x.parts {
		x.installApart(p, true) // numbered as the entries no longer are
	}
	x.epoch = epochs.Add(1)
	x.entries = entries{}
	x.texts = arena{}
	x.fileNames, x.chatNames = names{}, names{}
	x.chatNames.of("") // chat 0 is none
	x.lastOrigin = ref{}
	x.alive, x.shardOf, x.shardIDs, x.shardOrder, x.byName, x.parts, x.idKeys, x.tier = nil, nil, nil, nil, nil, nil, nil, nil
	x.lengths, x.days, x.newest, x.offsets = nil, nil, nil, nil
	x.tiers, x.factors, x.logs = nil, nil, nil
	x.folded = nil
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
	if n, ok := x.shardNum[shard]; ok && x.keepWords && len(x.parts[n].entries) >= minPrefiltered {
		if p := x.parts[n]; p.surface.words.Load() == nil && !p.surface.unsure.Load() {
			x.buildSurfaceLater(p)
		}
	}
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
