package search

// firstAtLeast returns the first place in list whose key is at least want
// (len(list) if none is), list being in rising order of key. Keys here
// spread fairly evenly (byte offsets in a file, times in a chat), so each
// place read is guessed from where want falls between the two nearest
// keys known: a list of 50,000 facts costs four or five reads rather than
// sixteen, each read a likely cache miss. Where keys bunch, a guess that
// has not halved the range in two reads is followed by a halving, so no
// list costs more than about four times a binary search.
func firstAtLeast(list []int32, key func(int32) int64, want int64) int {
	n := len(list)
	if n == 0 || key(list[0]) >= want {
		return 0
	}
	last := key(list[n-1])
	if last < want {
		return n
	}
	// Every place below lo holds a key under want, klo the key at lo-1;
	// every place from hi on holds want or more, khi the key at hi.
	lo, klo, hi, khi := 1, key(list[0]), n-1, last
	size, reads, halve := hi-lo, 0, false
	for lo < hi {
		at := lo + (hi-lo)/2
		if !halve {
			// Between lo-1 and hi, where want would fall were keys even.
			share := (float64(want) - float64(klo)) / (float64(khi) - float64(klo))
			at = min(max(lo-1+int(share*float64(hi-lo+1)), lo), hi-1)
		}
		if k := key(list[at]); k < want {
			lo, klo = at+1, k
		} else {
			hi, khi = at, k
		}
		if reads++; reads%2 == 0 {
			halve = hi-lo > size/2 // two reads that did not halve the range
			size = hi - lo
		} else {
			halve = false
		}
	}
	return lo
}
