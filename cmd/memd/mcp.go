package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/mcpserver"
)

func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp", "[flags]",
		"Serve memd's tools to an MCP client over standard input and output, as a client of the running daemon:\n"+
			"the client starts `memd mcp` with the agent's token in MEMD_TOKEN. Tools: remember, forget, edit_fact,\n"+
			"recall, memory_context, trace, history, list_shards, list_notes, read_note, create_note, edit_note, delete_note.")
	var cf clientFlags
	cf.register(fs, e)
	kind := fs.String("chat-kind", "", "chat kind every call declares: direct, group, routine or api (default: each call says, else group)")
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	ck, err := memd.ParseChatKind(*kind)
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	// The daemon may start after the MCP client; until then tools say so.
	if _, err := c.Status(ctx); err != nil {
		until := "until it is reachable"
		if memd.ErrorCode(err) == memd.EUNAUTHORIZED {
			until = "until MEMD_TOKEN holds a token memd issued (memd agent add)"
		}
		fmt.Fprintf(e.stderr, "memd mcp: %s (serving anyway; tools fail %s)\n", memd.ErrorMessage(err), until)
	}
	// The token names one caller for as long as this runs: its own shard
	// is asked for once it is known, not at each tool call.
	var (
		mu  sync.Mutex // tools may be called at once
		own memd.ShardID
	)
	srv := mcpserver.New(c, mcpserver.Options{
		Own: func(ctx context.Context) (memd.ShardID, error) {
			mu.Lock()
			defer mu.Unlock()
			if own.IsZero() {
				id, err := shardOrOwn(ctx, c, "")
				if err != nil {
					return id, err
				}
				own = id
			}
			return own, nil
		},
		ChatKind: ck,
	})
	stdio := newAnsweredFirst(ctx, e.stdin, e.stdout)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: stdio, Writer: stdio})
	if ctx.Err() != nil {
		return nil // interrupted
	}
	return err
}
