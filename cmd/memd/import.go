package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/importer"
	"github.com/memd/memd/gitstore"
)

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "import", "[flags] DIR", "Bring an OpenTeam-style memory folder into memd: agents/<bot>/memory becomes agent/<bot>, user-memory/by-agent/<bot> becomes user/<--user>, projects/<slug>/memory/by-agent/<bot> becomes project/<slug>. One commit per fact, with the fact's own date, Memory-Op and Learned-By import, and the file it came from as Source-Message; where bots hold the same fact, the newest date wins. Facts a shard already holds are left alone, so importing twice changes nothing. Works on the data directory directly; stop the daemon first.")
	data := fs.String("data", dataDir(e), "data directory (env MEMD_DATA)")
	user := fs.String("user", "", "the person user-memory/ is about (required when the folder has user memory)")
	pos, err := positional(fs, args, 1, "the folder to import")
	if err != nil {
		return err
	}
	plan, err := importer.Read(pos[0], *user)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := gitstore.Open(*data, gitstore.Options{Logger: logger})
	if errors.Is(err, gitstore.ErrLocked) {
		return fmt.Errorf("%w: stop `memd serve` first, import works on the files directly", err)
	}
	if err != nil {
		return err
	}
	defer store.Close()
	bar := newProgress(e.stderr)
	err = plan.Apply(store, func(done, total int) { bar.set("importing facts", done, total) })
	bar.done()
	rep := plan.Report
	for _, s := range rep.Skipped {
		fmt.Fprintln(e.stderr, "skipped:", s)
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(e.stderr, "problem:", p)
	}
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "shard\tfacts found\timported\talready there\t\n")
	ids := slices.Collect(maps.Keys(rep.Shards))
	slices.SortFunc(ids, func(a, b memd.ShardID) int { return strings.Compare(a.String(), b.String()) })
	for _, id := range ids {
		r := rep.Shards[id]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", id, r.Found, r.Imported, r.Present)
	}
	tw.Flush()
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(e.stdout, "%d lines skipped (listed above)\n", len(rep.Skipped))
	}
	return nil
}
