package search

import "unsafe"

// arenaChunk is the size of an arena's blocks once it holds a few;
// arenaFirst of its first.
const (
	arenaChunk = 64 << 10
	arenaFirst = 256
)

// arena keeps the strings of the facts the index holds (IDs, texts,
// origins), packed in large blocks of its own. A text parsed from a file is
// a piece of its line, one taken from a diff a piece of the whole file
// version, and one read from a snapshot a piece of a window of it: held as
// they are, each fact would keep far more than its own bytes in memory.
// Entries name their strings by ref, not by pointer, and the blocks hold no
// pointers, so the collector scans neither: a million facts are three
// million strings it would otherwise follow at every cycle. Strings are
// never written again; the blocks live until the index is reset.
type arena struct {
	blocks [][]byte
	cur    int // the block strings are packed into, plus one; 0 before the first
}

// ref is a string held in an arena: its block and, unless it has a block
// of its own (n is wholeBlock), where it is in the block. The zero ref is
// the empty string.
type ref struct {
	block uint32
	at, n uint16
}

const wholeBlock = 1<<16 - 1

// put copies s into the arena.
func (a *arena) put(s string) ref {
	switch {
	case s == "":
		return ref{}
	case len(s) > arenaChunk/8:
		a.blocks = append(a.blocks, []byte(s))
		return ref{block: uint32(len(a.blocks) - 1), n: wholeBlock}
	}
	if a.cur == 0 || cap(a.blocks[a.cur-1])-len(a.blocks[a.cur-1]) < len(s) {
		// Blocks start small and double up to arenaChunk: a shard of a
		// few facts has an arena of its terms too.
		size := arenaFirst
		if a.cur > 0 {
			size = min(arenaChunk, 2*cap(a.blocks[a.cur-1]))
		}
		a.blocks = append(a.blocks, make([]byte, 0, max(size, len(s))))
		a.cur = len(a.blocks)
	}
	b := a.blocks[a.cur-1]
	a.blocks[a.cur-1] = append(b, s...)
	return ref{block: uint32(a.cur - 1), at: uint16(len(b)), n: uint16(len(s))}
}

// get returns the string r names.
func (a *arena) get(r ref) string {
	switch r.n {
	case 0:
		return ""
	case wholeBlock:
		b := a.blocks[r.block]
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return unsafe.String(&a.blocks[r.block][r.at], int(r.n))
}

// idOf and textOf return entry i's ID and text.
func (x *Engine) idOf(i int32) string   { return x.texts.get(x.entries.at(i).id) }
func (x *Engine) textOf(i int32) string { return x.texts.get(x.entries.at(i).text) }
