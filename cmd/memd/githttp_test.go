package main_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd/internal/memdtest"
)

// git clone and git fetch of a shard over memd's own HTTP port, with a
// token as the password: the clone holds the shard's history, the rules of
// access hold.
func TestGitHTTP_CloneFetchAndRules(t *testing.T) {
	s := serve(t)
	alice := tokenOf(t, s.must("agent", "add", "alice"))
	bob := tokenOf(t, s.must("agent", "add", "bob"))
	s.must("remember", "--shard", "agent/alice", "--message", "m1", "Lives in Lisbon since October")
	s.must("remember", "--shard", "agent/alice", "--tier", "log", "--message", "m2", "Booked a flight to Porto")
	s.must("remember", "--shard", "user/pat", "--chat-kind", "direct", "Prefers aisle seats")

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

	// A git request declares no chat, whatever its query says (a chat_kind
	// is not even read): user memory stays shut to an agent's token.
	for _, kind := range []string{"direct", "direct/info/refs"} {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/git/user/pat.git/info/refs?service=git-upload-pack&chat_kind="+kind, nil)
		req.SetBasicAuth("alice", alice)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "user-memory-direct-chat") {
			t.Errorf("alice's git request for user/pat with chat_kind=%s: %s %s", kind, resp.Status, body)
		}
	}

}

// git push to a shard over memd's HTTP port: a malformed fact line is
// refused with its reason and nothing changes; a good push fast-forwards
// main; a forced push of a history that diverged is merged, not taken over,
// so no fact is lost; another agent's token is refused.
func TestGitHTTP_PushIsCheckedThenIntegrated(t *testing.T) {
	s := serve(t)
	alice := tokenOf(t, s.must("agent", "add", "alice"))
	bob := tokenOf(t, s.must("agent", "add", "bob"))
	s.must("remember", "--shard", "agent/alice", "--message", "m1", "Lives in Lisbon since October")
	shard := filepath.Join(s.data, "shards", "agent", "alice")
	base := strings.Replace(s.url, "http://", "http://alice:"+alice+"@", 1)
	clone := filepath.Join(t.TempDir(), "alice")
	gitQuiet(t, "", "clone", "-q", base+"/git/agent/alice.git", clone)
	commit := func(msg string) {
		t.Helper()
		gitQuiet(t, clone, "commit", "-qam", msg)
	}
	addLine := func(line string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(clone, "profile.md"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line + "\n")
		f.Close()
	}

	// A fact line with a date that is not in the calendar.
	before := git(t, shard, "rev-parse", "HEAD")
	addLine("- (2026-02-30) Moved to Berlin")
	commit("hand edit with a bad date")
	out, err := gitOut(clone, "push", "origin", "main")
	if err == nil || !strings.Contains(out, "[remote rejected] main -> main (profile.md line") || !strings.Contains(out, "2026-02-30") {
		t.Fatalf("push of a malformed fact line: %v, want a rejection naming the line:\n%s", err, out)
	}
	t.Logf("git push said:\n%s", out)
	if head := git(t, shard, "rev-parse", "HEAD"); head != before {
		t.Fatalf("a rejected push moved main from %s to %s", before, head)
	}

	// Fixed, the push fast-forwards main and memd reads the fact.
	gitQuiet(t, clone, "reset", "-q", "--hard", "origin/main")
	addLine("- (2026-11-03) Has a cat called Miso")
	commit("hand edit: the cat")
	gitQuiet(t, clone, "push", "-q", "origin", "main")
	if head, want := git(t, shard, "rev-parse", "HEAD"), git(t, clone, "rev-parse", "HEAD"); head != want {
		t.Fatalf("after a good push the shard is at %s, want the pushed %s", head, want)
	}
	if facts := s.must("facts", "--shard", "agent/alice"); !strings.Contains(facts, "Has a cat called Miso") {
		t.Fatalf("the pushed fact is not among the shard's facts:\n%s", facts)
	}
	if st := git(t, shard, "status", "--porcelain"); st != "" {
		t.Fatalf("git status in the shard after a push:\n%s", st)
	}

	// memd writes meanwhile; a forced push of the clone's older line is
	// merged with it: both facts stay.
	s.must("remember", "--shard", "agent/alice", "--message", "m2", "Prefers tea")
	addLine("- (2026-11-04) Learning Portuguese")
	commit("hand edit: Portuguese")
	gitQuiet(t, clone, "push", "-q", "--force", "origin", "main")
	facts := s.must("facts", "--shard", "agent/alice")
	for _, want := range []string{"Prefers tea", "Learning Portuguese", "Has a cat called Miso", "Lives in Lisbon"} {
		if !strings.Contains(facts, want) {
			t.Errorf("after a forced push the shard lacks %q:\n%s", want, facts)
		}
	}
	if parents := strings.Fields(git(t, shard, "log", "-1", "--format=%P")); len(parents) != 2 {
		t.Errorf("a diverged push is integrated as a merge; HEAD has parents %q", parents)
	}
	gitQuiet(t, shard, "fsck", "--strict")

	// Another agent may not push to alice's shard.
	gitQuiet(t, clone, "pull", "-q", "--no-rebase")
	addLine("- (2026-11-05) Written by bob")
	commit("bob's edit")
	out, err = gitOut(clone, "push", strings.Replace(s.url, "http://", "http://bob:"+bob+"@", 1)+"/git/agent/alice.git", "main")
	if err == nil || !strings.Contains(out, "agent-own-shard") {
		t.Errorf("bob's push: %v, want a refusal naming the rule:\n%s", err, out)
	}

	// A symbolic link is refused: memd's working tree holds regular files.
	gitQuiet(t, clone, "reset", "-q", "--hard", "origin/main")
	if err := os.Symlink("profile.md", filepath.Join(clone, "me.md")); err != nil {
		t.Fatal(err)
	}
	gitQuiet(t, clone, "add", "me.md")
	commit("a link")
	out, err = gitOut(clone, "push", "origin", "main")
	if err == nil || !strings.Contains(out, "me.md in commit") || !strings.Contains(out, "a symbolic link") {
		t.Errorf("push of a symbolic link: %v, want a refusal naming it:\n%s", err, out)
	}
	if st := git(t, shard, "status", "--porcelain"); st != "" {
		t.Errorf("git status in the shard after the refusal:\n%s", st)
	}
	// So is a submodule list, which git fetch would read in every clone,
	// and a file named as memd's temporary files are.
	for _, c := range []struct{ path, want string }{
		{".gitmodules", "a submodule list"},
		{"notes/.GitModules", "a submodule list"},
		{"log/.memd-tmp-x", "memd's temporary files"},
	} {
		gitQuiet(t, clone, "reset", "-q", "--hard", "origin/main")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, c.path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, c.path), []byte("garbage line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitQuiet(t, clone, "add", c.path)
		commit("add " + c.path)
		out, err = gitOut(clone, "push", "origin", "main")
		if err == nil || !strings.Contains(out, c.path+" in commit") || !strings.Contains(out, c.want) {
			t.Errorf("push of %s: %v, want a refusal naming it:\n%s", c.path, err, out)
		}
	}

	// Notes pushed are held to the API's rules, and files to a size, read
	// from the objects' headers: 200 MB of zeros pack into 200 KB.
	packs := func() []string {
		list, _ := filepath.Glob(filepath.Join(shard, ".git", "objects", "pack", "*"))
		return list
	}
	packsBefore := packs()
	for _, c := range []struct {
		name, path, want string
		size             int64
		data             []byte
	}{
		{"a 6 MB note", "notes/big.md", "a note holds at most 256 KiB", 0, bytes.Repeat([]byte("n"), 6<<20)},
		{"a note with a NUL byte", "notes/nul.md", "NUL", 0, []byte("a\x00b\n")},
		{"a note that is not UTF-8", "notes/latin.md", "UTF-8", 0, []byte("caf\xe9\n")},
		{"a 200 MB file", "big.bin", "a pushed file may be at most", 200 << 20, nil},
		{"a fact behind a byte-order mark", "log/2026-01.md", "byte-order mark", 0, []byte("\ufeff- (2026-01-03) Hidden by an editor\n")},
		{"a conflict committed with its markers", "log/2026-01.md", `log/2026-01.md line 1 in commit`, 0, []byte("<<<<<<< HEAD\n- (2026-01-03) Tea\n=======\n- (2026-01-03) Coffee\n>>>>>>> theirs\n")},
		// Files memd would ignore where it looks for its own.
		{"a note named as memd reads none", "notes/Trip Plan.md", "notes/Trip Plan.md: memd would not read it as a note", 0, []byte("# Trip\n")},
		{"facts in a log file named as memd reads none", "log/2026-01-05.md", "log/2026-01-05.md line 2: a fact", 0, []byte("# Monday\n- (2026-01-05) Lost in a misnamed file\n")},
		{"facts in a fact file's name in other letters", "Profile.md", "Profile.md line 1: a fact", 0, []byte("- (2026-01-05) Lost in a file named in capitals\n")},
	} {
		gitQuiet(t, clone, "reset", "-q", "--hard", "origin/main")
		full := filepath.Join(clone, c.path)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if c.size > 0 {
			f, err := os.Create(full)
			if err != nil {
				t.Fatal(err)
			}
			f.Truncate(c.size)
			f.Close()
		} else if err := os.WriteFile(full, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		gitQuiet(t, clone, "add", c.path)
		commit(c.name)
		out, err := gitOut(clone, "push", "origin", "main")
		os.Remove(full)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("push of %s: %v, want a refusal saying %q:\n%s", c.name, err, c.want, out)
		}
	}
	if after := packs(); !slices.Equal(after, packsBefore) {
		t.Errorf("refused pushes left files in objects/pack: %v, before %v", after, packsBefore)
	}
	// What is not meant as a fact or a note is a person's to keep there,
	// and so is a misnamed note renamed before the push.
	gitQuiet(t, clone, "reset", "-q", "--hard", "origin/main")
	os.MkdirAll(filepath.Join(clone, "notes"), 0o755)
	os.WriteFile(filepath.Join(clone, "notes", "Trip Plan.md"), []byte("# Trip\n"), 0o644)
	gitQuiet(t, clone, "add", "notes")
	commit("a note misnamed")
	gitQuiet(t, clone, "mv", "notes/Trip Plan.md", "notes/trip-plan.md")
	commit("the note renamed")
	for path, text := range map[string]string{"notes/diagram.png": "\x89PNG", "log/README.md": "Monthly logs, one file each.\n- (optional) a chart of the month\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(clone, path)), 0o755)
		if err := os.WriteFile(filepath.Join(clone, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		gitQuiet(t, clone, "add", path)
	}
	commit("a picture and a readme")
	if out, err := gitOut(clone, "push", "origin", "main"); err != nil {
		t.Errorf("push of files memd does not read: %v\n%s", err, out)
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("memd serve peaked at %d MB", peak>>20)
	if peak > 300<<20 {
		t.Errorf("memd serve peaked at %d MB taking the pushes", peak>>20)
	}
}

// peakRSS reads the most resident memory a process has had.
func peakRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM for process %d", pid)
	return 0
}

func tokenOf(t *testing.T, out string) string {
	t.Helper()
	_, after, ok := strings.Cut(out, "token: ")
	if !ok {
		t.Fatalf("no token in %q", out)
	}
	return strings.Fields(after)[0]
}

func gitOut(dir string, args ...string) (string, error) { return memdtest.GitOut(dir, args...) }

func gitQuiet(t *testing.T, dir string, args ...string) {
	t.Helper()
	memdtest.Git(t, dir, args...)
}
