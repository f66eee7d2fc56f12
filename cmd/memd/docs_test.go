package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the usage blocks of docs/cli.md from the binary")

// docPath is a file of the reference in docs/.
func docPath(name string) string { return filepath.Join("..", "..", "docs", name) }

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(docPath(name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// usageBlock is a heading "### memd CMD [SUB]" and the text block under it.
var usageBlock = regexp.MustCompile("(?m)^### `memd ([a-z ]+)`\n\n```text\n((?s:.*?))```\n")

// usage is what `memd CMD -h` prints, with the home directory written ~
// as a reader's own would be.
func usage(t *testing.T, command string) string {
	t.Helper()
	cmd := exec.Command(memdBin, append(strings.Fields(command), "-h")...)
	cmd.Env = append(os.Environ(), "HOME=~", "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=", "MEMD_ADDR=", "MEMD_LISTEN=",
		"MEMD_LOG_LEVEL=", "MEMD_LOG_FORMAT=", "MEMD_REMOTE=", "MEMD_SYNTHESIS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("memd %s -h: %v", command, err)
	}
	return string(out)
}

// docs/cli.md shows every command's usage as the binary prints it: each
// block is compared with `memd CMD -h`, and every command `memd help`
// lists has one. `go test ./cmd/memd -run TestDocs_CLIUsage -update`
// rewrites the blocks after a flag changes.
func TestDocs_CLIUsage(t *testing.T) {
	doc := readDoc(t, "cli.md")
	documented := map[string]bool{}
	stale := 0
	fixed := usageBlock.ReplaceAllStringFunc(doc, func(block string) string {
		m := usageBlock.FindStringSubmatch(block)
		command, shown := m[1], m[2]
		documented[strings.Fields(command)[0]] = true
		want := usage(t, command)
		if shown != want {
			stale++
			if !*update {
				t.Errorf("docs/cli.md shows for memd %s -h:\n%s\nthe binary prints:\n%s", command, shown, want)
			}
		}
		return "### `memd " + command + "`\n\n```text\n" + want + "```\n"
	})
	if *update && stale > 0 {
		if err := os.WriteFile(docPath("cli.md"), []byte(fixed), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d usage blocks", stale)
	}
	help, err := exec.Command(memdBin, "help").Output()
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(string(help), -1)
	if len(listed) < 20 {
		t.Fatalf("memd help lists %d commands:\n%s", len(listed), help)
	}
	for _, c := range listed {
		if !documented[c[1]] {
			t.Errorf("docs/cli.md has no usage of memd %s", c[1])
		}
	}
}

// docShell is one command of a ```sh block, joined across backslashed
// line ends.
func docShell(section string) []string {
	var cmds []string
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		for _, cmd := range strings.Split(strings.ReplaceAll(b[1], "\\\n", " "), "\n") {
			if cmd = strings.TrimSpace(cmd); cmd != "" && !strings.HasPrefix(cmd, "#") {
				cmds = append(cmds, cmd)
			}
		}
	}
	return cmds
}

// docDaemon starts memd serve on a free port for a document's examples and
// returns its URL and home directory.
func docDaemon(t *testing.T) (url, home string) {
	t.Helper()
	home = t.TempDir()
	serve := exec.Command(memdBin, "serve", "--listen", "127.0.0.1:0", "--no-fsync")
	serve.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=")
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-serve.Process.Pid, syscall.SIGTERM); serve.Wait() })
	sc := bufio.NewScanner(out)
	sc.Scan()
	line := sc.Text()
	go io.Copy(io.Discard, out)
	return line[strings.Index(line, "http://"):], home
}

// The examples of docs/cli.md and docs/http-api.md run in order, as a
// reader pastes them, against a fresh daemon: each exits 0 and prints
// something (and no search finds nothing). They find the daemon in MEMD_ADDR and the admin token in
// TOKEN, as each document's first lines tell the reader to set them.
func TestDocs_ShellExamples(t *testing.T) {
	for _, name := range []string{"cli.md", "http-api.md"} {
		t.Run(name, func(t *testing.T) {
			cmds := docShell(readDoc(t, name))
			if len(cmds) < 8 {
				t.Fatalf("docs/%s has %d examples", name, len(cmds))
			}
			url, home := docDaemon(t)
			work := t.TempDir()
			if err := os.Symlink(memdBin, filepath.Join(work, "memd")); err != nil {
				t.Fatal(err)
			}
			token, err := os.ReadFile(filepath.Join(home, ".local", "share", "memd", "admin.token"))
			if err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=", "MEMD_ADDR="+url,
				"TOKEN="+strings.TrimSpace(string(token)), "PATH="+work+":"+os.Getenv("PATH"), "GIT_CONFIG_GLOBAL=/dev/null", "PAGER=cat")
			for _, cmd := range cmds {
				if strings.HasPrefix(cmd, "export ") {
					continue // the setting the test makes itself
				}
				c := exec.Command("bash", "-c", "set -o pipefail; "+cmd)
				c.Dir, c.Env = work, env
				got, err := c.CombinedOutput()
				if err != nil || len(strings.TrimSpace(string(got))) == 0 || strings.Contains(string(got), "nothing found") {
					t.Errorf("%s: %v\n%s", cmd, err, got)
				}
			}
		})
	}
}

// toolCall is an example in docs/mcp.md: a ```json block holding a tool's
// name and arguments.
type toolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// docs/mcp.md names every tool memd serves, and its example calls run in
// order over streamable HTTP with an agent's token, each answered without
// a tool error.
func TestDocs_MCPExamples(t *testing.T) {
	doc := readDoc(t, "mcp.md")
	s := serve(t)
	token := agentToken(t, s, "alice", "apollo")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "docs", Version: "v1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	headings := regexp.MustCompile("(?m)^### `([a-z_]+)`").FindAllStringSubmatch(doc, -1)
	var documented []string
	for _, h := range headings {
		documented = append(documented, h[1])
	}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(documented, tool.Name) {
			t.Errorf("docs/mcp.md does not describe %s", tool.Name)
		}
	}
	examples := regexp.MustCompile("(?s)```json\n(\\{\"name\".*?)```").FindAllStringSubmatch(doc, -1)
	if len(examples) < 8 {
		t.Fatalf("docs/mcp.md has %d example calls", len(examples))
	}
	for _, ex := range examples {
		var c toolCall
		if err := json.Unmarshal([]byte(ex[1]), &c); err != nil {
			t.Errorf("example %s: %v", ex[1], err)
			continue
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Name, Arguments: c.Arguments})
		if err != nil || res.IsError {
			t.Errorf("example %s: %v %+v", ex[1], err, res)
			continue
		}
		if text := res.Content[0].(*mcp.TextContent).Text; strings.TrimSpace(text) == "" || strings.Contains(text, "nothing found") {
			t.Errorf("example %s answered %q", ex[1], text)
		}
	}
}
