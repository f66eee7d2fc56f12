package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/memd/memd"
)

func runFacts(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "facts", "[flags]", "List a shard's facts, now or as they were at a commit or date.")
	var sf shardFlags
	sf.register(fs, e, false)
	tier := fs.String("tier", "", "only this tier")
	from := fs.String("from", "", "only facts dated on or after YYYY-MM-DD")
	to := fs.String("to", "", "only facts dated on or before YYYY-MM-DD")
	at := fs.String("at", "", "as of a commit or a date (YYYY-MM-DD)")
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	c, sid, err := sf.client(ctx)
	if err != nil {
		return err
	}
	q := memd.FactsQuery{Shard: sid, Tier: memd.Tier(*tier), At: *at}
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
	if sf.cf.json {
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
