package search

import (
	"strings"
	"unsafe"
)

// arenaChunk is the size of each block of an arena.
const arenaChunk = 64 << 10

// arena keeps the strings of facts read in bulk, packed in large blocks of
// its own. A text parsed from a file is a piece of its line, one taken
// from a diff a piece of the whole file version, and one read from a
// snapshot a piece of the whole snapshot: held as they are, each fact would
// keep far more than its own bytes in memory. The blocks hold no pointers,
// so the collector does not scan them. Strings handed out are never
// written again; a block lives while any does.
type arena struct {
	block []byte
}

// copy returns s in the arena.
func (a *arena) copy(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > arenaChunk/8:
		return strings.Clone(s)
	}
	if cap(a.block)-len(a.block) < len(s) {
		a.block = make([]byte, 0, arenaChunk)
	}
	start := len(a.block)
	a.block = append(a.block, s...)
	return unsafe.String(&a.block[start], len(s))
}

// own copies the strings of docs into the index's arena, so that nothing
// the index keeps is a piece of what they were read from. The files many
// facts share are copied once (chats are named once by chatOf, and an
// origin is encoded into the arena by originOf), and a fact the index
// holds already (put again with its line moved) keeps the strings it has:
// copying them again would leave the old copies, dead, in blocks that
// other facts keep alive. Without mayHold the index is not asked: a fact
// it held would only have its strings copied again.
func (x *Engine) own(docs []Doc, mayHold bool) {
	shared := make(map[string]string)
	for i := range docs {
		d := &docs[i]
		var held *entry
		if j, ok := x.heldEntry(d, mayHold); ok {
			held = x.entries.at(j)
			shared[x.fileNames[held.file]] = x.fileNames[held.file]
		}
		if held != nil && held.text == d.Text {
			d.ID, d.Text = held.id, held.text
		} else {
			d.ID, d.Text = x.texts.copy(d.ID), x.texts.copy(d.Text)
		}
		if c, ok := shared[d.File]; ok {
			d.File = c
		} else if d.File != "" {
			d.File = x.texts.copy(d.File)
			shared[d.File] = d.File
		}
	}
}

// heldEntry finds the entry the index holds of a fact, when it may hold
// one.
func (x *Engine) heldEntry(d *Doc, mayHold bool) (int32, bool) {
	if !mayHold {
		return 0, false
	}
	return x.lookup(d.Shard, d.ID)
}
