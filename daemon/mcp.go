package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
	return sentAsMeant(mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		caller, _ := memd.CallerFrom(r.Context())
		return mcpserver.New(svc, mcpserver.Options{
			Bind:  func(ctx context.Context) context.Context { return memd.NewContext(ctx, caller) },
			Own:   func(context.Context) (memd.ShardID, error) { return ownShard(caller) },
			Cache: cache,
		})
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log}))
}

// sentAsMeant refuses a request whose JSON would be read as other text
// than was sent (memd.CheckJSONText): the MCP server's decoder reads a
// byte that is not UTF-8, or half a surrogate pair, as U+FFFD, and a fact
// would be kept with it. Like the MCP server's own refusals of a body, the
// answer is a 400 in plain text.
func sentAsMeant(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			http.Error(w, fmt.Sprintf("Request Entity Too Large: an MCP request is at most %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			http.Error(w, "Bad Request: read the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := memd.CheckJSONText(body); err != nil {
			http.Error(w, "Bad Request: "+memd.ErrorMessage(err), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// ownShard is an agent's own shard; an admin has none.
func ownShard(c memd.Caller) (memd.ShardID, error) {
	if c.Admin {
		return memd.ShardID{}, memd.Errorf(memd.EINVALID, "name the shard (agent/<name>, user/<id> or project/<slug>): the admin has no shard of its own")
	}
	return memd.AgentShard(c.Agent), nil
}
