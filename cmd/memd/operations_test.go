package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/internal/memdtest"
	"github.com/memd/memd/internal/scriptedmodel"
)

// syncBuffer is a buffer two goroutines may use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// What an operator relies on: health and readiness without a token, JSON
// logs with an access log at debug (no token in it), and metrics per
// route, per model call and of the build.
func TestOperations_HealthLogsMetrics(t *testing.T) {
	home := t.TempDir()
	model := scriptedmodel.New(t, scriptedmodel.Reply("log: Pat asked about invoices"))
	cmd := exec.Command(memdBin, "serve", "--listen", "127.0.0.1:0", "--no-fsync", "--log-format", "json", "--log-level", "debug",
		"--model-url", model.URL+"/v1", "--model", "m")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=")
	var logs syncBuffer
	cmd.Stderr = &logs
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	sc := bufio.NewScanner(out)
	sc.Scan()
	url := sc.Text()[strings.Index(sc.Text(), "http://"):]
	go io.Copy(io.Discard, out)

	get := func(path, token string) (int, string) {
		resp, body := memdtest.Get(t, url, token, path)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz", ""); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz: %d %s", code, body)
	}
	// Ready once the index has read the shards and the learner runs:
	// asked until it says so.
	for deadline := time.Now().Add(10 * time.Second); ; {
		code, body := get("/readyz", "")
		if code == 200 && strings.Contains(body, `"ready"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition
	}
	token, err := os.ReadFile(filepath.Join(home, ".local", "share", "memd", "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(token))
	if code, _ := get("/v1/status", admin); code != 200 {
		t.Errorf("/v1/status: %d", code)
	}
	if code, _ := get("/v1/status", "memd_wrong"); code != 401 {
		t.Errorf("/v1/status with a wrong token: %d", code)
	}
	c := client.New(url, admin)
	if _, err := c.AddAgent(context.Background(), "alice", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Learn(context.Background(), memd.Exchange{Agent: "alice", Chat: "c1", ChatKind: memd.ChatDirect, Messages: []memd.Message{{ID: "m1", Role: "user", Text: "What about the invoices?"}}}); err != nil {
		t.Fatal(err)
	}
	waitJobs(t, c, func(list []memd.ExchangeStatus) bool { return countState(list, memd.ExchangeDone) == 1 })

	_, metrics := get("/metrics", "")
	for _, want := range []string{
		`memd_http_request_seconds_count{route="GET /v1/status",status="200"} 1`,
		`memd_http_request_seconds_count{route="GET /v1/status",status="401"} 1`,
		`memd_model_call_seconds_count{model="m",result="ok"} 1`,
		`memd_build_info{goversion="go1.`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	access := false
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line that is not JSON: %q", line)
		}
		if rec["msg"] == "request" && rec["method"] == "GET" && rec["path"] == "/v1/status" && rec["status"] == float64(200) &&
			rec["route"] == "GET /v1/status" && rec["caller"] == "admin" {
			access = true
		}
	}
	if !access {
		t.Errorf("no access log line for GET /v1/status in:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), admin) || strings.Contains(logs.String(), "memd_wrong") {
		t.Error("a token is in the log")
	}
}

// memd serve that cannot start — a port in use, a setting it refuses —
// says why and creates nothing: no data directory, no admin token.
func TestServe_FailedStartCreatesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", busy.Addr().String()}, "listen on " + busy.Addr().String()},
		{[]string{"--listen", "127.0.0.1:0", "--model-calls", "0"}, "--model-calls"},
		{[]string{"--listen", "127.0.0.1:0", "--synthesis"}, "--synthesis needs a model"},
		{[]string{"--listen", "127.0.0.1:0", "--remote", "bogus{nope}"}, "nope"},
		{[]string{"--listen", "127.0.0.1:0", "--log-format", "xml"}, "--log-format"},
		// A line break would write a trailer of its own into every learned commit.
		{[]string{"--listen", "127.0.0.1:0", "--model-url", "http://127.0.0.1:1/v1", "--model", "m\nLearned-By: person"}, "model name"},
	} {
		home := t.TempDir()
		data := filepath.Join(home, "data")
		// A serve that starts is killed in a minute, failing the case.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, memdBin, append([]string{"serve", "--data", data}, c.args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: %v\n%s", c.args, err, out)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("serve %v created the data directory: %v", c.args, err)
		}
	}
}

// The systemd unit in contrib/ is one systemd accepts, pointed at this
// build (checked where systemd-analyze is installed).
func TestContrib_SystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	unit, err := os.ReadFile(filepath.Join("..", "..", "contrib", "memd.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"User=memd", "StateDirectory=memd", "ProtectSystem=strict", "NoNewPrivileges=yes", "ExecStart=/usr/local/bin/memd serve"} {
		if !bytes.Contains(unit, []byte(want)) {
			t.Errorf("the unit lacks %s", want)
		}
	}
	path := filepath.Join(t.TempDir(), "memd.service")
	os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/memd"), []byte(memdBin)), 0o644)
	if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// A backup is the data directory copied while memd is stopped, less the
// index, which memd rebuilds: restored into a fresh directory on another
// address, it serves the same memory to the same tokens.
func TestBackupAndRestore(t *testing.T) {
	s := serve(t)
	alice := []string{"MEMD_TOKEN=" + agentToken(t, s, "alice")}
	if out, err := s.memd(alice, "remember", "Deploys go out on Fridays"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	s.stop()

	restored := filepath.Join(t.TempDir(), "home")
	data := filepath.Join(restored, ".local", "share", "memd")
	os.MkdirAll(filepath.Dir(data), 0o700)
	if out, err := exec.Command("cp", "-a", s.data, data).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.Remove(filepath.Join(data, "index.db")) // derived: left out of a backup
	r := serveAt(t, restored, "127.0.0.1:0")
	if out, err := r.memd(alice, "recall", "Fridays"); err != nil || !strings.Contains(out, "Deploys go out on Fridays") {
		t.Errorf("recall in the restored memd with alice's token: %v\n%s", err, out)
	}
	if out := git(t, filepath.Join(data, "shards", "agent", "alice"), "fsck", "--strict"); strings.Contains(out, "error") {
		t.Errorf("git fsck: %s", out)
	}
}

// The start's banner says how shards with a remote are fetched: with
// --fetch-every 0, by memd remote sync alone, not "every 0s".
func TestServe_BannerSaysHowRemotesAreFetched(t *testing.T) {
	for every, want := range map[string]string{"0": "fetched by memd remote sync)", "90s": "fetched every 1m30s)"} {
		cmd := exec.Command(memdBin, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--no-fsync",
			"--remote", filepath.Join(t.TempDir(), "{kind}", "{name}.git"), "--fetch-every", every)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var remotes string
		sc := bufio.NewScanner(out)
		for sc.Scan() && remotes == "" && !strings.Contains(sc.Text(), "try:") { // the banner's last line
			if strings.Contains(sc.Text(), "remotes:") {
				remotes = sc.Text()
			}
		}
		cmd.Process.Signal(syscall.SIGTERM)
		go io.Copy(io.Discard, out)
		cmd.Wait()
		if !strings.HasSuffix(remotes, want) {
			t.Errorf("--fetch-every %s: the banner says %q, want it to end %q", every, remotes, want)
		}
	}
}
