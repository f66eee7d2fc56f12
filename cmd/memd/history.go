package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memd/memd"
)

func runTrace(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "trace", "[flags] ID", "Show where a fact came from: the commit that introduced it, who, when, how, and the chat messages behind it.")
	var sf shardFlags
	sf.register(fs, e, false)
	pos, c, sid, err := sf.connect(ctx, fs, args, 1, "a fact ID")
	if err != nil {
		return err
	}
	tr, err := c.Trace(ctx, sid, pos[0])
	if err != nil {
		return err
	}
	if sf.cf.json {
		return printJSON(e, tr)
	}
	state := "present"
	if !tr.Present {
		state = "no longer present"
	}
	f := tr.Fact
	fmt.Fprintf(e.stdout, "fact %s in %s (%s): %s\n  %s, dated %s, in %s\n", f.ID, sid, state, f.Text, f.Tier, f.Date, f.File)
	if in := tr.Introduced; in != nil {
		fmt.Fprintf(e.stdout, "\nintroduced by commit %s\n", in.Hash)
		describeCommit(e.stdout, *in)
	}
	if len(tr.Chain) > 1 {
		fmt.Fprintln(e.stdout, "\nversions, newest first:")
		for i, c := range tr.Chain {
			text := ""
			for _, ch := range c.Changes {
				if ch.Op == "+" {
					text = ch.Fact.Text
				}
			}
			how := c.Provenance.Op
			if how == memd.OpEdit {
				how = "edited by " + c.Author.Name
			} else if i == len(tr.Chain)-1 {
				how = "first " + orDash(how) + " by " + c.Author.Name
			}
			fmt.Fprintf(e.stdout, "  %s  %s  %-28s %s\n", shortHash(c.Hash), c.Time.Local().Format("2006-01-02 15:04"), how, text)
		}
		fmt.Fprintf(e.stdout, "\nfirst learned by commit %s\n", tr.Chain[len(tr.Chain)-1].Hash)
		describeCommit(e.stdout, tr.Chain[len(tr.Chain)-1])
	}
	if len(tr.Messages) > 0 {
		fmt.Fprintln(e.stdout, "\nwhat was said:")
		for _, q := range tr.Messages {
			when := ""
			if !q.Time.IsZero() {
				when = " " + q.Time.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(e.stdout, "  [%s]%s %s: %s\n", q.ID, when, q.Speaker(), indentRest(q.Text, "    "))
		}
	}
	if len(tr.History) > 1 {
		fmt.Fprintln(e.stdout, "\nhistory, newest first:")
		for _, h := range tr.History {
			for _, ch := range h.Changes {
				fmt.Fprintf(e.stdout, "  %s  %s  %-10s %s %s\n", shortHash(h.Hash), h.Time.Local().Format("2006-01-02 15:04"), h.Author.Name, ch.Op, h.Subject)
			}
		}
	}
	return nil
}

// indentRest indents every line of s after the first.
func indentRest(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

// describeCommit prints a commit's author, time and provenance.
func describeCommit(w io.Writer, c memd.Commit) {
	p := c.Provenance
	fmt.Fprintf(w, "  author:     %s <%s>, %s\n", c.Author.Name, c.Author.Email, c.Time.Local().Format(time.DateTime))
	op := p.Op
	if op == "" {
		op = "a git commit memd did not make"
	}
	fmt.Fprintf(w, "  operation:  %s, learned by %s\n", op, p.LearnedBy)
	if len(p.SourceMessages) > 0 {
		fmt.Fprintf(w, "  messages:   %s\n", strings.Join(p.SourceMessages, ", "))
	}
	if p.SourceChat != "" || p.ChatKind != "" {
		fmt.Fprintf(w, "  chat:       %s (%s)\n", orDash(p.SourceChat), orDash(string(p.ChatKind)))
	}
	if p.Model != "" {
		fmt.Fprintf(w, "  model:      %s\n", p.Model)
	}
	if p.Prompt != "" {
		fmt.Fprintf(w, "  prompt:     %s\n", p.Prompt)
	}
	if p.Reverts != "" {
		fmt.Fprintf(w, "  reverts:    %s\n", p.Reverts)
	}
	if p.Replaces != "" {
		fmt.Fprintf(w, "  replaces:   %s\n", p.Replaces)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runLog(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "log", "[flags]", "Show a shard's commits, newest first, with their provenance and the facts each added (+) or removed (-).")
	var sf shardFlags
	sf.register(fs, e, false)
	message := fs.String("message", "", "only commits citing this source message")
	agent := fs.String("agent", "", "only commits by this agent (or \"admin\")")
	op := fs.String("op", "", "only this operation (the Memory-Op trailer): "+strings.Join(memd.Ops(), ", "))
	limit := fs.Int("limit", 20, "at most this many commits")
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	c, sid, err := sf.client(ctx)
	if err != nil {
		return err
	}
	commits, err := c.Log(ctx, memd.LogQuery{Shard: sid, Message: *message, Agent: *agent, Op: *op, Limit: *limit})
	if err != nil {
		return err
	}
	if sf.cf.json {
		return printJSON(e, map[string]any{"commits": commits})
	}
	if len(commits) == 0 {
		fmt.Fprintf(e.stdout, "no commits in %s match\n", sid)
	}
	for i, cm := range commits {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "commit %s\n  %s\n", cm.Hash, cm.Subject)
		describeCommit(e.stdout, cm)
		for _, ch := range cm.Changes {
			fmt.Fprintf(e.stdout, "  %s %s (%s) %s\n", ch.Op, ch.Fact.ID, ch.Fact.Date, ch.Fact.Text)
		}
		for _, n := range cm.Notes {
			fmt.Fprintf(e.stdout, "  ~ %s\n", n)
		}
	}
	return nil
}

func runRevert(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "revert", "[flags] [COMMIT]", "Undo a commit of a shard (--shard S COMMIT), or everything learned from chat messages (--message ID, repeated for each message of an exchange) in every shard you may write. Each undone commit becomes one revert commit.")
	var cf clientFlags
	cf.register(fs, e)
	shard := fs.String("shard", "", "shard of the commit")
	var messages strList
	fs.Var(&messages, "message", "revert every commit citing this source message (repeatable)")
	dry := fs.Bool("dry-run", false, "show what would be undone, and commit nothing")
	chat := fs.String("chat", "", "with --message: only commits learned in this chat")
	kind := fs.String("chat-kind", "", "chat kind to declare: an agent's revert by message reaches the person's memory (user/...) only in a direct chat")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	req := memd.RevertRequest{DryRun: *dry}
	switch {
	case len(messages) > 0 && len(pos) == 0:
		req.Messages, req.Chat = messages, *chat
		if *shard != "" {
			s, err := memd.ParseShardID(*shard)
			if err != nil {
				return err
			}
			req.Shards = []memd.ShardID{s}
		}
	case len(messages) == 0 && len(pos) == 1:
		if req.Shard, err = shardFlag(*shard); err != nil {
			return err
		}
		req.Commit = pos[0]
	default:
		return want(fs, nil, 1, "either --shard S COMMIT or --message ID")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if c.ChatKind, err = memd.ParseChatKind(*kind); err != nil {
		return err
	}
	res, err := c.Revert(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		if err := printJSON(e, res); err != nil {
			return err
		}
	} else {
		printReverts(e, res, *dry)
	}
	refused := 0
	for _, r := range res.Reverts {
		if r.Refused != "" {
			refused++
		}
	}
	switch {
	case refused == 0:
		return nil
	case *dry:
		return memd.Errorf(memd.ECONFLICT, "%d of %d commits would be left as they are", refused, len(res.Reverts))
	case refused == len(res.Reverts):
		return memd.Errorf(memd.ECONFLICT, "none of the %d commits could be undone", refused)
	}
	return memd.Errorf(memd.ECONFLICT, "%d of %d commits could not be undone; the others were", refused, len(res.Reverts))
}

// printReverts prints what a revert did, or with dry what it would do: a
// line a commit, then its changes.
func printReverts(e *env, res memd.RevertResult, dry bool) {
	if len(res.Reverts) == 0 && res.LearningDropped == 0 && len(res.Rejected) == 0 {
		fmt.Fprintln(e.stdout, "nothing left to undo")
	}
	rejected, were := "rejected", "were"
	if dry {
		rejected, were = "would be rejected", "would be"
	}
	for _, r := range res.Rejected {
		fmt.Fprintf(e.stdout, "%s proposal %s %s: %s\n", r.Shard, r.ID, rejected, r.Subject)
	}
	if res.LearningDropped > 0 {
		fmt.Fprintf(e.stdout, "the learner will not learn from the messages again: they %s taken out of %d piece(s) of its unfinished work (exchanges waiting, episode turns, synthesis evidence)\n", were, res.LearningDropped)
	}
	for _, r := range res.Reverts {
		switch {
		case r.Refused != "":
			fmt.Fprintf(e.stdout, "%s %s: left as it is: %s\n", r.Shard, shortHash(r.Reverted), r.Refused)
		case dry:
			fmt.Fprintf(e.stdout, "%s %s would be reverted\n", r.Shard, shortHash(r.Reverted))
			printRevertChanges(e, r)
		case r.Commit == "":
			fmt.Fprintf(e.stdout, "%s %s: nothing left to undo\n", r.Shard, shortHash(r.Reverted))
		default:
			fmt.Fprintf(e.stdout, "%s %s reverted by %s\n", r.Shard, shortHash(r.Reverted), shortHash(r.Commit))
			printRevertChanges(e, r)
		}
	}
}

// printRevertChanges prints a revert's fact changes, and the notes it
// puts back (~), a line each.
func printRevertChanges(e *env, r memd.Revert) {
	for _, ch := range r.Changes {
		fmt.Fprintf(e.stdout, "  %s %s %s\n", ch.Op, ch.Fact.ID, ch.Fact.Text)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(e.stdout, "  ~ note %s\n", n)
	}
}
