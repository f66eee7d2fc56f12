package readbench_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"

	"github.com/memd/memd/internal/readbench"
)

func setup(b *testing.B) *readbench.Setup {
	b.Helper()
	s, err := readbench.Build(b.TempDir(), 100000)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func report(b *testing.B, ds []time.Duration) {
	b.ReportMetric(float64(readbench.Percentile(ds, 50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(readbench.Percentile(ds, 99).Microseconds()), "p99-µs")
}

// BenchmarkRebuild100k reads 100,000 facts from HEAD into a fresh index.
func BenchmarkRebuild100k(b *testing.B) {
	s := setup(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Index.Reload(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCatchUp100k catches the index up after one git CLI commit.
func BenchmarkCatchUp100k(b *testing.B) {
	s := setup(b)
	b.ResetTimer()
	ds, err := s.CatchUp(b.N)
	if err != nil {
		b.Fatal(err)
	}
	report(b, ds)
}

// BenchmarkRecall100k runs recall over 100,000 facts.
func BenchmarkRecall100k(b *testing.B) {
	s := setup(b)
	s.Recall(20, false) // catch up and warm
	b.ResetTimer()
	ds, err := s.Recall(b.N, false)
	if err != nil {
		b.Fatal(err)
	}
	report(b, ds)
}

// BenchmarkContext100k builds the memory section over 100,000 facts.
func BenchmarkContext100k(b *testing.B) {
	s := setup(b)
	s.Context(5)
	b.ResetTimer()
	ds, err := s.Context(b.N)
	if err != nil {
		b.Fatal(err)
	}
	report(b, ds)
}

// BenchmarkMemory100k reports the resident memory with 100,000 facts
// indexed and searched.
func BenchmarkMemory100k(b *testing.B) {
	s := setup(b)
	for i := 0; i < b.N; i++ {
		if _, err := s.Recall(50, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ownRSS(b))/(1<<20), "RSS-MiB")
}

// ownRSS is the resident memory of this process, in bytes.
func ownRSS(b *testing.B) int64 {
	rss, err := readbench.ProcessRSS(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	return rss
}

// BenchmarkSearch_OneShardOfAMillion times the search behind recall, in
// process, over one shard of 1,000,000 facts (the benchmark's memory, 16
// months of it, a file a day), for each of Queries in turn at recall's default k: the
// shard a team's busiest project reaches in a year. It reports the p50
// and p99 over the queries, with and without the thesaurus's relatives,
// and over Messages (a person's whole message as the query).
// Slow to set up (about 20 s); run it alone:
//
//	go test -run X -bench OneShardOfAMillion -benchtime 400x ./internal/readbench
func BenchmarkSearch_OneShardOfAMillion(b *testing.B) {
	shard := memd.ProjectShard("busy")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	docs := busyShard(shard, now, 1000000)
	x := search.New()
	x.KeepWords() // as the live index does
	x.PutAll(docs)
	docs = nil
	// Read at a commit, the shard's words are built in the background, as
	// the live index builds them once it has read a shard; searches are
	// timed once they are (bench --scale times the first ones after a
	// start).
	x.SetHead(shard, "bench")
	x.WaitWords()
	for _, c := range []struct {
		name    string
		queries []string
		literal bool
	}{{"with-relatives", readbench.Queries, false}, {"literal", readbench.Queries, true}, {"messages", readbench.Messages, false}} {
		b.Run(c.name, func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				q := c.queries[i%len(c.queries)]
				start := time.Now()
				x.Search(search.Query{Text: q, Shards: []memd.ShardID{shard}, K: 20, Now: now, Literal: c.literal})
				took = append(took, time.Since(start))
			}
			report(b, took)
		})
	}
}

// BenchmarkApply_OneFactIntoAMillion times what each remember costs the
// index of a shard of 1,000,000 facts: its catch-up puts the new fact,
// of today, in (here taken out again, to keep the size). The index's
// lock is held meanwhile, and recall waits on it.
//
//	go test -run X -bench Apply_OneFact -benchtime 2000x ./internal/readbench
func BenchmarkApply_OneFactIntoAMillion(b *testing.B) {
	shard := memd.ProjectShard("busy")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	x := search.New()
	x.PutAll(busyShard(shard, now, 1000000))
	b.ResetTimer()
	for i := range b.N {
		text := fmt.Sprintf("A fact of today, number %d, for the benchmark", i)
		d := search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: memd.DateOf(now), Tier: memd.TierLog, Text: text, File: "log/2026-11/30.md"}, Offset: 1<<24 + i}
		x.Apply(search.Update{Shard: shard, Put: []search.Doc{d}})
		x.Apply(search.Update{Shard: shard, Delete: []string{d.ID}})
	}
}

// BenchmarkReplaceShard100k times dropping an indexed shard of 100,000
// facts and putting it back, as a catch-up that cannot follow a shard's
// history (a rewritten main) reads it again from HEAD: the drop used to
// take each fact out of its lists one by one, quadratic in the shard.
func BenchmarkReplaceShard100k(b *testing.B) {
	shard := memd.ProjectShard("busy")
	docs := busyShard(shard, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), 100000)
	x := search.New()
	x.PutAll(docs)
	b.ResetTimer()
	for range b.N {
		x.Apply(search.Update{Shard: shard, Replace: true, Put: docs})
	}
}

// busyShard returns n facts of a shard over 16 months before now, a day's
// facts in a file of the day one after another, as a busy shard's are:
// each fact has neighbours to lend context.
func busyShard(shard memd.ShardID, now time.Time, n int) []search.Doc {
	docs := make([]search.Doc, 0, n)
	perFile := map[string]int{}
	for i := range n {
		text := readbench.FactText(i)
		d := memd.DateOf(now.AddDate(0, 0, -(i*7919)%480))
		file := fmt.Sprintf("log/%s/%02d.md", d.Month(), d.Time().Day())
		docs = append(docs, search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: file}, Offset: perFile[file]})
		perFile[file] += len(text) + 3
	}
	return docs
}
