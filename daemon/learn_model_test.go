package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/internal/scriptedmodel"
	"github.com/memd/memd/learn"
)

// A model's fact that is Markdown — inline code, a Python dunder name, a
// title in quotes — is kept as the model wrote it: memd strips only what
// wraps a whole line (bold, a code span around the whole answer line), not
// one end of a span inside the fact.
func TestLearner_MarkdownInsideAFactIsKept(t *testing.T) {
	want := []string{
		"Runs the tests with `make test`",
		"The entry point is __init__",
		`"Dune" is the team's book club pick, not "Foundation"`,
	}
	m := newModelServer(t, answers("profile: "+want[0]+"\nprofile: "+want[1]+"\nprofile: "+want[2]))
	e, feed := startLearning(t, m)
	alice := e.agent(t, "alice")
	st, err := alice.Learn(context.Background(), exchange("alice", "md1", memd.ChatGroup, "", "We run the tests with make test; the entry point is __init__; we read Dune, not Foundation.", "Noted."))
	if err != nil {
		t.Fatal(err)
	}
	learned(t, feed, st.ID)
	got := factTexts(t, e, memd.AgentShard("alice"))
	sort.Strings(got)
	sorted := slices.Clone(want)
	sort.Strings(sorted)
	if !slices.Equal(got, sorted) {
		t.Errorf("learned facts:\n%q\nwant the model's facts as written:\n%q", got, sorted)
	}
}

// A model that hangs is given up on at the model timeout, and the
// exchange is retried and learned once.
func TestLearner_HangingModelTimesOutThenLearns(t *testing.T) {
	m := newModelServer(t, byCall(func(n int, r modelRequest) (int, string) {
		if n == 1 {
			<-r.Context.Done() // hangs until the client gives up
			return 0, ""
		}
		return http.StatusOK, "log: Learned after the model hung once"
	}))
	e, feed := startLearningWith(t, m, func(c *daemon.Config) { c.Model.Timeout = 300 * time.Millisecond })
	alice := e.agent(t, "alice")
	st, err := alice.Learn(context.Background(), exchange("alice", "hang1", memd.ChatGroup, "", "Remember that the model hung once", "OK"))
	if err != nil {
		t.Fatal(err)
	}
	ev := learned(t, feed, st.ID)
	if len(ev.Learned) != 1 {
		t.Errorf("learned %d commits, want 1", len(ev.Learned))
	}
	if got := factTexts(t, e, memd.AgentShard("alice")); !slices.Equal(got, []string{"Learned after the model hung once"}) {
		t.Errorf("facts: %q", got)
	}
}

var chatOf = regexp.MustCompile(`from chat (\S+) \(`)

// Exchanges of several agents and chats queued in a burst, the daemon
// stopped while the model is answering none of them, then started again:
// each exchange is learned once, its fact in its agent's shard once,
// citing its own messages.
func TestLearner_BurstStopRestartLearnsEachOnce(t *testing.T) {
	dir := t.TempDir()
	arrived := make(chan struct{}, 100)
	hang := newModelServer(t, func(r modelRequest) (int, string) {
		arrived <- struct{}{}
		<-r.Context.Done()
		return 0, ""
	})
	cfg := daemon.Config{DataDir: dir, Listen: "127.0.0.1:0", NoSync: true, LearnRetryBase: 5 * time.Millisecond,
		Model: &learn.ModelConfig{BaseURL: hang.URL + "/v1", Model: "scripted-model"}}
	d, err := daemon.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve() }()
	first := &env{d: d, dir: dir}
	first.admin = adminClient(t, d, dir)
	ctx := context.Background()
	agents := []string{"a1", "a2", "a3"}
	var exs []memd.Exchange
	for _, a := range agents {
		first.agent(t, a)
	}
	for i := 0; i < 4; i++ {
		for _, a := range agents {
			ex := exchange(a, fmt.Sprintf("%s-c%d", a, i), memd.ChatGroup, "", fmt.Sprintf("Please remember item %d for %s", i, a), "Noted.")
			if _, err := first.admin.Learn(ctx, ex); err != nil {
				t.Fatal(err)
			}
			exs = append(exs, ex)
		}
	}
	<-arrived // the model is being asked
	if err := d.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	m := newModelServer(t, func(r modelRequest) (int, string) {
		c := chatOf.FindStringSubmatch(r.User)
		if c == nil {
			return http.StatusOK, "NONE"
		}
		return http.StatusOK, "log: Item from chat " + c[1]
	})
	e, feed := startLearningIn(t, dir, m)
	seen := map[string]int{}
	for range exs {
		ev := waitFor(t, feed, "an exchange learned", func(ev memd.FeedEvent) bool { return ev.Type == memd.EventLearned })
		seen[ev.Exchange]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("exchange %s learned %d times", id, n)
		}
	}
	for _, a := range agents {
		got := factTexts(t, e, memd.AgentShard(a))
		sort.Strings(got)
		var want []string
		for i := 0; i < 4; i++ {
			want = append(want, fmt.Sprintf("Item from chat %s-c%d", a, i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's facts: %q, want %q", a, got, want)
		}
		commits, err := e.admin.Log(ctx, memd.LogQuery{Shard: memd.AgentShard(a), Op: memd.OpRemember})
		if err != nil {
			t.Fatal(err)
		}
		if len(commits) != 4 {
			t.Errorf("%s has %d remember commits, want 4", a, len(commits))
		}
		for i, c := range commits { // newest first: learned in the order handed in
			if want := fmt.Sprintf("Item from chat %s-c%d", a, len(commits)-1-i); c.Changes[0].Fact.Text != want {
				t.Errorf("%s's commit %d (newest first) is %q, want %q", a, i, c.Changes[0].Fact.Text, want)
			}
		}
		for _, c := range commits {
			chat := strings.TrimPrefix(c.Changes[0].Fact.Text, "Item from chat ")
			if c.Provenance.SourceChat != chat || !slices.Equal(c.Provenance.SourceMessages, []string{chat + "-m0", chat + "-m1"}) {
				t.Errorf("commit %s cites %+v", c.Hash, c.Provenance)
			}
		}
	}
}

// startLearningIn is startLearning on a data directory that may hold a
// store and a queue already.
func startLearningIn(t *testing.T, dir string, m *modelServer) (*env, memd.Subscription) {
	t.Helper()
	cfg := daemon.Config{Model: &learn.ModelConfig{BaseURL: m.URL + "/v1", Model: "scripted-model"}, LearnRetryBase: 5 * time.Millisecond}
	e := startQuietIn(t, dir, cfg)
	sub, err := e.admin.Subscribe(context.Background(), memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return e, sub
}

func adminClient(t *testing.T, d *daemon.Daemon, dir string) *client.Client {
	t.Helper()
	token, err := auth.ReadAdminToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	return client.New(d.URL(), token)
}

// An answer that is nothing but an empty code fence is an empty answer:
// retried (README: "an empty answer ... is retried"), not marked learned
// with nothing learned and nothing counted as ignored.
func TestLearner_AnAnswerOfAnEmptyCodeFenceIsRetried(t *testing.T) {
	m := newModelServer(t, byCall(func(n int, r modelRequest) (int, string) {
		if n == 1 {
			return http.StatusOK, "```\n```"
		}
		return http.StatusOK, "log: The launch moved to May"
	}))
	e, feed := startLearning(t, m)
	alice := e.agent(t, "alice")
	st, err := alice.Learn(context.Background(), exchange("alice", "fence1", memd.ChatGroup, "", "Remember the launch moved to May", "OK"))
	if err != nil {
		t.Fatal(err)
	}
	learned(t, feed, st.ID)
	if got := factTexts(t, e, memd.AgentShard("alice")); !slices.Equal(got, []string{"The launch moved to May"}) {
		list, _ := e.admin.Exchanges(context.Background(), "")
		t.Errorf("after an answer of an empty code fence, alice holds %q; the exchange: %+v", got, list)
	}
}

// An exchange whose time is in the last hour of 9999 in a zone west of
// UTC is valid RFC 3339 that memd cannot keep (its UTC year is 10000):
// handing it in is refused as invalid input, not answered with an
// internal error (README: refused input gets a specific error code).
func TestLearner_AnExchangeTimeThatIsYear10000InUTCIsInvalid(t *testing.T) {
	m := newModelServer(t, answers("log: The deadline is at the end of time"))
	e, _ := startLearning(t, m)
	alice := e.agent(t, "alice")
	ex := exchange("alice", "y10k", memd.ChatGroup, "", "Remember the deadline is at the end of time", "OK")
	ex.Time = time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("west", -3600))
	_, err := alice.Learn(context.Background(), ex)
	wantCode(t, err, memd.EINVALID)
}

// An exchange dated in year 0 (valid RFC 3339): what is learned from it is
// a fact memd reads back, or the exchange is refused.
func TestLearner_AnExchangeOfYearZero(t *testing.T) {
	m := newModelServer(t, answers("log: Something happened long ago"))
	e, feed := startLearning(t, m)
	alice := e.agent(t, "alice")
	ex := exchange("alice", "y0", memd.ChatGroup, "", "Remember something happened long ago", "OK")
	ex.Time = time.Date(0, 6, 1, 12, 0, 0, 0, time.UTC)
	st, err := alice.Learn(context.Background(), ex)
	if memd.ErrorCode(err) == memd.EINVALID {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	ev := learned(t, feed, st.ID)
	dir := e.d.Store.ShardDir(memd.AgentShard("alice"))
	got := factTexts(t, e, memd.AgentShard("alice"))
	if len(ev.Learned) != 1 || len(got) != 1 {
		t.Errorf("the learner committed %d change(s), alice's shard holds facts %q; files in HEAD:\n%s", len(ev.Learned), got,
			gitIn(t, dir, "ls-tree", "-r", "--name-only", "HEAD"))
	}
}

// A correction of a known fact whose text starts with a bracketed word, or
// ends in an inline code span, copied exactly as the prompt asks ("remove:
// a fact from KNOWN FACTS, copied exactly"), removes it: otherwise the new
// fact is added beside the old one it replaces.
func TestLearner_ACorrectionOfAFactCopiedExactlyRemovesIt(t *testing.T) {
	for _, c := range []struct{ old, new string }{
		{"[beta] Uses the new dashboard", "Uses the old dashboard again"},
		{"Builds with `make all`", "Builds with `bazel build //...`"},
	} {
		t.Run(c.old, func(t *testing.T) {
			m := newModelServer(t, func(r modelRequest) (int, string) {
				// Copy the known fact's line exactly, as the prompt asks.
				for _, line := range strings.Split(r.User, "\n") {
					if strings.HasSuffix(line, c.old) {
						return http.StatusOK, "remove: " + line + "\nprofile: " + c.new
					}
				}
				return http.StatusOK, "NONE"
			})
			e, feed := startLearning(t, m)
			alice := e.agent(t, "alice")
			remember(t, alice, "agent/alice", c.old, memd.TierProfile, memd.Source{})
			st, err := alice.Learn(context.Background(), exchange("alice", "fix1", memd.ChatGroup, "", "We changed that: "+c.new, "Noted."))
			if err != nil {
				t.Fatal(err)
			}
			learned(t, feed, st.ID)
			if got := factTexts(t, e, memd.AgentShard("alice")); !slices.Equal(got, []string{c.new}) {
				t.Errorf("after the correction alice holds %q, want only %q (the model answered %q)", got, c.new, "remove: - (…) "+c.old)
			}
		})
	}
}

// Reverting one message of a learned exchange takes back everything learned
// from it — in the agent's shard and the person's, the removal included —
// and nothing learned from another exchange.
func TestLearner_RevertByMessageAfterLearning(t *testing.T) {
	m := newModelServer(t, func(r modelRequest) (int, string) {
		c := chatOf.FindStringSubmatch(r.User)
		switch {
		case c == nil:
			return http.StatusOK, "NONE"
		case c[1] == "c1":
			for _, line := range strings.Split(r.User, "\n") {
				if strings.HasSuffix(line, "Uses Postgres 15") {
					return http.StatusOK, "remove: " + line + "\nprofile: Uses Postgres 16\nuser: Prefers short answers\nlog: Upgraded the database"
				}
			}
			return http.StatusOK, "NONE"
		default:
			return http.StatusOK, "log: Fact from chat " + c[1]
		}
	})
	e, feed := startLearning(t, m)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	remember(t, alice, "agent/alice", "Uses Postgres 15", memd.TierProfile, memd.Source{Messages: []string{"k0"}, Chat: "c0"})
	st2, err := alice.Learn(ctx, exchange("alice", "c2", memd.ChatDirect, "pat", "Remember the other thing please", "OK"))
	if err != nil {
		t.Fatal(err)
	}
	learned(t, feed, st2.ID)
	st1, err := alice.Learn(ctx, exchange("alice", "c1", memd.ChatDirect, "pat", "We upgraded to Postgres 16; keep answers short", "Noted."))
	if err != nil {
		t.Fatal(err)
	}
	ev := learned(t, feed, st1.ID)
	if len(ev.Learned) != 4 {
		t.Fatalf("learned %d commits from c1, want 4", len(ev.Learned))
	}
	for _, s := range []memd.ShardID{memd.AgentShard("alice"), memd.UserShard("pat")} {
		commits, _ := e.admin.Log(ctx, memd.LogQuery{Shard: s, Message: "c1-m0"})
		for _, c := range commits {
			p := c.Provenance
			if !slices.Equal(p.SourceMessages, []string{"c1-m0", "c1-m1"}) || p.SourceChat != "c1" || p.ChatKind != memd.ChatDirect || p.LearnedBy != memd.LearnedLearner {
				t.Errorf("%s commit %s: %+v", s, c.Subject, p)
			}
		}
	}
	res, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "c1-m1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reverts) != 4 {
		t.Errorf("reverted %d commits, want 4: %+v", len(res.Reverts), res)
	}
	got := factTexts(t, e, memd.AgentShard("alice"))
	sort.Strings(got)
	if want := []string{"Fact from chat c2", "Uses Postgres 15"}; !slices.Equal(got, want) {
		t.Errorf("alice after the revert: %q, want %q", got, want)
	}
	if got := factTexts(t, e, memd.UserShard("pat")); len(got) != 0 {
		t.Errorf("pat after the revert: %q", got)
	}
}

// A synthesis rewrite whose new text ends in an inline code span is
// committed as the model wrote it, not with the span's closing backtick cut.
func TestLearner_SynthesisRewriteKeepsInlineCode(t *testing.T) {
	m := newModelServer(t, nil)
	e, feed := startLearningWith(t, m, func(c *daemon.Config) { c.Synthesis = &daemon.SynthesisConfig{} })
	e.agent(t, "alice")
	old := "Runs the tests with make"
	want := "Runs the tests with `make test`"
	m.Script(synthesisModel(func(user string) string {
		return "profile: " + old
	}, func(scriptedmodel.Request) string {
		return "rewrite: " + memd.FactID(old) + " => " + want + " | evidence: c1-m0"
	}, func(scriptedmodel.Request) string {
		return "1: approve"
	}))
	learnFrom(t, e, feed, "c1", "We run the tests with make test")
	synthesize(t, e, feed)
	if got := factTexts(t, e, memd.AgentShard("alice")); !slices.Equal(got, []string{want}) {
		t.Errorf("after the rewrite alice holds %q, want %q", got, want)
	}
}

// A sloppy model: the same fact twice (once in other case), a fact of
// exactly 500 characters and one of 501, a tab inside a fact, a removal by
// ID and of a fact never shown, 429 and 500 before the answer. Only valid
// facts land, once each, and every other line is counted as ignored.
func TestLearner_SloppyModelAfterBusyAndBroken(t *testing.T) {
	exact := strings.Repeat("a", 499) + "b"
	answer := strings.Join([]string{
		"profile: Lives in Lisbon",
		"profile: lives in   LISBON",
		"log: " + exact,
		"log: " + exact + "c",
		"note: a\tb",
		"remove: 0debdaf7d96f",
		"remove: Never shown to the model",
	}, "\n")
	m := newModelServer(t, byCall(func(n int, _ modelRequest) (int, string) {
		switch n {
		case 1:
			return http.StatusTooManyRequests, ""
		case 2:
			return http.StatusInternalServerError, ""
		}
		return http.StatusOK, answer
	}))
	e, feed := startLearning(t, m)
	alice := e.agent(t, "alice")
	st, err := alice.Learn(context.Background(), exchange("alice", "s1", memd.ChatGroup, "", "I live in Lisbon; here is a long note", "OK"))
	if err != nil {
		t.Fatal(err)
	}
	ev := learned(t, feed, st.ID)
	got := factTexts(t, e, memd.AgentShard("alice"))
	sort.Strings(got)
	if want := []string{"Lives in Lisbon", exact}; !slices.Equal(got, want) || len(ev.Learned) != 2 {
		t.Errorf("learned %d commits, facts %q", len(ev.Learned), got)
	}
	list, _ := alice.Exchanges(context.Background(), memd.ExchangeDone)
	if len(list) != 1 || list[0].Ignored != 4 {
		t.Errorf("done: %+v", list)
	}
}

// An episode summing up six exchanges of 20 messages each cites all 120
// messages; reverting the last of them takes the episode back.
func TestLearner_EpisodeOfManyMessagesRevertsByItsLastMessage(t *testing.T) {
	m := newModelServer(t, func(r modelRequest) (int, string) {
		if strings.Contains(r.System, "summarise") {
			return http.StatusOK, "Worked through a long planning session."
		}
		return http.StatusOK, "NONE"
	})
	e, feed := startLearning(t, m)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	var last string
	for i := 0; i < 6; i++ {
		var msgs []string
		for j := 0; j < 20; j++ {
			msgs = append(msgs, fmt.Sprintf("Step %d.%d of planning the offsite", i, j))
		}
		ex := exchange("alice", fmt.Sprintf("ep%d", i), memd.ChatDirect, "pat", msgs...)
		last = ex.Messages[len(ex.Messages)-1].ID
		if _, err := alice.Learn(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	ev := waitFor(t, feed, "the episode", func(ev memd.FeedEvent) bool { return ev.Provenance.LearnedBy == memd.LearnedEpisode })
	if n := len(ev.Provenance.SourceMessages); n != 120 {
		t.Errorf("the episode cites %d messages, want 120", n)
	}
	res, err := e.admin.Revert(ctx, memd.RevertRequest{Message: last})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reverts) != 1 {
		t.Errorf("reverting %s reverted %d commits, want the episode", last, len(res.Reverts))
	}
	if got := factTexts(t, e, memd.AgentShard("alice")); len(got) != 0 {
		t.Errorf("after the revert: %q", got)
	}
}

// The same text in the agent's memory and in the person's: a correction
// of the person's fact, quoted with its [user] label as the prompt shows
// it, removes the person's fact, not the agent's.
func TestLearner_ACorrectionOfTheUsersFactRemovesTheUsersFact(t *testing.T) {
	const same = "The weekly sync is on Tuesdays"
	m := newModelServer(t, func(r modelRequest) (int, string) {
		for _, line := range strings.Split(r.User, "\n") {
			if strings.HasSuffix(line, "[user] "+same) {
				return http.StatusOK, "remove: " + line + "\nuser: Moved the weekly sync to Thursdays"
			}
		}
		return http.StatusOK, "NONE"
	})
	e, feed := startLearning(t, m)
	alice := e.agent(t, "alice")
	remember(t, alice, "agent/alice", same, memd.TierProfile, memd.Source{})
	e.admin.ChatKind = memd.ChatDirect
	remember(t, e.admin, "user/pat", same, memd.TierProfile, memd.Source{})
	st, err := alice.Learn(context.Background(), exchange("alice", "sync1", memd.ChatDirect, "pat", "I moved my weekly sync to Thursdays", "Noted."))
	if err != nil {
		t.Fatal(err)
	}
	learned(t, feed, st.ID)
	if got := factTexts(t, e, memd.AgentShard("alice")); !slices.Equal(got, []string{same}) {
		t.Errorf("alice's own memory after correcting pat's fact: %q, want it untouched", got)
	}
	got := factTexts(t, e, memd.UserShard("pat"))
	if !slices.Equal(got, []string{"Moved the weekly sync to Thursdays"}) {
		t.Errorf("pat's memory after the correction: %q", got)
	}
}
