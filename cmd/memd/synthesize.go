package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memd/memd"
)

func runSynthesize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "synthesize", "[flags] --agent NAME", "Run a synthesis pass over an agent's own memory now: a model proposes merges, rewrites and removals citing the exchanges learned since the last pass, a second call approves or rejects each, and each approved change is one commit. Facts written on purpose (an explicit remember, an edit, an import, a person's commit) are never changed. Needs memd serve --synthesis.")
	var cf clientFlags
	cf.register(fs, e)
	agent := fs.String("agent", "", "the agent whose memory to synthesise (an agent's token names its own)")
	noWait := fs.Bool("no-wait", false, "queue the pass and return, without waiting for its outcome")
	_, c, err := cf.connect(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	st, err := c.Synthesize(ctx, *agent)
	if err != nil {
		return err
	}
	for !*noWait && st.State == memd.ExchangePending {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		list, err := c.Exchanges(ctx, "")
		if err != nil {
			return err
		}
		for _, s := range list {
			if s.ID == st.ID {
				st = s
			}
		}
		if st.State == memd.ExchangePending && st.Attempts > 0 {
			fmt.Fprintf(e.stderr, "pass %s: try %d failed (%s); retrying\n", st.ID, st.Attempts, st.Error)
		}
	}
	if cf.json {
		return printJSON(e, st)
	}
	switch st.State {
	case memd.ExchangePending:
		fmt.Fprintf(e.stdout, "synthesis pass %s queued over %s\n", st.ID, memd.AgentShard(st.Agent))
		return nil
	case memd.ExchangeFailed:
		return fmt.Errorf("synthesis pass %s failed after %d tries: %s (memd learn --retry %s)", st.ID, st.Attempts, st.Error, st.ID)
	}
	o := st.Synthesis
	if o == nil {
		o = &memd.SynthesisOutcome{}
	}
	fmt.Fprintf(e.stdout, "synthesis pass %s over %s: %d exchange(s) of evidence, %d change(s) proposed: %d applied, %d rejected by the approver, %d refused (facts written on purpose, or changed since), %d line(s) ignored\n",
		st.ID, memd.AgentShard(st.Agent), o.Evidence, o.Proposed, o.Applied, o.Rejected, o.Refused, o.Ignored)
	for _, ch := range o.Changes {
		line := fmt.Sprintf("  %-8s %-7s %s", ch.Verdict, ch.Op, strings.Join(ch.Facts, ", "))
		if ch.Text != "" {
			line += " → " + ch.Text
		}
		if ch.Commit != "" {
			line += fmt.Sprintf("  [%.12s]", ch.Commit)
		}
		if ch.Reason != "" {
			line += "  (" + ch.Reason + ")"
		}
		fmt.Fprintln(e.stdout, line)
	}
	return nil
}
