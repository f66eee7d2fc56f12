package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/memd/memd/internal/loadbench"
	"github.com/memd/memd/internal/readbench"
)

// benchLoad runs memd serve under load (writers over HTTP on several
// shards, recall and feed subscribers at once) and prints
// what it measured and every problem it found; problems fail the command.
func benchLoad(ctx context.Context, e *env, dir string, cfg loadbench.Config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, done, err := workDir(dir, "memd-bench-load-")
	if err != nil {
		return err
	}
	defer done()
	cfg.Binary, cfg.Dir = self, dir
	p := newProgress(e.stderr)
	cfg.Progress = func(done, total int) { p.set("writing facts over HTTP", done, total) }
	res, err := loadbench.Run(ctx, cfg)
	p.done()
	if err != nil {
		return err
	}
	pct := readbench.Percentile
	ms := func(d interface{ Microseconds() int64 }) string {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	fmt.Fprintf(e.stdout, "load: %d shards × %d writers × %d facts over HTTP, %d feed subscribers, %d recall loops\n", cfg.Shards, cfg.Writers, cfg.Facts, cfg.Subscribers, cfg.Recallers)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "facts acknowledged\t%d in %.1f s: %.0f facts/s\t\n", res.Facts, res.Took.Seconds(), float64(res.Facts)/res.Took.Seconds())
	fmt.Fprintf(tw, "remember, p50 / p99\t%s / %s\t\n", ms(pct(res.Write, 50)), ms(pct(res.Write, 99)))
	fmt.Fprintf(tw, "recall under load, p50 / p99 (%d calls)\t%s / %s\t\n", len(res.Recall), ms(pct(res.Recall, 50)), ms(pct(res.Recall, 99)))
	fmt.Fprintf(tw, "feed events received\t%d (subscribers cut off and resumed: %d)\t\n", res.FeedEvents, res.Resumed)
	fmt.Fprintf(tw, "feed delivery after the writer's answer, p50 / p99\t%s / %s\t\n", ms(pct(res.FeedLatency, 50)), ms(pct(res.FeedLatency, 99)))
	if len(res.PacedLatency) > 0 {
		fmt.Fprintf(tw, "feed delivery, %d subscribers of one shard, one writer at %d commits/s, p50 / p99\t%s / %s (target p99 ≤ 50 ms)\t\n",
			cfg.Subscribers, loadbench.PacedRate, ms(pct(res.PacedLatency, 50)), ms(pct(res.PacedLatency, 99)))
	}
	fmt.Fprintf(tw, "memd serve memory, peak / at the end\t%d MB / %d MB\t\n", res.PeakRSS>>20, res.FinalRSS>>20)
	tw.Flush()
	if len(res.Problems) > 0 {
		for _, p := range res.Problems {
			fmt.Fprintln(e.stderr, "problem:", p)
		}
		return fmt.Errorf("%d problems under load", len(res.Problems))
	}
	fmt.Fprintln(e.stdout, "no errors; every acknowledged fact is in its shard once; every subscriber received every commit in order")

	// One shard, written by 1 and by 8 HTTP clients alone: what one agent,
	// and a busy team, wait for a remember.
	for _, clients := range []int{1, 8} {
		one := loadbench.Config{Binary: cfg.Binary, Dir: filepath.Join(dir, fmt.Sprintf("clients-%d", clients)), Shards: 1, Writers: clients, Facts: 4000 / clients}
		p.set(fmt.Sprintf("%d HTTP client(s)", clients), 0, 1)
		r, err := loadbench.Run(ctx, one)
		p.done()
		if err != nil {
			return err
		}
		if len(r.Problems) > 0 {
			return fmt.Errorf("%d HTTP client(s): %s", clients, r.Problems[0])
		}
		fmt.Fprintf(e.stdout, "remember over HTTP, one shard, %d client(s): %.0f facts/s, p50 %s, p99 %s\n", clients,
			float64(r.Facts)/r.Took.Seconds(), ms(pct(r.Write, 50)), ms(pct(r.Write, 99)))
	}
	return nil
}
