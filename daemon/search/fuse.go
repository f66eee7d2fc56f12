package search

import (
	"math"
	"slices"

	"github.com/memd/memd"
)

// Similar is a fact found by meaning: the cosine of its vector and the
// query's.
type Similar struct {
	Shard  memd.ShardID
	ID     string
	Cosine float64
}

// Fuse joins the hits found by words with the facts nearest by meaning,
// scoring each by a convex sum: its word score as a share of full (see
// Result.Full; 1 at most), and how much nearer the query it is than the
// background (as a share of what is left to 1), weight deciding the
// latter's part. The background is the first fact of near beyond its n
// candidates; when near holds no more than n, every fact readable is a
// candidate and the background is 0. A sum rather than a fusion of ranks,
// because ranks forget how sure each side is: the first of a few weak word
// matches would tie the fact nearest by meaning. Nearer than the
// background, because a model that knows little of a query puts every
// fact about as near, and then meaning should decide little.
//
// cosine gives a word hit's similarity; a fact without a vector yet is
// scored by its words' part alone. Facts near by meaning the engine does not
// hold (forgotten since, or of another commit) are left out. The result
// is ordered best first; Fit cuts it.
func (x *Engine) Fuse(lexical []Hit, full float64, cosine func(shard memd.ShardID, id string) (float64, bool), near []Similar, n int, weight float64, explain bool) []Hit {
	best := full
	if best <= 0 {
		best = 1e-9
		for _, h := range lexical {
			best = math.Max(best, h.Score)
		}
	}
	floor := 0.0
	if len(near) > n {
		floor = math.Max(0, near[n].Cosine)
		near = near[:n]
	}
	above := func(c float64) float64 { return math.Max(0, c-floor) / math.Max(1e-9, 1-floor) }
	type key struct {
		shard memd.ShardID
		id    string
	}
	seen := make(map[key]bool, len(lexical)+len(near))
	out := make([]Hit, 0, len(lexical)+len(near))
	for _, h := range lexical {
		seen[key{h.Shard, h.ID}] = true
		lex := h.Score
		words := math.Min(1, lex/best)
		semantic := 0.0 // no vector yet: nothing known of its meaning
		if c, ok := cosine(h.Shard, h.ID); ok {
			semantic = above(c)
		}
		h.Score = (1-weight)*words + weight*semantic
		if e := h.Explain; e != nil && lex > 0 {
			e.Scale((1 - weight) * words / lex) // the parts add up to the new score
			e.Semantic = weight * semantic
		}
		out = append(out, h)
	}
	x.mu.RLock()
	for _, s := range near {
		if seen[key{s.Shard, s.ID}] || above(s.Cosine) <= 0 {
			continue
		}
		seen[key{s.Shard, s.ID}] = true
		i, ok := x.lookup(s.Shard, s.ID)
		if !ok || !x.alive[i] {
			continue
		}
		h := Hit{Doc: x.docOf(i), Score: weight * above(s.Cosine)}
		if explain {
			h.Explain = &memd.ScoreParts{Semantic: h.Score}
		}
		out = append(out, h)
	}
	x.mu.RUnlock()
	slices.SortStableFunc(out, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}
