package main_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	memdcmd "github.com/memd/memd/cmd/memd"
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
// as a reader's own would be and no MEMD_ setting. It runs memd's entry
// point in this process: the usage is the same, and 39 starts of a
// race-built binary cost the suite 16 s of CPU.
func usage(t *testing.T, command string) string {
	t.Helper()
	var stdout, stderr strings.Builder
	getenv := func(name string) string {
		if name == "HOME" {
			return "~"
		}
		return ""
	}
	if code := memdcmd.Run(context.Background(), append(strings.Fields(command), "-h"), strings.NewReader(""), &stdout, &stderr, getenv); code != 0 {
		t.Errorf("memd %s -h: exit %d: %s", command, code, stderr.String())
	}
	return stdout.String()
}

// docs/cli.md shows every command's usage as the binary prints it: each
// block is compared with `memd CMD -h`, and every command `memd help`
// lists has one. `go test ./cmd/memd -run TestDocs_CLIUsage -update`
// rewrites the blocks after a flag changes.
func TestDocs_CLIUsage(t *testing.T) {
	doc := readDoc(t, "cli.md")
	// Every usage at once: each is a start of the binary.
	usages := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range usageBlock.FindAllStringSubmatch(doc, -1) {
		wg.Go(func() {
			u := usage(t, m[1])
			mu.Lock()
			usages[m[1]] = u
			mu.Unlock()
		})
	}
	wg.Wait()
	documented := map[string]bool{}
	stale := 0
	fixed := usageBlock.ReplaceAllStringFunc(doc, func(block string) string {
		m := usageBlock.FindStringSubmatch(block)
		command, shown := m[1], m[2]
		documented[strings.Fields(command)[0]] = true
		want := usages[command]
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
	serve.Env = append(os.Environ(), "HOME="+home)
	serve.Stderr = os.Stderr
	out, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(syscall.SIGTERM)
		if err := serve.Wait(); err != nil {
			t.Errorf("memd serve did not shut down cleanly: %v", err)
		}
	})
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.Contains(sc.Text(), "http://") {
		t.Fatalf("memd serve did not say where it listens: %q %v", sc.Text(), sc.Err())
	}
	line := sc.Text()
	go io.Copy(io.Discard, out)
	return line[strings.Index(line, "http://"):], home
}

// emptyAnswers are what memd prints when a read finds nothing: an example
// that prints one has gone stale.
var emptyAnswers = []string{"nothing found", "no commits", "has no notes", "no shards", `"hits":[]`, `"commits":[]`, `"facts":[]`, `"notes":[]`}

func looksEmpty(out string) bool {
	return slices.ContainsFunc(emptyAnswers, func(e string) bool { return strings.Contains(out, e) })
}

// The examples of docs/cli.md and docs/http-api.md run in order, as a
// reader pastes them, against a fresh daemon: each exits 0 and prints
// something, and no read finds nothing. The settings each document tells
// the reader to export are exported first (the daemon's address is the
// test daemon's), and each must be set.
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
			env := append(os.Environ(), "HOME="+home, "PATH="+work+":"+os.Getenv("PATH"), "GIT_CONFIG_GLOBAL=/dev/null", "PAGER=cat")
			var prelude strings.Builder
			var exported []string
			for _, cmd := range cmds {
				if setting, ok := strings.CutPrefix(cmd, "export "); ok {
					prelude.WriteString(cmd + "\n")
					name, _, _ := strings.Cut(setting, "=")
					exported = append(exported, name)
				}
			}
			prelude.WriteString("export MEMD_ADDR=" + url + "\n")
			check := exec.Command("bash", "-c", prelude.String()+`for v in "$@"; do [ -n "${!v}" ] || { echo "$v is empty"; exit 1; }; done`, "check")
			check.Args = append(check.Args, exported...)
			check.Dir, check.Env = work, env
			if out, err := check.CombinedOutput(); err != nil {
				t.Fatalf("the settings docs/%s exports: %v %s", name, err, out)
			}
			for _, cmd := range cmds {
				if strings.HasPrefix(cmd, "export ") {
					continue
				}
				c := exec.Command("bash", "-c", "set -o pipefail\n"+prelude.String()+cmd)
				c.Dir, c.Env = work, env
				got, err := c.CombinedOutput()
				if err != nil || len(strings.TrimSpace(string(got))) == 0 || looksEmpty(string(got)) {
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

// docs/mcp.md describes every tool memd serves under its own heading,
// names each of its arguments, and gives an example call; the examples
// run in order over streamable HTTP with an agent's token, each answered
// without a tool error and with something found.
func TestDocs_MCPExamples(t *testing.T) {
	doc := readDoc(t, "mcp.md")
	_, tools, ok := strings.Cut(doc, "\n## Tools\n")
	if !ok {
		t.Fatal("docs/mcp.md has no Tools section")
	}
	sections := map[string]string{} // tool -> its section
	var order []string
	heading := regexp.MustCompile("(?m)^### `([a-z_]+)`\n")
	bounds := heading.FindAllStringSubmatchIndex(tools, -1)
	for i, b := range bounds {
		end := len(tools)
		if i+1 < len(bounds) {
			end = bounds[i+1][0]
		}
		name := tools[b[2]:b[3]]
		sections[name] = tools[b[1]:end]
		order = append(order, name)
	}

	s := serve(t)
	token := agentToken(t, s, "alice", "apollo")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "docs", Version: "v1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	served := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		served++
		section, ok := sections[tool.Name]
		if !ok {
			t.Errorf("docs/mcp.md does not describe %s", tool.Name)
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		json.Unmarshal(schema, &in)
		for arg := range in.Properties {
			if !strings.Contains(section, "`"+arg+"`") {
				t.Errorf("docs/mcp.md does not name %s's argument %s", tool.Name, arg)
			}
		}
	}
	if served != len(sections) {
		t.Errorf("docs/mcp.md describes %d tools; memd serves %d", len(sections), served)
	}

	block := regexp.MustCompile("(?s)```json\n(.*?)```")
	for _, name := range order {
		examples := block.FindAllStringSubmatch(sections[name], -1)
		if len(examples) == 0 {
			t.Errorf("docs/mcp.md gives no example of %s", name)
		}
		for _, ex := range examples {
			var c toolCall
			if err := json.Unmarshal([]byte(ex[1]), &c); err != nil || c.Name != name {
				t.Errorf("an example under %s is not a call of it (%v): %s", name, err, ex[1])
				continue
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Name, Arguments: c.Arguments})
			if err != nil || res.IsError {
				t.Errorf("example %s: %v %+v", ex[1], err, res)
				continue
			}
			if text := res.Content[0].(*mcp.TextContent).Text; strings.TrimSpace(text) == "" || looksEmpty(text) {
				t.Errorf("example %s answered %q", ex[1], text)
			}
		}
	}
}

// make test runs every fuzz target: each `func FuzzX` of the module is
// listed in the Makefile's fuzz target, with its package; and it runs
// every test (the packages it leaves out hold benchmarks alone).
func TestMakefile_FuzzesEveryTarget(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := func(target string) string {
		m := regexp.MustCompile(`(?m)^` + target + `:.*\n((?:\t.*\n)+)`).FindStringSubmatch(string(makefile))
		if m == nil {
			t.Fatalf("the Makefile has no %s target", target)
		}
		return m[1]
	}
	fuzzRecipe, raceRecipe, testRecipe := recipe("fuzz"), recipe("race"), recipe("test")
	for _, target := range []string{"race", "fuzz"} {
		if !regexp.MustCompile(`\$\(MAKE\)[^;&]* ` + target + `\b`).MatchString(testRecipe) {
			t.Errorf("make test does not run make %s:\n%s", target, testRecipe)
		}
	}
	if !strings.Contains(raceRecipe, "$(BENCH_ONLY)") {
		t.Errorf("make race leaves out packages other than BENCH_ONLY's:\n%s", raceRecipe)
	}
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir(filepath.Join("..", ".."), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return cmp.Or(err, filepath.SkipDir)
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(filepath.Join("..", ".."), filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := "." // as the Makefile names packages: . or ./dir/
		if rel != "." {
			pkg = "./" + filepath.ToSlash(rel) + "/"
		}
		for _, m := range fuzz.FindAllStringSubmatch(string(src), -1) {
			found++
			line := fmt.Sprintf("\tgo test -run '^$$' -fuzz '^%s$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) %s\n", m[1], pkg)
			if !strings.Contains(fuzzRecipe, line) {
				t.Errorf("the Makefile does not fuzz %s in %s: no line with %q", m[1], pkg, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 10 {
		t.Errorf("found %d fuzz targets", found)
	}

	// The race run leaves out the packages that hold only benchmarks; a
	// test added to one would never run.
	m := regexp.MustCompile(`(?m)^BENCH_ONLY := (.*)$`).FindStringSubmatch(string(makefile))
	if m == nil {
		t.Fatal("the Makefile has no BENCH_ONLY")
	}
	for _, dir := range strings.Fields(m[1]) {
		files, _ := filepath.Glob(filepath.Join("..", "..", dir, "*_test.go"))
		if len(files) == 0 {
			t.Errorf("BENCH_ONLY names %s, which holds no benchmarks", dir)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if regexp.MustCompile(`(?m)^func (Test|Example)`).Match(src) {
				t.Errorf("%s has a test, but make race leaves %s out as benchmarks only", f, dir)
			}
		}
	}
}
