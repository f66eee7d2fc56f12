package search

import (
	"math"
	"slices"
)

// strongest returns the n best candidates (all of them if fewer). Among
// candidates tied at the cut, those collect would rank first: the order
// facts were indexed in, which differs between a first start and a
// restart, must not decide which of them the phrase and the context lift.
func (x *Engine) strongest(sc *scores, n int) []int32 {
	m := sc.contenders()
	vs := sc.v
	if sc.narrowed {
		vs = sc.liveV[:0]
		for j := range m {
			vs = append(vs, sc.v[sc.placeOf(j)])
		}
		sc.liveV = vs
	}
	top := make([]int32, 0, min(n, m))
	// Narrowed, there are at least n, chosen below.
	if m <= n && !sc.narrowed {
		for j := range m {
			top = append(top, sc.touched[sc.placeOf(j)])
		}
		return top
	}
	var floor float64
	floor, sc.spare = largest(vs, n, sc.spare)
	for j := range m {
		if k := sc.placeOf(j); sc.v[k] > floor {
			top = append(top, sc.touched[k])
		}
	}
	room := n - len(top)
	if room == 0 {
		return top
	}
	c := x.chooser(sc, room)
	for j, step := newerEndFirst(x, sc, m); j >= 0 && j < m; j += step {
		if k := sc.placeOf(j); sc.v[k] == floor {
			c.consider(sc.touched[k], floor)
		}
	}
	for _, r := range c.chosen() {
		top = append(top, r.i)
	}
	return top
}

// largest returns the k-th largest of vs (0 < k ≤ len(vs)), vs unchanged,
// and heap for reuse: one pass keeping the k largest in a min-heap, which
// most values, smaller than the least of them, pass with one comparison.
// It replaced copying vs to select in place, a tenth of a large search.
func largest(vs []float64, k int, heap []float64) (float64, []float64) {
	h := heap[:0]
	less := func(a, b float64) bool { return a < b }
	for _, v := range vs {
		switch {
		case len(h) < k:
			h = append(h, v)
			up(h, len(h)-1, less)
		case v > h[0]:
			h[0] = v
			down(h, 0, less)
		}
	}
	return h[0], h
}

// ranked is a candidate with its final score.
type ranked struct {
	i    int32
	v    float64
	days int
}

// better orders candidates: higher score (scores within a hair are a tie),
// then the newer fact, then shard and ID for a stable order.
func (x *Engine) better(a, b ranked) bool {
	if math.Abs(a.v-b.v) > 1e-9*max(a.v, b.v) { // max, not math.Max: inlined
		return a.v > b.v
	}
	if a.days != b.days {
		return a.days > b.days
	}
	return x.precedes(a.i, b.i)
}

// precedes orders entries alike in all else: by shard, then ID.
func (x *Engine) precedes(a, b int32) bool {
	if sa, sb := x.shardOf[a], x.shardOf[b]; sa != sb {
		return x.shardOrder[sa] < x.shardOrder[sb]
	}
	return x.compareIDs(a, b) < 0
}

// collected is how many of the best candidates collect weighs for k
// hits: room for hits the budget skips.
func collected(k int) int { return k*4 + 32 }

// collect takes the best scored facts that fit the budget. top are the
// strongest candidates and those the context reached (see best).
func (x *Engine) collect(sc *scores, q Query, top []int32) []Hit {
	if len(sc.touched) == 0 || q.K <= 0 || sc.contenders() == 0 {
		return nil
	}
	h := x.best(sc, top, collected(q.K))
	// The k best, in order, are the hits unless the budget skips one of
	// them; only then are the others ordered too.
	k := min(q.K, len(h))
	if len(h) > k {
		x.bestFirst(h, k)
	}
	slices.SortFunc(h[:k], x.compareRanked)
	length := func(j int) int { return len(x.textOf(h[j].i)) }
	kept := fitting(k, k, q.Budget, length)
	if len(kept) < k {
		slices.SortFunc(h[k:], x.compareRanked)
		kept = fitting(len(h), q.K, q.Budget, length)
	}
	// Only the hits that fit become Docs.
	hits := make([]Hit, len(kept))
	for n, j := range kept {
		r := h[j]
		hits[n] = Hit{Doc: x.docOf(r.i), Score: r.v}
		if e := sc.explain(r.i); e != nil {
			e.Tier = r.v - sc.value(r.i)
			hits[n].Explain = e
		}
	}
	return hits
}

// best returns the limit best contenders by better (all if fewer), in
// no particular order. The entries of top are weighed first: the
// strongest candidates and those the context reached, whose final scores
// are near the best, set the chooser's bar, and the other contenders,
// read in an order that says nothing of their scores, mostly fall below
// it on their score alone. Which entries top holds changes only the
// cost: those that are no contenders, and repeats, are passed by.
func (x *Engine) best(sc *scores, top []int32, limit int) []ranked {
	c := x.chooser(sc, limit)
	// Each contender of top once, marked: the others are read after.
	marks := sc.marked(nil)
	first, finals := sc.first[:0], sc.finals[:0]
	for _, i := range top {
		if k := sc.place(i); k >= 0 && sc.contends(i) && marks[i>>6]&(1<<(i&63)) == 0 {
			marks[i>>6] |= 1 << (i & 63)
			first = append(first, i)
			finals = append(finals, sc.v[k]*x.factors[x.tier[i]])
		}
	}
	sc.first, sc.finals = first, finals
	defer sc.unmark(first)
	// Of those, the ones below the limit-th best final score among them
	// (by more than a tie) cannot be kept: as many are better.
	least := 0.0
	if len(first) > limit {
		least, sc.spare = largest(finals, limit, sc.spare)
		least *= 1 - 1e-9
	}
	for n, i := range first {
		if finals[n] >= least {
			c.consider(i, sc.value(i))
		}
	}
	c.settle()
	m := sc.contenders()
	for j, step := newerEndFirst(x, sc, m); j >= 0 && j < m; j += step {
		k := sc.placeOf(j)
		if i := sc.touched[k]; marks[i>>6]&(1<<(i&63)) == 0 {
			c.consider(i, sc.v[k])
		}
	}
	return c.chosen()
}

// compareRanked orders candidates by better, the best first.
func (x *Engine) compareRanked(a, b ranked) int {
	switch {
	case x.better(a, b):
		return -1
	case x.better(b, a):
		return 1
	}
	return 0
}

// chooser keeps the limit best candidates it is given, by better.
//
// The candidates that pass the bar gather in a buffer; when it is full,
// the best of them are moved to its front and the worst of those becomes
// the bar. A heap does not bear ties: when many tie on score and come
// oldest first, each one pushes its root out.
type chooser struct {
	x      *Engine
	h      []ranked
	limit  int
	most   float64 // the factor of the tier weighed most
	bar    ranked  // the worst kept, once barred
	barred bool
}

// chooser returns a chooser of limit candidates, its buffer the search's.
func (x *Engine) chooser(sc *scores, limit int) *chooser {
	// Eight times what is kept: each choice then costs little per
	// candidate that passed the bar, even when all pass.
	if cap(sc.best) < 8*limit {
		sc.best = make([]ranked, 0, 8*limit)
	}
	return &chooser{x: x, h: sc.best[: 0 : 8*limit], limit: limit, most: slices.Max(x.factors)}
}

// consider gives it entry i, of score v before its tier's factor. Its tier
// and day, in arrays as long as the index, are read only when the bar
// cannot turn it away without them: v times the largest factor bounds
// its final score, scores and factors being positive.
func (c *chooser) consider(i int32, v float64) {
	x := c.x
	if c.barred {
		best := v * c.most // what its tier could make of it, at most
		if best < c.bar.v*(1-1e-9) {
			return
		}
		if best <= c.bar.v {
			// No better a score: only a newer day, or on the same day
			// the shard and ID better gives precedence, could save it.
			// Its run's newest day, in an array 64 times shorter, most
			// often says it has none.
			if int(x.newest[i/newestRun]) < c.bar.days {
				return
			}
			if d := int(x.days[i]); d < c.bar.days || d == c.bar.days && !x.precedes(i, c.bar.i) {
				return
			}
		}
	}
	r := ranked{i: i, v: v * x.factors[x.tier[i]], days: int(x.days[i])}
	if c.barred && !x.better(r, c.bar) {
		return
	}
	c.h = append(c.h, r)
	if len(c.h) == cap(c.h) {
		c.cut()
	}
}

// settle sets the bar from the candidates given so far, once they are
// as many as it keeps.
func (c *chooser) settle() {
	if !c.barred && len(c.h) >= c.limit {
		c.cut()
	}
}

// cut keeps the best limit of the candidates given, the worst of them
// the bar.
func (c *chooser) cut() {
	c.x.bestFirst(c.h, c.limit)
	c.h = c.h[:c.limit]
	c.bar, c.barred = c.h[c.limit-1], true
}

// newestRun is how many entries share a day in Engine.newest.
const newestRun = 64

// noteNewest records entry i's day in its run's newest day.
func (x *Engine) noteNewest(i, days int32) {
	if r := int(i / newestRun); r < len(x.newest) {
		x.newest[r] = max(x.newest[r], days)
	} else {
		x.newest = append(x.newest, days)
	}
}

// chosen returns the best candidates given, in no particular order.
func (c *chooser) chosen() []ranked {
	if len(c.h) > c.limit {
		c.x.bestFirst(c.h, c.limit)
		c.h = c.h[:c.limit]
	}
	return c.h
}

// newerEndFirst returns where to start reading the m contenders, and the
// step: from the end whose fact is newer. Postings run in the order facts
// were indexed, which in a store is mostly the order they were written:
// oldest first. Read newest first, a chooser's bar rises to the tied
// ones' newest days early and the older ones stop at it; read oldest
// first, each would pass the bar and be weighed again.
func newerEndFirst(x *Engine, sc *scores, m int) (j, step int) {
	if m > 0 && x.days[sc.touched[sc.placeOf(0)]] > x.days[sc.touched[sc.placeOf(m-1)]] {
		return 0, 1
	}
	return m - 1, -1
}

// bestFirst moves the n best of rs, by better, to its front, in no
// particular order among themselves, with the n-th best at rs[n-1]: a
// quickselect, each pass keeping the side that holds the n-th place.
func (x *Engine) bestFirst(rs []ranked, n int) {
	lo, hi := 0, len(rs)-1
	for lo < hi {
		p := rs[lo+(hi-lo)/2]
		// Each scan stops at the pivot or at what the other scan swapped
		// over, so neither leaves [lo, hi].
		i, j := lo, hi
		for i <= j {
			for x.better(rs[i], p) {
				i++
			}
			for x.better(p, rs[j]) {
				j--
			}
			if i <= j {
				rs[i], rs[j] = rs[j], rs[i]
				i++
				j--
			}
		}
		switch {
		case n-1 <= j:
			hi = j
		case n-1 >= i:
			lo = i
		default:
			return // between j and i, every one ties with the pivot
		}
	}
}

// Fit keeps the first hits, at most k, whose texts fit the budget.
func Fit(hits []Hit, k, budget int) []Hit {
	kept := fitting(len(hits), k, budget, func(j int) int { return len(hits[j].Text) })
	out := make([]Hit, len(kept))
	for n, j := range kept {
		out[n] = hits[j]
	}
	return out
}

// fitting returns the first of n texts, at most k, whose lengths fit the
// budget (none: no limit), skipping those that would overflow it.
func fitting(n, k, budget int, length func(j int) int) []int {
	var kept []int
	used := 0
	for j := 0; j < n && len(kept) < k; j++ {
		if budget > 0 && used+length(j) > budget {
			continue
		}
		used += length(j)
		kept = append(kept, j)
	}
	return kept
}

// up and down keep h a heap whose root is the least by less.
func up[T any](h []T, j int, less func(a, b T) bool) {
	for j > 0 {
		p := (j - 1) / 2
		if !less(h[j], h[p]) {
			return
		}
		h[j], h[p] = h[p], h[j]
		j = p
	}
}

func down[T any](h []T, j int, less func(a, b T) bool) {
	for {
		l := 2*j + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[j]) {
			return
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
}
