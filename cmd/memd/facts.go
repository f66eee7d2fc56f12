package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/memd/memd"
)

func runFacts(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "facts", "[flags]", "List a shard's facts, now or as they were at a commit or date.")
	var cf clientFlags
	cf.register(fs, e)
	shard := fs.String("shard", "", "shard (default: the calling agent's own)")
	tier := fs.String("tier", "", "only this tier")
	from := fs.String("from", "", "only facts dated on or after YYYY-MM-DD")
	to := fs.String("to", "", "only facts dated on or before YYYY-MM-DD")
	at := fs.String("at", "", "as of a commit or a date (YYYY-MM-DD)")
	kind := fs.String("chat-kind", "", "chat kind to declare (user memory needs direct)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(fs, pos, 0, "no arguments"); err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	c.ChatKind = memd.ChatKind(*kind)
	q := memd.FactsQuery{Tier: memd.Tier(*tier), At: *at}
	if q.Shard, err = shardOrOwn(ctx, c, *shard); err != nil {
		return err
	}
	for _, d := range []struct {
		v   string
		out *memd.Date
	}{{*from, &q.From}, {*to, &q.To}} {
		if d.v != "" {
			if *d.out, err = memd.ParseDate(d.v); err != nil {
				return err
			}
		}
	}
	list, err := c.Facts(ctx, q)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, list)
	}
	if len(list.Facts) == 0 {
		fmt.Fprintf(e.stdout, "%s holds no facts", list.Shard)
		if *at != "" {
			fmt.Fprintf(e.stdout, " at %s", *at)
		}
		fmt.Fprintln(e.stdout)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, f := range list.Facts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.ID, f.Date, f.Tier, f.Text)
	}
	return tw.Flush()
}
