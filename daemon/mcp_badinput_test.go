package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
)

// mcpAs connects the SDK's client to /mcp with a token (and a query).
func mcpAs(t *testing.T, e *env, token, query string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: e.d.URL() + "/mcp" + query,
		HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memd-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	b, _ := json.Marshal(res.Content[0])
	return string(b)
}

// Held: bad input to every tool is a tool error, never a protocol failure,
// and only the caller's own shard moves (by the valid create_note).
func TestMCP_BadInputEveryTool(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	a, _ := e.admin.AddAgent(ctx, "alice", []string{"apollo"})
	e.admin.AddAgent(ctx, "bob", []string{"zeus"})
	bobFact, _ := e.admin.Remember(ctx, memd.RememberRequest{Shard: memd.AgentShard("bob"), Text: "Bob's secret"})
	e.admin.ChatKind = memd.ChatDirect
	patFact, _ := e.admin.Remember(ctx, memd.RememberRequest{Shard: memd.UserShard("pat"), Text: "Pat's secret"})
	e.admin.ChatKind = ""
	e.admin.CreateNote(ctx, memd.CreateNoteRequest{Shard: memd.AgentShard("bob"), Path: "b.md", Text: "# B\n\nbob note\n"})
	e.admin.Remember(ctx, memd.RememberRequest{Shard: memd.ProjectShard("zeus"), Text: "Zeus secret"})
	before := heads(t, e)
	cs := mcpAs(t, e, a.Token, "")
	big := strings.Repeat("x", 200000)
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"remember", map[string]any{}},
		{"remember", map[string]any{"text": ""}},
		{"remember", map[string]any{"text": "   "}},
		{"remember", map[string]any{"text": "x", "date": "20261201"}},
		{"remember", map[string]any{"text": "x", "shard": "project/zeus"}},
		{"remember", map[string]any{"text": "x", "shard": "nonsense"}},
		{"remember", map[string]any{"text": "x", "shard": "agent/"}},
		{"remember", map[string]any{"text": "x", "shard": "agent/ALICE"}},
		{"remember", map[string]any{"text": "x", "shard": "user/pat"}},
		{"remember", map[string]any{"text": "x", "source_messages": make([]string, 101)}},
		{"remember", map[string]any{"text": "x", "source_chat": strings.Repeat("c", 201)}},
		{"remember", map[string]any{"text": "x", "source_excerpt": strings.Repeat("c", 3000)}},
		{"remember", map[string]any{"text": "x", "foo": 1}},
		{"remember", map[string]any{"text": "x", "tier": "bogus"}},
		{"remember", map[string]any{"text": big}},
		{"forget", map[string]any{}},
		{"forget", map[string]any{"id": bobFact.Fact.ID, "shard": "agent/bob"}},
		{"forget", map[string]any{"id": patFact.Fact.ID, "shard": "user/pat"}},
		{"edit_fact", map[string]any{"id": bobFact.Fact.ID, "shard": "agent/bob", "text": "y"}},
		{"edit_fact", map[string]any{"id": "000000000000", "text": "a\nb"}},
		{"edit_fact", map[string]any{"id": "000000000000"}},
		{"recall", map[string]any{"query": big}},
		{"recall", map[string]any{"query": "x", "k": 0}},
		{"recall", map[string]any{"query": "x", "k": -1}},
		{"recall", map[string]any{"query": "x", "k": "5"}},
		{"recall", map[string]any{"query": "x", "k": 1.5}},
		{"recall", map[string]any{"query": "secret", "user": "Pat!"}},
		{"recall", map[string]any{"query": "secret", "user": "pat"}},
		{"recall", map[string]any{"query": "secret", "projects": []string{"zeus"}}},
		{"recall", map[string]any{"query": "secret", "agent": "bob"}},
		{"recall", map[string]any{"query": "secret", "at": "garbage"}},
		{"recall", map[string]any{"query": "secret", "at": "2026-02-30"}},
		{"recall", map[string]any{"query": "secret", "projects": nil}},
		{"memory_context", map[string]any{"agent": "bob"}},
		{"memory_context", map[string]any{"since": "garbage"}},
		{"memory_context", map[string]any{"at": "garbage"}},
		{"memory_context", map[string]any{"user": "pat"}},
		{"memory_context", map[string]any{"projects": []string{"zeus"}}},
		{"trace", map[string]any{"id": bobFact.Fact.ID, "shard": "agent/bob"}},
		{"trace", map[string]any{"id": patFact.Fact.ID, "shard": "user/pat"}},
		{"trace", map[string]any{"id": bobFact.Fact.ID}},
		{"history", map[string]any{"limit": -1}},
		{"history", map[string]any{"op": "bogus"}},
		{"history", map[string]any{"author": "x\ny"}},
		{"history", map[string]any{"message": big}},
		{"history", map[string]any{"shard": "agent/bob"}},
		{"history", map[string]any{"shard": "project/zeus"}},
		{"list_shards", map[string]any{"user": "pat"}},
		{"list_shards", map[string]any{"user": "pat", "chat_kind": "direct"}},
		{"list_notes", map[string]any{"shard": "agent/bob"}},
		{"read_note", map[string]any{"shard": "agent/bob", "path": "b.md"}},
		{"read_note", map[string]any{"path": ""}},
		{"read_note", map[string]any{"path": "x"}},
		{"read_note", map[string]any{"path": "b.md", "at": "garbage"}},
		{"create_note", map[string]any{"path": "Notes/X.md", "text": "x"}},
		{"create_note", map[string]any{"path": "a.txt", "text": "x"}},
		{"create_note", map[string]any{"path": "empty.md", "text": ""}},
		{"create_note", map[string]any{"path": "b.md", "text": "x", "shard": "agent/bob"}},
		{"edit_note", map[string]any{"path": "b.md", "shard": "agent/bob", "edits": []map[string]any{{"op": "delete", "find": "bob"}}}},
		{"edit_note", map[string]any{"path": "none.md", "edits": []map[string]any{}}},
		{"edit_note", map[string]any{"path": "none.md", "edits": nil}},
		{"edit_note", map[string]any{"path": "none.md", "edits": []map[string]any{{"op": "bogus"}}}},
		{"delete_note", map[string]any{"path": "b.md", "shard": "agent/bob"}},
		{"delete_note", map[string]any{"path": "none.md"}},
	}
	for _, c := range cases {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		args, _ := json.Marshal(c.args)
		if err != nil {
			t.Errorf("PROTOCOL %s %.120s: %v", c.tool, args, err)
			continue
		}
		t.Logf("%s %.120s: isError=%v %.200q", c.tool, args, res.IsError, callText(res))
	}
	if after := heads(t, e); len(after) != len(before) {
		t.Logf("shards: before %v after %v", before, after)
	}
	for k, v := range heads(t, e) {
		if before[k] != v && k != "agent/alice" {
			t.Errorf("HEAD of %s moved", k)
		}
	}
}

// Held: the connection's chat kind and the call's must agree, and user
// memory is reached only in a direct chat.
func TestMCP_ChatKinds(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	a, _ := e.admin.AddAgent(ctx, "alice", []string{"apollo"})
	e.admin.ChatKind = memd.ChatDirect
	e.admin.Remember(ctx, memd.RememberRequest{Shard: memd.UserShard("pat"), Text: "Pat's secret"})
	for _, q := range []string{"?chat_kind=group", "?chat_kind=direct", "?chat_kind=routine"} {
		cs := mcpAs(t, e, a.Token, q)
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"remember", map[string]any{"text": "x " + q, "shard": "user/pat", "chat_kind": "direct"}},
			{"remember", map[string]any{"text": "y " + q, "shard": "user/pat"}},
			{"recall", map[string]any{"query": "secret", "user": "pat", "chat_kind": "direct"}},
			{"recall", map[string]any{"query": "secret", "user": "pat"}},
			{"list_shards", map[string]any{"user": "pat"}},
			{"trace", map[string]any{"shard": "user/pat", "id": "000000000000"}},
		} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			args, _ := json.Marshal(c.args)
			if err != nil {
				t.Errorf("%s PROTOCOL %s %.120s: %v", q, c.tool, args, err)
				continue
			}
			t.Logf("%s %s %.120s: isError=%v %.200q", q, c.tool, args, res.IsError, callText(res))
		}
	}
}

// A remember over MCP whose JSON would be read as other text than sent
// (a byte that is not UTF-8, half a surrogate pair) is refused before
// the tool runs, and nothing is kept; the same call with the text whole
// is made.
func TestMCP_TextSentAsMeant(t *testing.T) {
	e := start(t)
	a, err := e.admin.AddAgent(context.Background(), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(text string) (int, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"text":"` + text + `"}}}`
		req, err := http.NewRequest(http.MethodPost, e.d.URL()+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+a.Token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, text := range []string{"bad \xff byte", `lone \ud800 half`} {
		if status, body := call(text); status != http.StatusBadRequest || !strings.Contains(body, "UTF") {
			t.Errorf("remember %q: %d %s, want 400 naming UTF-8 or UTF-16", text, status, body)
		}
	}
	if status, body := call(`whole \ud83d\ude00 pair`); status != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("remember with the pair whole: %d %s", status, body)
	}
	list, err := e.admin.Facts(context.Background(), memd.FactsQuery{Shard: memd.AgentShard("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Facts) != 1 || list.Facts[0].Text != "whole \U0001F600 pair" {
		t.Errorf("facts kept: %+v, want the whole pair's alone", list.Facts)
	}
}
