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
	var cf clientFlags
	cf.register(fs, e)
	shard := fs.String("shard", "", "shard: agent/<name>, user/<id> or project/<slug> (default: the calling agent's own)")
	tier := fs.String("tier", "profile", "tier: profile, log, note or episode")
	date := fs.String("date", "", "the fact's date, YYYY-MM-DD (default: today)")
	var messages strList
	fs.Var(&messages, "message", "ID of a chat message the fact comes from (repeatable)")
	chat := fs.String("chat", "", "ID of the chat the fact comes from")
	kind := fs.String("chat-kind", "", "chat kind: direct, group, routine or api")
	excerpt := fs.String("excerpt", "", "what was said, quoted (at most 2,000 characters), kept under the --message IDs for reviewers")
	create := fs.Bool("create", false, "create the agent shard named though no agent of that name is registered")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return want(fs, pos, 1, "the fact's text")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	req := memd.RememberRequest{Text: strings.Join(pos, " "), Tier: memd.Tier(*tier),
		Source: memd.Source{Messages: messages, Chat: *chat, ChatKind: memd.ChatKind(*kind), Excerpt: *excerpt}, Create: *create}
	if *date != "" {
		if req.Date, err = memd.ParseDate(*date); err != nil {
			return err
		}
	}
	if req.Shard, err = shardOrOwn(ctx, c, *shard); err != nil {
		return err
	}
	res, err := c.Remember(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
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
	var cf clientFlags
	cf.register(fs, e)
	shard := fs.String("shard", "", "shard (default: the calling agent's own)")
	var messages strList
	fs.Var(&messages, "message", "ID of the chat message that asked for it (repeatable)")
	chat := fs.String("chat", "", "chat ID")
	kind := fs.String("chat-kind", "", "chat kind: direct, group, routine or api")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := want(fs, pos, 1, "a fact ID"); err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	sid, err := shardOrOwn(ctx, c, *shard)
	if err != nil {
		return err
	}
	res, err := c.Forget(ctx, memd.ForgetRequest{Shard: sid, ID: pos[0], Source: memd.Source{Messages: messages, Chat: *chat, ChatKind: memd.ChatKind(*kind)}})
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "forgot %s in %s: %s\n  commit %s\n", res.Fact.ID, sid, res.Fact.Text, shortHash(res.Commit))
	return nil
}

func runEdit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "edit", "[flags] ID TEXT", "Rewrite a fact's text where its line stands, in one commit (Memory-Op: edit) that names the fact it replaces and keeps its source, so trace follows the fact back to the message it was first learned from.")
	var cf clientFlags
	cf.register(fs, e)
	shard := fs.String("shard", "", "shard (default: the calling agent's own)")
	var messages strList
	fs.Var(&messages, "message", "ID of a chat message that asked for the change (repeatable)")
	chat := fs.String("chat", "", "chat ID")
	kind := fs.String("chat-kind", "", "chat kind: direct, group, routine or api")
	excerpt := fs.String("excerpt", "", "what was said, quoted (at most 2,000 characters), kept under the --message IDs")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return want(fs, pos, 2, "a fact ID and the new text")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	c.ChatKind = memd.ChatKind(*kind)
	sid, err := shardOrOwn(ctx, c, *shard)
	if err != nil {
		return err
	}
	res, err := c.EditFact(ctx, memd.EditFactRequest{Shard: sid, ID: pos[0], Text: strings.Join(pos[1:], " "),
		Source: memd.Source{Messages: messages, Chat: *chat, ChatKind: memd.ChatKind(*kind), Excerpt: *excerpt}})
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, res)
	}
	if res.Commit == "" {
		fmt.Fprintf(e.stdout, "%s in %s already reads so (no commit)\n", res.Fact.ID, sid)
		return nil
	}
	fmt.Fprintf(e.stdout, "edited %s in %s: %s\n  now %s: %s\n  commit %s\n", res.Replaced.ID, sid, res.Replaced.Text, res.Fact.ID, res.Fact.Text, shortHash(res.Commit))
	return nil
}
