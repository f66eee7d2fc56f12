package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/internal/memdtest"
	"github.com/memd/memd/internal/scriptedmodel"
)

// kill -9 twice in one synthesis pass of ten approved changes: first while
// the approving call is out (nothing applied yet), then just after the
// first change lands. After each restart the pass goes on; in the end each
// change is in the shard's history exactly once, and the pass read all ten
// exchanges of evidence.
func TestCrash_SynthesisPassResumesExactlyOnce(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "memd")
	shardDir := filepath.Join(data, "shards", "agent", "alice")
	approving := make(chan struct{}, 1)
	var block atomic.Bool
	block.Store(true)
	// The proposing model rewrites every learned fact it is shown, its own
	// rewrites too: asked twice, it would change a fact twice.
	factLine := regexp.MustCompile(`(?m)^([0-9a-f]{12}) \(log, [0-9-]+\) (Learned from (c\d+)(?:, checked)*)$`)
	model := scriptedmodel.New(t, func(r scriptedmodel.Request) (int, string) {
		switch {
		case strings.Contains(r.System, "You tidy the long-term memory"):
			var lines []string
			for _, m := range factLine.FindAllStringSubmatch(r.User, -1) {
				lines = append(lines, fmt.Sprintf("rewrite: %s => %s, checked | evidence: %s-m0", m[1], m[2], m[3]))
			}
			return http.StatusOK, strings.Join(lines, "\n")
		case strings.Contains(r.System, "You review changes"):
			if block.Load() {
				approving <- struct{}{}
				<-r.Context.Done() // until memd is killed
				return 0, ""
			}
			var b strings.Builder
			for i := 1; i <= 10; i++ {
				fmt.Fprintf(&b, "%d: approve\n", i)
			}
			return http.StatusOK, b.String()
		}
		if i := strings.Index(r.User, "from chat "); i >= 0 {
			return http.StatusOK, "log: Learned from " + strings.Fields(r.User[i+len("from chat "):])[0]
		}
		return http.StatusOK, "Talked about ten chats." // the episode
	})
	var url string
	serve := func() (*exec.Cmd, *client.Client) {
		var cmd *exec.Cmd
		cmd, url = startCrashable(t, home, model.URL, "--synthesis", "--synthesis-every", "0")
		token, err := os.ReadFile(filepath.Join(data, "admin.token"))
		if err != nil {
			t.Fatal(err)
		}
		return cmd, client.New(url, strings.TrimSpace(string(token)))
	}
	kill := func(cmd *exec.Cmd) {
		memdtest.Kill(t, cmd, false)
	}
	ctx := context.Background()

	cmd, c := serve()
	if _, err := c.AddAgent(ctx, "alice", nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		chat := fmt.Sprintf("c%d", i)
		ex := memd.Exchange{Agent: "alice", Chat: chat, ChatKind: memd.ChatDirect, User: "pat", Messages: []memd.Message{
			{ID: chat + "-m0", Role: "user", Text: "Please remember what we discussed in chat " + chat},
			{ID: chat + "-m1", Role: "agent", Text: "I will."}}}
		if _, err := c.Learn(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	waitJobs(t, c, func(list []memd.ExchangeStatus) bool {
		return countState(list, memd.ExchangeDone) >= 10 && countState(list, memd.ExchangePending) == 0
	})
	pass, err := c.Synthesize(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	<-approving
	kill(cmd) // while the approving call is out
	if n := synthesisCommits(t, shardDir); n != 0 {
		t.Fatalf("%d synthesis commits before any change was approved", n)
	}

	block.Store(false)
	head := readRef(t, shardDir)
	cmd, _ = serve()
	for readRef(t, shardDir) == head {
		// The pass resumes by itself; the first change it commits moves
		// main, and the kill follows at once.
	}
	kill(cmd)
	landed := synthesisCommits(t, shardDir)
	t.Logf("%d of 10 changes had landed at the kill", landed)

	cmd, c = serve()
	defer kill(cmd)
	var done memd.ExchangeStatus
	waitJobs(t, c, func(list []memd.ExchangeStatus) bool {
		i := slices.IndexFunc(list, func(s memd.ExchangeStatus) bool { return s.ID == pass.ID })
		if i >= 0 {
			done = list[i]
		}
		return i >= 0 && list[i].State != memd.ExchangePending
	})
	// Each change counted once, those that landed before the kill too.
	if done.State != memd.ExchangeDone || done.Synthesis == nil || done.Synthesis.Evidence != 10 || done.Synthesis.Applied != 10 || len(done.Commits) != 10 {
		t.Fatalf("the pass after two kills: %+v %+v", done, done.Synthesis)
	}
	if n := synthesisCommits(t, shardDir); n != 10 {
		t.Errorf("%d synthesis commits in the history, want 10 (one per change)", n)
	}
	list, err := c.Facts(ctx, memd.FactsQuery{Shard: memd.AgentShard("alice")})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		want := fmt.Sprintf("Learned from c%d, checked", i)
		if n := slices.IndexFunc(list.Facts, func(f memd.Fact) bool { return f.Text == want }); n < 0 {
			t.Errorf("no fact %q", want)
		}
	}
	for _, f := range list.Facts {
		if strings.HasPrefix(f.Text, "Learned from") && !strings.HasSuffix(f.Text, ", checked") {
			t.Errorf("fact %q was not rewritten", f.Text)
		}
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sy := st.Learning.Synthesis; sy == nil || sy.Applied != 10 {
		t.Errorf("status after the pass: %+v", st.Learning.Synthesis)
	}

	// From the CLI: a second pass has no exchange queued since, so the
	// model's rewrites cite messages it may no longer cite.
	s := &server{t: t, home: home, url: url}
	out := s.must("synthesize", "--agent", "alice")
	if !strings.Contains(out, "0 exchange(s) of evidence, 0 change(s) proposed") || !strings.Contains(out, "10 line(s) ignored") {
		t.Errorf("memd synthesize:\n%s", out)
	}
	if out := s.must("status"); !strings.Contains(out, "synthesis: on, approved by m;") {
		t.Errorf("memd status:\n%s", out)
	}
	if out, err := s.memd(nil, "synthesize", "--agent", "bob"); err == nil || !strings.Contains(out, `no agent "bob"`) {
		t.Errorf("memd synthesize for an unknown agent: %v\n%s", err, out)
	}
}

func countState(list []memd.ExchangeStatus, state string) int {
	n := 0
	for _, s := range list {
		if s.State == state {
			n++
		}
	}
	return n
}

// waitJobs polls the learner's jobs until ok holds.
func waitJobs(t *testing.T, c *client.Client, ok func([]memd.ExchangeStatus) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := c.Exchanges(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if ok(list) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the learner's jobs never got there: %+v", list)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not waiting for one to happen by itself
	}
}

func readRef(t *testing.T, shardDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(shardDir, ".git", "refs", "heads", "main"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b))
}

// synthesisCommits counts the commits of the shard's main written by
// synthesis.
func synthesisCommits(t *testing.T, shardDir string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", shardDir, "log", "main", "--format=%(trailers:key=Learned-By,valueonly)").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(out), "synthesis")
}

// Review mode from the command line: an agent added with --review, what
// the learner learns for it listed, one proposal accepted, one rejected.
func TestCLI_Review(t *testing.T) {
	home := t.TempDir()
	model := scriptedmodel.New(t, func(r scriptedmodel.Request) (int, string) {
		return http.StatusOK, "profile: Pat drinks tea\nlog: Pat booked a flight"
	})
	_, url := startCrashable(t, home, model.URL)
	s := &server{t: t, home: home, url: url}
	if out := s.must("agent", "add", "bob", "--review"); !strings.Contains(out, "in review mode") {
		t.Errorf("memd agent add --review:\n%s", out)
	}
	token, err := os.ReadFile(filepath.Join(home, ".local", "share", "memd", "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(url, strings.TrimSpace(string(token)))
	if _, err := c.Learn(context.Background(), memd.Exchange{Agent: "bob", Chat: "c1", ChatKind: memd.ChatDirect, Messages: []memd.Message{
		{ID: "c1-m0", Role: "user", Text: "Tea, and book my flight please"}}}); err != nil {
		t.Fatal(err)
	}
	waitJobs(t, c, func(list []memd.ExchangeStatus) bool { return countState(list, memd.ExchangeDone) == 1 })
	// memd learn --json answers one object for the whole file.
	file := filepath.Join(t.TempDir(), "ex.jsonl")
	os.WriteFile(file, []byte(`{"agent":"bob","chat":"c2","chat_kind":"direct","messages":[{"id":"c2-m0","role":"user","text":"thanks!"}]}`+"\n"), 0o644)
	var handed struct {
		Handed, Skipped int
		Exchanges       []memd.ExchangeStatus
	}
	if out := s.must("learn", "--json", file); json.Unmarshal([]byte(out), &handed) != nil || handed.Handed != 1 || handed.Skipped != 1 || len(handed.Exchanges) != 1 {
		t.Errorf("memd learn --json: %q", out)
	}
	// A file with a line that does not decode hands in nothing; one whose
	// line the daemon refuses says which lines before it went in.
	skippedNow := func() int {
		list, err := c.Exchanges(context.Background(), memd.ExchangeSkipped)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	before := skippedNow()
	smallTalk := `{"agent":"bob","chat":"c3","chat_kind":"direct","messages":[{"id":"c3-m0","role":"user","text":"ok"}]}`
	os.WriteFile(file, []byte(smallTalk+"\n{bad json\n"), 0o644)
	if out, err := s.memd(nil, "learn", file); err == nil || !strings.Contains(out, "line 2") || !strings.Contains(out, "nothing was handed in") || skippedNow() != before {
		t.Errorf("memd learn of a file with a bad line: %v, %q; %d exchanges skipped, %d before", err, out, skippedNow(), before)
	}
	os.WriteFile(file, []byte(smallTalk+"\n"+strings.Replace(smallTalk, `"bob"`, `"nobody"`, 1)+"\n"), 0o644)
	if out, err := s.memd(nil, "learn", file); err == nil || !strings.Contains(out, "line 2") || !strings.Contains(out, "the 1 exchange(s) before it were handed in") || skippedNow() != before+1 {
		t.Errorf("memd learn of a file with an unknown agent on line 2: %v, %q", err, out)
	}
	list, err := c.Proposals(context.Background(), memd.AgentShard("bob"))
	if err != nil || len(list) != 2 {
		t.Fatalf("proposals: %+v, %v", list, err)
	}
	out := s.must("review", "list")
	for _, want := range []string{list[0].ID, list[1].ID, "+ Pat drinks tea", "bob (learner)", "c1-m0"} {
		if !strings.Contains(out, want) {
			t.Errorf("memd review list lacks %q:\n%s", want, out)
		}
	}
	if out := s.must("review", "accept", list[0].ID, "--reviewer", "pat"); !strings.Contains(out, "accepted "+list[0].ID+" in agent/bob: remember: Pat drinks tea (commit") {
		t.Errorf("memd review accept:\n%s", out)
	}
	if out := s.must("review", "reject", "--all"); !strings.Contains(out, "rejected "+list[1].ID) {
		t.Errorf("memd review reject --all:\n%s", out)
	}
	if out := s.must("review", "list"); !strings.Contains(out, "no proposals wait") {
		t.Errorf("memd review list after:\n%s", out)
	}
	if out, err := s.memd(nil, "review", "accept"); err == nil || !strings.Contains(out, "name proposal IDs") {
		t.Errorf("memd review accept with nothing: %v\n%s", err, out)
	}
	shard := filepath.Join(home, ".local", "share", "memd", "shards", "agent", "bob")
	if out := git(t, shard, "log", "-1", "--format=%(trailers:key=Reviewed-By,valueonly)"); strings.TrimSpace(out) != "pat" {
		t.Errorf("Reviewed-By of main's head: %q", out)
	}
	if out := s.must("status"); !strings.Contains(out, "review:   0 proposals waiting (memd review list), 1 accepted since the start, 1 rejected") {
		t.Errorf("memd status:\n%s", out)
	}
}
