package search

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/memd/memd"
)

// Context from the conversation. An answer often spans a question and its
// reply, or a few turns of one exchange, so a fact borrows from the facts
// nearest to it in its conversation's order, and a chat's day whose facts
// together hold the query's words lifts them. Only the nearest facts lend:
// a busy chat has hundreds of facts a day, and borrowing from an arbitrary
// member of such a group promotes the same few facts for every query.
const (
	contextShare  = 0.3 // share of an adjacent fact's lead that a fact borrows
	contextDecay  = 0.6 // each step further away keeps this much of the share
	contextWindow = 2   // facts on each side that lend
	chatDayLift   = 0.5 // most a chat's day holding every query word lifts its facts
)

// loan is context one candidate lends a neighbour.
type loan struct {
	to, from int32
	dist     int
	amount   float64
}

// lendContext adds to the strongest candidates' neighbours a share of each
// one's lead over them, the best loan only, falling with distance. It
// returns the candidates with the facts that borrowed added.
func (x *Engine) lendContext(sc *scores, top []int32, near []neighbour, ok func(int32) bool) []int32 {
	loans := sc.loans[:0]
	defer func() {
		for _, l := range loans {
			sc.loan[l.to] = 0
		}
		sc.loans = loans[:0]
	}()
	for _, n := range near {
		i, j := n.of, n.j
		v := sc.value(i)
		if v <= 0 || !ok(j) {
			continue
		}
		lead := v - sc.value(j)
		if lead <= 0 {
			continue
		}
		l := loan{j, i, int(n.dist), contextShare * math.Pow(contextDecay, float64(n.dist-1)) * lead}
		if k := sc.loan[j] - 1; k < 0 {
			loans = append(loans, l)
			sc.loan[j] = int32(len(loans))
		} else if l.amount > loans[k].amount || l.amount == loans[k].amount && x.precedes(l.from, loans[k].from) {
			loans[k] = l // of two equal loans, explain names the same lender in any index order
		}
	}
	// The candidates are marked, a bit each, so that a loan to one of
	// them is known without a search; the marks are cleared on return.
	inTop := sc.marked(top)
	defer sc.unmark(top[:len(top):len(top)]) // top grows below
	for _, l := range loans {
		sc.addLate(l.to, l.amount)
		if e := sc.explain(l.to); e != nil {
			e.Context += l.amount
			e.ContextFrom = append(e.ContextFrom, memd.Lender{Shard: x.shardIDs[x.shardOf[l.from]], ID: x.idOf(l.from), Distance: l.dist, Amount: l.amount})
		}
		if inTop[l.to>>6]&(1<<(l.to&63)) == 0 {
			top = append(top, l.to)
		}
	}
	return top
}

// neighbour is a fact near a strong candidate in its conversation.
type neighbour struct {
	of, j int32 // the candidate and its neighbour
	dist  int32
}

// neighboursOf appends to near the conversation neighbours of each of top,
// in top's order.
func (x *Engine) neighboursOf(top []int32, near []neighbour) []neighbour {
	for _, i := range top {
		x.conversationNeighbours(i, func(j int32, dist int) {
			near = append(near, neighbour{i, j, int32(dist)})
		})
	}
	return near
}

// conversationNeighbours calls fn for the facts nearest to entry i in its
// conversation, at most contextWindow on each side, with their distance: a
// fact of a chat, the facts of the same chat and day in the conversation's
// order, wherever other chats interleave with it; a fact of no chat, the
// adjacent lines of its file of the same day and also of no chat.
func (x *Engine) conversationNeighbours(i int32, fn func(j int32, dist int)) {
	e := x.entries.at(i)
	if e.passage {
		return
	}
	if e.chat != 0 {
		list := x.chats[x.chatKeyOf(i)]
		at := indexOf(list, i, func() int {
			at, found := slices.BinarySearchFunc(list, i, x.chatOrder)
			for found && at < len(list) && list[at] != i {
				at++ // facts sharing a place (only in hand-made indexes)
			}
			return at
		})
		if at < 0 {
			return
		}
		for d := 1; d <= contextWindow; d++ {
			if at-d >= 0 {
				fn(list[at-d], d)
			}
			if at+d < len(list) {
				fn(list[at+d], d)
			}
		}
		return
	}
	list := x.files[x.shardFileOf(i)]
	at := indexOf(list, i, func() int {
		off := x.offsets[i]
		at, _ := slices.BinarySearchFunc(list, off, func(j, o int32) int { return int(x.offsets[j] - o) })
		for at < len(list) && list[at] != i && x.offsets[list[at]] == off {
			at++ // facts sharing an offset (only in hand-made indexes)
		}
		return at
	})
	if at < 0 {
		return
	}
	same := func(j int32) bool {
		return x.days[j] == x.days[i] && x.entries.at(j).chat == 0
	}
	for _, step := range []int{-1, 1} {
		for d := 1; d <= contextWindow; d++ {
			k := at + step*d
			if k < 0 || k >= len(list) || !same(list[k]) {
				break
			}
			fn(list[k], d)
		}
	}
}

// indexOf returns where entry i is in a conversation's list, -1 if it is
// not. The lists are in the conversation's order, which is mostly that
// of the entries' numbers too, or its reverse: facts are numbered as they
// are read, a file or a chat in order at a first start, newest first from
// a snapshot (see before). A search by number reads one array, where one
// in the list's order reads an entry's offset or time at each step. Where
// the two orders part (a fact put again takes a new number; a log's notes
// and episodes rank apart from its other lines), search, the search in
// the list's order, finds it.
//
// Facts read together are numbered one after another, so where nothing
// came between, entry i is as far from the list's first as its number is
// from the first's: that place is tried before any search.
func indexOf(list []int32, i int32, search func() int) int {
	n := len(list)
	if n == 0 {
		return -1
	}
	if at := int(i) - int(list[0]); at >= 0 && at < n && list[at] == i {
		return at
	}
	if at := int(list[0]) - int(i); at >= 0 && at < n && list[at] == i {
		return at
	}
	if n > 1 && list[0] > list[n-1] {
		if at, found := slices.BinarySearchFunc(list, i, func(e, i int32) int { return cmp.Compare(i, e) }); found {
			return at
		}
	} else if at, found := slices.BinarySearch(list, i); found {
		return at
	}
	if at := search(); at < len(list) && list[at] == i {
		return at
	}
	return -1
}

// liftChatDays multiplies the score of each candidate of a chat by up to
// 1+chatDayLift, by how much of the query (weighed by IDF) the candidates
// of its chat's day hold together and how much of it the others hold: a
// fact alone in its chat, or whose day adds nothing to it, is not lifted.
// A query of one word says nothing of a day as a whole and lifts nothing.
func (x *Engine) liftChatDays(sc *scores, top []int32, weights []float64) {
	if len(weights) < 2 {
		return
	}
	total := 0.0
	for _, w := range weights {
		total += w
	}
	if total <= 0 {
		return
	}
	// Per chat's day, the terms its candidates hold, and those held by
	// two or more: a fact's others hold what the day holds beyond it, and
	// what it holds that another holds too.
	type held struct{ once, twice uint64 }
	days := make(map[chatKey]*held)
	for _, i := range top {
		if x.entries.at(i).chat == 0 {
			continue
		}
		k := x.chatKeyOf(i)
		h := days[k]
		if h == nil {
			h = &held{}
			days[k] = h
		}
		m := sc.termsOf(i)
		h.twice |= h.once & m
		h.once |= m
	}
	cover := func(mask uint64) float64 {
		c := 0.0
		for mask != 0 {
			j := bits.TrailingZeros64(mask)
			c += weights[j]
			mask &^= 1 << j
		}
		return c / total
	}
	for _, i := range top {
		if x.entries.at(i).chat == 0 {
			continue
		}
		h := days[x.chatKeyOf(i)]
		own := sc.termsOf(i)
		others := (h.once &^ own) | (h.twice & own)
		share := cover(h.once) * cover(others)
		if share == 0 {
			continue
		}
		k := sc.place(i)
		more := sc.v[k] * chatDayLift * share
		sc.v[k] += more
		if p := sc.explain(i); p != nil {
			p.ChatDay += more
		}
	}
}
