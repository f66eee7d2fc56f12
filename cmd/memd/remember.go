package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
)

func runRemember(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "remember", "[flags] TEXT", "Remember a fact. The same text again returns the fact it matches and makes no commit.")
	var sf shardFlags
	sf.register(fs, e, true)
	tier := fs.String("tier", "profile", "tier: profile, log, note or episode")
	date := fs.String("date", "", "the fact's date, YYYY-MM-DD (default: today)")
	excerpt := fs.String("excerpt", "", "what was said, quoted (at most 2,000 characters), kept under the --message IDs for reviewers")
	create := fs.Bool("create", false, "create the agent shard named though no agent of that name is registered")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return want(fs, pos, 1, "the fact's text")
	}
	req := memd.RememberRequest{Text: strings.Join(pos, " "), Tier: memd.Tier(*tier), Source: sf.source(), Create: *create}
	req.Source.Excerpt = *excerpt
	if *date != "" {
		if req.Date, err = memd.ParseDate(*date); err != nil {
			return err
		}
	}
	c, sid, err := sf.client(ctx)
	if err != nil {
		return err
	}
	req.Shard = sid
	res, err := c.Remember(ctx, req)
	if err != nil {
		return err
	}
	if sf.cf.json {
		return printJSON(e, res)
	}
	if res.Existing {
		fmt.Fprintf(e.stdout, "already remembered %s in %s: %s (no commit)\n", res.Fact.ID, res.Fact.Shard, res.Fact.Text)
		return nil
	}
	fmt.Fprintf(e.stdout, "remembered %s in %s: %s\n  commit %s  file %s\n", res.Fact.ID, res.Fact.Shard, res.Fact.Text, shortHash(res.Commit), res.Fact.File)
	return nil
}

// shardOrOwn parses --shard, defaulting to the calling agent's own shard.
func shardOrOwn(ctx context.Context, c *client.Client, v string) (memd.ShardID, error) {
	if v != "" {
		return memd.ParseShardID(v)
	}
	st, err := c.Status(ctx)
	if err != nil {
		return memd.ShardID{}, err
	}
	if st.Caller == "admin" {
		return memd.ShardID{}, memd.Errorf(memd.EINVALID, "--shard is required with the admin token (agent/<name>, user/<id> or project/<slug>)")
	}
	return memd.AgentShard(st.Caller), nil
}

func runForget(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "forget", "[flags] ID", "Forget a fact: remove its line(s) in one commit.")
	var sf shardFlags
	sf.register(fs, e, true)
	pos, c, sid, err := sf.connect(ctx, fs, args, 1, "a fact ID")
	if err != nil {
		return err
	}
	res, err := c.Forget(ctx, memd.ForgetRequest{Shard: sid, ID: pos[0], Source: sf.source()})
	if err != nil {
		return err
	}
	if sf.cf.json {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "forgot %s in %s: %s\n  commit %s\n", res.Fact.ID, sid, res.Fact.Text, shortHash(res.Commit))
	return nil
}

func runEdit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "edit", "[flags] ID TEXT", "Rewrite a fact's text where its line stands, in one commit (Memory-Op: edit) that names the fact it replaces and keeps its source, so trace follows the fact back to the message it was first learned from.")
	var sf shardFlags
	sf.register(fs, e, true)
	excerpt := fs.String("excerpt", "", "what was said, quoted (at most 2,000 characters), kept under the --message IDs for reviewers")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return want(fs, pos, 2, "a fact ID and the new text")
	}
	c, sid, err := sf.client(ctx)
	if err != nil {
		return err
	}
	req := memd.EditFactRequest{Shard: sid, ID: pos[0], Text: strings.Join(pos[1:], " "), Source: sf.source()}
	req.Source.Excerpt = *excerpt
	res, err := c.EditFact(ctx, req)
	if err != nil {
		return err
	}
	if sf.cf.json {
		return printJSON(e, res)
	}
	if res.Commit == "" {
		fmt.Fprintf(e.stdout, "%s in %s already reads so (no commit)\n", res.Fact.ID, sid)
		return nil
	}
	fmt.Fprintf(e.stdout, "edited %s in %s: %s\n  now %s: %s\n  commit %s\n", res.Replaced.ID, sid, res.Replaced.Text, res.Fact.ID, res.Fact.Text, shortHash(res.Commit))
	return nil
}
