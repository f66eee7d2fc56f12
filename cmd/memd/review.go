package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/memd/memd"
)

func runReview(ctx context.Context, e *env, args []string) error {
	verdict := func(v string) func(context.Context, *env, []string) error {
		return func(ctx context.Context, e *env, args []string) error { return runReviewVerdict(ctx, e, v, args) }
	}
	return subcommand(ctx, e, "review", "Usage: memd review list [--shard S] | memd review accept ID...|--all | memd review reject ID...|--all  (each with -h for flags)",
		map[string]func(context.Context, *env, []string) error{"list": runReviewList, memd.ReviewAccept: verdict(memd.ReviewAccept), memd.ReviewReject: verdict(memd.ReviewReject)}, args)
}

func runReviewList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "review list", "[flags]", "List the proposals waiting for review: what models learned for agents in review mode, on each shard's branch proposed.")
	var cf clientFlags
	cf.register(fs, e)
	shard := fs.String("shard", "", "only this shard's proposals (kind/name)")
	_, err := positional(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	var id memd.ShardID
	if *shard != "" {
		if id, err = memd.ParseShardID(*shard); err != nil {
			return err
		}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	list, err := c.Proposals(ctx, id)
	if err != nil {
		return err
	}
	return printList(e, cf.json, list, listing[memd.Proposal]{
		key: "proposals", empty: "no proposals wait for review", header: "ID\tSHARD\tBY\tCHANGE\tSOURCE",
		row: func(p memd.Proposal) string {
			var changes []string
			for _, ch := range p.Commit.Changes {
				changes = append(changes, ch.Op+" "+ch.Fact.Text)
			}
			pv := p.Commit.Provenance
			source := strings.Join(pv.SourceMessages, ",")
			if pv.LearnedBy == memd.LearnedSynthesis {
				source = "evidence " + strings.Join(pv.Evidence, ",")
			}
			return fmt.Sprintf("%s\t%s\t%s (%s)\t%s\t%s", p.ID, p.Commit.Shard, p.Commit.Author.Name, pv.LearnedBy, clip(strings.Join(changes, " / "), 100), orDash(source))
		},
	})
}

func runReviewVerdict(ctx context.Context, e *env, verdict string, args []string) error {
	fs := newFlags(e, "review "+verdict, "[flags] ID... | --all", map[string]string{
		memd.ReviewAccept: "Accept proposals into main: each becomes one commit there with its trailers and Reviewed-By.",
		memd.ReviewReject: "Reject proposals: each is dropped from the branch proposed and recorded under refs/memd/rejected; it counts in memd stats as a revert does.",
	}[verdict])
	var cf clientFlags
	cf.register(fs, e)
	all := fs.Bool("all", false, "every proposal waiting (in --shard, or everywhere)")
	shard := fs.String("shard", "", "only proposals of this shard (kind/name)")
	reviewer := fs.String("reviewer", "", "the name in the Reviewed-By trailer (default: the caller, admin)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *all == (len(pos) > 0) {
		return fmt.Errorf("memd review %s: name proposal IDs (memd review list) or give --all", verdict)
	}
	req := memd.ReviewRequest{Verdict: verdict, IDs: pos, All: *all, Reviewer: *reviewer}
	if *shard != "" {
		if req.Shard, err = memd.ParseShardID(*shard); err != nil {
			return err
		}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	res, err := c.Review(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, res)
	}
	if len(res.Reviewed) == 0 {
		fmt.Fprintln(e.stdout, "no proposals wait for review")
		return nil
	}
	for _, r := range res.Reviewed {
		switch {
		case verdict == memd.ReviewReject:
			fmt.Fprintf(e.stdout, "rejected %s in %s: %s (record %.12s)\n", r.ID, r.Shard, r.Subject, r.Commit)
		case r.Commit == "":
			fmt.Fprintf(e.stdout, "accepted %s in %s: %s (main had it already)\n", r.ID, r.Shard, r.Subject)
		default:
			fmt.Fprintf(e.stdout, "accepted %s in %s: %s (commit %.12s)\n", r.ID, r.Shard, r.Subject, r.Commit)
		}
	}
	return nil
}

// clip cuts s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
