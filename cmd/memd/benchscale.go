package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/readbench"
	"github.com/memd/memd/internal/scalebench"
)

// benchScale builds stores of each size in sizes, in one shard and over
// 100, and prints what a user meets at each beside its target.
func benchScale(ctx context.Context, e *env, dir, sizes string, dims int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if dims < 0 || dims > 8192 {
		return memd.Errorf(memd.EINVALID, "--vectors: %d is not a number of dimensions (0 for none, at most 8192)", dims)
	}
	var ns []int
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			return memd.Errorf(memd.EINVALID, "--sizes: %q is not a number of facts (100 or more)", f)
		}
		ns = append(ns, n)
	}
	dir, done, err := workDir(dir, "memd-bench-scale-")
	if err != nil {
		return err
	}
	defer done()
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	p := readbench.Percentile
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "facts\tshards\tfirst start (all indexed)\trestart · after writes\treindex (peak)\tRSS steady / peak (first start)\tB/fact\trecall p50 / p99 (first 1,000 · next 2,000; decoded by a Go client)\tp50 / p99, caches emptied before each\tremember first · p50 / p99\tdisk B/fact\trepacked / Markdown\tgit fsck\twrites/s: git CLI · memd over HTTP, 1 client · 8 clients\t")
	fmt.Fprintln(tw, "target at 1M\t\t≤ 2 s\t≤ 2 s\t≤ 15 s\t≤ 500 MB\t≤ 500\t≤ 1 / ≤ 5 ms (warm)\t\t\t\t≤ 2×\tclean\t≥ 5× · ≥ 20× git CLI\t")
	for _, n := range ns {
		shapes := []scalebench.Shape{{Facts: n, Shards: 1}, {Facts: n, Shards: 100}}
		if dims > 0 {
			shapes = append(shapes, scalebench.Shape{Facts: n, Shards: 100, Dims: dims})
		}
		for _, shape := range shapes {
			shards := shape.Shards
			label := strconv.Itoa(shards)
			if shape.Dims > 0 {
				label += fmt.Sprintf(" + %d-d vectors", shape.Dims)
			}
			data := filepath.Join(dir, fmt.Sprintf("%d-%d-%d", n, shards, shape.Dims))
			status(e.stderr, "%d facts in %s shard(s): writing the store…", n, label)
			if err := scalebench.Build(data, shape); err != nil {
				return err
			}
			// Writing the store left this process a large heap; it gives
			// it back so that the client measuring memd is a light one.
			debug.FreeOSMemory()
			row, err := scalebench.Measure(ctx, self, data, shape, func(stage string) {
				status(e.stderr, "%d facts in %s shard(s): %s…", n, label, stage)
			})
			if err != nil {
				return fmt.Errorf("%d facts in %s shards: %w", n, label, err)
			}
			os.RemoveAll(data)
			status(e.stderr, "")
			fsck := "clean"
			if len(row.Unsound) > 0 {
				fsck = fmt.Sprintf("%d faulty", len(row.Unsound))
				for _, u := range row.Unsound {
					fmt.Fprintln(e.stderr, "git fsck:", u)
				}
			}
			peak, w := max(row.Peak, row.FirstPeak), row.Writes
			fmt.Fprintf(tw, "%d\t%s\t%s (%s)\t%s · %s\t%s (%d MB)\t%d / %d (%d) MB\t%d / %d\t%s / %s · %s / %s (%s / %s)\t%s / %s\t%s · %s / %s\t%d\t%.2f×\t%s\t%.0f · %.0f (%.1f×) · %.0f (%.1f×)\t\n",
				n, label, sec(row.FirstStart), sec(row.FirstIndexed), sec(row.Restart), sec(row.RestartAfterWrites), sec(row.Reindex), row.ReindexPeak>>20,
				row.Steady>>20, row.Peak>>20, row.FirstPeak>>20, row.Steady/int64(n), peak/int64(n),
				ms(p(row.RecallCold, 50)), ms(p(row.RecallCold, 99)), ms(p(row.Recall, 50)), ms(p(row.Recall, 99)), ms(p(row.RecallDecoded, 50)), ms(p(row.RecallDecoded, 99)),
				ms(p(row.RecallEmptied, 50)), ms(p(row.RecallEmptied, 99)),
				ms(row.Remember[0]), ms(p(row.Remember, 50)), ms(p(row.Remember, 99)),
				row.Disk/int64(n), float64(row.Repacked)/float64(max(row.Markdown, 1)), fsck,
				w.GitCLI.PerSecond(), w.OneClient.PerSecond(), w.OneClient.PerSecond()/w.GitCLI.PerSecond(),
				w.EightClients.PerSecond(), w.EightClients.PerSecond()/w.GitCLI.PerSecond())
		}
	}
	return tw.Flush()
}
