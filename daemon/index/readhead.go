package index

import (
	"cmp"
	"context"
	"fmt"

	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// Reading a shard never indexed, or too far behind, from its files at
// HEAD.

// readHeadInParts indexes a shard from its files at head, a few files at a
// time, so that its facts are never held twice (as parsed lines and as
// the index's). Where a person wrote a fact twice the newer line counts,
// or the first of two of a day, as in gitstore.Lines. What the index held
// of the shard goes first, and what was read goes again on an error: a
// half-read shard is never taken for one read.
//
// Four steps run at once, each on what the one before gave: reading the
// files, analysing their facts' texts, putting those into the index
// (which one step at a time may do), and recording their terms apart
// (search.RecordTermsApart). On two processors this reads a million facts
// in about half the time the steps take one after another; what bounds
// it then is the processors' time, not one step's.
func (x *Index) readHeadInParts(sh *gitstore.Shard, head gitstore.Hash) (err error) {
	id := sh.ID()
	x.search.Apply(search.Update{Shard: id, Replace: true})
	x.search.RecordTermsApart(id)
	defer func() {
		if err != nil {
			x.search.Apply(search.Update{Shard: id, Replace: true})
		}
	}()
	read := make(chan search.Update)
	type prepared struct {
		update search.Prepared
		facts  []search.Doc // the update's, to be used again when it is made
	}
	ready := make(chan prepared)
	// Batches come back to be filled again: a million facts read are 200 MB
	// of Docs, and each batch made afresh was that much more to collect.
	spare := make(chan []search.Doc, 4)
	// A step that fails or panics makes the others stop: the reader at its
	// next file, each handing over what it holds.
	ctx, stop := context.WithCancel(x.ctx)
	defer func() {
		stop()
		for range ready {
		}
	}()
	var notes map[string]*noteRecord
	var readErr, prepareErr error
	go func() {
		defer close(read)
		defer func() {
			if r := recover(); r != nil {
				readErr = fmt.Errorf("reading shard %s: %v", id, r)
			}
		}()
		notes, readErr = x.readHeadBatches(ctx, sh, head, read, spare)
	}()
	go func() {
		defer close(ready)
		for u := range read {
			p, err := prepare(u)
			if err != nil {
				prepareErr = err
				stop()
				continue // what is still read goes unused
			}
			ready <- prepared{p, u.Put}
		}
	}()
	for p := range ready {
		x.search.ApplyPrepared(p.update)
		clear(p.facts) // let go of the files their strings are in
		select {
		case spare <- p.facts[:0]:
		default:
		}
	}
	if err := cmp.Or(prepareErr, readErr); err != nil {
		return err
	}
	x.readAt(id, head, notes)
	return nil
}

// prepare is search.Prepare, with a panic made an error for the shard.
func prepare(u search.Update) (p search.Prepared, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("analysing shard %s: %v", u.Shard, r)
		}
	}()
	return search.Prepare(u), nil
}

// readHeadBatches sends the facts of the shard's files at head in
// batches of about x.readBatch, the last with head and the shard's notes,
// and returns the notes. A fact written twice is put where it is newest:
// in one batch it is sent once, in two the index keeps the newer
// (KeepNewer). Batches are taken from spare when it has one.
func (x *Index) readHeadBatches(ctx context.Context, sh *gitstore.Shard, head gitstore.Hash, out chan<- search.Update, spare <-chan []search.Doc) (map[string]*noteRecord, error) {
	id := sh.ID()
	next := func() []search.Doc {
		select {
		case b := <-spare:
			return b
		default:
			// A batch is sent when a file takes it past x.readBatch: room
			// for that and a large file more (a Doc is 200 bytes).
			return make([]search.Doc, 0, x.readBatch+x.readBatch/4)
		}
	}
	batch := next()
	// A fact written twice within a batch is settled here, where the
	// reading waits on the putting anyway: put twice, the older copy would
	// be taken out of lists the length of the shard.
	inBatch := map[string]int{} // ID -> its place in batch
	err := sh.EachFactFile(head, func(lines []gitstore.Line) error {
		if err := ctx.Err(); err != nil {
			return err // the index is closing, or a step failed
		}
		for _, l := range lines {
			if i, ok := inBatch[l.ID]; ok {
				if batch[i].Date.Before(l.Date) {
					batch[i] = docOf(l)
				}
				continue
			}
			inBatch[l.ID] = len(batch)
			batch = append(batch, docOf(l))
		}
		if len(batch) >= x.readBatch {
			out <- search.Update{Shard: id, Put: batch, KeepNewer: true, More: true}
			batch = next()
			clear(inBatch)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	notes, err := headNotes(sh, head)
	if err != nil {
		return nil, err
	}
	out <- search.Update{Shard: id, Put: batch, KeepNewer: true, Head: hashString(head), Notes: notePassages(id, notes)}
	return notes, nil
}
