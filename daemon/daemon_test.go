package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/daemontest"
)

type env struct {
	d     *daemon.Daemon
	admin *client.Client
	dir   string
}

func start(t *testing.T) *env {
	t.Helper()
	return startIn(t, t.TempDir(), daemon.Config{})
}

// startIn starts memd serve on dir with cfg (daemontest.Start) and
// returns it with an admin client.
func startIn(t *testing.T, dir string, cfg daemon.Config) *env {
	t.Helper()
	cfg.DataDir = dir
	d, admin := daemontest.Start(t, cfg)
	return &env{d: d, admin: admin, dir: dir}
}

// agent registers an agent and returns a client with its token.
func (e *env) agent(t *testing.T, name string, projects ...string) *client.Client {
	t.Helper()
	a, err := e.admin.AddAgent(context.Background(), name, projects)
	if err != nil {
		t.Fatal(err)
	}
	return client.New(e.d.URL(), a.Token)
}

// startAlice starts a daemon with the agent alice, and returns it, her
// client and her shard.
func startAlice(t *testing.T) (*env, *client.Client, memd.ShardID) {
	t.Helper()
	e := start(t)
	return e, e.agent(t, "alice"), memd.AgentShard("alice")
}

func shard(t *testing.T, s string) memd.ShardID {
	t.Helper()
	id, err := memd.ParseShardID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := memd.ErrorCode(err); got != code {
		t.Fatalf("got error %v (code %q), want code %q", err, got, code)
	}
}

func TestDaemon_AdminTokenFile(t *testing.T) {
	e := start(t)
	st, err := os.Stat(filepath.Join(e.dir, auth.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("admin token file mode %v, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(filepath.Join(e.dir, "agents.json"))
	token, _ := auth.ReadAdminToken(e.dir)
	if strings.Contains(string(b), token) {
		t.Error("agents.json holds the admin token in clear")
	}
}

func TestDaemon_RememberAndDuplicate(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice")
	ctx := context.Background()
	req := memd.RememberRequest{Shard: shard(t, "agent/alice"), Text: "Lives in Lisbon",
		Source: memd.Source{Messages: []string{"msg_8812"}, Chat: "chat_41", ChatKind: memd.ChatDirect}}
	first, err := alice.Remember(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Existing || first.Commit == "" || first.Fact.Tier != memd.TierProfile {
		t.Errorf("first remember: %+v", first)
	}
	req.Text = "lives in  LISBON"
	again, err := alice.Remember(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Existing || again.Commit != "" || again.Fact.ID != first.Fact.ID {
		t.Errorf("same text again: %+v", again)
	}
	log, err := alice.Log(ctx, memd.LogQuery{Shard: req.Shard})
	if err != nil || len(log) != 1 {
		t.Fatalf("log: %d commits, %v", len(log), err)
	}
	p := log[0].Provenance
	if p.Op != memd.OpRemember || p.LearnedBy != memd.LearnedExplicit || !slices.Equal(p.SourceMessages, []string{"msg_8812"}) || p.ChatKind != memd.ChatDirect {
		t.Errorf("provenance: %+v", p)
	}
	if log[0].Author.Name != "alice" {
		t.Errorf("author: %+v", log[0].Author)
	}
	// A chat named without its kind is a group chat's, as the rules read
	// it; no chat named, a call outside any chat.
	for _, c := range []struct {
		chat string
		want memd.ChatKind
	}{{"chat_42", memd.ChatGroup}, {"", memd.ChatAPI}} {
		res, err := alice.Remember(ctx, memd.RememberRequest{Shard: req.Shard, Text: "Kind of " + c.chat,
			Source: memd.Source{Messages: []string{"msg_9"}, Chat: c.chat}})
		if err != nil {
			t.Fatal(err)
		}
		log, err := alice.Log(ctx, memd.LogQuery{Shard: req.Shard, Limit: 1})
		if err != nil || log[0].Hash != res.Commit || log[0].Provenance.ChatKind != c.want {
			t.Errorf("remember naming chat %q: %+v %v, want Chat-Kind %s", c.chat, log, err, c.want)
		}
	}
}

// Each refusal names the rule that refused it, and makes no commit.
func TestDaemon_AccessRules(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice", "apollo")
	e.agent(t, "bob")
	ctx := context.Background()
	remember := func(c *client.Client, s string, kind memd.ChatKind) error {
		_, err := c.Remember(ctx, memd.RememberRequest{Shard: shard(t, s), Text: "a fact", Source: memd.Source{ChatKind: kind}})
		return err
	}
	cases := []struct {
		name  string
		shard string
		kind  memd.ChatKind
		rule  string // "" means allowed
	}{
		{"own shard", "agent/alice", "", ""},
		{"another agent's shard", "agent/bob", memd.ChatDirect, "agent-own-shard"},
		{"user memory, no chat kind", "user/pat", "", "user-memory-direct-chat"},
		{"user memory, group chat", "user/pat", memd.ChatGroup, "user-memory-direct-chat"},
		{"user memory, direct chat", "user/pat", memd.ChatDirect, ""},
		{"a project it belongs to", "project/apollo", "", ""},
		{"a project it does not", "project/zeus", memd.ChatDirect, "project-member"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := remember(alice, c.shard, c.kind)
			if c.rule == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, memd.EFORBIDDEN)
			if memd.ErrorRule(err) != c.rule {
				t.Errorf("rule %q, want %q (%v)", memd.ErrorRule(err), c.rule, err)
			}
		})
	}
	// Reads follow the same rules.
	_, err := alice.Facts(ctx, memd.FactsQuery{Shard: shard(t, "user/pat")})
	wantCode(t, err, memd.EFORBIDDEN)
	alice.ChatKind = memd.ChatDirect
	if list, err := alice.Facts(ctx, memd.FactsQuery{Shard: shard(t, "user/pat")}); err != nil || len(list.Facts) != 1 {
		t.Errorf("direct read of user memory: %+v, %v", list, err)
	}
	alice.ChatKind = ""
	// Listing shards only shows what the caller may read.
	shards, err := alice.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range shards {
		names = append(names, s.Shard.String())
	}
	if !slices.Equal(names, []string{"agent/alice", "project/apollo"}) {
		t.Errorf("shards alice may read in a group chat: %v", names)
	}
	// Agents cannot manage agents.
	_, err = alice.AddAgent(ctx, "mallory", nil)
	wantCode(t, err, memd.EFORBIDDEN)
	// Nor see where the data lives, how remotes fare, or how large the
	// rest of the store is: a status counts what the agent may read in the
	// chat it declares, as listing shards does.
	if st, err := alice.Status(ctx); err != nil || st.DataDir != "" || st.Agents != 0 || st.Shards != 2 || st.Facts != 2 {
		t.Errorf("alice's status in a group chat: %d shards, %d facts, %d agents, data directory %q (%v); want 2 shards, 2 facts and neither", st.Shards, st.Facts, st.Agents, st.DataDir, err)
	}
	alice.ChatKind = memd.ChatDirect
	if st, err := alice.Status(ctx); err != nil || st.Shards != 3 || st.Facts != 3 {
		t.Errorf("alice's status in a direct chat: %d shards, %d facts (%v); want 3 and 3", st.Shards, st.Facts, err)
	}
	alice.ChatKind = ""
	if st, err := e.admin.Status(ctx); err != nil || st.DataDir == "" || st.Agents != 2 || st.Shards != 4 || st.Facts != 3 {
		t.Errorf("the admin's status: %d shards, %d facts, %d agents, data directory %q (%v); want 4, 3, 2 and one", st.Shards, st.Facts, st.Agents, st.DataDir, err)
	}
	// Nor see or sync remotes, even of their own shard.
	_, err = alice.Remotes(ctx)
	wantCode(t, err, memd.EFORBIDDEN)
	_, err = alice.SyncRemotes(ctx, []memd.ShardID{shard(t, "agent/alice")})
	wantCode(t, err, memd.EFORBIDDEN)
	// No commit was made in bob's shard.
	if log, _ := e.admin.Log(ctx, memd.LogQuery{Shard: shard(t, "agent/bob")}); len(log) != 0 {
		t.Errorf("refused writes committed: %+v", log)
	}
}

func TestDaemon_Tokens(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	bad := client.New(e.d.URL(), "memd_nope")
	_, err := bad.Shards(ctx)
	wantCode(t, err, memd.EUNAUTHORIZED)
	none := client.New(e.d.URL(), "")
	_, err = none.Shards(ctx)
	wantCode(t, err, memd.EUNAUTHORIZED)

	carol := e.agent(t, "carol")
	if _, err := carol.Shards(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.admin.RemoveAgent(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	_, err = carol.Shards(ctx)
	wantCode(t, err, memd.EUNAUTHORIZED)
}

// Errors are JSON with a code, and bad input is refused before anything is
// written.
func TestDaemon_BadRequests(t *testing.T) {
	e := start(t)
	token, _ := auth.ReadAdminToken(e.dir)
	e.agent(t, "alice")
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown field", "POST", "/v1/shards/agent/alice/facts", `{"text":"x","colour":"red"}`, 400, memd.EINVALID},
		{"malformed JSON", "POST", "/v1/shards/agent/alice/facts", `{"text":`, 400, memd.EINVALID},
		{"two values", "POST", "/v1/shards/agent/alice/facts", `{"text":"x"}{"text":"y"}`, 400, memd.EINVALID},
		{"wrong type", "POST", "/v1/shards/agent/alice/facts", `{"text":42}`, 400, memd.EINVALID},
		{"bad date", "POST", "/v1/shards/agent/alice/facts", `{"text":"x","date":"2026-02-30"}`, 400, memd.EINVALID},
		{"multi-line fact", "POST", "/v1/shards/agent/alice/facts", `{"text":"a\nb"}`, 400, memd.EINVALID},
		{"long fact", "POST", "/v1/shards/agent/alice/facts", `{"text":"` + strings.Repeat("x", 501) + `"}`, 400, memd.EINVALID},
		{"bad tier", "POST", "/v1/shards/agent/alice/facts", `{"text":"x","tier":"forever"}`, 400, memd.EINVALID},
		{"bad shard name", "POST", "/v1/shards/agent/Alice/facts", `{"text":"x"}`, 400, memd.EINVALID},
		{"bad shard kind", "GET", "/v1/shards/team/x/facts", ``, 400, memd.EINVALID},
		{"path traversal", "GET", "/v1/shards/agent/..%2f..%2fetc/facts", ``, 400, memd.EINVALID},
		{"invalid UTF-8", "POST", "/v1/shards/agent/alice/facts", "{\"text\":\"\xff\xfe\"}", 400, memd.EINVALID},
		{"huge body", "POST", "/v1/shards/agent/alice/facts", `{"text":"` + strings.Repeat("x", 2<<20) + `"}`, 413, memd.ETOOLARGE},
		{"unknown fact", "DELETE", "/v1/shards/agent/alice/facts/0123456789ab", ``, 404, memd.ENOTFOUND},
		{"bad fact ID", "DELETE", "/v1/shards/agent/alice/facts/xyz", ``, 400, memd.EINVALID},
		{"unknown shard", "GET", "/v1/shards/agent/zed/facts", ``, 404, memd.ENOTFOUND},
		{"bad chat kind", "GET", "/v1/shards/agent/alice/facts?chat_kind=party", ``, 400, memd.EINVALID},
		{"no such endpoint", "GET", "/v1/nothing", ``, 404, memd.ENOTFOUND},
		{"bad limit", "GET", "/v1/shards/agent/alice/log?limit=lots", ``, 400, memd.EINVALID},
		{"revert nothing", "POST", "/v1/revert", `{}`, 400, memd.EINVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, e.d.URL()+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("error body is not JSON: %v", err)
			}
			if resp.StatusCode != c.status || body.Error.Code != c.code || body.Error.Message == "" {
				t.Errorf("%s %s: %d %+v; want %d %s", c.method, c.path, resp.StatusCode, body.Error, c.status, c.code)
			}
		})
	}
	if log, _ := e.admin.Log(context.Background(), memd.LogQuery{Shard: shard(t, "agent/alice")}); len(log) != 0 {
		t.Errorf("bad requests made %d commits", len(log))
	}
}

// A commit made with the git CLI in a shard is what the next call reads.
func TestDaemon_SeesGitCommits(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := shard(t, "agent/alice")
	if _, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Lives in Austin"}); err != nil {
		t.Fatal(err)
	}
	dir := e.d.Store.ShardDir(s)
	profile := filepath.Join(dir, "profile.md")
	b, _ := os.ReadFile(profile)
	os.WriteFile(profile, []byte(strings.Replace(string(b), "Austin", "Lisbon", 1)), 0o644)
	cmd := exec.Command("git", "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qam", "moved")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v %s", err, out)
	}
	list, err := alice.Facts(ctx, memd.FactsQuery{Shard: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Facts) != 1 || list.Facts[0].Text != "Lives in Lisbon" {
		t.Errorf("facts after a git commit: %+v", list.Facts)
	}
	tr, err := alice.Trace(ctx, s, memd.FactID("Lives in Lisbon"))
	if err != nil || tr.Introduced == nil || tr.Introduced.Provenance.LearnedBy != memd.LearnedPerson || tr.Introduced.Author.Name != "pat" {
		t.Errorf("trace of the person's line: %+v, %v", tr.Introduced, err)
	}
}

// Revert by message, through the API, restores the facts that stood before.
func TestDaemon_RevertByMessage(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	alice := e.agent(t, "alice", "apollo")
	rem := func(s, text, msg string) {
		t.Helper()
		_, err := alice.Remember(ctx, memd.RememberRequest{Shard: shard(t, s), Text: text, Source: memd.Source{Messages: []string{msg}, ChatKind: memd.ChatDirect}})
		if err != nil {
			t.Fatal(err)
		}
	}
	rem("agent/alice", "Lives in Austin", "m1")
	rem("user/pat", "Pat likes tea", "m1")
	if _, err := alice.Forget(ctx, memd.ForgetRequest{Shard: shard(t, "agent/alice"), ID: memd.FactID("Lives in Austin"), Source: memd.Source{Messages: []string{"m_bad"}}}); err != nil {
		t.Fatal(err)
	}
	rem("agent/alice", "Lives in Lisbon", "m_bad")
	rem("project/apollo", "Launch moved to May", "m_bad")
	rem("user/pat", "Pat hates tea", "m_bad")

	// Named, a shard she may not write is refused, not passed over: the
	// caller would take the message for reverted everywhere it named.
	_, err := alice.Revert(ctx, memd.RevertRequest{Message: "m_bad", Shards: []memd.ShardID{shard(t, "agent/alice"), shard(t, "user/pat")}})
	if memd.ErrorCode(err) != memd.EFORBIDDEN || !strings.Contains(err.Error(), "user/pat") {
		t.Fatalf("revert naming a shard alice may not write: %v, want forbidden naming it", err)
	}
	if got := factTexts(t, e, shard(t, "agent/alice")); !slices.Equal(got, []string{"Lives in Lisbon"}) {
		t.Fatalf("agent/alice after a refused revert: %v", got)
	}

	// Alice, in a group chat, may not write user memory: her revert leaves it.
	res, err := alice.Revert(ctx, memd.RevertRequest{Message: "m_bad"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reverts) != 3 {
		t.Fatalf("reverts: %+v", res.Reverts)
	}
	texts := func(s string) []string { return factTexts(t, e, shard(t, s)) }
	if got := texts("agent/alice"); !slices.Equal(got, []string{"Lives in Austin"}) {
		t.Errorf("agent/alice after revert: %v", got)
	}
	if got := texts("project/apollo"); len(got) != 0 {
		t.Errorf("project/apollo after revert: %v", got)
	}
	if got := texts("user/pat"); len(got) != 2 {
		t.Errorf("user/pat should be untouched by a group-chat revert: %v", got)
	}
	// The admin reverts what is left.
	res, err = e.admin.Revert(ctx, memd.RevertRequest{Message: "m_bad"})
	if err != nil || len(res.Reverts) != 1 {
		t.Fatalf("admin revert: %+v, %v", res, err)
	}
	if got := texts("user/pat"); !slices.Equal(got, []string{"Pat likes tea"}) {
		t.Errorf("user/pat after the admin's revert: %v", got)
	}
	log, err := e.admin.Log(ctx, memd.LogQuery{Shard: shard(t, "user/pat"), Op: memd.OpRevert})
	if err != nil || len(log) != 1 || log[0].Author.Name != "admin" || log[0].Provenance.LearnedBy != memd.LearnedPerson {
		t.Errorf("revert commit: %+v %v", log, err)
	}
}

// A person commits with the git CLI in a loop, and runs git status in
// another, while agents write through the API: every commit from both sides
// stays reachable from main, no fact memd wrote is lost (git writes back an
// index it read before memd's last update), the working tree is clean
// afterwards, and a person's commit -a keeps every fact.
func TestDaemon_APIWritesBesideGitCommits(t *testing.T) {
	const writers, perWriter, personCommits = 8, 40, 30
	e := start(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	dir := e.d.Store.ShardDir(memd.AgentShard("alice"))
	if _, err := alice.Remember(ctx, memd.RememberRequest{Shard: shard(t, "agent/alice"), Text: "seed"}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan []string)
	go func() {
		var made []string
		for i := 0; len(made) < personCommits && i < 2000; i++ {
			os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
			os.WriteFile(filepath.Join(dir, "notes", fmt.Sprintf("n%d.md", len(made))), []byte("note\n"), 0o644)
			subject := fmt.Sprintf("person %d", len(made))
			add := exec.Command("git", "add", "notes")
			add.Dir = dir
			commit := exec.Command("git", "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qm", subject)
			commit.Dir = dir
			// git refuses while memd holds a lock or moved HEAD; people retry.
			if add.Run() == nil && commit.Run() == nil {
				made = append(made, subject)
			}
		}
		done <- made
	}()
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// git status refreshes the index it read and writes it back.
			exec.Command("git", "-C", dir, "status", "--porcelain").Run()
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if _, err := alice.Remember(ctx, memd.RememberRequest{Shard: shard(t, "agent/alice"), Text: fmt.Sprintf("fact %d of writer %d", i, w), Tier: memd.TierLog}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	made := <-done
	close(stop)
	<-statusDone
	if len(made) == 0 {
		t.Fatal("the person never managed to commit")
	}
	out, _ := exec.Command("git", "-C", dir, "log", "--format=%s", "main").CombinedOutput()
	for _, s := range made {
		if !strings.Contains(string(out), s+"\n") {
			t.Errorf("the person's commit %q is not reachable from main", s)
		}
	}
	want := writers*perWriter + 1
	list, err := alice.Facts(ctx, memd.FactsQuery{Shard: shard(t, "agent/alice")})
	if err != nil || len(list.Facts) != want {
		var have []string
		for _, f := range list.Facts {
			have = append(have, f.Text)
		}
		for w := 0; w < writers; w++ {
			for i := 0; i < perWriter; i++ {
				if text := fmt.Sprintf("fact %d of writer %d", i, w); !slices.Contains(have, text) {
					hist, _ := exec.Command("git", "-C", dir, "log", "--format=%h %an %s", "-S", text, "main").CombinedOutput()
					t.Errorf("missing %q; git log -S:\n%s", text, hist)
				}
			}
		}
		t.Fatalf("facts: %d, %v; want %d", len(list.Facts), err, want)
	}
	sh, err := e.d.Store.Shard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	// The git commands have stopped; an index a git status kept locked at
	// the last write is brought up to date now rather than 100 ms later.
	if !sh.SyncWorktree(5 * time.Second) {
		t.Error("the index is still behind HEAD with no git command running")
	}
	if st, _ := exec.Command("git", "-C", dir, "status", "--porcelain").CombinedOutput(); len(st) != 0 {
		t.Errorf("git status after the writes:\n%s", st)
	}
	if err := sh.Repack(); err != nil { // fsck lists the packs once
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "notes", "last.md"), []byte("x\n"), 0o644)
	gitIn(t, dir, "add", "notes")
	gitIn(t, dir, "commit", "-qam", "person commits everything")
	if after, _ := alice.Facts(ctx, memd.FactsQuery{Shard: shard(t, "agent/alice")}); len(after.Facts) != want {
		t.Errorf("after a person's commit -a: %d facts, want %d", len(after.Facts), want)
	}
}

// A shard's listing counts its facts, not its notes' passages, and follows
// a person's commit: the count a user sees is what HEAD holds.
func TestDaemon_ShardListingCountsFactsAtHead(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := shard(t, "agent/alice")
	remember(t, alice, "agent/alice", "Lives in Austin", memd.TierProfile, memd.Source{})
	remember(t, alice, "agent/alice", "Booked the flight to Lisbon", memd.TierLog, memd.Source{})
	if _, err := alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "runbooks/deploy.md", Text: runbook}); err != nil {
		t.Fatal(err)
	}
	count := func() memd.ShardInfo {
		t.Helper()
		list, err := alice.Shards(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("shards: %+v, %v", list, err)
		}
		return list[0]
	}
	if got := count(); got.Facts != 2 || got.Head != head(t, e, "agent/alice") || got.LastChange.IsZero() {
		t.Errorf("listing: %+v, want 2 facts at %s", got, head(t, e, "agent/alice"))
	}
	dir := e.d.Store.ShardDir(s)
	profile := filepath.Join(dir, "profile.md")
	b, _ := os.ReadFile(profile)
	os.WriteFile(profile, append(b, "- (2026-01-02) Has a dog\n"...), 0o644)
	gitIn(t, dir, "commit", "-qam", "a dog")
	if got := count(); got.Facts != 3 || got.Head != head(t, e, "agent/alice") {
		t.Errorf("listing after a person's commit: %+v, want 3 facts at %s", got, head(t, e, "agent/alice"))
	}
	if st, err := e.admin.Status(ctx); err != nil || st.Facts != 3 || st.Indexing != 0 {
		t.Errorf("status: %+v, %v; want 3 facts, nothing left to index", st, err)
	}
}

// A status just after a write counts it, as a listing does: the index
// follows memd's commits a moment later, and a status must not lag them.
func TestDaemon_StatusCountsWhatWasJustWritten(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	for n := 1; n <= 3; n++ {
		remember(t, alice, "agent/alice", fmt.Sprintf("Fact number %d about Lisbon", n), memd.TierLog, memd.Source{})
		if st, err := e.admin.Status(ctx); err != nil || st.Facts != n {
			t.Fatalf("admin's status after %d remembers: %d facts, %v", n, st.Facts, err)
		}
		if st, err := alice.Status(ctx); err != nil || st.Facts != n {
			t.Fatalf("alice's status after %d remembers: %d facts, %v", n, st.Facts, err)
		}
	}
	dir := e.d.Store.ShardDir(shard(t, "agent/alice"))
	profile := filepath.Join(dir, "profile.md")
	if err := os.WriteFile(profile, []byte("- (2026-01-02) Has a dog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "profile.md")
	gitIn(t, dir, "commit", "-qm", "a dog")
	if st, err := alice.Status(ctx); err != nil || st.Facts != 4 {
		t.Errorf("alice's status after a person's commit: %d facts, %v", st.Facts, err)
	}
}

// A shard the index cannot bring up to date does not keep a status from
// counting what was just written to the others.
func TestDaemon_StatusCountsPastABrokenShard(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	aaron, alice := e.agent(t, "aaron"), e.agent(t, "alice")
	remember(t, aaron, "agent/aaron", "Takes the night train", memd.TierLog, memd.Source{})
	if st, err := e.admin.Status(ctx); err != nil || st.Facts != 1 {
		t.Fatalf("status: %d facts, %v", st.Facts, err)
	}
	// aaron's branch now names a commit its repository does not hold.
	ref := filepath.Join(e.d.Store.ShardDir(shard(t, "agent/aaron")), ".git", "refs", "heads", "main")
	if err := os.WriteFile(ref, []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	remember(t, alice, "agent/alice", "Lives in Lisbon", memd.TierLog, memd.Source{})
	if st, err := e.admin.Status(ctx); err != nil || st.Facts != 2 {
		t.Errorf("status with aaron's shard broken: %d facts, %v; want alice's fact counted", st.Facts, err)
	}
}

// An agent whose shard cannot be made is not registered, and nothing is
// written to the registry for it: on a full disk, undoing a registration
// could fail too and leave an agent without a shard, with a token nobody
// was shown. Once the shard can be made, adding the agent works.
func TestAddAgent_NothingRegisteredWithoutItsShard(t *testing.T) {
	e := start(t)
	e.agent(t, "bob")
	agents := filepath.Join(e.dir, "agents.json")
	before, err := os.Stat(agents)
	if err != nil {
		t.Fatal(err)
	}
	// A file where alice's shard would go: the shard cannot be made.
	blocker := filepath.Join(e.dir, "shards", "agent", "alice")
	if err := os.WriteFile(blocker, []byte("in the way\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.admin.AddAgent(ctx, "alice", nil); err == nil {
		t.Fatal("alice added without a shard")
	}
	if after, err := os.Stat(agents); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the registry was written for an agent that was not added: %v", err)
	}
	if list, err := e.admin.Agents(ctx); err != nil || len(list) != 1 {
		t.Errorf("agents after the refused add: %+v, %v", list, err)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if a, err := e.admin.AddAgent(ctx, "alice", nil); err != nil || a.Token == "" {
		t.Errorf("alice added once her shard can be made: %+v, %v", a, err)
	}
}
