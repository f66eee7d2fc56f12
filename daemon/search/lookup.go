package search

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/memd/memd"
)

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
