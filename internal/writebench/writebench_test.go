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
				sh, today := prefilled(b, gitstore.Options{NoSync: os.Getenv("MEMD_BENCH_NOSYNC") != "", RepackAt: repackAt()}, size)
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

// BenchmarkFirstRememberAfterIdle measures the first remember into a large
// shard that sat idle and gave up what it held: it reads the shard's files
// to learn where its facts are. B/op is what that reading allocates.
func BenchmarkFirstRememberAfterIdle(b *testing.B) {
	sh, today := prefilled(b, gitstore.Options{NoSync: true, RepackAt: -1}, 100000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for sh.Parsed() { // as an idle shard's is given up
			sh.Release()
		}
		b.StartTimer()
		fact := memd.Fact{Text: writebench.Text("idle", i), Date: memd.DateOf(today), Tier: memd.TierLog}
		if _, err := sh.Apply(gitstore.Change{Author: gitstore.Committer(), Message: "remember\n", Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: fact}}}); err != nil {
			b.Fatal(err)
		}
	}
}

// prefilled opens a store with opts in a directory of the benchmark's,
// closed after it, holding project/bench with size facts up to today.
func prefilled(b *testing.B, opts gitstore.Options, size int) (*gitstore.Shard, time.Time) {
	b.Helper()
	s, err := gitstore.Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	today := time.Now()
	sh, err := writebench.Prefill(s, memd.ProjectShard("bench"), size, today)
	if err != nil {
		b.Fatal(err)
	}
	return sh, today
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
			sh, today := prefilled(b, gitstore.Options{}, size)
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
