package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
)

func runWatch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "watch", "[flags] [SHARD...]", "Print memory changes as they happen: one line per fact added (+) or removed (-), per note changed (~). Without shards, follows every shard you may read. Resumes by itself when the connection drops, in each shard from the last commit it printed (a shard it names and printed nothing of, from the head it started at).")
	var cf clientFlags
	cf.register(fs, e)
	kind := fs.String("chat-kind", "", "chat kind to declare (user memory needs direct)")
	var since strList
	fs.Var(&since, "since", "start after a commit: SHARD:COMMIT (repeatable); without it, from now")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	c.ChatKind = memd.ChatKind(*kind)
	q, err := memd.ParseFeedQuery(pos, since)
	if err != nil {
		return err
	}
	return watch(ctx, e, c, q, cf.json)
}

// startAtHeads sets each shard the watch names, not given a commit to
// start after, to start after its head now. "From now" would mean from
// each reconnection: a shard nothing was printed of before a drop would
// skip what was committed in it meanwhile. A commit made between the look
// and the subscription is replayed, not missed. It looks once, the first
// time the daemon answers (started). A watch of every shard it may read
// is left from now: naming them all could outgrow what a request's
// header holds, and one gone or forbidden since would end it.
func startAtHeads(ctx context.Context, c *client.Client, q memd.FeedQuery, started *bool) error {
	if *started || len(q.Shards) == 0 {
		*started = true
		return nil
	}
	list, err := c.Shards(ctx)
	if err != nil {
		return err
	}
	*started = true
	for _, s := range list {
		if _, given := q.Since[s.Shard]; given || s.Head == "" {
			continue
		}
		if slices.Contains(q.Shards, s.Shard) {
			q.Since[s.Shard] = s.Head
		}
	}
	return nil
}

// watch follows the feed until ctx ends, reconnecting after drops with
// since set to the last commit seen in each shard.
func watch(ctx context.Context, e *env, c *client.Client, q memd.FeedQuery, asJSON bool) error {
	wait := 100 * time.Millisecond
	started := false
	for {
		var sub memd.Subscription
		err := startAtHeads(ctx, c, q, &started)
		if err == nil {
			sub, err = c.Subscribe(ctx, q)
		}
		if err != nil {
			code := memd.ErrorCode(err)
			if code != memd.EUNAVAILABLE || ctx.Err() != nil {
				return err // a refusal or a bad since will not get better
			}
			fmt.Fprintf(e.stderr, "memd watch: %s; retrying in %s\n", memd.ErrorMessage(err), wait)
		} else {
			wait = 100 * time.Millisecond
			err = follow(ctx, e.stdout, sub, q.Since, asJSON)
			sub.Close()
			if ctx.Err() != nil {
				return nil
			}
			var closed *client.FeedClosed
			if errors.As(err, &closed) && closed.Overrun() {
				fmt.Fprintln(e.stderr, "memd watch: fell behind; resuming from the last commit printed")
				continue
			}
			fmt.Fprintf(e.stderr, "memd watch: connection lost (%v); resuming from the last commit printed\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// follow prints events until the subscription ends, recording in since the
// last commit printed per shard.
func follow(ctx context.Context, w io.Writer, sub memd.Subscription, since map[memd.ShardID]string, asJSON bool) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-sub.Events():
			if !ok {
				return sub.Err()
			}
			printEvent(w, ev, asJSON)
			if ev.Type == memd.EventCommit || ev.Type == memd.EventReset {
				since[ev.Shard] = ev.Commit
			}
		}
	}
}

func printEvent(w io.Writer, ev memd.FeedEvent, asJSON bool) {
	if asJSON {
		json.NewEncoder(w).Encode(ev) // one event per line
		return
	}
	if ev.Type == memd.EventReset {
		fmt.Fprintf(w, "%s %s  branch reset\n", ev.Shard, shortHash(ev.Commit))
		return
	}
	how := ev.Provenance.Op
	if how == "" {
		how = "git commit"
	}
	head := fmt.Sprintf("%s %s %s (%s)", ev.Shard, shortHash(ev.Commit), ev.Author.Name, how)
	if len(ev.Changes) == 0 && len(ev.Notes) == 0 {
		fmt.Fprintf(w, "%s  %s\n", head, ev.Subject)
	}
	for _, ch := range ev.Changes {
		fmt.Fprintf(w, "%s  %s %s (%s) %s\n", head, ch.Op, ch.Fact.ID, ch.Fact.Date, ch.Fact.Text)
	}
	for _, n := range ev.Notes {
		fmt.Fprintf(w, "%s  ~ %s\n", head, n.Path)
	}
}
