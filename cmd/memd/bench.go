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
	"github.com/memd/memd/internal/writebench"
)

func runBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench", "[flags]", "Measure memd's write path (one commit per fact) with 1 and 8 writers against the git CLI doing the same commits (git add + git commit per fact), in the same run, on a small shard and on a shard holding --large facts. Prints facts/s and the ratios to the git CLI.")
	facts := fs.Int("facts", 4000, "facts memd writes in each run")
	gitFacts := fs.Int("git-facts", 100, "facts the git CLI writes in each run (it is slow)")
	large := fs.Int("large", 100000, "facts in the large shard (0 skips it)")
	noSync := fs.Bool("no-fsync", false, "measure memd without fsync")
	repackAt := fs.Int("repack-at", 0, "background repack threshold in packs (0: memd's default, -1: off)")
	dir := fs.String("dir", "", "work directory (default: a temporary one, removed after)")
	read := fs.Bool("read", false, "measure the read path at --large facts instead: rebuild, catch-up, recall, context, daemon memory")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(fs, pos, 0, "no arguments"); err != nil {
		return err
	}
	if *read {
		return benchRead(ctx, e, *dir, *large)
	}
	work := *dir
	if work == "" {
		if work, err = os.MkdirTemp("", "memd-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	store, err := gitstore.Open(filepath.Join(work, "data"), gitstore.Options{
		NoSync:   *noSync,
		RepackAt: *repackAt,
		Logger:   slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer store.Close()
	today := time.Now()
	sizes := []int{100}
	if *large > 0 {
		sizes = append(sizes, *large)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "shard\tpath\tfacts\tfacts/s\tvs git CLI\t\n")
	for _, size := range sizes {
		label := fmt.Sprintf("%d facts", size)
		status(e.stderr, "preparing a shard of %s…", label)
		base := memd.ProjectShard(fmt.Sprintf("bench-%d", size))
		if _, err := writebench.Prefill(store, base, size, today); err != nil {
			return err
		}
		copies := map[string]memd.ShardID{}
		for _, name := range []string{"one", "eight"} {
			id := memd.ProjectShard(fmt.Sprintf("bench-%d-%s", size, name))
			if err := writebench.CopyRepo(store.ShardDir(base), store.ShardDir(id)); err != nil {
				return err
			}
			copies[name] = id
		}
		gitDir := filepath.Join(work, fmt.Sprintf("git-%d", size))
		if err := writebench.CopyRepo(store.ShardDir(base), gitDir); err != nil {
			return err
		}

		status(e.stderr, "%s: git CLI writing %d facts…", label, *gitFacts)
		g, err := writebench.GitCLI(gitDir, *gitFacts, "bench", today)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.1f×\t\n", label, g.Name, g.Facts, g.PerSecond(), 1.0)
		for _, run := range []struct {
			copy    string
			writers int
		}{{"one", 1}, {"eight", 8}} {
			sh, err := store.Shard(copies[run.copy])
			if err != nil {
				return err
			}
			status(e.stderr, "%s: memd writing %d facts with %d writer(s)…", label, *facts, run.writers)
			r, err := writebench.Memd(sh, run.writers, *facts, "bench", today)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.1f×\t\n", label, r.Name, r.Facts, r.PerSecond(), r.PerSecond()/g.PerSecond())
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	status(e.stderr, "")
	tw.Flush()
	fsync := "with fsync"
	if *noSync {
		fsync = "without fsync"
	}
	fmt.Fprintf(e.stdout, "\nmemd %s; one commit per fact in every row.\n", fsync)
	fmt.Fprintln(e.stdout, "targets (DESIGN §11): 8 writers ≥ 2,000 facts/s and ≥ 20× git CLI; 1 writer ≥ 5× git CLI; at 100,000 facts ≥ 10× git CLI")
	return nil
}

// status rewrites one status line on a terminal.
func status(w io.Writer, format string, args ...any) {
	if p := newProgress(w); p.tty {
		fmt.Fprintf(w, "\r\033[K"+format, args...)
	}
}
