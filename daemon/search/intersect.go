package search

import (
	"math/bits"
	"slices"
)

// eachIn calls fn with each posting of ps whose entry is in entries, both
// rising by entry. It looks each entry up, skipping ahead in ps by steps
// doubling from where the last one was found: for entries far fewer than
// the postings, a few look-ups each rather than a read of the whole list.
func eachIn(ps []posting, entries []int32, fn func(p posting)) {
	at := 0
	for _, e := range entries {
		if at = seek(ps, at, e); at == len(ps) {
			return
		}
		if ps[at].doc() == e {
			fn(ps[at])
			at++
		}
	}
}

// seek returns the first place at from or after it whose entry is e or
// above, len(ps) if none is.
func seek(ps []posting, from int, e int32) int {
	if from >= len(ps) || ps[from].doc() >= e {
		return from
	}
	lo, step := from, 1 // ps[lo] is below e
	for lo+step < len(ps) && ps[lo+step].doc() < e {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(ps)) // ps[hi] is e or above, or hi is the end
	for lo+1 < hi {
		mid := int(uint(lo+hi) >> 1)
		if ps[mid].doc() < e {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// fewerThan says whether a list of n entries is better looked up in a
// list of postings than the postings read: when the postings are eight
// times as many, a look-up's few steps cost less than the reads it skips.
func fewerThan(n int, ps []posting) bool { return n*8 < len(ps) }

// risingEntries returns the entries at the given places of the
// candidates, rising, in buf: by sorting them when they are few, else by
// reading the bits that mark them (set, a bit an entry) in order.
func risingEntries(sc *scores, places []int32, set []uint64, buf []int32) []int32 {
	buf = buf[:0]
	if len(places)*16 < len(set) {
		for _, k := range places {
			buf = append(buf, sc.touched[k])
		}
		slices.Sort(buf)
		return buf
	}
	for w, word := range set {
		for word != 0 {
			buf = append(buf, int32(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return buf
}
