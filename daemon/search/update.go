package search

import (
	"slices"

	"github.com/memd/memd"
)

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
	// More says more of a read in parts follows: terms recorded apart
	// (RecordTermsApart) are installed by the first update without it.
	More bool
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
	if n, ok := x.shardNum[u.Shard]; ok && x.parts[n].apart != nil {
		if u.More {
			x.parts[n].apart.send()
		} else {
			x.installApart(x.parts[n], false)
		}
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
		dropSurface(p) // its words name terms by number
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
		if num, ok := x.shardNum[u.Shard]; ok {
			x.parts[num].surface.unsure.Store(true) // facts without terms
		}
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
