package search

import "github.com/memd/memd"

// A shard read from its files at a start is put in batches; recording
// each fact's terms is the larger half of putting it and needs nothing
// else of the index. For a shard whose part holds no terms yet, the
// terms are recorded apart, on a goroutine of their own, into a part of
// their own, while the index puts the next batch; the reader's last
// update (the first without More) installs them.

// termsApart is a shard's terms being recorded apart.
type termsApart struct {
	built   *part    // the terms recorded so far, the builder's alone
	pending []posted // the terms of the batch being put, sent when it is
	batches chan []posted
	done    chan struct{}
}

// posted is an entry and its terms, with repeats.
type posted struct {
	i     int32
	terms []string
}

// RecordTermsApart has the terms of the facts put into a shard recorded
// apart (see above) until an update of it without More. It is for a
// reader that has just replaced the shard and puts its facts in large
// batches; a part that still holds terms (of facts put before, even dead
// ones) records them in place as ever.
func (x *Engine) RecordTermsApart(shard memd.ShardID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, p := x.partOf(shard)
	if p.apart != nil || p.terms.len() != 0 || len(p.lists) != 0 {
		return
	}
	a := &termsApart{built: &part{prefixes: make(map[string][]string)}, batches: make(chan []posted, 2), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for batch := range a.batches {
			for _, e := range batch {
				a.built.addPostings(e.i, e.terms)
			}
		}
	}()
	p.apart = a
	// Until its terms are in, the part's facts are without terms: no
	// surface words are built of them (see substrings.go).
	dropSurface(p)
	p.surface.unsure.Store(true)
}

// note records entry i's terms, to be sent with its batch.
func (a *termsApart) note(i int32, terms []string) {
	a.pending = append(a.pending, posted{i, terms})
}

// send hands the batch noted to the builder.
func (a *termsApart) send() {
	if n := len(a.pending); n > 0 {
		a.batches <- a.pending
		a.pending = make([]posted, 0, n) // the next batch is likely as large
	}
}

// installApart waits for the terms of part p recorded apart and makes them
// the part's; with discard (the shard was replaced again) it drops them.
func (x *Engine) installApart(p *part, discard bool) {
	a := p.apart
	if a == nil {
		return
	}
	if !discard {
		a.send()
	}
	close(a.batches)
	<-a.done
	p.apart = nil
	p.surface.unsure.Store(false)
	if !discard {
		p.terms, p.lists, p.prefixes = a.built.terms, a.built.lists, a.built.prefixes
	}
}
