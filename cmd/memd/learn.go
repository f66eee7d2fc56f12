package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memd/memd"
)

// runLearn runs memd learn; it is long for its flags, declared one per
// line, and reading the exchange from them or from a file.
func runLearn(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "learn", "[flags] FILE | --failed | --retry ID | --purge MESSAGE", "Hand exchanges to the learner from a JSONL transcript (one exchange per line: agent, chat, chat_kind, user, messages [{id, role, text}], time), list failed ones, retry one, or purge the text memd keeps of one exchange.")
	var cf clientFlags
	cf.register(fs, e)
	failed := fs.Bool("failed", false, "list the exchanges the learner gave up on")
	pending := fs.Bool("pending", false, "list the exchanges waiting to be learned")
	retry := fs.String("retry", "", "queue a failed exchange again (its ID, or \"all\")")
	purge := fs.String("purge", "", "drop the kept text of this message and the rest of its exchange (admin); commits keep citing its ID")
	purgeChat := fs.String("chat", "", "with --purge: only the message of this chat (default: every chat with a message of that ID)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch {
	case *failed || *pending:
		state := memd.ExchangeFailed
		if *pending {
			state = memd.ExchangePending
		}
		list, err := c.Exchanges(ctx, state)
		if err != nil {
			return err
		}
		return printList(e, cf.json, list, listing[memd.ExchangeStatus]{
			key: "exchanges", empty: fmt.Sprintf("no %s exchanges", state), header: "ID\tAGENT\tKIND\tTRIES\tACCEPTED\tNEXT TRY\tERROR",
			row: func(st memd.ExchangeStatus) string {
				next := "-"
				if !st.NextTry.IsZero() {
					next = st.NextTry.Local().Format(time.DateTime)
				}
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s\t%s", st.ID, st.Agent, st.Kind, st.Attempts, st.Accepted.Local().Format(time.DateTime), next, st.Error)
			},
		})
	case *purge != "":
		res, err := c.PurgeMessage(ctx, memd.PurgeRequest{Message: *purge, Chat: *purgeChat})
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(e, res)
		}
		fmt.Fprintf(e.stdout, "dropped the kept text of message(s) %s\n", strings.Join(res.Messages, ", "))
		return nil
	case *retry != "":
		ids := []string{*retry}
		if *retry == "all" {
			list, err := c.Exchanges(ctx, memd.ExchangeFailed)
			if err != nil {
				return err
			}
			ids = ids[:0]
			for _, st := range list {
				ids = append(ids, st.ID)
			}
		}
		queued := []memd.ExchangeStatus{}
		for _, id := range ids {
			st, err := c.RetryExchange(ctx, id)
			if err != nil {
				return err
			}
			queued = append(queued, st)
			if !cf.json {
				fmt.Fprintf(e.stdout, "%s queued again\n", st.ID)
			}
		}
		if cf.json {
			return printJSON(e, map[string]any{"exchanges": queued})
		}
		return nil
	}
	if err := want(fs, pos, 1, "a JSONL file of exchanges (- for standard input)"); err != nil {
		return err
	}
	in := e.stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	// Every line is read and decoded before any is handed in: a file with a
	// bad line hands in nothing, rather than the lines before it again at
	// each run after a fix.
	type numbered struct {
		line int
		ex   memd.Exchange
	}
	var exchanges []numbered
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), maxExchangeLine)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ex memd.Exchange
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ex); err != nil {
			return fmt.Errorf("%s line %d: %v (nothing was handed in)", pos[0], line, err)
		}
		exchanges = append(exchanges, numbered{line, ex})
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("%s line %d: longer than %d MiB, the most an exchange may be (nothing was handed in)", pos[0], line+1, maxExchangeLine>>20)
	} else if err != nil {
		return err
	}
	n, skipped := 0, 0
	handed := []memd.ExchangeStatus{}
	for _, x := range exchanges {
		st, err := c.Learn(ctx, x.ex)
		if err != nil {
			// A new error, of the daemon's code: the CLI prints a daemon
			// error's message alone, and this one must name the line.
			done := "nothing was handed in"
			if n > 0 {
				done = fmt.Sprintf("the %d exchange(s) before it were handed in: once it is fixed, hand in the lines from %d on", n, x.line)
			}
			return memd.Errorf(memd.ErrorCode(err), "%s line %d: %s (%s)", pos[0], x.line, memd.ErrorMessage(err), done)
		}
		n++
		if st.State == memd.ExchangeSkipped {
			skipped++
		}
		handed = append(handed, st)
	}
	if cf.json {
		return printJSON(e, map[string]any{"handed": n, "skipped": skipped, "exchanges": handed})
	}
	noun := "exchanges"
	if n == 1 {
		noun = "exchange"
	}
	fmt.Fprintf(e.stdout, "handed %d %s to the learner (%d skipped: small talk, or not a direct or group chat)\n", n, noun, skipped)
	return nil
}

// maxExchangeLine is the longest line memd learn reads: the API takes no
// larger body (1 MiB).
const maxExchangeLine = 1 << 20

func runStats(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "stats", "[flags]", "Show, per model, prompt and agent, the facts learned and how many people undid (reverted, forgotten or edited) within 7 and 30 days. Admins only; computed from commit trailers.")
	var cf clientFlags
	cf.register(fs, e)
	from := fs.String("from", "", "only facts learned on or after this day, YYYY-MM-DD")
	to := fs.String("to", "", "only facts learned on or before this day, YYYY-MM-DD")
	agent := fs.String("agent", "", "only facts learned from this agent's exchanges")
	model := fs.String("model", "", "only facts this model learned")
	prompt := fs.String("prompt", "", "only facts learned with this prompt (its Prompt trailer)")
	undone := fs.Bool("undone", false, "list the undone facts under each row")
	_, err := positional(fs, args, 0, "no arguments")
	if err != nil {
		return err
	}
	q := memd.LearningQuery{Agent: *agent, Model: *model, Prompt: *prompt}
	if *from != "" {
		if q.From, err = memd.ParseDate(*from); err != nil {
			return err
		}
	}
	if *to != "" {
		if q.To, err = memd.ParseDate(*to); err != nil {
			return err
		}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	st, err := c.LearningStats(ctx, q)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(e, st)
	}
	if len(st.Rows) == 0 {
		fmt.Fprintln(e.stdout, "no learned facts in that period")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROMPT\tAGENT\tLEARNED\tUNDONE 7D\tRATE 7D\tUNDONE 30D\tRATE 30D\t(REVERTED/FORGOTTEN/EDITED, 30D)")
	for _, r := range st.Rows {
		prompt := orDash(r.Prompt)
		if r.PromptName != "" {
			prompt += " (" + r.PromptName + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.1f%%\t%d\t%.1f%%\t%d/%d/%d\n", orDash(r.Model), prompt, r.Agent, r.Learned,
			r.Within7.Total, 100*r.Within7.Rate, r.Within30.Total, 100*r.Within30.Rate, r.Within30.Reverted, r.Within30.Forgotten, r.Within30.Edited)
	}
	if err := tw.Flush(); err != nil || !*undone {
		return err
	}
	// The undone facts after the table, each row's under its model, prompt
	// and agent: in the table's columns they would widen them all.
	for _, r := range st.Rows {
		if len(r.Facts) == 0 {
			continue
		}
		fmt.Fprintf(e.stdout, "\nundone, of %s · %s · %s:\n", orDash(r.Model), orDash(r.Prompt), r.Agent)
		for _, f := range r.Facts {
			fmt.Fprintf(tw, "  %s %s\t%s by %s\t%s\n", f.Shard, f.Fact, f.How, f.By, f.Subject)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
