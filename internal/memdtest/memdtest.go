// Package memdtest is what the tests that run the memd binary share:
// building it, isolating it from the environment, starting a daemon that
// may be killed, and running git.
package memdtest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Build returns a memd binary built from the current source. Under the
// race detector memd is built with it too: the daemon's own goroutines are
// checked, and a cold build compiles every package once, not once per
// mode. go build links anew on every call (4.5 s of CPU here), so the
// binary is kept in the user's cache directory under a key made of the
// commit and every compiled package's build output: the test packages that run memd share
// one link, and a second run of the suite with no change links none.
func Build() (string, error) {
	flags := []string{"-ldflags=-s -w"} // links faster; stack traces keep their names
	if Race {
		flags = append(flags, "-race")
	}
	const pkg = "github.com/memd/memd/cmd/memd"
	list := exec.Command("go", append(append([]string{"list", "-deps", "-export", "-f", "{{.Export}}"}, flags...), pkg)...)
	exports, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("list memd's packages: %w", err)
	}
	// The commit too: go build stamps it into the binary (memd version).
	head, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	key := sha256.Sum256(fmt.Appendf(nil, "%q\n%s\n%s", flags, head, exports))
	userCache, err := os.UserCacheDir()
	if err != nil {
		userCache = os.TempDir()
	}
	cache := filepath.Join(userCache, "memd-test-bin")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", err
	}
	bin := filepath.Join(cache, hex.EncodeToString(key[:12]))
	// One builder at a time: the other test package waits for its link.
	lock, err := os.OpenFile(filepath.Join(cache, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", cache, err)
	}
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		os.Chtimes(bin, now, now) // in use: removeStale leaves it
		return bin, nil
	}
	removeStale(cache)
	tmp := bin + ".tmp"
	if out, err := exec.Command("go", append(append([]string{"build", "-o", tmp}, flags...), pkg)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build memd: %w\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin)
}

// removeStale deletes binaries no test has used for a day: builds of source
// since changed.
func removeStale(cache string) {
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.Name() != "lock" && time.Since(info.ModTime()) > 24*time.Hour {
			os.Remove(filepath.Join(cache, e.Name()))
		}
	}
}

// IsolateEnv clears the process's environment of memd's settings, so the
// daemons and commands a test runs take none from where it was started (a
// MEMD_REMOTE or MEMD_MODEL_URL there would send test memory to a real
// remote or model). Under the race detector a race stops memd at once,
// failing the test that drives it, and memd exits without the second a
// race-built program otherwise waits for late reports (tests run it
// hundreds of times).
func IsolateEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "MEMD_") && name != "MEMD_REQUIRE_MCP_CLIENTS" || name == "XDG_DATA_HOME" {
			os.Unsetenv(name)
		}
	}
	if Race {
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" halt_on_error=1 atexit_sleep_ms=0"))
	}
}

// StartCrashable starts `memd serve` on a free port with a model and fsync
// on (what a crash test tests), in its own process group, to be killed
// with SIGKILL; it returns the command and the daemon's URL.
func StartCrashable(t testing.TB, bin, home, modelURL string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--model-url", modelURL + "/v1", "--model", "m", "--log-level", "error"}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=")
	cmd.Stderr = os.Stderr
	// Its own process group, so that the kill takes a git repack it
	// started with it, as a crash of the machine would; one left running
	// would delete packs under the git fsck that follows.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.Contains(sc.Text(), "http://") {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		t.Fatalf("memd serve did not say where it listens after a restart: %q %v", sc.Text(), sc.Err())
	}
	url := sc.Text()[strings.Index(sc.Text(), "http://"):]
	go io.Copy(io.Discard, out)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	})
	return cmd, url
}

// Kill kills memd and its process group with SIGKILL and reaps it. A memd
// that had already exited on its own fails the test (a race-built one
// stops at a race), unless it may have finished its work and did so
// cleanly.
func Kill(t testing.TB, cmd *exec.Cmd, mayFinish bool) {
	t.Helper()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return
	}
	if !mayFinish || ws.ExitStatus() != 0 {
		t.Errorf("%s exited by itself before the kill: %v", strings.Join(cmd.Args[:2], " "), cmd.ProcessState)
	}
}

// Git runs git in dir and returns its output, failing the test on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitOut(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitOut runs git in dir with no prompts and returns its output. Commits
// it makes are pat's, a person editing by hand, unless the environment
// names someone else.
func GitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=pat", "-c", "user.email=pat@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Texts returns the texts of facts, in their order.
func Texts(facts []memd.Fact) []string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.Text
	}
	return out
}

// Main is a TestMain for tests that run memd: it builds the binary into
// *bin, isolates the environment, runs the tests and exits with their
// status.
func Main(m *testing.M, bin *string) {
	var err error
	if *bin, err = Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	IsolateEnv()
	os.Exit(m.Run())
}

// Get sends a GET to base+path over plain HTTP, as an agent's own code or
// a monitor would, with the token when there is one, and returns the
// response and its body.
func Get(t testing.TB, base, token, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp, body
}
