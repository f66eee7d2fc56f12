package daemon_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
)

func hitTexts(res memd.RecallResult) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Text)
	}
	return out
}

func remember(t *testing.T, c *client.Client, s, text string, tier memd.Tier, src memd.Source) memd.RememberResult {
	t.Helper()
	res, err := c.Remember(context.Background(), memd.RememberRequest{Shard: shard(t, s), Text: text, Tier: tier, Source: src})
	if err != nil {
		t.Fatalf("remember %q: %v", text, err)
	}
	return res
}

// gitIn runs git in dir and returns its output, trimmed.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(memdtest.Git(t, dir, args...))
}

func TestRecall_ShortTokensInflectionsAndProvenance(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice")
	ctx := context.Background()
	remember(t, alice, "agent/alice", "Migrated the reports to SQL Server", memd.TierLog, memd.Source{Messages: []string{"msg_1"}, Chat: "c1"})
	remember(t, alice, "agent/alice", "Booked a flight to Lisbon", memd.TierLog, memd.Source{Messages: []string{"msg_2"}})
	remember(t, alice, "agent/alice", "Moved to NYC", memd.TierProfile, memd.Source{Messages: []string{"msg_3"}})
	for q, want := range map[string]string{
		"SQL":     "Migrated the reports to SQL Server",
		"flights": "Booked a flight to Lisbon",
		"NYC":     "Moved to NYC",
	} {
		res, err := alice.Recall(ctx, memd.RecallQuery{Q: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Text != want {
			t.Errorf("recall %q: %v, want %q first", q, hitTexts(res), want)
			continue
		}
		h := res.Hits[0]
		if h.Commit == "" || len(h.SourceMessages) != 1 || h.Shard != memd.AgentShard("alice") || h.ID != memd.FactID(want) {
			t.Errorf("recall %q: hit lacks its provenance: %+v", q, h)
		}
	}
	_, err := alice.Recall(ctx, memd.RecallQuery{Q: "x", K: 51})
	wantCode(t, err, memd.EINVALID)
	_, err = alice.Recall(ctx, memd.RecallQuery{Q: "x", Agent: "bob"})
	wantCode(t, err, memd.EFORBIDDEN)
}

// A recall's answer, larger than the server's write buffer, goes out
// whole with its length, not in chunks as it is encoded.
func TestRecall_AnswerSentWhole(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice")
	for n := range 30 {
		remember(t, alice, "agent/alice", fmt.Sprintf("Reviewed the Lisbon venue contract, clause %d, with the legal team", n), memd.TierLog, memd.Source{})
	}
	resp, body := memdtest.Get(t, e.d.URL(), alice.Token, "/v1/recall?k=30&q=Lisbon+venue+contract")
	if resp.StatusCode != http.StatusOK || len(body) <= 4096 {
		t.Fatalf("recall: %d, %d bytes; want an answer over 4 KB", resp.StatusCode, len(body))
	}
	if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("an answer of %d bytes came with length %d, in %v", len(body), resp.ContentLength, resp.TransferEncoding)
	}
}

// A line deleted or edited with the git CLI is what the next call reads.
func TestRecall_FollowsGitEdits(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice")
	ctx := context.Background()
	remember(t, alice, "agent/alice", "Booked a flight to Lisbon", memd.TierLog, memd.Source{})
	remember(t, alice, "agent/alice", "Moved to NYC", memd.TierLog, memd.Source{})
	remember(t, alice, "agent/alice", "Prefers window seats", memd.TierProfile, memd.Source{})
	if res, _ := alice.Recall(ctx, memd.RecallQuery{Q: "NYC"}); len(res.Hits) == 0 {
		t.Fatal("NYC not found before the edit")
	}
	dir := e.d.Store.ShardDir(memd.AgentShard("alice"))
	logs, _ := filepath.Glob(filepath.Join(dir, "log", "*.md"))
	b, _ := os.ReadFile(logs[0])
	var kept []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.Contains(line, "Moved to NYC") {
			kept = append(kept, line)
		}
	}
	os.WriteFile(logs[0], []byte(strings.Join(kept, "")), 0o644)
	p := filepath.Join(dir, "profile.md")
	b, _ = os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "window", "aisle", 1)), 0o644)
	gitIn(t, dir, "commit", "-qam", "fix memory by hand")

	if res, _ := alice.Recall(ctx, memd.RecallQuery{Q: "NYC"}); slices.Contains(hitTexts(res), "Moved to NYC") {
		t.Errorf("a line deleted with git is still recalled: %v", hitTexts(res))
	}
	res, _ := alice.Recall(ctx, memd.RecallQuery{Q: "seats"})
	if got := hitTexts(res); !slices.Equal(got, []string{"Prefers aisle seats"}) {
		t.Errorf("after the edit, recall reads %v", got)
	}
	mc, err := alice.Context(ctx, memd.ContextQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(mc.Markdown, "NYC") || strings.Contains(mc.Markdown, "window") || !strings.Contains(mc.Markdown, "Prefers aisle seats") {
		t.Errorf("context after the edit:\n%s", mc.Markdown)
	}
	if h := res.Hits[0]; h.Commit == "" {
		t.Errorf("the edited fact is not attributed to the person's commit: %+v", h)
	}
}

func TestRecallAndContext_UserMemoryOnlyInDirectChats(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice")
	ctx := context.Background()
	remember(t, alice, "user/pat", "Pat lives at 12 Rua Augusta", memd.TierProfile, memd.Source{ChatKind: memd.ChatDirect})
	remember(t, alice, "agent/alice", "The team offsite is in Lisbon", memd.TierProfile, memd.Source{})

	for _, kind := range []memd.ChatKind{"", memd.ChatGroup, memd.ChatRoutine, memd.ChatAPI} {
		alice.ChatKind = kind
		res, err := alice.Recall(ctx, memd.RecallQuery{Q: "Rua Augusta lives", User: "pat"})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Shard.Kind == memd.KindUser {
				t.Errorf("chat kind %q: recall returned user memory %q", kind, h.Text)
			}
		}
		mc, err := alice.Context(ctx, memd.ContextQuery{User: "pat"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(mc.Markdown, "Rua Augusta") || strings.Contains(mc.Markdown, "User memory") {
			t.Errorf("chat kind %q: context holds user memory:\n%s", kind, mc.Markdown)
		}
	}
	alice.ChatKind = memd.ChatDirect
	res, err := alice.Recall(ctx, memd.RecallQuery{Q: "Rua Augusta", User: "pat"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Shard != memd.UserShard("pat") {
		t.Errorf("direct recall of user memory: %v %v", hitTexts(res), err)
	}
	mc, err := alice.Context(ctx, memd.ContextQuery{User: "pat"})
	if err != nil || !strings.Contains(mc.Markdown, "Pat lives at 12 Rua Augusta") {
		t.Errorf("direct context:\n%s %v", mc.Markdown, err)
	}
	// The user block comes first and the agent's own last.
	if u, a := strings.Index(mc.Markdown, "User memory"), strings.Index(mc.Markdown, "Your own memory"); u < 0 || a < u {
		t.Errorf("block order:\n%s", mc.Markdown)
	}
}

func TestContext_ByteStableWhileMemoryIsUnchanged(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice", "apollo")
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		remember(t, alice, "agent/alice", fmt.Sprintf("Fact number %d about the launch", i), memd.TierLog, memd.Source{})
	}
	remember(t, alice, "project/apollo", "Launch is in May", memd.TierProfile, memd.Source{})
	get := func() string {
		mc, err := alice.Context(ctx, memd.ContextQuery{Projects: []string{"apollo"}})
		if err != nil {
			t.Fatal(err)
		}
		return mc.Markdown
	}
	first := get()
	for i := 0; i < 5; i++ {
		if again := get(); again != first {
			t.Fatalf("context changed between calls with no write:\n%s\n---\n%s", first, again)
		}
	}
	if !strings.Contains(first, "(10 more dated facts on disk)") {
		t.Errorf("30 of 40 dated facts shown, so 10 left on disk:\n%s", first)
	}
	remember(t, alice, "agent/alice", "One more fact", memd.TierLog, memd.Source{})
	if get() == first {
		t.Error("context did not change after a write")
	}
	// A project named again is the same project, given once.
	if twice, err := alice.Context(ctx, memd.ContextQuery{Projects: []string{"apollo", "apollo", "apollo", "apollo"}}); err != nil || twice.Markdown != get() {
		t.Errorf("context naming apollo four times: %v\n%s", err, twice.Markdown)
	}
	_, err := alice.Context(ctx, memd.ContextQuery{Projects: []string{"a", "b", "c", "d"}})
	wantCode(t, err, memd.EINVALID)
	_, err = alice.Context(ctx, memd.ContextQuery{Projects: []string{"zeus"}})
	wantCode(t, err, memd.EFORBIDDEN)
}

func TestTimeTravel(t *testing.T) {
	clock := &movable{t: time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)}
	e := startQuietIn(t, t.TempDir(), daemon.Config{Now: clock.now})
	alice := e.agent(t, "alice")
	ctx := context.Background()

	first := remember(t, alice, "agent/alice", "Lives in Austin", memd.TierProfile, memd.Source{})
	clock.add(31 * 24 * time.Hour) // into November
	forget, err := alice.Forget(ctx, memd.ForgetRequest{Shard: memd.AgentShard("alice"), ID: first.Fact.ID})
	if err != nil {
		t.Fatal(err)
	}
	remember(t, alice, "agent/alice", "Lives in Lisbon", memd.TierProfile, memd.Source{})

	for _, at := range []string{"2026-10-15", first.Commit, first.Commit[:8]} {
		list, err := alice.Facts(ctx, memd.FactsQuery{Shard: memd.AgentShard("alice"), At: at})
		if err != nil || len(list.Facts) != 1 || list.Facts[0].Text != "Lives in Austin" {
			t.Errorf("facts at %s: %+v %v", at, list.Facts, err)
		}
		res, err := alice.Recall(ctx, memd.RecallQuery{Q: "lives", At: at})
		if err != nil || !slices.Equal(hitTexts(res), []string{"Lives in Austin"}) {
			t.Errorf("recall at %s: %v %v", at, hitTexts(res), err)
		}
		mc, err := alice.Context(ctx, memd.ContextQuery{At: at})
		if err != nil || !strings.Contains(mc.Markdown, "Lives in Austin") || strings.Contains(mc.Markdown, "Lisbon") {
			t.Errorf("context at %s:\n%s %v", at, mc.Markdown, err)
		}
	}
	res, _ := alice.Recall(ctx, memd.RecallQuery{Q: "lives", At: forget.Commit})
	if len(res.Hits) != 0 {
		t.Errorf("recall right after the forget: %v", hitTexts(res))
	}
	res, _ = alice.Recall(ctx, memd.RecallQuery{Q: "lives"})
	if !slices.Equal(hitTexts(res), []string{"Lives in Lisbon"}) {
		t.Errorf("recall now: %v", hitTexts(res))
	}
	_, err = alice.Recall(ctx, memd.RecallQuery{Q: "lives", At: "deadbeef"})
	wantCode(t, err, memd.ENOTFOUND)
}

// serveAt starts memd on the data directory dir, and returns it with an
// admin client; the caller shuts it down.
func serveAt(t *testing.T, dir string) (*daemon.Daemon, *client.Client) {
	t.Helper()
	d, err := daemon.Open(daemon.Config{DataDir: dir, Listen: "127.0.0.1:0", NoSync: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	go d.Serve()
	token, _ := auth.ReadAdminToken(dir)
	return d, client.New(d.URL(), token)
}

// Deleting the index file loses nothing: the next start rebuilds it, with
// every fact attributed to its commit.
func TestIndex_DeletedFileLosesNothing(t *testing.T) {
	dir := t.TempDir()
	d, admin := serveAt(t, dir)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		remember(t, admin, "project/apollo", fmt.Sprintf("Decision %d about the launch plan", i), memd.TierLog, memd.Source{Messages: []string{fmt.Sprint("m", i)}})
	}
	before, err := admin.Recall(ctx, memd.RecallQuery{Q: "launch decision", K: 50})
	if err != nil || len(before.Hits) != 20 {
		t.Fatalf("before: %d hits, %v", len(before.Hits), err)
	}
	d.Shutdown(ctx)
	if err := os.Remove(filepath.Join(dir, daemon.IndexFile)); err != nil {
		t.Fatal(err)
	}
	d, admin = serveAt(t, dir)
	defer d.Shutdown(ctx)
	after, err := admin.Recall(ctx, memd.RecallQuery{Q: "launch decision", K: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Hits) != len(before.Hits) {
		t.Fatalf("after rebuilding: %d hits, want %d", len(after.Hits), len(before.Hits))
	}
	for i := range before.Hits {
		b, a := before.Hits[i], after.Hits[i]
		if a.ID != b.ID || a.Commit != b.Commit || !slices.Equal(a.SourceMessages, b.SourceMessages) {
			t.Errorf("hit %d: before %+v, after %+v", i, b, a)
		}
	}
}

// What memd wrote before a stop, with no recall after it, is in the
// index's snapshot: the next start reads it and catches nothing up from
// the commits (which would read every file of the shard).
func TestIndex_WritesBeforeAStopNeedNoCatchUpAfter(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, admin := serveAt(t, dir)
	remember(t, admin, "project/apollo", "The launch moved to May", memd.TierLog, memd.Source{})
	if _, err := admin.Recall(ctx, memd.RecallQuery{Q: "launch"}); err != nil { // the shard indexed
		t.Fatal(err)
	}
	remember(t, admin, "project/apollo", "The launch venue is Lisbon", memd.TierLog, memd.Source{})
	d.Shutdown(ctx)

	d, admin = serveAt(t, dir)
	defer d.Shutdown(ctx)
	res, err := admin.Recall(ctx, memd.RecallQuery{Q: "launch venue"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Text != "The launch venue is Lisbon" {
		t.Fatalf("after the restart: %v (%v)", hitTexts(res), err)
	}
	resp, err := http.Get(d.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "memd_index_catchup_seconds_count 0"; !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %q: the restart caught up from commits", want)
	}
}

// A property of the memory section over random stores: no block exceeds its
// budgets, and each "left on disk" count is exactly what was not shown.
func TestContext_BudgetsHoldOnRandomStores(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	e.agent(t, "alice", "p1", "p2")
	rng := rand.New(rand.NewPCG(7, 9))
	tiers := []memd.Tier{memd.TierProfile, memd.TierLog, memd.TierNote, memd.TierEpisode}
	for round := 0; round < 6; round++ {
		want := make(map[memd.ShardID]map[bool]int) // shard -> profile? -> facts
		for _, s := range []string{"agent/alice", "user/pat", "project/p1", "project/p2"} {
			id := shard(t, s)
			sh, err := e.d.Store.CreateShard(id)
			if err != nil {
				t.Fatal(err)
			}
			var edits []gitstore.Edit
			for i, n := 0, rng.IntN(260); i < n; i++ {
				text := fmt.Sprintf("r%d %s", round, strings.Repeat("word ", 1+rng.IntN(95)))
				date := memd.DateOf(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(600)))
				edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: text + fmt.Sprint(i), Date: date, Tier: tiers[rng.IntN(4)]}})
			}
			if len(edits) > 0 {
				if _, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "t", Email: "t@x"}, Message: "bulk", Edits: edits}); err != nil {
					t.Fatal(err)
				}
			}
			facts, _, err := sh.Facts()
			if err != nil {
				t.Fatal(err)
			}
			want[id] = map[bool]int{}
			for _, f := range facts {
				want[id][f.Tier == memd.TierProfile]++
			}
		}
		e.admin.ChatKind = memd.ChatDirect
		mc, err := e.admin.Context(ctx, memd.ContextQuery{Agent: "alice", User: "pat", Projects: []string{"p1", "p2"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(mc.Blocks) != 4 {
			t.Fatalf("blocks: %d", len(mc.Blocks))
		}
		for _, b := range mc.Blocks {
			size := func(fs []memd.Fact) int {
				n := 0
				for _, f := range fs {
					n += utf8.RuneCountInString(gitstore.FormatLine(f))
				}
				return n
			}
			if len(b.Profile) > 100 || size(b.Profile) > 20000 || len(b.Recent) > 30 || size(b.Recent) > 4000 {
				t.Errorf("round %d %s: over budget: %d lasting (%d chars), %d recent (%d chars)", round, b.Shard, len(b.Profile), size(b.Profile), len(b.Recent), size(b.Recent))
			}
			if got, w := len(b.Profile)+b.ProfileLeft, want[b.Shard][true]; got != w {
				t.Errorf("round %d %s: %d lasting shown + %d left = %d, but the shard holds %d", round, b.Shard, len(b.Profile), b.ProfileLeft, got, w)
			}
			if got, w := len(b.Recent)+b.RecentLeft, want[b.Shard][false]; got != w {
				t.Errorf("round %d %s: %d recent shown + %d left = %d, but the shard holds %d", round, b.Shard, len(b.Recent), b.RecentLeft, got, w)
			}
			if b.RecentLeft > 0 && !strings.Contains(mc.Markdown, fmt.Sprintf("(%d more dated", b.RecentLeft)) {
				t.Errorf("round %d %s: the Markdown does not say %d dated facts are left", round, b.Shard, b.RecentLeft)
			}
		}
	}
}

// A read that names a person outside a direct chat says it left their
// memory out, and by which rule, rather than searching less in silence.
func TestRecall_SaysWhatItLeftOut(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice")
	ctx := context.Background()
	res, err := alice.Recall(ctx, memd.RecallQuery{Q: "lisbon", User: "pat"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Shard != memd.UserShard("pat") || res.Skipped[0].Rule != "user-memory-direct-chat" {
		t.Errorf("skipped: %+v", res.Skipped)
	}
	mc, err := alice.Context(ctx, memd.ContextQuery{User: "pat"})
	if err != nil || len(mc.Skipped) != 1 {
		t.Errorf("context skipped: %+v, %v", mc.Skipped, err)
	}
	// The Markdown section, for a prompt, says it in a header.
	token, _ := auth.ReadAdminToken(e.dir)
	resp, _ := memdtest.Get(t, e.d.URL(), token, "/v1/context?agent=alice&user=pat")
	if h := resp.Header.Get("Memd-Skipped"); h != "user/pat; rule=user-memory-direct-chat" {
		t.Errorf("Memd-Skipped: %q", h)
	}
	alice.ChatKind = memd.ChatDirect
	if res, err := alice.Recall(ctx, memd.RecallQuery{Q: "lisbon", User: "pat"}); err != nil || len(res.Skipped) != 0 {
		t.Errorf("in a direct chat: skipped %+v, %v", res.Skipped, err)
	}
}

// A person who rewrites main's history (an amended commit) gets hits that
// name the commits main holds, before and after a restart, even once git
// has dropped the commits rewritten away.
func TestIndex_AHistoryRewrittenByHandIsAttributedAgain(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, admin := serveAt(t, dir)
	s := shard(t, "agent/alice")
	if _, err := admin.AddAgent(ctx, "alice", nil); err != nil {
		t.Fatal(err)
	}
	remember(t, admin, "agent/alice", "Fact alpha", memd.TierProfile, memd.Source{Messages: []string{"h1"}})
	remember(t, admin, "agent/alice", "Fact beta", memd.TierProfile, memd.Source{Messages: []string{"h2"}})
	if res, err := admin.Recall(ctx, memd.RecallQuery{Q: "beta", Agent: "alice"}); err != nil || len(res.Hits) == 0 {
		t.Fatalf("recall: %+v, %v", res, err)
	}
	repo := d.Store.ShardDir(s)
	msg := strings.ReplaceAll(gitIn(t, repo, "log", "-1", "--format=%B"), "Source-Message: h2", "Source-Message: h2-corrected")
	gitIn(t, repo, "commit", "-q", "--amend", "-m", msg)
	head, source := gitIn(t, repo, "rev-parse", "HEAD"), "h2-corrected"
	check := func(when string) {
		t.Helper()
		// A recall brings the index up to HEAD; the facts of commits
		// rewritten away are then attributed in the background.
		if _, err := admin.Recall(ctx, memd.RecallQuery{Q: "beta", Agent: "alice"}); err != nil {
			t.Fatal(err)
		}
		waitAttributed(t, admin, s)
		res, err := admin.Recall(ctx, memd.RecallQuery{Q: "beta", Agent: "alice"})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("%s: recall %+v, %v", when, res, err)
		}
		if h := res.Hits[0]; h.Commit != head || !slices.Equal(h.SourceMessages, []string{source}) {
			t.Errorf("%s: the hit names commit %.12s from %v, want %.12s from %s", when, h.Commit, h.SourceMessages, head, source)
		}
		facts, err := admin.Facts(ctx, memd.FactsQuery{Shard: s, Origins: true})
		if err != nil {
			t.Fatalf("%s: facts with origins: %v", when, err)
		}
		for _, f := range facts.Facts {
			if f.Text == "Fact beta" && (f.Origin == nil || f.Origin.Commit != head) {
				t.Errorf("%s: beta's origin %+v", when, f.Origin)
			}
		}
	}
	check("after the amend")
	d.Shutdown(ctx)
	gitIn(t, repo, "reflog", "expire", "--expire=now", "--all")
	gitIn(t, repo, "gc", "-q", "--prune=now")
	d, admin = serveAt(t, dir)
	check("after a gc and a restart")

	// Rewritten while memd was stopped, the commit the index was saved at
	// gone too.
	d.Shutdown(ctx)
	msg = strings.ReplaceAll(msg, "Source-Message: h2-corrected", "Source-Message: h2-again")
	gitIn(t, repo, "commit", "-q", "--amend", "-m", msg)
	head, source = gitIn(t, repo, "rev-parse", "HEAD"), "h2-again"
	gitIn(t, repo, "reflog", "expire", "--expire=now", "--all")
	gitIn(t, repo, "gc", "-q", "--prune=now")
	d, admin = serveAt(t, dir)
	defer d.Shutdown(ctx)
	check("rewritten while stopped")
}

// waitAttributed waits until the status says no shard of s's is being
// attributed to its commits.
func waitAttributed(t *testing.T, c *client.Client, s memd.ShardID) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; {
		st, err := c.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Attributing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still being attributed", s)
		}
		time.Sleep(5 * time.Millisecond) // polling the status of background work
	}
}

// allergyServed starts memd on a new data directory with carol's shard
// holding one fact, remembered from message m1.
func allergyServed(t *testing.T) (dir string, d *daemon.Daemon, admin *client.Client, first memd.RememberResult) {
	t.Helper()
	dir = t.TempDir()
	d, admin = serveAt(t, dir)
	if _, err := admin.AddAgent(context.Background(), "carol", nil); err != nil {
		t.Fatal(err)
	}
	first = remember(t, admin, "agent/carol", "Allergic to peanuts", memd.TierProfile, memd.Source{Messages: []string{"m1"}})
	return dir, d, admin, first
}

// wantOrigin checks that recall, facts?origins and trace all name commit
// want as the origin of the fact first remembered, the one recall finds.
func wantOrigin(t *testing.T, admin *client.Client, first memd.RememberResult, want, when string) {
	t.Helper()
	ctx, s := context.Background(), first.Fact.Shard
	if got, file := originOf(t, admin, s, "peanuts", ""); got != want {
		t.Errorf("%s: the hit, in %s, names %.12s, want %.12s", when, file, got, want)
	}
	facts, err := admin.Facts(ctx, memd.FactsQuery{Shard: s, Origins: true})
	if err != nil || len(facts.Facts) != 1 || facts.Facts[0].Origin == nil || facts.Facts[0].Origin.Commit != want {
		t.Errorf("%s: facts with origins %+v, %v, want %.12s", when, facts.Facts, err, want)
	}
	if tr, err := admin.Trace(ctx, s, first.Fact.ID); err != nil || tr.Introduced == nil || tr.Introduced.Hash != want {
		t.Errorf("%s: the trace names %+v, %v, want %.12s", when, tr.Introduced, err, want)
	}
}

// After a revert, or a person, takes back a line of a fact another line
// still holds, recall and the fact's origin name the commit that wrote the
// line that stands, with its messages, as trace and git blame do: not the
// commit taking the line back, which wrote no line of the fact, nor the
// one it undid. So it is while memd runs and after the index is rebuilt
// from history.
func TestRecall_AfterARevertOfAFactWrittenAgain(t *testing.T) {
	for _, c := range []struct {
		name, path, line string
		byHand           bool // a person deletes the line, where memd reverts its commit
	}{
		{"another file", "log/2026-11.md", "- (2026-11-20) Allergic to peanuts\n", false},
		{"the same file, another date", "profile.md", "- (2026-12-01) Allergic to peanuts\n", false},
		{"deleted by hand", "log/2026-11.md", "- (2026-11-20) Allergic to peanuts\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, d, admin, first := allergyServed(t)
			ctx, s := context.Background(), first.Fact.Shard
			again := commitLines(t, d.Store.ShardDir(s), c.path, c.line, "noted the allergy again")
			originOf(t, admin, s, "peanuts", "") // the index reads the commit writing the fact again
			if c.byHand {
				rewrite(t, d.Store.ShardDir(s), c.path, c.line, "")
			} else if _, err := admin.Revert(ctx, memd.RevertRequest{Shard: s, Commit: again}); err != nil {
				t.Fatal(err)
			}
			wantOrigin(t, admin, first, first.Commit, "while memd runs")
			res, err := admin.Recall(ctx, memd.RecallQuery{Q: "peanuts", Agent: "carol"})
			if err != nil || len(res.Hits) != 1 || !slices.Equal(res.Hits[0].SourceMessages, []string{"m1"}) {
				t.Errorf("the hit's messages: %+v, %v", res.Hits, err)
			}
			d, admin = rebuiltIndex(t, d, dir)
			defer d.Shutdown(ctx)
			wantOrigin(t, admin, first, first.Commit, "rebuilt from history")
		})
	}
}

// A fact held by two lines is attributed to the commit that wrote the
// line memd holds of it, the newest (the first in file order, profile.md
// first, of two at one date), by recall, its origin, recall at a commit and
// trace alike, while memd runs and after the index is rebuilt.
func TestOrigin_TwoCopiesOfAFactAgreeEverywhere(t *testing.T) {
	for _, c := range []struct {
		name, path, date string
		persons          bool // the person's line is the one held
	}{
		{"an older copy", "log/2026-01.md", "2026-01-10", false},
		{"a copy of the same date in a log", "log/2026-12.md", "", false},
		{"a newer copy", "log/2026-12.md", "2026-12-20", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, d, admin, first := allergyServed(t)
			s := first.Fact.Shard
			date := c.date
			if date == "" {
				date = first.Fact.Date.String()
			}
			repo := d.Store.ShardDir(s)
			copied := commitLines(t, repo, c.path, "- ("+date+") Allergic to peanuts\n", "noted the allergy again")
			want := first.Commit
			if c.persons {
				want = copied
			}
			check := func(when string) {
				t.Helper()
				wantOrigin(t, admin, first, want, when)
				if got, file := originOf(t, admin, s, "peanuts", copied); got != want {
					t.Errorf("%s: recall at HEAD names %.12s (%s), want %.12s", when, got, file, want)
				}
			}
			check("while memd runs")
			d, admin = rebuiltIndex(t, d, dir)
			defer d.Shutdown(context.Background())
			check("rebuilt from history")
		})
	}
}

// A person who amends a commit so that it also deletes the copy of a fact
// memd held leaves the fact attributed to the commit that wrote the line
// that stands, as a rebuild and trace have it.
func TestOrigin_AfterAnAmendDeletesTheCopyHeld(t *testing.T) {
	_, d, admin, first := allergyServed(t)
	defer func() { d.Shutdown(context.Background()) }()
	s := first.Fact.Shard
	repo := d.Store.ShardDir(s)
	newer := commitLines(t, repo, "log/2026-12.md", "- (2026-12-20) Allergic to peanuts\n", "noted the allergy again")
	if got, _ := originOf(t, admin, s, "peanuts", ""); got != newer {
		t.Fatalf("with a newer copy the origin is %.12s, want %.12s", got, newer)
	}
	commitLines(t, repo, "notes.txt", "unrelated\n", "an unrelated change")
	originOf(t, admin, s, "peanuts", "")
	if err := os.Remove(filepath.Join(repo, "log", "2026-12.md")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "commit", "-q", "-a", "--amend", "-m", "an unrelated change, and the copy gone")
	wantOrigin(t, admin, first, first.Commit, "after the amend")
}

// A fact memd forgot that a person then wrote again in two places, one of
// which came with another fact memd reverted, is attributed to the commit
// that wrote the line held, not to the forgotten commit nor to the
// revert, which took back the reverted commit's line of it with its other
// fact (the older copy holds the fact without it): live, rebuilt and by
// trace.
func TestOrigin_AForgottenFactWrittenAgainByAPerson(t *testing.T) {
	dir, d, admin, first := allergyServed(t)
	ctx, s := context.Background(), first.Fact.Shard
	if _, err := admin.Forget(ctx, memd.ForgetRequest{Shard: s, ID: first.Fact.ID}); err != nil {
		t.Fatal(err)
	}
	repo := d.Store.ShardDir(s)
	both := commitLines(t, repo, "log/2026-12.md", "- (2026-12-03) Allergic to peanuts\n- (2026-12-03) Plays the oboe\n", "two facts")
	older := commitLines(t, repo, "log/2026-11.md", "- (2026-11-10) Allergic to peanuts\n", "an older copy")
	if _, err := admin.Recall(ctx, memd.RecallQuery{Q: "peanuts", Agent: "carol"}); err != nil {
		t.Fatal(err)
	}
	rv, err := admin.Revert(ctx, memd.RevertRequest{Shard: s, Commit: both})
	if err != nil {
		t.Fatal(err)
	}
	if len(rv.Reverts) != 1 || len(rv.Reverts[0].Changes) != 2 {
		t.Fatalf("the revert: %+v, want the oboe and the commit's line of the allergy taken back", rv)
	}
	wantOrigin(t, admin, first, older, "while memd runs")
	d, admin = rebuiltIndex(t, d, dir)
	defer d.Shutdown(ctx)
	wantOrigin(t, admin, first, older, "rebuilt from history")
}

// rebuiltIndex stops d, deletes its index and snapshots, and starts a
// daemon on dir again, which reads every shard afresh.
func rebuiltIndex(t *testing.T, d *daemon.Daemon, dir string) (*daemon.Daemon, *client.Client) {
	t.Helper()
	d.Shutdown(context.Background())
	if err := os.Remove(filepath.Join(dir, daemon.IndexFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "index.shards")); err != nil {
		t.Fatal(err)
	}
	return serveAt(t, dir)
}

// originOf returns the commit and file of the one hit a recall for q
// finds, at a commit or live, once the shard is attributed.
func originOf(t *testing.T, admin *client.Client, s memd.ShardID, q, at string) (commit, file string) {
	t.Helper()
	ctx := context.Background()
	if _, err := admin.Recall(ctx, memd.RecallQuery{Q: q, Agent: s.Name}); err != nil {
		t.Fatal(err)
	}
	waitAttributed(t, admin, s)
	res, err := admin.Recall(ctx, memd.RecallQuery{Q: q, Agent: s.Name, At: at})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("recall %q at %q: %+v, %v", q, at, res, err)
	}
	return res.Hits[0].Commit, res.Hits[0].File
}

// A person pastes a fact's line again, same file and date; memd reverts
// that. The line left was written by the remember, which recall names,
// live and rebuilt, as trace does.
func TestOrigin_RevertOfAPastedCopy(t *testing.T) {
	dir, d, admin, first := allergyServed(t)
	ctx, s := context.Background(), first.Fact.Shard
	pasted := commitLines(t, d.Store.ShardDir(s), "profile.md", "- ("+first.Fact.Date.String()+") Allergic to peanuts\n", "pasted twice")
	originOf(t, admin, s, "peanuts", "")
	if _, err := admin.Revert(ctx, memd.RevertRequest{Shard: s, Commit: pasted}); err != nil {
		t.Fatal(err)
	}
	wantOrigin(t, admin, first, first.Commit, "while memd runs")
	d, admin = rebuiltIndex(t, d, dir)
	defer d.Shutdown(ctx)
	wantOrigin(t, admin, first, first.Commit, "rebuilt from history")
}

// Recall at a commit names the commit that wrote the line it shows, not
// the live origin of another line of the fact at that date.
func TestOrigin_AtACommitNamesItsOwnLinesWriter(t *testing.T) {
	_, d, admin, first := allergyServed(t)
	defer func() { d.Shutdown(context.Background()) }()
	s := first.Fact.Shard
	repo, date := d.Store.ShardDir(s), first.Fact.Date.String()
	copied := commitLines(t, repo, "log/"+date[:7]+".md", "- ("+date+") Allergic to peanuts\n", "a copy, same date")
	rewrite(t, repo, "profile.md", "- ("+date+") Allergic to peanuts\n", "")
	wantOrigin(t, admin, first, copied, "live")
	if got, file := originOf(t, admin, s, "peanuts", copied); got != first.Commit || file != "profile.md" {
		t.Errorf("at %.12s, the hit is %s from %.12s, want profile.md from %.12s", copied, file, got, first.Commit)
	}
}
