package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mcpClients holds the MCP clients from npm that these tests drive: the
// official TypeScript SDK and the inspector CLI (make test installs them).
const mcpClients = "testdata/mcpclients"

// needMCPClients returns the clients' directory, or skips the test when
// they are not installed, unless make test asked for them
// (MEMD_REQUIRE_MCP_CLIENTS), where their absence fails it.
func needMCPClients(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(mcpClients)
	if err != nil {
		t.Fatal(err)
	}
	_, errNode := exec.LookPath("node")
	_, errMods := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli"))
	if errNode != nil || errMods != nil {
		if os.Getenv("MEMD_REQUIRE_MCP_CLIENTS") != "" {
			t.Fatalf("the npm MCP clients are missing (node: %v; modules: %v)", errNode, errMods)
		}
		t.Skip("the npm MCP clients are not installed: make mcp-clients installs them")
	}
	return dir
}

// node runs a node program in dir with extra environment and returns what
// it printed on stdout.
func node(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// What differs between two stores given the same calls: commit hashes
// (they hash the time) and the times themselves. Fact IDs and note
// revisions hash content alone, so they must agree.
var (
	commitHash = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	clockTime  = regexp.MustCompile(`\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d)?)?`)
	fraction   = regexp.MustCompile(`(:\d\d)\.\d+`) // RFC 3339 drops a fraction's trailing zeros
	digit      = regexp.MustCompile(`\d`)
)

// normalize writes every commit hash (and its short form) as <commit> and
// every time with its digits as 0 and no fraction, keeping its shape and
// zone.
func normalize(b []byte) string {
	s := string(b)
	hashes := commitHash.FindAllString(s, -1)
	for _, h := range hashes {
		s = strings.ReplaceAll(s, h, "<commit>")
	}
	for _, h := range hashes {
		s = strings.ReplaceAll(s, h[:12], "<commit>")
	}
	s = fraction.ReplaceAllString(s, "$1")
	s = clockTime.ReplaceAllStringFunc(s, func(t string) string { return digit.ReplaceAllString(t, "0") })
	return strings.TrimSpace(s)
}

// sdkCall is one tool call check.mjs made.
type sdkCall struct {
	Name    string `json:"name"`
	IsError bool   `json:"isError"`
	Thrown  string `json:"thrown"` // the SDK's refusal of the answer
	Text    string `json:"text"`
}

// The official TypeScript SDK's client uses every tool over stdio and over
// streamable HTTP, against two stores given the same calls: the answers
// are the same on both, and the SDK finds every structured answer valid
// against its tool's output schema.
func TestMCP_TypeScriptSDKClient(t *testing.T) {
	dir := needMCPClients(t)
	overStdio, overHTTP := serve(t), serve(t)
	stdioToken, httpToken := agentToken(t, overStdio, "ts"), agentToken(t, overHTTP, "ts")

	stdioOut := node(t, dir, []string{"HOME=" + overStdio.home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=" + stdioToken, "MEMD_ADDR=" + overStdio.url},
		"check.mjs", "stdio", memdBin)
	httpOut := node(t, dir, nil, "check.mjs", "http", overHTTP.url+"/mcp", httpToken)

	if a, b := normalize(stdioOut), normalize(httpOut); a != b {
		t.Errorf("stdio and HTTP answer differently:\n--- stdio\n%s\n--- http\n%s", a, b)
	}
	var seen struct {
		Tools []struct {
			Name        string              `json:"name"`
			Annotations map[string]any      `json:"annotations"`
			Enums       map[string][]string `json:"enums"`
			OutputType  string              `json:"outputType"`
		} `json:"tools"`
		Calls []sdkCall `json:"calls"`
	}
	if err := json.Unmarshal(httpOut, &seen); err != nil {
		t.Fatalf("%v: %s", err, httpOut)
	}
	if len(seen.Tools) != 13 {
		t.Errorf("%d tools, want 13", len(seen.Tools))
	}
	for _, tool := range seen.Tools {
		if tool.Annotations == nil || tool.OutputType != "object" || !slices.Contains(tool.Enums["chat_kind"], "direct") {
			t.Errorf("tool %s: annotations %v, output schema type %q, chat_kind enum %v", tool.Name, tool.Annotations, tool.OutputType, tool.Enums["chat_kind"])
		}
	}
	// The last three calls pass values outside a closed set or range; the
	// refusal names what is allowed.
	refused := map[int]string{len(seen.Calls) - 3: "note-edit", len(seen.Calls) - 2: "between 1 and 50", len(seen.Calls) - 1: "episode"}
	for i, c := range seen.Calls {
		if c.Thrown != "" {
			t.Errorf("call %d (%s): the SDK refused the answer: %s", i, c.Name, c.Thrown)
		}
		want, bad := refused[i]
		switch {
		case bad && (!c.IsError || !strings.Contains(c.Text, want)):
			t.Errorf("call %d (%s) with a bad value: error %v, %q does not name %q", i, c.Name, c.IsError, c.Text, want)
		case !bad && c.IsError:
			t.Errorf("call %d (%s) failed: %s", i, c.Name, c.Text)
		}
	}
	for _, want := range []struct{ tool, text string }{
		{"recall", "Pat moved to Lisbon in October (from msg_1)"},
		{"trace", "we moved to Lisbon!"},
		{"edit_fact", "Pat drinks green tea"},
		{"delete_note", "deleted deploy.md"},
	} {
		i := slices.IndexFunc(seen.Calls, func(c sdkCall) bool { return c.Name == want.tool })
		if i < 0 || !strings.Contains(seen.Calls[i].Text, want.text) {
			t.Errorf("%s does not say %q: %+v", want.tool, want.text, seen.Calls)
		}
	}
}

// The inspector CLI from npm lists memd's tools, with their enums,
// annotations and output schemas, the same over both transports.
func TestMCP_InspectorCLI(t *testing.T) {
	dir := needMCPClients(t)
	s := serve(t)
	token := agentToken(t, s, "inspected")
	// inspector-cli 1.0.3 looks for its package.json as ../package.json
	// from the working directory, so it runs from its own build directory.
	build := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	overStdio := node(t, build, []string{"HOME=" + s.home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=" + token, "MEMD_ADDR=" + s.url},
		"cli.js", "--cli", memdBin, "mcp", "--method", "tools/list")
	overHTTP := node(t, build, nil,
		"cli.js", "--cli", s.url+"/mcp", "--transport", "http", "--header", "Authorization: Bearer "+token, "--method", "tools/list")
	if !bytes.Equal(overStdio, overHTTP) {
		t.Errorf("the tools differ:\n--- stdio\n%s\n--- http\n%s", overStdio, overHTTP)
	}
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]struct {
					Type string   `json:"type"`
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"inputSchema"`
			OutputSchema *struct {
				Type string `json:"type"`
			} `json:"outputSchema"`
			Annotations *struct {
				ReadOnlyHint    bool  `json:"readOnlyHint"`
				DestructiveHint *bool `json:"destructiveHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(overHTTP, &list); err != nil {
		t.Fatalf("%v: %s", err, overHTTP)
	}
	if len(list.Tools) != 13 {
		t.Errorf("%d tools, want 13", len(list.Tools))
	}
	enums := map[string]string{"chat_kind": "direct", "tier": "episode", "op": "note-edit"}
	for _, tool := range list.Tools {
		a := tool.Annotations
		if a == nil || (!a.ReadOnlyHint && a.DestructiveHint == nil) {
			t.Errorf("tool %s: annotations %+v", tool.Name, a)
		}
		if tool.OutputSchema == nil || tool.OutputSchema.Type != "object" {
			t.Errorf("tool %s: output schema %+v", tool.Name, tool.OutputSchema)
		}
		for name, p := range tool.InputSchema.Properties {
			if want, ok := enums[name]; ok && !slices.Contains(p.Enum, want) {
				t.Errorf("tool %s: %s is not an enum with %q: %v", tool.Name, name, want, p.Enum)
			}
			if p.Type == "" {
				t.Errorf("tool %s: %s has no single type", tool.Name, name)
			}
		}
	}
}
