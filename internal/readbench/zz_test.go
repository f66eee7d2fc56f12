package readbench_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/internal/readbench"
)

func TestZZPerQuery(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	shard := memd.ProjectShard("busy")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	docs := busyShard(shard, now, 1000000)
	x := search.New()
	x.KeepWords()
	x.PutAll(docs)
	docs = nil
	x.SetHead(shard, "bench")
	x.WaitWords()
	qs := readbench.Queries
	if q := os.Getenv("ZZQ"); q != "" {
		qs = strings.Split(q, ",")
	}
	rounds := 30
	if os.Getenv("ZZR") != "" {
		rounds = 150
	}
	per := map[string][]time.Duration{}
	for r := 0; r < rounds; r++ {
		for _, q := range qs {
			start := time.Now()
			res := x.Search(search.Query{Text: q, Shards: []memd.ShardID{shard}, K: 20, Now: now})
			per[q] = append(per[q], time.Since(start))
			if r == 0 && os.Getenv("ZZHITS") != "" {
				for _, h := range res.Hits {
					fmt.Printf("%s\t%s\t%.6f\n", q, h.ID, h.Score)
				}
			}
		}
	}
	for _, q := range qs {
		d := per[q]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Printf("%-36q %6d µs\n", q, d[len(d)/2].Microseconds())
	}
}
