package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git clone and git fetch of a shard over memd's own HTTP port, with a
// token as the password: the clone holds the shard's history, the rules of
// access hold, and a push is refused with its reason.
func TestGitHTTP_CloneFetchAndRules(t *testing.T) {
	s := serve(t)
	alice := tokenOf(t, s.must("agent", "add", "alice"))
	bob := tokenOf(t, s.must("agent", "add", "bob"))
	s.must("remember", "--shard", "agent/alice", "--message", "m1", "Lives in Lisbon since October")
	s.must("remember", "--shard", "agent/alice", "--tier", "log", "--message", "m2", "Booked a flight to Porto")

	shard := filepath.Join(s.data, "shards", "agent", "alice")
	base := strings.Replace(s.url, "http://", "http://alice:"+alice+"@", 1)
	clone := filepath.Join(t.TempDir(), "alice")
	gitQuiet(t, "", "clone", "-q", base+"/git/agent/alice.git", clone)
	if got, want := git(t, clone, "log", "--format=%H %s%n%(trailers)"), git(t, shard, "log", "--format=%H %s%n%(trailers)"); got != want {
		t.Errorf("the clone's log differs from the shard's:\n%s\nwant\n%s", got, want)
	}

	// A fetch brings a later fact.
	s.must("remember", "--shard", "agent/alice", "--message", "m3", "Prefers tea")
	gitQuiet(t, clone, "pull", "-q", "--ff-only")
	if head, want := git(t, clone, "rev-parse", "HEAD"), git(t, shard, "rev-parse", "HEAD"); head != want {
		t.Errorf("after a pull the clone is at %s, the shard at %s", head, want)
	}

	// Bob's token may not read alice's shard; no token is challenged.
	token, err := os.ReadFile(filepath.Join(s.data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(token))
	for _, c := range []struct{ url, want string }{
		{strings.Replace(s.url, "http://", "http://bob:"+bob+"@", 1) + "/git/agent/alice.git", "agent-own-shard"},
		{s.url + "/git/agent/alice.git", "could not read Username"}, // challenged for a password
		{strings.Replace(s.url, "http://", "http://admin:"+admin+"@", 1) + "/git/agent/nobody.git", "not_found"},
	} {
		out, err := gitOut("", "clone", "-q", c.url, filepath.Join(t.TempDir(), "x"))
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("clone %s: %v, want a failure saying %q:\n%s", c.url, err, c.want, out)
		}
	}

	// Pushing is refused, and git shows why.
	os.WriteFile(filepath.Join(clone, "profile.md"), []byte("# garbage\n- not a fact line\n"), 0o644)
	gitQuiet(t, clone, "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qam", "hand edit")
	out, err := gitOut(clone, "push", "-q", "origin", "main")
	if err == nil || !strings.Contains(out, "read-only") {
		t.Errorf("push: %v, want a refusal saying the shard is read-only over git:\n%s", err, out)
	}
}

func tokenOf(t *testing.T, out string) string {
	t.Helper()
	_, after, ok := strings.Cut(out, "token: ")
	if !ok {
		t.Fatalf("no token in %q", out)
	}
	return strings.Fields(after)[0]
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func gitQuiet(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := gitOut(dir, args...); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
