package daemon

import (
	"context"
	"slices"
	"sync"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/learn"
	"github.com/memd/memd/provenance"
)

// LearningStats counts, per model, prompt and agent, the facts learned in a
// period and how many people undid, from the trailers of every shard.
func (s *Service) LearningStats(ctx context.Context, q memd.LearningQuery) (memd.LearningStats, error) {
	if err := checkPeriod(q.From, q.To); err != nil {
		return memd.LearningStats{}, err
	}
	ids, err := s.Store.Shards()
	if err != nil {
		return memd.LearningStats{}, err
	}
	shards := make([]*gitstore.Shard, 0, len(ids))
	for _, id := range ids {
		sh, err := s.shard(id)
		if err != nil {
			return memd.LearningStats{}, err
		}
		shards = append(shards, sh)
	}
	return provenance.Learning(shards, q, learn.Prompts())
}

// Growth says how one shard's facts, or every shard's, grew: by commit
// time from each commit's diff, and by the dates of the facts held now.
func (s *Service) Growth(ctx context.Context, q memd.GrowthQuery) (memd.Growth, error) {
	ids := []memd.ShardID{q.Shard}
	if q.Shard.IsZero() {
		var err error
		if ids, err = s.Store.Shards(); err != nil {
			return memd.Growth{}, err
		}
	}
	byCommit := make(map[memd.Date]memd.GrowthDay)
	byDate := make(map[memd.Date]memd.GrowthDay)
	out := memd.Growth{Shards: ids}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		sh, err := s.shard(id)
		if err != nil {
			return out, err
		}
		days, err := s.growth.of(sh)
		if err != nil {
			return out, err
		}
		for _, d := range days {
			g := byCommit[d.Day]
			g.Day, g.Added, g.Removed = d.Day, g.Added+d.Added, g.Removed+d.Removed
			byCommit[d.Day] = g
		}
		dated, err := s.growth.dated(s.Index, id)
		if err != nil {
			return out, err
		}
		for day, n := range dated {
			g := byDate[day]
			g.Day, g.Added = day, g.Added+n
			byDate[day] = g
			out.Facts += n
		}
	}
	out.ByCommit, out.ByDate = runningTotals(byCommit), runningTotals(byDate)
	return out, nil
}

// runningTotals orders days and counts the facts standing after each.
func runningTotals(days map[memd.Date]memd.GrowthDay) []memd.GrowthDay {
	out := make([]memd.GrowthDay, 0, len(days))
	for _, d := range days {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b memd.GrowthDay) int { return a.Day.Days() - b.Day.Days() })
	total := 0
	for i := range out {
		total += out[i].Added - out[i].Removed
		out[i].Total = total
	}
	return out
}

// growthCache keeps each shard's growth by commit time at its head, so a
// page opened again reads no history.
type growthCache struct {
	mu     sync.Mutex
	shards map[memd.ShardID]growthAt
	dates  map[memd.ShardID]datesAt
}

// datesAt is a shard's facts counted by their date, at an indexed commit.
type datesAt struct {
	head   gitstore.Hash
	counts map[memd.Date]int
}

// dated counts a shard's facts at HEAD by their date, from the index
// (which holds them already; parsing the shard's files would read a
// million facts to draw a chart), again only when the shard moved.
func (c *growthCache) dated(idx *index.Index, id memd.ShardID) (map[memd.Date]int, error) {
	if err := idx.CatchUp(id); err != nil {
		return nil, err
	}
	head := idx.Head(id)
	c.mu.Lock()
	d, ok := c.dates[id]
	c.mu.Unlock()
	if ok && d.head == head {
		return d.counts, nil
	}
	counts := make(map[memd.Date]int)
	for _, profile := range []bool{true, false} {
		idx.Engine().Walk(id, profile, func(doc search.Doc) bool {
			if doc.Note == "" {
				counts[doc.Date]++
			}
			return true
		})
	}
	c.mu.Lock()
	if c.dates == nil {
		c.dates = make(map[memd.ShardID]datesAt)
	}
	c.dates[id] = datesAt{head, counts}
	c.mu.Unlock()
	return counts, nil
}

type growthAt struct {
	head gitstore.Hash
	days []memd.GrowthDay
}

func (c *growthCache) of(sh *gitstore.Shard) ([]memd.GrowthDay, error) {
	c.mu.Lock()
	g := c.shards[sh.ID()]
	c.mu.Unlock()
	// Only the commits since the last count are read, when they follow it.
	days, head, whole, err := provenance.Growth(sh, g.head)
	if err != nil {
		return nil, err
	}
	if head == g.head {
		return g.days, nil
	}
	if !whole {
		days = mergeDays(g.days, days)
	}
	c.mu.Lock()
	if c.shards == nil {
		c.shards = make(map[memd.ShardID]growthAt)
	}
	c.shards[sh.ID()] = growthAt{head, days}
	c.mu.Unlock()
	return days, nil
}

// mergeDays adds the counts of more to days, in day order.
func mergeDays(days, more []memd.GrowthDay) []memd.GrowthDay {
	by := make(map[memd.Date]memd.GrowthDay, len(days)+len(more))
	for _, list := range [][]memd.GrowthDay{days, more} {
		for _, d := range list {
			g := by[d.Day]
			g.Day, g.Added, g.Removed = d.Day, g.Added+d.Added, g.Removed+d.Removed
			by[d.Day] = g
		}
	}
	return runningTotals(by)
}
