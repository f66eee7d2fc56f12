package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/gitstore"
)

func runReindex(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reindex", "[flags]", "Rebuild the index from every shard's HEAD and attribute each fact to the commit that introduced it. Works on the data directory directly; stop the daemon first. The index is a cache: this never loses memory.")
	data := fs.String("data", dataDir(e), "data directory (env MEMD_DATA)")
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := gitstore.Open(*data, gitstore.Options{Logger: logger, RepackAt: -1})
	if errors.Is(err, gitstore.ErrLocked) {
		return fmt.Errorf("%w: stop `memd serve` first, reindex works on the files directly", err)
	}
	if err != nil {
		return err
	}
	defer store.Close()
	idx, err := index.Open(filepath.Join(*data, daemon.IndexFile), store, logger)
	if err != nil {
		return err
	}
	defer idx.Close()
	start := time.Now()
	bar := newProgress(e.stderr)
	err = idx.Rebuild(ctx, bar.set)
	bar.done()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "indexed %d facts in %s\n", idx.Engine().Len(), time.Since(start).Round(time.Millisecond))
	return nil
}
