package readbench_test

import (
	"os"
	"testing"
	"time"

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
