package index

import (
	"context"
	"errors"
	"runtime/debug"
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Attribution: each fact's introducing commit and its source messages,
// found by walking history, in the background after a shard is read.

// attributeLater attributes a shard's facts to their commits in the
// background.
// One walk runs for a shard at a time: a call while one runs has it walk
// again once done, for the facts left unattributed meanwhile, from the
// newest head asked for.
func (x *Index) attributeLater(id memd.ShardID, head gitstore.Hash) {
	sh, err := x.store.Shard(id)
	if err != nil {
		x.log.Warn("attributing facts to commits", "shard", id, "err", err)
		return
	}
	x.progressMu.Lock()
	if _, running := x.walkAgain[id]; running {
		x.walkAgain[id] = head
		x.progressMu.Unlock()
		return
	}
	x.walkAgain[id] = gitstore.Hash{}
	x.progressMu.Unlock()
	x.bg.Add(1)
	x.mark(x.attributing, id, 1)
	go func() {
		defer x.bg.Done()
		defer x.mark(x.attributing, id, -1)
		for {
			if err := x.attribute(x.ctx, sh, head, nil); err != nil && !errors.Is(err, context.Canceled) {
				x.log.Warn("attributing facts to commits", "shard", id, "err", err)
			}
			x.progressMu.Lock()
			again := x.walkAgain[id]
			if again.IsZero() || x.ctx.Err() != nil {
				delete(x.walkAgain, id)
				x.progressMu.Unlock()
				break
			}
			x.walkAgain[id], head = gitstore.Hash{}, again
			x.progressMu.Unlock()
		}
		if x.search.Facts(id) > x.followUpTo {
			// A large shard's attribution leaves hundreds of megabytes of
			// garbage, and an idle daemon allocates nothing that would
			// have it collected: hand it back now, as after reading the
			// store.
			debug.FreeOSMemory()
		}
	}()
}

// attribute walks a shard's history from head, newest first, and records
// for each indexed fact not yet attributed the commit that introduced it.
// progress, when given, is told how many commits have been read.
func (x *Index) attribute(ctx context.Context, sh *gitstore.Shard, head gitstore.Hash, progress func(int)) error {
	id := sh.ID()
	want := make(map[string]bool)
	for _, profile := range []bool{true, false} {
		x.search.Walk(id, profile, func(d search.Doc) bool {
			if d.Commit == "" {
				want[d.ID] = true
			}
			return true
		})
	}
	// The line indexed, looked up when a commit wrote one of the fact:
	// kept for each of a million facts wanted, it took 100 MB.
	held := func(fid string) memd.Fact {
		d, _ := x.search.Get(id, fid)
		return d.Fact
	}
	if len(want) == 0 {
		return nil
	}
	var batch []search.Doc
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// Under the shard's lock, and only for facts still indexed as
		// they were: a catch-up may have moved on meanwhile.
		defer x.lock(id)()
		for _, d := range batch {
			cur, ok := x.search.Get(id, d.ID)
			if !ok || cur.Commit != "" || cur.Text != d.Text || cur.File != d.File || cur.Date != d.Date {
				continue
			}
			x.search.SetProvenance(id, d.ID, d.Commit, d.Messages, d.Chat, d.When)
		}
		x.mu.Lock()
		x.markDirty(id)
		x.mu.Unlock()
		batch = batch[:0]
		return nil
	}
	// The facts of one commit share its name.
	var last gitstore.Hash
	var name string
	err := provenance.Introductions(ctx, sh, head, want, held, progress, func(fid string, c gitstore.Commit, p memd.Provenance) error {
		if d, ok := x.search.Get(id, fid); ok {
			if c.Hash != last {
				last, name = c.Hash, c.Hash.String()
			}
			d.Commit, d.Messages, d.Chat, d.When = name, p.SourceMessages, p.SourceChat, c.Time.Unix()
			batch = append(batch, d)
		}
		if len(batch) >= 1000 {
			return flush()
		}
		return nil
	})
	if ferr := flush(); err == nil {
		err = ferr
	}
	return err
}

// AttributeAll attributes every indexed fact of every shard to the commit
// that introduced it.
func (x *Index) AttributeAll(ctx context.Context, progress func(stage string, done, total int)) error {
	ids, err := x.store.Shards()
	if err != nil {
		return err
	}
	for i, id := range ids {
		report(progress, "attributing facts to commits", i, len(ids))
		sh, err := x.store.Shard(id)
		if err != nil {
			return err
		}
		if err := x.attribute(ctx, sh, x.Head(id), nil); err != nil {
			return err
		}
	}
	report(progress, "attributing facts to commits", len(ids), len(ids))
	return nil
}

// changedFacts returns the IDs of the facts commit c (whose trailers are p)
// added and removed, as the trailers of memd's own commits name them and
// as the diff of any other commit, memd's merges and reverts among them,
// shows them; and the lines it wrote of each, by fact: nil where trailers
// name the facts, taken as writing their lines (a forget writes none; a
// commit of one fact, a line of the tier they name).
func changedFacts(sh *gitstore.Shard, c gitstore.Commit, p memd.Provenance) (ids []string, wrote map[string][]memd.Fact, err error) {
	if c.ByMemd() && p.Op != "" && p.Op != memd.OpMerge && p.Op != memd.OpRevert {
		if p.Op == memd.OpForget {
			wrote = map[string][]memd.Fact{}
		} else if p.Tier != "" && len(p.FactIDs) == 1 {
			// Its fact's line, in the tier its trailers name: a line
			// of another tier held (ours, where a merge dropped a
			// remote's copy) is not its.
			wrote = map[string][]memd.Fact{p.FactIDs[0]: {{Tier: p.Tier}}}
		}
		return p.FactIDs, wrote, nil
	}
	d, err := sh.Diff(c)
	if err != nil {
		return nil, nil, err
	}
	ids, wrote = make([]string, len(d.Facts)), make(map[string][]memd.Fact)
	for i, ch := range d.Facts {
		ids[i] = ch.Fact.ID // a fact redated comes twice
		if ch.Op == "+" {
			wrote[ch.Fact.ID] = append(wrote[ch.Fact.ID], ch.Fact)
		}
	}
	return ids, wrote, nil
}

// wroteLine tells whether a commit that wrote lines of a fact (nil: named
// it in its trailers) wrote the line l, its file and date (a line known
// by its tier alone: its tier).
func wroteLine(wrote map[string][]memd.Fact, l memd.Fact) bool {
	if wrote == nil {
		return true
	}
	return slices.ContainsFunc(wrote[l.ID], func(f memd.Fact) bool {
		if f.File == "" {
			return f.Tier == l.Tier
		}
		return f.File == l.File && f.Date == l.Date
	})
}
