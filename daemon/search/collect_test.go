package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
			slices.SortFunc(sorted, x.compareRanked)
			for _, n := range []int{1, 2, 17, len(all) - 1, len(all)} {
				got := slices.Clone(all)
				x.bestFirst(got, n)
				if got[n-1] != sorted[n-1] {
					t.Fatalf("%d scores, %s, n %d: the n-th is %+v, want %+v", distinct, order, n, got[n-1], sorted[n-1])
				}
				kept := slices.Clone(got[:n])
				slices.SortFunc(kept, x.compareRanked)
				if !slices.Equal(kept, sorted[:n]) {
					t.Fatalf("%d scores, %s, n %d: kept %v, want %v", distinct, order, n, kept, sorted[:n])
				}
			}
		}
	}
}

// best keeps what a full ranking of every candidate keeps, and collect
// the hits it keeps, whatever candidates they are told are the strongest:
// those only set the bar early. Scores tie often, across tiers of
// different weights, and the budget skips long texts.
func TestBest_KeepsWhatAFullRankingKeeps(t *testing.T) {
	x := New()
	var docs []Doc
	tiers := []memd.Tier{memd.TierLog, memd.TierProfile, memd.TierNote, memd.TierEpisode}
	for n := range 600 {
		shard := memd.ProjectShard([]string{"alpha", "bravo", "charlie"}[n%3])
		d := novemberDoc(shard, fmt.Sprintf("Paid the invoice of vendor %d%s", n, strings.Repeat(" and more", n%7*5)))
		d.Tier = tiers[n/5%len(tiers)]
		if d.Tier == memd.TierProfile {
			d.Date, d.File = memd.Date{}, "profile.md"
		} else {
			d.Date = memd.DateOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n%40))
		}
		d.Offset = n * 40
		docs = append(docs, d)
	}
	x.PutAll(docs)
	rng := rand.New(rand.NewPCG(7, 11))
	// One score arrays for every round, as searches share them: what a
	// round leaves marked would show in the next.
	sc := new(scores)
	sc.size(int(x.entries.len()))
	for round := range 300 {
		sc.clear()
		distinct := []int{1, 4, 1000}[round%3]
		var entries []int32
		for i := range int32(len(docs)) {
			if rng.IntN(3) > 0 {
				v := float64(1 + rng.IntN(distinct))
				if round%2 == 1 {
					// Scores apart by far less than a tie: sums of the
					// same parts in another order.
					v *= 1 + float64(rng.IntN(100))*1e-13
				}
				sc.add(i, v)
				entries = append(entries, i)
			}
		}
		if round%4 == 3 {
			// Narrowed: a third of the candidates still contend.
			sc.above = make([]uint64, (len(sc.slot)+63)/64)
			for k, i := range sc.touched {
				if rng.IntN(3) == 0 {
					sc.above[i>>6] |= 1 << (i & 63)
					sc.live = append(sc.live, int32(k))
				}
			}
			sc.sorted, sc.narrowed = len(sc.live), true
		}
		var all []ranked
		for k, i := range sc.touched {
			if sc.contends(i) {
				all = append(all, ranked{i: i, v: sc.v[k] * x.factors[x.tier[i]], days: int(x.days[i])})
			}
		}
		slices.SortFunc(all, x.compareRanked)
		// Told the strongest: none, a few, the best by raw score, any,
		// or some twice with entries that are no candidates.
		var top []int32
		switch round / 3 % 5 {
		case 1:
			top = entries[:min(5, len(entries))]
		case 2:
			top = x.strongest(sc, 256)
		case 3:
			for _, i := range entries {
				if rng.IntN(4) == 0 {
					top = append(top, i)
				}
			}
		case 4:
			top = append(x.strongest(sc, 64), entries[:min(40, len(entries))]...)
			top = append(top, top[:len(top)/2]...)
			for i := range int32(len(docs)) {
				if sc.place(i) < 0 && len(top) < 200 {
					top = append(top, i)
				}
			}
		}
		for _, limit := range []int{1, 36, 112, 300, len(all) + 1} {
			got, want := x.best(sc, top, limit), all[:min(limit, len(all))]
			slices.SortFunc(got, x.compareRanked)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d (%d told strongest), limit %d: kept %d, want %d; first difference at %d",
					round, len(top), limit, len(got), len(want), firstDifference(got, want))
			}
		}
		q := Query{K: []int{1, 20, 50}[round%3], Budget: []int{0, 4000, 300}[round/12%3]}
		var want []Hit
		deep := all[:min(len(all), collected(q.K))] // as deep as collect reads for the budget
		for _, j := range fitting(len(deep), q.K, q.Budget, func(j int) int { return len(x.textOf(deep[j].i)) }) {
			want = append(want, Hit{Doc: x.docOf(deep[j].i), Score: deep[j].v})
		}
		if got := x.collect(sc, q, top); !slices.EqualFunc(got, want, func(a, b Hit) bool {
			return a.Shard == b.Shard && a.ID == b.ID && a.Score == b.Score
		}) {
			t.Fatalf("round %d (k %d, budget %d, %d told strongest): hits %d, want %d", round, q.K, q.Budget, len(top), len(got), len(want))
		}
	}
}

func firstDifference(a, b []ranked) int {
	for n := range min(len(a), len(b)) {
		if a[n] != b[n] {
			return n
		}
	}
	return min(len(a), len(b))
}
