package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/loadbench"
	"github.com/memd/memd/internal/writebench"
)

// runBench runs memd bench; it is long for its flags, declared one per
// line, and the choice between the four benches.
func runBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench", "[flags]", "Measure memd's write path (one commit per fact) with 1 and 8 writers against the git CLI doing the same commits (git add + git commit per fact), in the same run, on a small shard and on a shard holding --large facts. Prints facts/s and the ratios to the git CLI.")
	facts := fs.Int("facts", 4000, "facts memd writes in each run")
	gitFacts := fs.Int("git-facts", 200, "facts the git CLI writes in each run (it is slow)")
	large := fs.Int("large", 100000, "facts in the large shard (0 skips it)")
	noSync := fs.Bool("no-fsync", false, "measure memd without fsync only")
	repackAt := fs.Int("repack-at", -1, "background repack threshold in packs (-1: off, so one run does not disturb the next; 0: memd's default)")
	dir := fs.String("dir", "", "work directory (default: a temporary one, removed after)")
	read := fs.Bool("read", false, "measure the read path at --large facts instead: rebuild, catch-up, recall, context, daemon memory")
	load := fs.Bool("load", false, "run memd serve under load instead: --shards × --writers × --writer-facts facts over HTTP while recall and --subscribers feed subscribers run; checks nothing is lost or duplicated")
	loadShards := fs.Int("shards", 8, "with --load: shards written")
	loadWriters := fs.Int("writers", 8, "with --load: writers per shard")
	writerFacts := fs.Int("writer-facts", 10000, "with --load: facts each writer writes")
	subscribers := fs.Int("subscribers", 100, "with --load: feed subscribers")
	scale := fs.Bool("scale", false, "measure stores of --sizes facts instead, in one shard and over 100, each written by another process: serve's first start and restart, memd reindex, resident memory, recall and remember over HTTP, disk before and after git repack")
	scaleSizes := fs.String("sizes", "1000,10000,100000", "with --scale: the store sizes, in facts, comma-separated (each store of 1000000 is written, served and measured for several minutes)")
	scaleVectors := fs.Int("vectors", 0, "with --scale: also measure each store over 100 shards with a vector of this many dimensions for every fact (recall by meaning: the vectors written beforehand, queries embedded by a local endpoint); 0: none")
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	if *read {
		return benchRead(ctx, e, *dir, *large)
	}
	if *scale {
		return benchScale(ctx, e, *dir, *scaleSizes, *scaleVectors)
	}
	if *load {
		return benchLoad(ctx, e, *dir, loadbench.Config{Shards: *loadShards, Writers: *loadWriters, Facts: *writerFacts, Subscribers: *subscribers, Recallers: 2, Paced: 400})
	}
	work, done, err := workDir(*dir, "memd-bench-")
	if err != nil {
		return err
	}
	defer done()
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Two stores: one makes each commit durable with fsync before answering,
	// the other only survives a crash of memd, as git's defaults do (git
	// fsyncs neither loose objects, nor refs, nor the index).
	synced, err := gitstore.Open(filepath.Join(work, "synced"), gitstore.Options{RepackAt: *repackAt, Logger: logger})
	if err != nil {
		return err
	}
	defer synced.Close()
	unsynced, err := gitstore.Open(filepath.Join(work, "unsynced"), gitstore.Options{NoSync: true, RepackAt: *repackAt, Logger: logger})
	if err != nil {
		return err
	}
	defer unsynced.Close()
	stores := []struct {
		store *gitstore.Store
		name  string
	}{{synced, "fsync"}, {unsynced, "no fsync"}}
	if *noSync {
		stores = stores[1:]
	}
	today := time.Now()
	sizes := []int{100}
	if *large > 0 {
		sizes = append(sizes, *large)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "shard\tpath\tfacts\tfacts/s\tvs git CLI\tfirst write\t\n")
	for _, size := range sizes {
		label := fmt.Sprintf("%d facts", size)
		status(e.stderr, "preparing a shard of %s…", label)
		base := memd.ProjectShard(fmt.Sprintf("bench-%d", size))
		baseShard, err := writebench.Prefill(synced, base, size, today)
		if err != nil {
			return err
		}
		// The git CLI appends to the file memd writes today's facts to.
		todays, err := baseShard.FileFor(memd.TierLog, memd.DateOf(today))
		if err != nil {
			return err
		}
		gitDir := filepath.Join(work, fmt.Sprintf("git-%d", size))
		if err := writebench.CopyRepo(synced.ShardDir(base), gitDir); err != nil {
			return err
		}
		// Rows are measured in interleaved rounds, git CLI then each memd
		// row, so that every ratio compares runs of the same minutes: a
		// busy machine slows all rows alike rather than one.
		type row struct {
			name    string // fsync or not
			writers int
			sh      *gitstore.Shard
			first   time.Duration // the first write, reading the shard's files
			sum     writebench.Result
		}
		var rows []*row
		for _, st := range stores {
			for _, writers := range []int{1, 8} {
				id := memd.ProjectShard(fmt.Sprintf("bench-%d-%d", size, writers))
				if err := writebench.CopyRepo(synced.ShardDir(base), st.store.ShardDir(id)); err != nil {
					return err
				}
				sh, err := st.store.Shard(id)
				if err != nil {
					return err
				}
				// The first write reads the shard's files, as the first
				// after memd starts or after the shard sat idle does; it
				// is timed on its own so the rounds measure writes alone.
				status(e.stderr, "%s: memd (%s): the first write to a shard just opened…", label, st.name)
				first, err := writebench.Memd(sh, 1, 1, "first", today)
				if err != nil {
					return err
				}
				rows = append(rows, &row{name: st.name, writers: writers, sh: sh, first: first.Elapsed})
			}
		}
		var g writebench.Result
		for round := 0; round < writebench.Rounds; round++ {
			series := fmt.Sprintf("bench-r%d", round)
			status(e.stderr, "%s: round %d of %d: git CLI writing %d facts…", label, round+1, writebench.Rounds, writebench.Share(*gitFacts, round))
			r, err := writebench.GitCLI(gitDir, todays, writebench.Share(*gitFacts, round), series, today)
			if err != nil {
				return err
			}
			g.Add(r)
			for _, rw := range rows {
				status(e.stderr, "%s: round %d of %d: memd (%s) writing %d facts with %d writer(s)…", label, round+1, writebench.Rounds, rw.name, writebench.Share(*facts, round), rw.writers)
				r, err := writebench.Memd(rw.sh, rw.writers, writebench.Share(*facts, round), series, today)
				if err != nil {
					return err
				}
				rw.sum.Add(r)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.1f×\t\t\n", label, g.Name, g.Facts, g.PerSecond(), 1.0)
		for _, rw := range rows {
			fmt.Fprintf(tw, "%s\t%s, %s\t%d\t%.0f\t%.1f×\t%s\t\n", label, rw.sum.Name, rw.name, rw.sum.Facts, rw.sum.PerSecond(), rw.sum.PerSecond()/g.PerSecond(), ms(rw.first))
		}
	}
	status(e.stderr, "")
	tw.Flush()
	fmt.Fprintln(e.stdout, "\nOne commit per fact in every row. \"no fsync\" is the git CLI's own durability: a commit")
	fmt.Fprintln(e.stdout, "survives a crash of the program, not of the machine; \"fsync\" survives both.")
	fmt.Fprintf(e.stdout, "Each shard's rows were measured in %d interleaved rounds (git CLI, then each memd row).\n", writebench.Rounds)
	fmt.Fprintln(e.stdout, "\"first write\" is one fact into the shard just opened, before the rounds: it reads the")
	fmt.Fprintln(e.stdout, "shard's files, as the first write after memd starts or after the shard sat idle a minute.")
	fmt.Fprintln(e.stdout, "targets: 8 writers ≥ 2,000 facts/s and ≥ 20× git CLI; 1 writer ≥ 5× git CLI; at 100,000 facts ≥ 10× git CLI")
	return nil
}

// ms prints a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// workDir returns dir, or when it is empty a new temporary directory, and
// what removes the temporary one once the bench is done.
func workDir(dir, prefix string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// status rewrites one status line on a terminal.
func status(w io.Writer, format string, args ...any) {
	if p := newProgress(w); p.tty {
		fmt.Fprintf(w, "\r\033[K"+format, args...)
	}
}
