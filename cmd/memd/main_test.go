package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	memdcmd "github.com/memd/memd/cmd/memd"
	"github.com/memd/memd/internal/memdtest"
	"github.com/memd/memd/internal/scriptedmodel"
)

var memdBin string

func TestMain(m *testing.M) { memdtest.Main(m, &memdBin) }

// server is a running `memd serve`.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	data string
	home string
}

// serve starts the real binary on a free loopback port and reads the URL it
// prints.
func serve(t *testing.T) *server {
	return serveAt(t, t.TempDir(), "127.0.0.1:0")
}

// serveAt starts memd serve with a home directory and listen address, and
// any other flags.
func serveAt(t *testing.T, home, listen string, flags ...string) *server {
	t.Helper()
	s := &server{t: t, home: home, data: filepath.Join(home, ".local", "share", "memd")}
	s.cmd = exec.Command(memdBin, append([]string{"serve", "--listen", listen, "--no-fsync"}, flags...)...)
	s.cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=", "MEMD_ADDR=")
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("memd serve printed nothing: %v", sc.Err())
	}
	first := sc.Text()
	i := strings.Index(first, "http://")
	if i < 0 {
		t.Fatalf("memd serve's first line has no URL: %q", first)
	}
	s.url = first[i:]
	go func() {
		for sc.Scan() {
		}
	}()
	return s
}

func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("memd serve did not shut down cleanly on SIGTERM: %v", err)
	}
}

// memd runs a CLI command against the server and returns its output.
// memd runs a memd command against the daemon as a user types it, and
// returns what it printed (stdout and stderr together). It runs memd's
// entry point in this process, as main does, with its own environment: the
// daemon stays a process of its own and is reached over HTTP, the CLI's
// code is checked by the race detector here, and the suite is spared the
// start of a race-built binary per command (0.2 s of CPU each, hundreds of
// times). What only a process shows (serve, the MCP server on stdio, the
// version the build stamps, exit codes and the split of stdout from
// stderr) runs the binary, here and in the walkthrough and docs tests.
func (s *server) memd(env []string, args ...string) (string, error) {
	environ := append(append(os.Environ(), "HOME="+s.home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=", "MEMD_ADDR="+s.url), env...)
	if len(args) > 0 && processOnly[args[0]] {
		cmd := exec.Command(memdBin, args...)
		cmd.Env = environ
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	vars := map[string]string{} // the last setting of a name wins, as in exec
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		vars[name] = value
	}
	var out syncBuffer
	code := memdcmd.Run(context.Background(), args, strings.NewReader(""), &out, &out, func(name string) string { return vars[name] })
	if code != 0 {
		return out.String(), fmt.Errorf("memd %s: exit status %d", args[0], code)
	}
	return out.String(), nil
}

// processOnly are the commands s.memd runs as the binary.
var processOnly = map[string]bool{"serve": true, "mcp": true, "version": true, "--version": true}

func (s *server) must(args ...string) string {
	s.t.Helper()
	out, err := s.memd(nil, args...)
	if err != nil {
		s.t.Fatalf("memd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return memdtest.Git(t, dir, args...)
}

// startCrashable starts memd serve with fsync on and learning through the
// model, to be killed.
func startCrashable(t *testing.T, home, modelURL string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	return memdtest.StartCrashable(t, memdBin, home, modelURL, flags...)
}

// The README walkthrough, as a newcomer would type it.
func TestWalkthrough(t *testing.T) {
	s := serve(t)
	if st, err := os.Stat(filepath.Join(s.data, "admin.token")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("admin token file: %v %v", st, err)
	}
	out := s.must("agent", "add", "alice", "--project", "apollo")
	if !strings.Contains(out, "token: memd_") {
		t.Fatalf("agent add: %s", out)
	}
	out = s.must("remember", "--shard", "agent/alice", "--message", "msg_8812", "--chat", "chat_41", "--chat-kind", "direct", "Lives in Lisbon since October")
	if !strings.Contains(out, "remembered") {
		t.Fatalf("remember: %s", out)
	}
	var fact struct {
		Fact struct{ ID string }
	}
	out = s.must("remember", "--json", "--shard", "agent/alice", "--tier", "log", "--message", "msg_8813", "Booked a flight to Lisbon")
	if err := json.Unmarshal([]byte(out), &fact); err != nil || fact.Fact.ID == "" {
		t.Fatalf("remember --json: %s %v", out, err)
	}
	if out := s.must("remember", "--shard", "agent/alice", "lives in lisbon since october"); !strings.Contains(out, "already remembered") {
		t.Errorf("same text again: %s", out)
	}

	shard := filepath.Join(s.data, "shards", "agent", "alice")
	trailers := git(t, shard, "log", "--format=%(trailers:key=Source-Message,valueonly)")
	if strings.Fields(trailers)[0] != "msg_8813" || strings.Fields(trailers)[1] != "msg_8812" {
		t.Errorf("git log trailers: %q", trailers)
	}
	if blame := git(t, shard, "blame", "profile.md"); !strings.Contains(blame, "Lives in Lisbon since October") || !strings.Contains(blame, "admin") {
		t.Errorf("git blame:\n%s", blame)
	}
	git(t, shard, "fsck", "--strict")
	if st := git(t, shard, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}

	trace := s.must("trace", "--shard", "agent/alice", fact.Fact.ID)
	for _, want := range []string{"Booked a flight to Lisbon", "introduced by commit", "msg_8813"} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %q:\n%s", want, trace)
		}
	}
	if out := s.must("log", "--shard", "agent/alice", "--message", "msg_8812"); !strings.Contains(out, "+ ") || strings.Contains(out, "msg_8813") {
		t.Errorf("log --message:\n%s", out)
	}
	if out := s.must("revert", "--message", "msg_8813"); !strings.Contains(out, "reverted by") || !strings.Contains(out, "- ") {
		t.Errorf("revert --message: %s", out)
	}
	facts := s.must("facts", "--shard", "agent/alice")
	if strings.Contains(facts, "Booked a flight") || !strings.Contains(facts, "Lives in Lisbon since October") {
		t.Errorf("facts after revert:\n%s", facts)
	}
	if out := s.must("status"); !strings.Contains(out, "learning: off") {
		t.Errorf("status:\n%s", out)
	}
}

// An edited fact's trace prints every version back to the first, and what
// was said there; the exchange is reverted with one command.
func TestCLI_TraceFollowsEdits(t *testing.T) {
	s := serve(t)
	s.must("agent", "add", "alice")
	var first struct {
		Fact struct{ ID string }
	}
	out := s.must("remember", "--json", "--shard", "agent/alice", "--tier", "log", "--message", "m_41", "--message", "m_42", "--chat", "c_7",
		"--chat-kind", "direct", "--excerpt", "pat: I move to Porto in May", "Moves to Porto in May")
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatalf("remember: %s %v", out, err)
	}
	var edited struct {
		Fact struct{ ID string }
	}
	out = s.must("edit", "--json", "--shard", "agent/alice", first.Fact.ID, "Moves to Porto in June")
	if err := json.Unmarshal([]byte(out), &edited); err != nil || edited.Fact.ID == "" {
		t.Fatalf("edit: %s %v", out, err)
	}
	trace := s.must("trace", "--shard", "agent/alice", edited.Fact.ID)
	for _, want := range []string{"versions, newest first", "edited by admin", "Moves to Porto in May", "first learned by commit",
		"m_41, m_42", "what was said:", "[m_41]", "pat: I move to Porto in May", "replaces:   " + first.Fact.ID} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %q:\n%s", want, trace)
		}
	}
	if out := s.must("revert", "--message", "m_41", "--message", "m_42"); strings.Count(out, "reverted by") != 2 {
		t.Errorf("revert the exchange:\n%s", out)
	}
	if out := s.must("revert", "--dry-run", "--message", "m_41"); !strings.Contains(out, "nothing left to undo") {
		t.Errorf("a dry run with nothing left:\n%s", out)
	}
	if out := s.must("stats"); !strings.Contains(out, "no learned facts") {
		t.Errorf("stats with nothing learned:\n%s", out)
	}
}

// An agent reverting what it learned in a direct chat reaches the person's
// memory when it declares the chat direct, as it did to write there.
func TestCLI_AnAgentRevertsInThePersonsMemory(t *testing.T) {
	s := serve(t)
	alice := []string{"MEMD_TOKEN=" + agentToken(t, s, "alice")}
	if out, err := s.memd(alice, "remember", "--shard", "user/pat", "--chat-kind", "direct", "--chat", "d1", "--message", "m1", "Lives in Porto"); err != nil {
		t.Fatalf("remember in pat's memory: %v %s", err, out)
	}
	if out, err := s.memd(alice, "revert", "--message", "m1", "--chat", "d1", "--chat-kind", "direct"); err != nil || !strings.Contains(out, "user/pat") || !strings.Contains(out, "reverted by") {
		t.Errorf("alice's revert in a direct chat: %v %s", err, out)
	}
	if out := s.must("facts", "--shard", "user/pat"); strings.Contains(out, "Porto") {
		t.Errorf("pat's facts after the revert:\n%s", out)
	}
}

// Errors say what was wrong, name the rule that refused, and exit non-zero.
func TestCLI_Errors(t *testing.T) {
	s := serve(t)
	bob := []string{"MEMD_TOKEN=" + agentToken(t, s, "bob")}
	// The admin token of another data directory than the daemon's.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "admin.token"), []byte("memd_0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{bob, []string{"remember", "--shard", "agent/alice", "x"}, "rule: agent-own-shard"},
		{bob, []string{"remember", "--shard", "user/pat", "x"}, "rule: user-memory-direct-chat"},
		{[]string{"MEMD_TOKEN=memd_wrong"}, []string{"facts", "--shard", "agent/bob"}, "unknown token (the token in MEMD_TOKEN)"},
		{nil, []string{"facts", "--shard", "agent/bob", "--token", "memd_wrong"}, "unknown token (the token given with --token)"},
		{[]string{"MEMD_DATA=" + other}, []string{"facts", "--shard", "agent/bob"}, "a daemon started with --data or MEMD_DATA keeps its admin token there"},
		{[]string{"MEMD_DATA=" + t.TempDir()}, []string{"facts", "--shard", "agent/bob"}, "no token: pass --token or set MEMD_TOKEN"},
		{nil, []string{"remember", "--shard", "agent/../x", "x"}, "use lowercase letters"},
		{nil, []string{"remember", "--shard", "agent/bob", "--date", "2026-02-30", "x"}, "not a calendar date"},
		{nil, []string{"remember", "--shard", "agent/bob", strings.Repeat("x", 501)}, "the limit is 500"},
		{nil, []string{"remember", "x"}, "--shard is required"},
		{nil, []string{"nonsense"}, "unknown command"},
		{nil, []string{"--token", "x", "recall", "q"}, "flags follow the command (memd recall --token …)"},
		{nil, []string{"--token=memd_secret", "status"}, "(memd status --token …)"},
	}
	for _, c := range cases {
		out, err := s.memd(c.env, c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("memd %s: err %v, output %q; want an error containing %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	// A flag given first is named, never its value: it may be a token.
	if out, _ := s.memd(nil, "--token=memd_secret", "status"); strings.Contains(out, "memd_secret") {
		t.Errorf("a flag before the command was echoed with its value: %q", out)
	}
	// With --json, an error is a JSON object on stdout, as the API's.
	out, err := s.memd(nil, "remember", "--json", "--shard", "agent/bbo", "a typo")
	var e struct {
		Error struct{ Code, Message, Rule string }
	}
	if err == nil || json.Unmarshal([]byte(out), &e) != nil || e.Error.Code != "not_found" || !strings.Contains(e.Error.Message, "no agent bbo") {
		t.Errorf("memd remember --json into a typo's shard: %v %q", err, out)
	}
	out, err = s.memd(bob, "remember", "--json", "--shard", "agent/alice", "x")
	if err == nil || json.Unmarshal([]byte(out), &e) != nil || e.Error.Code != "forbidden" || e.Error.Rule != "agent-own-shard" {
		t.Errorf("memd remember --json into another's shard: %v %q", err, out)
	}
	if out := s.must("remember", "--create", "--shard", "agent/carol", "Carol's shard, made on purpose"); !strings.Contains(out, "agent/carol") {
		t.Errorf("memd remember --create: %s", out)
	}
	if out := s.must("remote", "--json"); strings.TrimSpace(out) != `{"remotes":[]}` && !strings.Contains(out, `"remotes": []`) {
		t.Errorf("memd remote --json with no remotes: %q", out)
	}
	var notes struct{ Notes []memd.NoteInfo }
	if out := s.must("notes", "list", "--json", "--shard", "agent/bob"); json.Unmarshal([]byte(out), &notes) != nil {
		t.Errorf("memd notes list --json is not an object: %q", out)
	}
	// Bob remembers in his own shard with the default shard.
	if out, err := s.memd(bob, "remember", "Bob's first fact"); err != nil || !strings.Contains(out, "agent/bob") {
		t.Errorf("bob's remember: %v %s", err, out)
	}
}

func TestCLI_NoDaemon(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(memdBin, "status", "--token", "x", "--addr", "127.0.0.1:1")
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is `memd serve` running?") {
		t.Errorf("status without a daemon: %v %s", err, out)
	}
}

// memd watch prints changes as they happen, and resumes by itself after the
// daemon restarts, with what was committed meanwhile: in a shard it printed
// a commit of, and in one it printed nothing of yet (bob's).
func TestWatch_ResumesAfterARestart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	home := t.TempDir()
	s := serveAt(t, home, addr)
	s.must("agent", "add", "alice")
	s.must("agent", "add", "bob")
	s.must("remember", "--shard", "agent/bob", "Bob's fact before the watch")

	watch := exec.Command(memdBin, "watch", "agent/alice", "agent/bob")
	watch.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=", "MEMD_TOKEN=", "MEMD_ADDR="+s.url)
	out, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { watch.Process.Kill(); watch.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(text string) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("memd watch ended before printing %q", text)
				}
				if strings.Contains(l, text) {
					return
				}
			case <-deadline:
				t.Fatalf("memd watch did not print %q", text)
			}
		}
	}
	// The watch connects in the background: write until it prints a fact.
	connected := false
	for i := 0; i < 5 && !connected; i++ {
		s.must("remember", "--shard", "agent/alice", "--tier", "log", fmt.Sprintf("Warm-up fact %d", i))
		select {
		case l := <-lines:
			connected = strings.Contains(l, "+ ")
		case <-time.After(2 * time.Second):
		}
	}
	if !connected {
		t.Fatal("memd watch printed nothing")
	}
	s.must("remember", "--shard", "agent/alice", "--tier", "log", "Before the restart")
	expect("Before the restart")

	s.stop()
	for _, name := range []string{"alice", "bob"} {
		shard := filepath.Join(s.data, "shards", "agent", name)
		file := filepath.Join(shard, "profile.md") // bob's one fact
		if logs, _ := filepath.Glob(filepath.Join(shard, "log", "*.md")); len(logs) > 0 {
			file = logs[0]
		}
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "- (%s) Written by hand in %s's shard while memd was down\n", time.Now().Format("2006-01-02"), name)
		f.Close()
		git(t, shard, "commit", "-qam", "by hand")
	}

	s2 := serveAt(t, home, addr)
	expect("Written by hand in alice's shard while memd was down")
	expect("Written by hand in bob's shard while memd was down")
	s2.must("remember", "--shard", "agent/alice", "--tier", "log", "After the restart")
	expect("After the restart")
}

// kill -9 of the daemon with 20 exchanges queued, then a restart: all 20
// are learned once, none twice.
func TestLearn_SurvivesKill9(t *testing.T) {
	release := make(chan struct{})
	asked := make(chan struct{}, 100)
	model := scriptedmodel.New(t, func(r scriptedmodel.Request) (int, string) {
		asked <- struct{}{}
		select {
		case <-release:
		case <-r.Context.Done():
			return 0, ""
		}
		i := strings.Index(r.User, "from chat ")
		return http.StatusOK, "log: Learned from " + strings.Fields(r.User[i+len("from chat "):])[0]
	})

	home := t.TempDir()
	s := &server{t: t, home: home, data: filepath.Join(home, ".local", "share", "memd")}
	start := func() {
		s.cmd = exec.Command(memdBin, "serve", "--listen", "127.0.0.1:0", "--model-url", model.URL+"/v1", "--model", "m")
		s.cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=")
		out, _ := s.cmd.StdoutPipe()
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Scan()
		s.url = sc.Text()[strings.Index(sc.Text(), "http://"):]
		go func() {
			for sc.Scan() {
			}
		}()
	}
	start()
	s.must("agent", "add", "alice")

	var lines strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&lines, `{"agent":"alice","chat":"k%02d","chat_kind":"direct","messages":[{"id":"k%02d-1","role":"user","text":"Please remember item %d of the plan"},{"id":"k%02d-2","role":"agent","text":"Noted."}]}`+"\n", i, i, i, i)
	}
	file := filepath.Join(t.TempDir(), "exchanges.jsonl")
	os.WriteFile(file, []byte(lines.String()), 0o644)
	if out := s.must("learn", file); !strings.Contains(out, "handed 20 exchanges") {
		t.Fatalf("memd learn: %s", out)
	}
	// The first exchange is at the model, the other 19 wait: kill -9 now.
	<-asked
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	close(release)

	shard := filepath.Join(s.data, "shards", "agent", "alice")
	start()
	token, _ := os.ReadFile(filepath.Join(s.data, "admin.token"))
	c := client.New(s.url, strings.TrimSpace(string(token)))
	sub, err := c.Subscribe(context.Background(), memd.FeedQuery{Shards: []memd.ShardID{memd.AgentShard("alice")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// Facts learned before the subscription are on disk; wait for the rest.
	have := func() int {
		list, err := c.Facts(context.Background(), memd.FactsQuery{Shard: memd.AgentShard("alice")})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Facts)
	}
	deadline := time.After(30 * time.Second)
	for have() < 20 {
		select {
		case <-sub.Events():
		case <-deadline:
			t.Fatalf("after the restart only %d of 20 exchanges were learned", have())
		}
	}
	s.stop()
	subjects := git(t, shard, "log", "--format=%s%x09%(trailers:key=Fact-Id,valueonly)")
	learnedFacts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(subjects), "\n") {
		if strings.HasPrefix(line, "remember: Learned from") {
			learnedFacts[line]++
		}
	}
	if len(learnedFacts) != 20 {
		t.Errorf("%d distinct learned commits, want 20:\n%s", len(learnedFacts), subjects)
	}
	for l, n := range learnedFacts {
		if n != 1 {
			t.Errorf("%q committed %d times", l, n)
		}
	}
	git(t, shard, "fsck", "--strict")
}

// recall --explain shows the parts of each score; context prints its stamp,
// and --since that stamp prints only what changed, as + and − lines.
func TestCLI_ExplainAndSince(t *testing.T) {
	s := serve(t)
	s.must("agent", "add", "alice")
	for i, text := range []string{"Pat asked which hotel fits twelve people for the offsite", "The Memmo Alfama can hold twelve rooms"} {
		s.must("remember", "--shard", "agent/alice", "--tier", "log", "--chat", "c13", "--message", fmt.Sprintf("msg_%d", i), text)
	}
	out := s.must("recall", "--agent", "alice", "--explain", "which hotel for the offsite")
	for _, want := range []string{`term "hotel"`, "context from " + memd.FactID("Pat asked which hotel fits twelve people for the offsite") + " (1 away)", "read at agent/alice@"} {
		if !strings.Contains(out, want) {
			t.Errorf("recall --explain lacks %q:\n%s", want, out)
		}
	}
	out = s.must("context", "--agent", "alice")
	_, stamp, ok := strings.Cut(out, "read at ")
	if !ok {
		t.Fatalf("context prints no stamp:\n%s", out)
	}
	stamp = strings.TrimSpace(stamp)
	if out := s.must("context", "--agent", "alice", "--since", stamp); strings.TrimSpace(out) != "nothing changed\nread at "+stamp {
		t.Errorf("nothing changed, yet:\n%s", out)
	}
	s.must("remember", "--shard", "agent/alice", "--tier", "log", "--date", "2026-05-01", "Moved the offsite to Porto")
	out = s.must("context", "--agent", "alice", "--since", stamp)
	if !strings.Contains(out, "### Your own memory (alice)\n+ (2026-05-01) Moved the offsite to Porto\nread at agent/alice@") {
		t.Errorf("context --since:\n%s", out)
	}
	if out, err := s.memd(nil, "context", "--agent", "alice", "--since", "yesterday"); err == nil || !strings.Contains(out, "since takes the stamp") {
		t.Errorf("a bad stamp: %v\n%s", err, out)
	}
}

// Help goes to stdout and exits 0; a mistake is one line and a hint on
// stderr, exit 2; the version names the build.
func TestCLI_HelpMistakesAndVersion(t *testing.T) {
	run := func(args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(memdBin, args...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"recall", "-h"}, {"serve", "--help"}, {"agent", "-h"}, {"notes", "--help"}, {"review", "-h"}, {"agent", "add", "-h"}} {
		out, errOut, code := run(args...)
		if code != 0 || !strings.Contains(out, "Usage: memd") || errOut != "" {
			t.Errorf("memd %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	if out, _, _ := run("serve", "-h"); strings.Contains(out, "-remote git") {
		t.Errorf("serve -h names the --remote argument after back-quoted words:\n%s", out)
	}
	for _, args := range [][]string{{"recall", "--bogus", "x"}, {"agent"}, {"agent", "frob"}, {"frobnicate"}, {"remember", "--shard"}, {"version", "extra"}} {
		out, errOut, code := run(args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || out != "" || len(lines) > 2 || !strings.Contains(errOut, "memd") {
			t.Errorf("memd %s: exit %d, stdout %q, stderr %q; want exit 2 and a line or two on stderr", strings.Join(args, " "), code, out, errOut)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, code := run(args...)
		if code != 0 || !strings.HasPrefix(out, "memd ") || !strings.Contains(out, "go1.") {
			t.Errorf("memd %s: exit %d, %q", strings.Join(args, " "), code, out)
		}
	}
}
