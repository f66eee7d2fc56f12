package main

import (
	"context"
	"fmt"
	"time"

	"github.com/memd/memd"
)

func runRemote(ctx context.Context, e *env, args []string) error {
	sync := len(args) > 0 && args[0] == "sync"
	if sync {
		args = args[1:]
	}
	usage, help := "[flags]", "Show each shard's git remote: what was pushed and fetched last, and any error. (memd remote sync [SHARD]... syncs now.)"
	if sync {
		usage, help = "[flags] [SHARD]...", "Fetch from the shards' remotes, merge, and push, now: the shards named (created here if only the remote has them), or every shard with a remote."
	}
	name := "remote"
	if sync {
		name = "remote sync"
	}
	fs := newFlags(e, name, usage, help)
	var cf clientFlags
	cf.register(fs, e)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if !sync {
		if err := want(fs, pos, 0, "no arguments (or sync)"); err != nil {
			return err
		}
	}
	var shards []memd.ShardID
	for _, p := range pos {
		id, err := memd.ParseShardID(p)
		if err != nil {
			return err
		}
		shards = append(shards, id)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	var list []memd.RemoteStatus
	if sync {
		list, err = c.SyncRemotes(ctx, shards)
	} else {
		list, err = c.Remotes(ctx)
	}
	if err != nil {
		return err
	}
	if list == nil {
		list = []memd.RemoteStatus{}
	}
	err = printList(e, cf.json, list, remoteListing)
	if err != nil || cf.json || !sync {
		return err
	}
	return syncFailures(list)
}

// remoteListing shows each shard's remote, one row a shard.
var remoteListing = listing[memd.RemoteStatus]{
	key:    "remotes",
	empty:  "no shard here has a remote (memd serve --remote URL-TEMPLATE, or git remote add memd URL in a shard; memd remote sync SHARD brings a shard from its remote)",
	header: "SHARD\tREMOTE\tHEAD\tPUSHED\tFETCHED\tLAST FETCH\tSTATE",
	row: func(r memd.RemoteStatus) string {
		state := "in step"
		switch {
		case r.Error != "":
			state = "error: " + r.Error
		case r.Pending:
			state = "push pending"
		case len(r.Conflicts) > 0:
			state = fmt.Sprintf("merged with conflicts to settle in %v", r.Conflicts)
		case r.Head != r.Remote:
			state = "not pushed yet"
		}
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", r.Shard, r.URL, orDash(shortHash(r.Head)), when(r.PushedAt), when(r.FetchedAt), r.Integrated, state)
	},
}

// syncFailures reports the shards a sync left with an error.
func syncFailures(list []memd.RemoteStatus) error {
	failed := 0
	for _, r := range list {
		if r.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d shards did not sync", failed, len(list))
	}
	return nil
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.TimeOnly)
}
