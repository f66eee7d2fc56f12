package daemon

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/mcpserver"
)

// mcpHandler serves memd's MCP tools over streamable HTTP. It is stateless:
// every request carries the bearer token and gets a server bound to its
// caller, so no session outlives the token that opened it.
func mcpHandler(svc memd.Service, log *slog.Logger) http.Handler {
	cache := mcp.NewSchemaCache()
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		caller, _ := memd.CallerFrom(r.Context())
		return mcpserver.New(svc, mcpserver.Options{
			Bind:  func(ctx context.Context) context.Context { return memd.NewContext(ctx, caller) },
			Own:   func(context.Context) (memd.ShardID, error) { return ownShard(caller) },
			Cache: cache,
		})
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log})
}

// ownShard is an agent's own shard; an admin has none.
func ownShard(c memd.Caller) (memd.ShardID, error) {
	if c.Admin {
		return memd.ShardID{}, memd.Errorf(memd.EINVALID, "name the shard (agent/<name>, user/<id> or project/<slug>): the admin has no shard of its own")
	}
	return memd.AgentShard(c.Agent), nil
}
