package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/memd/memd"
)

// readerFlags name whose memory recall and context read: the agent, the
// person in the chat, the chat's kind and the projects.
type readerFlags struct {
	agent, user, kind *string
	projects          strList
}

func (rf *readerFlags) register(fs *flags, agentUsage, projectUsage string) {
	rf.agent = fs.String("agent", "", agentUsage)
	rf.user = fs.String("user", "", "the person in the chat (user memory needs --chat-kind direct)")
	rf.kind = fs.String("chat-kind", "", "chat kind: direct, group, routine or api (none reads as group)")
	fs.Var(&rf.projects, "project", projectUsage)
}

func runRecall(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "recall", "[flags] QUERY", "Search the memory an agent may read in its chat: its own, the user's (direct chats only) and its projects. Best first, each with where it came from.")
	var cf clientFlags
	cf.register(fs, e)
	var rf readerFlags
	rf.register(fs, "whose memory (default: the calling agent; an admin without it searches every shard)", "only this project (repeatable; default: every project of the agent)")
	k := fs.Int("k", 0, fmt.Sprintf("at most this many facts (default %d, at most %d)", memd.DefaultRecallK, memd.MaxRecallK))
	at := fs.String("at", "", "search memory as it was at a commit, a date (YYYY-MM-DD) or the stamp of an earlier answer")
	explain := fs.Bool("explain", false, "say why each fact ranked: the parts of its score")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return want(fs, pos, 1, "a query")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	c.ChatKind = memd.ChatKind(*rf.kind)
	res, err := c.Recall(ctx, memd.RecallQuery{Q: strings.Join(pos, " "), K: *k, Agent: *rf.agent, User: *rf.user, Projects: rf.projects, At: *at, Explain: *explain})
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, res)
	}
	printSkipped(e, res.Skipped)
	if res.ByWordsAlone != "" {
		fmt.Fprintf(e.stderr, "recall %s\n", res.ByWordsAlone)
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(e.stdout, res.NothingFound())
		return nil
	}
	for _, h := range res.Hits {
		if h.Note != "" {
			// A passage of a note: where it is, then its text on one line.
			fmt.Fprintf(e.stdout, "%s  %s  %-8s %s  %s: %s\n", h.ID, h.Date, "note", h.Shard, h.File, strings.Join(strings.Fields(h.Text), " "))
		} else {
			fmt.Fprintf(e.stdout, "%s  %s  %-8s %s  %s\n", h.ID, h.Date, h.Tier, h.Shard, h.Text)
		}
		if h.Commit != "" {
			src := ""
			if len(h.SourceMessages) > 0 {
				src = "  from " + strings.Join(h.SourceMessages, ", ")
			}
			fmt.Fprintf(e.stdout, "              commit %s%s\n", shortHash(h.Commit), src)
		}
		if h.Explain != nil {
			fmt.Fprintf(e.stdout, "              score %.3f = %s\n", h.Score, h.Explain)
		}
	}
	if res.Stamp != "" {
		fmt.Fprintf(e.stdout, "read at %s\n", res.Stamp)
	}
	return nil
}

func runContext(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "context", "[flags]", "Print the memory section of an agent's prompt: the user's memory (direct chats only), up to three projects, and the agent's own, each within its budget.")
	var cf clientFlags
	cf.register(fs, e)
	var rf readerFlags
	rf.register(fs, "whose memory (default: the calling agent; required with the admin token)", "a project whose memory to include (repeatable, at most 3)")
	at := fs.String("at", "", "the section as it was at a commit, a date (YYYY-MM-DD) or the stamp of an earlier answer")
	since := fs.String("since", "", "only what changed since the stamp of an earlier answer, as + and \u2212 lines")
	_, c, err := cf.connect(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	c.ChatKind = memd.ChatKind(*rf.kind)
	res, err := c.Context(ctx, memd.ContextQuery{Agent: *rf.agent, User: *rf.user, Projects: rf.projects, At: *at, Since: *since})
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, res) // the stamp is in it
	}
	fmt.Fprint(e.stdout, res.Markdown)
	if *since != "" && res.Markdown == "" {
		fmt.Fprintln(e.stdout, "nothing changed")
	}
	// On stderr, so the section on stdout stays as it is for a prompt.
	printSkipped(e, res.Skipped)
	fmt.Fprintf(e.stderr, "read at %s\n", res.Stamp)
	return nil
}

// printSkipped says, on stderr, which shards asked for the rules left out.
func printSkipped(e *env, skipped []memd.Skipped) {
	for _, s := range skipped {
		fmt.Fprintf(e.stderr, "left out %s (rule %s): %s\n", s.Shard, s.Rule, s.Reason)
	}
}
