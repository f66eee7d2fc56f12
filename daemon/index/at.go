package index

import (
	"context"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// At returns a search engine over shards as they were at heads (a shard
// with none is left out): memory at an earlier instant, read from history,
// its facts and notes built as the live index builds them. Where a fact
// came from is taken from the live index when it names a commit no newer
// than the shard's head, and read from history otherwise.
func (x *Index) At(ctx context.Context, shards []memd.ShardID, heads map[memd.ShardID]gitstore.Hash) (*search.Engine, error) {
	e := search.New()
	for _, id := range shards {
		h := heads[id]
		if h.IsZero() {
			continue
		}
		sh, err := x.store.Shard(id)
		if err != nil {
			return nil, err
		}
		c, err := sh.ReadCommit(h)
		if err != nil {
			return nil, err
		}
		lines, err := sh.LinesAt(h)
		if err != nil {
			return nil, err
		}
		docs := make([]search.Doc, len(lines))
		var unknown []int
		for i, l := range lines {
			docs[i] = docOf(l)
			if cur, ok := x.search.Get(id, l.ID); ok && cur.Text == l.Text && cur.File == l.File && cur.Date == l.Date && cur.Commit != "" && cur.When <= c.Time.Unix() {
				docs[i].Commit, docs[i].Messages, docs[i].Chat, docs[i].When = cur.Commit, cur.Messages, cur.Chat, cur.When
			} else {
				unknown = append(unknown, i)
			}
		}
		if err := attributeAt(ctx, sh, h, docs, unknown); err != nil {
			return nil, err
		}
		notes, err := notesAt(sh, h, c.Time)
		if err != nil {
			return nil, err
		}
		e.Apply(search.Update{Shard: id, Head: hashString(h), Put: docs, Notes: notePassages(id, notes)})
	}
	return e, nil
}

// attributeAt fills in where the facts docs[i], i in which, came from, read
// from the history of h.
func attributeAt(ctx context.Context, sh *gitstore.Shard, h gitstore.Hash, docs []search.Doc, which []int) error {
	if len(which) == 0 {
		return nil
	}
	want := make(map[string]bool, len(which))
	byID := make(map[string]int, len(which))
	for _, i := range which {
		want[docs[i].ID] = true
		byID[docs[i].ID] = i
	}
	held := func(id string) memd.Fact { return docs[byID[id]].Fact }
	return provenance.Introductions(ctx, sh, h, want, held, nil, func(id string, c gitstore.Commit, p memd.Provenance) error {
		d := &docs[byID[id]]
		d.Commit, d.Messages, d.Chat, d.When = c.Hash.String(), p.SourceMessages, p.SourceChat, c.Time.Unix()
		return nil
	})
}
