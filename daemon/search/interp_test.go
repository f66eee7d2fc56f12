package search

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// firstAtLeast must agree with a binary search on every list in rising
// order, even, bunched or repeating, and read few places of an even one.
func TestFirstAtLeast_AgreesWithBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(n int) []int64{
		"even":      func(n int) []int64 { return spread(n, func(j int) int64 { return int64(j) * 97 }) },
		"repeating": func(n int) []int64 { return spread(n, func(j int) int64 { return int64(j / 7) }) },
		"all equal": func(n int) []int64 { return spread(n, func(int) int64 { return 5 }) },
		"bunched": func(n int) []int64 {
			return spread(n, func(j int) int64 {
				if j < n-3 {
					return int64(j)
				}
				return 1 << 40 // a few far keys: guesses land near the start
			})
		},
		"random": func(n int) []int64 {
			ks := spread(n, func(int) int64 { return rng.Int64N(1000) - 500 })
			slices.Sort(ks)
			return ks
		},
	}
	for name, shape := range shapes {
		for _, n := range []int{0, 1, 2, 3, 10, 100, 5000} {
			keys := shape(n)
			list := make([]int32, n)
			for j := range list {
				list[j] = int32(j)
			}
			key := func(j int32) int64 { return keys[j] }
			wants := []int64{-1 << 50, 1 << 50}
			for _, k := range keys {
				wants = append(wants, k-1, k, k+1)
			}
			for _, want := range wants {
				got := firstAtLeast(list, key, want)
				if exp := sort.Search(n, func(j int) bool { return keys[j] >= want }); got != exp {
					t.Fatalf("%s, %d keys, want %d: place %d, a binary search finds %d", name, n, want, got, exp)
				}
			}
		}
	}
}

func TestFirstAtLeast_ReadsFewPlacesOfAnEvenList(t *testing.T) {
	const n = 60000
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]int64, n)
	for j := range keys {
		keys[j] = int64(j)*80 + rng.Int64N(60) // lines of about 80 bytes
	}
	list := make([]int32, n)
	for j := range list {
		list[j] = int32(j)
	}
	reads := 0
	key := func(j int32) int64 { reads++; return keys[j] }
	for range 1000 {
		want := keys[rng.IntN(n)]
		firstAtLeast(list, key, want)
	}
	// A binary search reads 16 places; guesses about half as many.
	if per := float64(reads) / 1000; per > 8 {
		t.Errorf("%.1f places read a search of %d even keys, want at most 8", per, n)
	}
}

func spread(n int, key func(j int) int64) []int64 {
	ks := make([]int64, n)
	for j := range ks {
		ks[j] = key(j)
	}
	return ks
}

func FuzzFirstAtLeast(f *testing.F) {
	f.Add([]byte{1, 2, 2, 9, 200}, int64(2))
	f.Fuzz(func(t *testing.T, steps []byte, want int64) {
		keys := make([]int64, len(steps))
		var k int64 = -300
		for j, s := range steps {
			k += int64(s) * int64(s) // rising, with gaps from none to wide
			keys[j] = k
		}
		list := make([]int32, len(keys))
		for j := range list {
			list[j] = int32(j)
		}
		got := firstAtLeast(list, func(j int32) int64 { return keys[j] }, want)
		if exp := sort.Search(len(keys), func(j int) bool { return keys[j] >= want }); got != exp {
			t.Fatalf("keys %v, want %d: place %d, a binary search finds %d", keys, want, got, exp)
		}
	})
}
