package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memd/memd"
)

func runAgent(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "agent", "Usage: memd agent add NAME [--project P]... [--review] | memd agent list | memd agent review NAME on|off | memd agent remove NAME  (each with -h for flags)",
		map[string]func(context.Context, *env, []string) error{"add": runAgentAdd, "list": runAgentList, "remove": runAgentRemove, "review": runAgentReview}, args)
}

func runAgentAdd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent add", "[flags] NAME", "Register an agent and print its token (shown only this once). Creates the agent's shard.")
	var cf clientFlags
	cf.register(fs, e)
	var projects strList
	fs.Var(&projects, "project", "a project the agent is a member of (repeatable)")
	review := fs.Bool("review", false, "review mode: what models learn for the agent waits on each shard's branch proposed for a person (memd review)")
	pos, c, err := cf.connect(fs, args, 1, "the agent's name")
	if err != nil {
		return err
	}
	a, err := c.AddAgent(ctx, pos[0], projects)
	if err != nil {
		return err
	}
	if *review {
		if a.Agent, err = c.SetReview(ctx, a.Name, true); err != nil {
			return fmt.Errorf("agent %s added (token %s), but review mode is not on: %w", a.Name, a.Token, err)
		}
	}
	if cf.json {
		return printJSON(e, a)
	}
	fmt.Fprintf(e.stdout, "added agent %s", a.Name)
	if len(a.Projects) > 0 {
		fmt.Fprintf(e.stdout, " (projects: %s)", strings.Join(a.Projects, ", "))
	}
	if a.Review {
		fmt.Fprint(e.stdout, " in review mode")
	}
	fmt.Fprintf(e.stdout, "\ntoken: %s\n", a.Token)
	fmt.Fprintln(e.stderr, "The token is shown only now; memd keeps only its hash. Give it to the agent, e.g. MEMD_TOKEN=<token>.")
	return nil
}

func runAgentList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent list", "[flags]", "List the registered agents.")
	var cf clientFlags
	cf.register(fs, e)
	_, c, err := cf.connect(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	agents, err := c.Agents(ctx)
	if err != nil {
		return err
	}
	return printList(e, cf.json, agents, listing[memd.Agent]{
		key: "agents", empty: "no agents yet: memd agent add NAME", header: "NAME\tPROJECTS\tREVIEW\tADDED",
		row: func(a memd.Agent) string {
			review := "-"
			if a.Review {
				review = "on"
			}
			return fmt.Sprintf("%s\t%s\t%s\t%s", a.Name, orDash(strings.Join(a.Projects, ",")), review, a.Created.Local().Format(time.DateOnly))
		},
	})
}

func runAgentReview(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent review", "[flags] NAME on|off", "Turn review mode on or off for an agent. In review mode, what the learner and synthesis write for the agent waits on each shard's branch proposed until a person accepts it (memd review).")
	var cf clientFlags
	cf.register(fs, e)
	pos, err := positional(fs, args, 2, "the agent's name, then on or off")
	if err != nil {
		return err
	}
	if pos[1] != "on" && pos[1] != "off" {
		return fmt.Errorf("memd agent review %s %s: want on or off", pos[0], pos[1])
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	a, err := c.SetReview(ctx, pos[0], pos[1] == "on")
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, a)
	}
	if a.Review {
		fmt.Fprintf(e.stdout, "agent %s is in review mode: what models learn for it waits for memd review accept\n", a.Name)
	} else {
		fmt.Fprintf(e.stdout, "agent %s is out of review mode: what models learn goes into main; proposals already waiting stay until reviewed\n", a.Name)
	}
	return nil
}

func runAgentRemove(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent remove", "[flags] NAME", "Remove an agent: its token stops working, and its exchanges still queued, or out with the model, fail unwritten. Its shard and history stay.")
	var cf clientFlags
	cf.register(fs, e)
	pos, c, err := cf.connect(fs, args, 1, "the agent's name")
	if err != nil {
		return err
	}
	if err := c.RemoveAgent(ctx, pos[0]); err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, map[string]any{"removed": pos[0], "shard": memd.AgentShard(pos[0])})
	}
	fmt.Fprintf(e.stdout, "removed agent %s; its shard agent/%s stays\n", pos[0], pos[0])
	return nil
}

func runShards(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "shards", "[flags]", "List the shards you may read, with fact counts and HEAD.")
	var cf clientFlags
	cf.register(fs, e)
	_, c, err := cf.connect(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	shards, err := c.Shards(ctx)
	if err != nil {
		return err
	}
	return printList(e, cf.json, shards, listing[memd.ShardInfo]{
		key: "shards", header: "SHARD\tFACTS\tHEAD\tLAST CHANGE",
		row: func(s memd.ShardInfo) string {
			last := "-"
			if !s.LastChange.IsZero() {
				last = s.LastChange.Local().Format("2006-01-02 15:04")
			}
			return fmt.Sprintf("%s\t%d\t%s\t%s", s.Shard, s.Facts, orDash(shortHash(s.Head)), last)
		},
	})
}

func runStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status", "[flags]", "Show the daemon's status.")
	var cf clientFlags
	cf.register(fs, e)
	_, c, err := cf.connect(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, st)
	}
	fmt.Fprintf(e.stdout, "memd %s at %s, up since %s\n", st.Version, c.BaseURL, st.Started.Local().Format(time.DateTime))
	if st.DataDir != "" {
		fmt.Fprintf(e.stdout, "  data:     %s\n", st.DataDir)
	}
	facts := "facts"
	if st.Facts == 1 {
		facts = "fact"
	}
	fmt.Fprintf(e.stdout, "  shards:   %d with %d %s\n", st.Shards, st.Facts, facts)
	if st.DataDir != "" { // the admin's view
		fmt.Fprintf(e.stdout, "  agents:   %d\n", st.Agents)
	}
	fmt.Fprintf(e.stdout, "  you are:  %s\n", st.Caller)
	learning := fmt.Sprintf("on, %s; %d pending, %d failed", st.Learning.Model, st.Learning.Pending, st.Learning.Failed)
	if !st.Learning.Enabled {
		learning = "off (" + st.Learning.Reason + ")"
	} else if q := st.Learning.QuietUntil; !q.IsZero() {
		learning += "; the model asked for no calls until " + q.Local().Format(time.DateTime)
	}
	fmt.Fprintf(e.stdout, "  learning: %s\n", learning)
	if sy := st.Learning.Synthesis; sy != nil {
		fmt.Fprintf(e.stdout, "  synthesis: on, approved by %s; %d changes applied, %d refused (facts written on purpose, or changed since), %d rejected by the approver\n",
			sy.Approver, sy.Applied, sy.Refused, sy.Rejected)
	}
	if r := st.Review; r != nil {
		fmt.Fprintf(e.stdout, "  review:   %d proposals waiting (memd review list), %d accepted since the start, %d rejected\n", r.Pending, r.Accepted, r.Rejected)
	}
	fmt.Fprintf(e.stdout, "  recall by meaning: %s\n", meaningLine(st))
	if st.Indexing > 0 {
		fmt.Fprintf(e.stdout, "  index:    reading %d shards in the background\n", st.Indexing)
	}
	if st.Attributing > 0 {
		fmt.Fprintf(e.stdout, "  index:    attributing the facts of %d shards to their commits in the background (their hits name no commit until then)\n", st.Attributing)
	}
	if st.Remotes > 0 {
		health := "in step"
		if st.RemoteErrors > 0 {
			health = fmt.Sprintf("%d failing (memd remote shows why)", st.RemoteErrors)
		}
		fmt.Fprintf(e.stdout, "  remotes:  %d shards, %s\n", st.Remotes, health)
	}
	return nil
}

// meaningLine says how recall by meaning is doing; to an agent (a status
// without the data directory), without the store's counts.
func meaningLine(st memd.Status) string {
	meaning := "off (recall by words alone; --embed-url turns it on)"
	switch m := st.Meaning; {
	case m != nil && m.Reading:
		meaning = m.Model + ", reading the vectors from disk (recall by words alone until then)"
	case m != nil && m.Unreadable:
		why := m.LastError
		if why == "" { // an agent's view: the error is the admin's
			why = "the vectors could not be read"
		}
		meaning = fmt.Sprintf("%s: %s (recall by words alone until memd restarts)", m.Model, why)
	case m != nil && st.DataDir == "": // an agent's view: no counts of the store
		meaning = m.Model
		if !m.Ready {
			meaning += " (recall by words alone until the facts are embedded)"
		}
	case m != nil:
		meaning = fmt.Sprintf("%s, %d facts embedded, %d to go", m.Model, m.Vectors, m.Pending)
		if m.Refused > 0 {
			meaning += fmt.Sprintf(", %d refused by the endpoint (found by words)", m.Refused)
		}
		if !m.Ready {
			meaning += " (recall by words alone until they are done)"
		}
		if m.LastError != "" {
			meaning += fmt.Sprintf("; %d requests failed, the last: %s", m.Failures, m.LastError)
		}
	}
	return meaning
}
