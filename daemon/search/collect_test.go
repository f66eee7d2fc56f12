package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memd/memd"
)

// bestFirst keeps the same best candidates a full sort would, and puts the
// n-th best at n-1, whatever order they come in: rising days, falling
// days, shuffled, with scores that tie often or never.
func TestBestFirst_KeepsWhatASortKeeps(t *testing.T) {
	x := New()
	var docs []Doc
	for n := range 300 {
		shard := memd.ProjectShard([]string{"alpha", "bravo"}[n%2])
		d := novemberDoc(shard, fmt.Sprintf("Paid the invoice of vendor %d", n))
		d.Date = memd.DateOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n/3))
		d.Offset = n * 40
		docs = append(docs, d)
	}
	x.PutAll(docs)
	rng := rand.New(rand.NewPCG(3, 5))
	byBetter := func(a, b ranked) int {
		switch {
		case x.better(a, b):
			return -1
		case x.better(b, a):
			return 1
		}
		return 0
	}
	for _, distinct := range []int{1, 3, 1000} {
		for _, order := range []string{"rising days", "falling days", "shuffled"} {
			all := make([]ranked, len(docs))
			for i := range all {
				all[i] = ranked{i: int32(i), v: float64(1 + rng.IntN(distinct)), days: int(x.days[i])}
			}
			switch order {
			case "falling days":
				slices.Reverse(all)
			case "shuffled":
				rng.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
			}
			sorted := slices.Clone(all)
			slices.SortFunc(sorted, byBetter)
			for _, n := range []int{1, 2, 17, len(all) - 1, len(all)} {
				got := slices.Clone(all)
				x.bestFirst(got, n)
				if got[n-1] != sorted[n-1] {
					t.Fatalf("%d scores, %s, n %d: the n-th is %+v, want %+v", distinct, order, n, got[n-1], sorted[n-1])
				}
				kept := slices.Clone(got[:n])
				slices.SortFunc(kept, byBetter)
				if !slices.Equal(kept, sorted[:n]) {
					t.Fatalf("%d scores, %s, n %d: kept %v, want %v", distinct, order, n, kept, sorted[:n])
				}
			}
		}
	}
}
