package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
)

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// agentToken adds an agent and returns its token.
func agentToken(t *testing.T, s *server, name string, projects ...string) string {
	t.Helper()
	args := []string{"agent", "add", "--json", name}
	for _, p := range projects {
		args = append(args, "--project", p)
	}
	var a memd.NewAgent
	if err := json.Unmarshal([]byte(s.must(args...)), &a); err != nil {
		t.Fatal(err)
	}
	return a.Token
}

// The SDK's own client calls every tool, over stdio (`memd mcp`, a client
// of the running daemon) and over streamable HTTP at /mcp.
func TestMCP_EveryToolOverBothTransports(t *testing.T) {
	s := serve(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			ctx := context.Background()
			agent := "mcp-" + transport
			token := agentToken(t, s, agent)
			var tr mcp.Transport
			if transport == "stdio" {
				cmd := exec.Command(memdBin, "mcp")
				cmd.Env = append(os.Environ(), "HOME="+s.home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN="+token, "MEMD_ADDR="+s.url)
				cmd.Stderr = os.Stderr
				tr = &mcp.CommandTransport{Command: cmd}
			} else {
				tr = &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp",
					HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			asked := statusCalls(t, s.url)
			testEveryTool(t, ctx, cs, agent)
			// memd mcp asks for its caller's own shard once, not at each
			// call of a tool without a shard.
			if n := statusCalls(t, s.url) - asked; transport == "stdio" && n > 1 {
				t.Errorf("memd mcp asked for the status %d times", n)
			}
			// memd mcp exits cleanly (a race-built one stops with an error
			// on a race).
			if err := cs.Close(); err != nil {
				t.Errorf("closing the session: %v", err)
			}
		})
	}
}

// statusCalls is how many status requests memd answered, by its metrics.
func statusCalls(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`memd_http_request_seconds_count\{route="GET /v1/status",status="200"\} (\d+)`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return "error: " + text, nil
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if err := outputValid(ctx, cs, name, out); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return text, out
}

// outputValid checks a tool's structured content against the output
// schema the tool declares, as a client that reads it would.
func outputValid(ctx context.Context, cs *mcp.ClientSession, name string, out map[string]any) error {
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, tool := range tools.Tools {
		if tool.Name != name {
			continue
		}
		if tool.OutputSchema == nil {
			return fmt.Errorf("structured content without an output schema")
		}
		var schema jsonschema.Schema
		b, _ := json.Marshal(tool.OutputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			return err
		}
		if schema.Type != "object" {
			return fmt.Errorf("output schema of type %q, want object", schema.Type)
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			return err
		}
		return resolved.Validate(out)
	}
	return fmt.Errorf("no tool %s", name)
}

func testEveryTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, agent string) {
	var names []string
	reading := []string{"recall", "memory_context", "trace", "history", "list_shards", "list_notes", "read_note"}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
		names = append(names, tool.Name)
		// Annotations, so a client may let reads through unasked.
		a := tool.Annotations
		switch {
		case a == nil:
			t.Errorf("tool %s has no annotations", tool.Name)
		case slices.Contains(reading, tool.Name) != a.ReadOnlyHint:
			t.Errorf("tool %s: readOnlyHint %v", tool.Name, a.ReadOnlyHint)
		case !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint != (tool.Name == "forget" || tool.Name == "edit_fact" || tool.Name == "edit_note" || tool.Name == "delete_note")):
			t.Errorf("tool %s: destructiveHint %v", tool.Name, a.DestructiveHint)
		}
		// Closed sets are enums; no type is a union with null.
		schema, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(schema), `"null"`) {
			t.Errorf("tool %s's schema has a null union: %s", tool.Name, schema)
		}
		var parsed struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		json.Unmarshal(schema, &parsed)
		for prop, want := range map[string]string{"chat_kind": "direct", "tier": "episode", "op": "note-edit"} {
			if p, ok := parsed.Properties[prop]; ok && !slices.Contains(p.Enum, want) {
				t.Errorf("tool %s: %s is not an enum with %q: %s", tool.Name, prop, want, schema)
			}
		}
		if _, ok := parsed.Properties["shard"]; ok && tool.Name != "list_shards" {
			if _, ok := parsed.Properties["chat_kind"]; !ok {
				t.Errorf("tool %s reads a shard but takes no chat_kind", tool.Name)
			}
		}
	}
	want := "create_note delete_note edit_fact edit_note forget history list_notes list_shards memory_context read_note recall remember trace"
	slices.Sort(names)
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tools: %s, want %s", got, want)
	}

	text, out := call(t, ctx, cs, "remember", map[string]any{"text": "Pat moved to Lisbon in October", "source_messages": []string{"msg_77"}, "source_chat": "chat_3",
		"source_excerpt": "Pat: we finally moved to Lisbon!"})
	if !strings.HasPrefix(text, "remembered ") {
		t.Fatalf("remember: %s", text)
	}
	id := out["fact"].(map[string]any)["id"].(string)
	if text, _ := call(t, ctx, cs, "recall", map[string]any{"query": "where does Pat live?"}); !strings.Contains(text, "Lisbon") || !strings.Contains(text, "msg_77") {
		t.Errorf("recall: %s", text)
	}
	if text, _ := call(t, ctx, cs, "recall", map[string]any{"query": "Pat in Lisbon", "explain": true}); !strings.Contains(text, `term "lisbon"`) {
		t.Errorf("recall with explain: %s", text)
	}
	text, out = call(t, ctx, cs, "memory_context", map[string]any{})
	if !strings.Contains(text, "Pat moved to Lisbon") {
		t.Errorf("memory_context: %s", text)
	}
	if text, _ := call(t, ctx, cs, "memory_context", map[string]any{"since": out["stamp"]}); !strings.HasPrefix(text, "nothing changed") {
		t.Errorf("memory_context since its own stamp: %s", text)
	}
	if text, _ := call(t, ctx, cs, "trace", map[string]any{"id": id}); !strings.Contains(text, "msg_77") || !strings.Contains(text, "chat_3") ||
		!strings.Contains(text, "we finally moved to Lisbon!") {
		t.Errorf("trace: %s", text)
	}
	if text, _ := call(t, ctx, cs, "history", map[string]any{"message": "msg_77"}); !strings.Contains(text, "+ "+id) {
		t.Errorf("history: %s", text)
	}

	if text, _ := call(t, ctx, cs, "create_note", map[string]any{"path": "deploy.md", "text": "# Deploy\n\n1. Build.\n2. Ship.\n"}); !strings.HasPrefix(text, "created deploy.md") {
		t.Fatalf("create_note: %s", text)
	}
	if text, _ := call(t, ctx, cs, "list_notes", map[string]any{}); !strings.Contains(text, "deploy.md") {
		t.Errorf("list_notes: %s", text)
	}
	// A passage of a note found by recall says how to open it, and its ID
	// given to trace says it is a note's.
	text, found := call(t, ctx, cs, "recall", map[string]any{"query": "Build Ship deploy"})
	if !strings.Contains(text, "note deploy.md") || !strings.Contains(text, "read_note") {
		t.Errorf("recall of a note: %s", text)
	}
	for _, h := range found["hits"].([]any) {
		if hit := h.(map[string]any); hit["note"] == "deploy.md" {
			if text, _ := call(t, ctx, cs, "trace", map[string]any{"id": hit["id"]}); !strings.Contains(text, "passage of note deploy.md") {
				t.Errorf("trace of a note passage's ID %v: %s", hit["id"], text)
			}
		}
	}
	_, note := call(t, ctx, cs, "read_note", map[string]any{"path": "deploy.md"})
	rev := note["revision"].(string)
	text, _ = call(t, ctx, cs, "edit_note", map[string]any{"path": "deploy.md", "expectedRevision": rev,
		"edits": []map[string]any{{"op": "insert_after", "anchor": "1. Build.\n", "text": "1b. Test.\n"}}})
	if !strings.HasPrefix(text, "edited deploy.md") {
		t.Fatalf("edit_note: %s", text)
	}
	// A path climbing out of the shard is refused on every transport, not
	// cleaned into another shard's note on its way.
	for _, path := range []string{"../../../project/apollo/notes/runbooks/deploy.md", "a/../../x.md", "../deploy.md"} {
		text, _ = call(t, ctx, cs, "edit_note", map[string]any{"path": path, "edits": []map[string]any{{"op": "insert_after", "anchor": "1. Build.\n", "text": "x\n"}}})
		if !strings.HasPrefix(text, "error: invalid: ") {
			t.Errorf("edit_note %s: %s", path, text)
		}
		if text, _ = call(t, ctx, cs, "read_note", map[string]any{"path": path}); !strings.HasPrefix(text, "error: invalid: ") {
			t.Errorf("read_note %s: %s", path, text)
		}
	}
	// Failures are tool errors carrying memd's codes.
	text, _ = call(t, ctx, cs, "edit_note", map[string]any{"path": "deploy.md", "expectedRevision": rev,
		"edits": []map[string]any{{"op": "delete", "find": "2. Ship."}}})
	if !strings.HasPrefix(text, "error: revision_mismatch: ") {
		t.Errorf("stale revision: %s", text)
	}
	text, _ = call(t, ctx, cs, "edit_note", map[string]any{"path": "deploy.md", "edits": []map[string]any{{"op": "insert_before", "anchor": ".", "text": "x"}}})
	if !strings.HasPrefix(text, "error: anchor_ambiguous: edit 1 (insert_before)") {
		t.Errorf("ambiguous anchor: %s", text)
	}
	tea := "Likes tea, said to " + agent
	if text, _ := call(t, ctx, cs, "remember", map[string]any{"shard": "user/pat", "text": tea}); !strings.HasPrefix(text, "error: forbidden (rule user-memory-direct-chat): ") {
		t.Errorf("user memory from a group chat: %s", text)
	}
	if text, _ := call(t, ctx, cs, "remember", map[string]any{"shard": "user/pat", "text": tea, "chat_kind": "direct"}); !strings.HasPrefix(text, "remembered ") {
		t.Errorf("user memory from a direct chat: %s", text)
	}
	if text, _ := call(t, ctx, cs, "remember", map[string]any{"shard": "agent/someone-else", "text": "x"}); !strings.HasPrefix(text, "error: forbidden (rule agent-own-shard)") {
		t.Errorf("another agent's shard: %s", text)
	}
	if text, _ := call(t, ctx, cs, "forget", map[string]any{"id": id, "source_messages": []string{"msg_78"}}); !strings.HasPrefix(text, "forgot "+id) {
		t.Errorf("forget: %s", text)
	}
	if text, _ := call(t, ctx, cs, "forget", map[string]any{"id": "zz"}); !strings.HasPrefix(text, "error: invalid: ") {
		t.Errorf("bad ID: %s", text)
	}

	// The tools the API had and MCP lacked.
	_, out = call(t, ctx, cs, "remember", map[string]any{"text": "Pat drinks tea"})
	tid := out["fact"].(map[string]any)["id"].(string)
	if text, _ := call(t, ctx, cs, "edit_fact", map[string]any{"id": tid, "text": "Pat drinks green tea", "source_messages": []string{"msg_80"}}); !strings.HasPrefix(text, "rewrote "+tid) {
		t.Errorf("edit_fact: %s", text)
	}
	if text, _ := call(t, ctx, cs, "list_shards", map[string]any{"chat_kind": "direct"}); !strings.Contains(text, "agent/"+agent) || strings.Contains(text, "user/pat") {
		t.Errorf("list_shards names a person not asked about: %s", text)
	}
	if text, _ := call(t, ctx, cs, "list_shards", map[string]any{"chat_kind": "direct", "user": "pat"}); !strings.Contains(text, "user/pat") {
		t.Errorf("list_shards of the person named: %s", text)
	}
	// An empty string, as models send for "not given", is not given.
	if text, _ := call(t, ctx, cs, "recall", map[string]any{"query": "tea", "chat_kind": "", "user": ""}); strings.HasPrefix(text, "error") {
		t.Errorf("recall with empty optional strings: %s", text)
	}
	_, note = call(t, ctx, cs, "read_note", map[string]any{"path": "deploy.md"})
	if text, _ := call(t, ctx, cs, "delete_note", map[string]any{"path": "deploy.md", "expectedRevision": note["revision"]}); !strings.HasPrefix(text, "deleted deploy.md") {
		t.Errorf("delete_note: %s", text)
	}
	// Values outside a closed set or a range are refused, not bent.
	for _, bad := range []struct {
		tool string
		args map[string]any
	}{
		{"history", map[string]any{"op": "bogus"}},
		{"recall", map[string]any{"query": "tea", "k": 0}},
		{"remember", map[string]any{"text": "x", "tier": "forever"}},
		{"recall", map[string]any{"query": "tea", "chat_kind": "whisper"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bad.tool, Arguments: bad.args})
		if err == nil && !res.IsError {
			t.Errorf("%s %v was accepted", bad.tool, bad.args)
		}
	}
}

// /mcp wants a token like every other endpoint.
func TestMCP_HTTPNeedsAToken(t *testing.T) {
	s := serve(t)
	resp, err := http.Post(s.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", resp.StatusCode)
	}
}

// memd mcp started with a token memd never issued says so, rather than
// waiting for a daemon that is running.
func TestMCP_StdioWithAnUnknownToken(t *testing.T) {
	s := serve(t)
	out, err := s.memd([]string{"MEMD_TOKEN=memd_wrong"}, "mcp")
	if err != nil || !strings.Contains(out, "unknown token") || !strings.Contains(out, "MEMD_TOKEN holds a token memd issued") {
		t.Errorf("memd mcp with a wrong token: %v, %q", err, out)
	}
}

// A line memd mcp cannot read (not JSON, or JSON that is no JSON-RPC
// message) is answered with an error, and the requests before and after
// it are answered and made: it does not end the session.
func TestMCP_StdioGoesOnPastALineItCannotRead(t *testing.T) {
	s := serve(t)
	token := agentToken(t, s, "piper")
	requests := strings.Join([]string{
		initializeLine, initializedLine,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{"text":"Before the garbage"}}}`,
		`garbage{{`,
		`{"foo":1}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remember","arguments":{"text":"After the garbage"}}}`,
	}, "\n") + "\n"
	out := mcpPipedIn(t, s, token, requests)
	answers := map[string]string{} // by ID, "error" or "result"
	refused := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			ID    json.RawMessage     `json:"id"`
			Error *struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		switch {
		case string(m.ID) == "null" && m.Error != nil && (m.Error.Code == -32700 || m.Error.Code == -32600):
			refused++
		case m.Error != nil:
			answers[string(m.ID)] = "error"
		default:
			answers[string(m.ID)] = "result"
		}
	}
	if refused != 2 || answers["1"] != "result" || answers["2"] != "result" || answers["3"] != "result" {
		t.Errorf("answered %v and refused %d lines, want 1, 2 and 3 answered and 2 lines refused:\n%s", answers, refused, out)
	}
	facts := s.must("facts", "--shard", "agent/piper")
	for _, text := range []string{"Before the garbage", "After the garbage"} {
		if !strings.Contains(facts, text) {
			t.Errorf("%q was not remembered: %s", text, facts)
		}
	}
}

// A client that writes its requests and closes memd mcp's input, as a
// script piping them in does, gets every answer (in any order), and its
// remember is made.
func TestMCP_StdioAnswersRequestsPipedIn(t *testing.T) {
	s := serve(t)
	token := agentToken(t, s, "piper")
	requests := strings.Join([]string{
		initializeLine, initializedLine,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"remember","arguments":{"text":"Piped in from a script"}}}`,
	}, "\n") // the last without its line end, as printf '%s' leaves it
	out := mcpPipedIn(t, s, token, requests)
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Error != nil {
			t.Errorf("answer %q", line)
		}
		ids = append(ids, string(m.ID))
	}
	if slices.Sort(ids); !slices.Equal(ids, []string{`"three"`, "1", "2"}) {
		t.Errorf("answered %v, want 1, 2 and \"three\"", ids)
	}
	if facts := s.must("facts", "--shard", "agent/piper"); !strings.Contains(facts, "Piped in from a script") {
		t.Errorf("the remember piped in was not made: %s", facts)
	}
}

// The first two lines a client sends memd mcp.
const (
	initializeLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// mcpPipedIn runs memd mcp as token's agent with requests as its whole
// input, as a script piping them in does, and returns what it answered.
func mcpPipedIn(t *testing.T, s *server, token, requests string) []byte {
	t.Helper()
	cmd := exec.Command(memdBin, "mcp")
	cmd.Env = append(os.Environ(), "HOME="+s.home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN="+token, "MEMD_ADDR="+s.url)
	cmd.Stdin = strings.NewReader(requests)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("memd mcp: %v; answered:\n%s", err, out)
	}
	return out
}
