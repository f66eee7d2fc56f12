package memd

import "context"

// Caller is who makes a call: an agent, or an admin (a person running memd),
// and the chat kind the call declares.
type Caller struct {
	Agent    string   // the agent the token names; "" for an admin
	Admin    bool     // an admin token: may read and write everything
	ChatKind ChatKind // as declared by the caller; "" reads as a group chat
}

// Name is how the caller appears in logs and commit authors.
func (c Caller) Name() string {
	if c.Admin {
		return "admin"
	}
	return c.Agent
}

// Direct reports whether the call declares a direct chat.
func (c Caller) Direct() bool { return c.ChatKind == ChatDirect }

type callerKey struct{}

// NewContext returns a context carrying the caller of a request.
func NewContext(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller carried by ctx.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
