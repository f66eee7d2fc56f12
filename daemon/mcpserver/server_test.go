package mcpserver

import "testing"

// /mcp builds a server per request: each tool's schema must be the same
// object every time, or the SDK's schema cache, keyed by it, grows with
// every request.
func TestInputSchema_MadeOnce(t *testing.T) {
	if a, b := inputSchema[RecallInput](), inputSchema[RecallInput](); a != b {
		t.Error("the recall tool's schema was made twice")
	}
	if s := inputSchema[RememberInput](); s.Properties["chat_kind"].Enum[0] != "" {
		t.Errorf("chat_kind's enum does not take an empty string: %v", s.Properties["chat_kind"].Enum)
	}
}
