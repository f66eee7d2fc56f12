package main_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The commands a user types, as scripts (testdata/script/*.txtar): each
// script has a home of its own, the memd binary on its PATH, and the serve
// command, which starts `memd serve` on a free port and points the CLI at
// it (MEMD_ADDR) until the script ends.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			bin := filepath.Join(env.WorkDir, ".bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				return err
			}
			if err := os.Symlink(memdBin, filepath.Join(bin, "memd")); err != nil {
				return err
			}
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			for _, k := range []string{"XDG_DATA_HOME", "MEMD_DATA", "MEMD_TOKEN", "MEMD_ADDR"} {
				env.Setenv(k, "")
			}
			env.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
			env.Setenv("GIT_AUTHOR_NAME", "pat")
			env.Setenv("GIT_AUTHOR_EMAIL", "pat@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "pat")
			env.Setenv("GIT_COMMITTER_EMAIL", "pat@example.com")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"serve": serveInScript},
	})
}

// serveInScript starts memd serve for a script, with the script's home.
func serveInScript(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: serve")
	}
	// By the link on the script's PATH, as a package manager installs it.
	cmd := exec.Command(filepath.Join(ts.Getenv("WORK"), ".bin", "memd"), "serve", "--listen", "127.0.0.1:0", "--no-fsync")
	for _, k := range []string{"HOME", "PATH", "XDG_DATA_HOME", "MEMD_DATA", "MEMD_TOKEN"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	cmd.Stderr = os.Stderr
	ts.Check(cmd.Start())
	ts.Defer(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		ts.Fatalf("memd serve printed nothing: %v", sc.Err())
	}
	i := strings.Index(sc.Text(), "http://")
	if i < 0 {
		ts.Fatalf("memd serve's first line has no URL: %q", sc.Text())
	}
	ts.Setenv("MEMD_ADDR", sc.Text()[i:])
	go func() {
		for sc.Scan() {
		}
	}()
}
