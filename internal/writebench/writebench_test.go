package writebench_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/writebench"
)

// BenchmarkRemember measures memd's write path: b.N facts, one commit each.
func BenchmarkRemember(b *testing.B) {
	for _, size := range []int{100, 100000} {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("shard=%d/writers=%d", size, writers), func(b *testing.B) {
				s, err := gitstore.Open(b.TempDir(), gitstore.Options{NoSync: os.Getenv("MEMD_BENCH_NOSYNC") != "", RepackAt: repackAt()})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				today := time.Now()
				sh, err := writebench.Prefill(s, memd.ProjectShard("bench"), size, today)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				r, err := writebench.Memd(sh, writers, b.N, "bench", today)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.PerSecond(), "facts/s")
			})
		}
	}
}

func repackAt() int {
	if os.Getenv("MEMD_BENCH_NOREPACK") != "" {
		return -1
	}
	return 0
}

// BenchmarkGitCLI measures the git CLI making the same commits.
func BenchmarkGitCLI(b *testing.B) {
	for _, size := range []int{100, 100000} {
		b.Run(fmt.Sprintf("shard=%d", size), func(b *testing.B) {
			s, err := gitstore.Open(b.TempDir(), gitstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			today := time.Now()
			sh, err := writebench.Prefill(s, memd.ProjectShard("bench"), size, today)
			if err != nil {
				b.Fatal(err)
			}
			path, err := sh.FileFor(memd.TierLog, memd.DateOf(today))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			r, err := writebench.GitCLI(sh.Dir(), path, b.N, "bench", today)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.PerSecond(), "facts/s")
		})
	}
}
