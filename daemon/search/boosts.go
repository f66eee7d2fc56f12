package search

import (
	"cmp"
	"math"
	"slices"

	"github.com/memd/memd"
)

// boostNamedShards favours the facts of a shard the query names: facts in
// user/pat are about Pat even when they do not say "Pat".
func (x *Engine) boostNamedShards(sc *scores, content []string, allowed map[memd.ShardID]bool) {
	named := make(map[memd.ShardID]bool)
	for _, w := range content {
		for _, k := range []memd.Kind{memd.KindUser, memd.KindAgent, memd.KindProject} {
			if id := (memd.ShardID{Kind: k, Name: w}); allowed[id] {
				named[id] = true
			}
		}
	}
	if len(named) == 0 {
		return
	}
	for k, i := range sc.touched {
		if named[x.shardIDs[x.shardOf[i]]] {
			more := sc.v[k] * namedShardBoost
			sc.v[k] += more
			if e := sc.explain(i); e != nil {
				e.NamedShard += more
			}
		}
	}
	// What a shard says lastingly answers "what does Alice do". In the
	// shards' order, not a map's: the passes that read candidates in the
	// order first scored then do the same in every search.
	var nums []uint32
	for id := range named {
		if n, ok := x.shardNum[id]; ok {
			nums = append(nums, n)
		}
	}
	slices.SortFunc(nums, func(a, b uint32) int { return cmp.Compare(x.shardOrder[a], x.shardOrder[b]) })
	for _, n := range nums {
		if sd := x.shards[x.shardIDs[n]]; sd != nil {
			for _, i := range slices.Backward(sd.profile) {
				sc.add(i, namedProfileScore)
				if e := sc.explain(i); e != nil {
					e.NamedShard += namedProfileScore
				}
			}
		}
	}
}

// scoreDates favours facts dated within or near the spans the query names:
// they join the candidates, and matching ones weigh more.
func (x *Engine) scoreDates(sc *scores, st stats, spans []dateSpan) {
	if len(spans) == 0 {
		return
	}
	best := 1.0
	for _, v := range sc.v {
		best = math.Max(best, v)
	}
	for _, sp := range spans {
		for d := sp.from - dateWindow; d <= sp.to+dateWindow; d++ {
			dist := max(0, sp.from-d, d-sp.to)
			w := 1 / (1 + float64(dist))
			for _, part := range st.parts {
				for _, i := range part.dates[d] {
					if x.alive[i] { // a part's facts are of a shard searched
						sc.add(i, 0.5*best*w)
						if e := sc.explain(i); e != nil {
							e.Date += 0.5 * best * w
						}
					}
				}
			}
		}
	}
}

// boostPhrase favours the candidates holding the query's words in its
// order. A fact holding the phrase holds the terms of its inner words
// (each has a bit of all), so the others are not read.
func (x *Engine) boostPhrase(sc *scores, phrase string, top []int32, all uint64) {
	for _, i := range top {
		k := sc.place(i) // a candidate: top holds only those
		if sc.terms[k]&all != all {
			continue
		}
		if x.holds(i, phrase) {
			more := sc.v[k] * phraseBoost
			sc.v[k] += more
			if e := sc.explain(i); e != nil {
				e.Phrase += more
			}
		}
	}
}
