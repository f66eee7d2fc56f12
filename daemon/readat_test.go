package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// A hit's explained parts add up to its score, and name the fact it
// borrowed context from.
func TestRecall_ExplainPartsAddUpToTheScore(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice")
	ctx := context.Background()
	chat := memd.Source{Chat: "c1"}
	for i, text := range []string{
		"Pat asked which hotel we booked for the Lisbon offsite",
		"The Memmo Alfama, three nights from March 13",
		"Pat said thanks",
	} {
		chat.Messages = []string{fmt.Sprintf("m%d", i)}
		remember(t, alice, "agent/alice", text, memd.TierLog, chat)
	}
	remember(t, alice, "agent/alice", "Booked a flight to Lisbon for Pat", memd.TierEpisode, memd.Source{})
	remember(t, alice, "agent/alice", "Lisbon hotel prices went up in March", memd.TierNote, memd.Source{})

	res, err := alice.Recall(ctx, memd.RecallQuery{Q: "which hotel for the Lisbon offsite", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) < 3 {
		t.Fatalf("hits: %v", hitTexts(res))
	}
	borrowed := false
	for _, h := range res.Hits {
		if h.Explain == nil {
			t.Fatalf("%q: no explanation", h.Text)
		}
		if sum := h.Explain.Total(); math.Abs(sum-h.Score) > 1e-9*math.Max(1, h.Score) {
			t.Errorf("%q: parts add up to %.12f, score %.12f (%s)", h.Text, sum, h.Score, h.Explain)
		}
		if h.Text == "The Memmo Alfama, three nights from March 13" {
			borrowed = len(h.Explain.ContextFrom) == 1 && h.Explain.ContextFrom[0].ID == memd.FactID("Pat asked which hotel we booked for the Lisbon offsite")
		}
	}
	if !borrowed {
		t.Errorf("the reply should borrow context from the question before it: %+v", res.Hits)
	}
	// Over HTTP as a caller sends it, and without it no explanation.
	plain, err := alice.Recall(ctx, memd.RecallQuery{Q: "which hotel for the Lisbon offsite"})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range plain.Hits {
		if h.Explain != nil || h.Score != res.Hits[i].Score {
			t.Errorf("without explain: hit %d %q explained or scored differently (%v vs %v)", i, h.Text, h.Score, res.Hits[i].Score)
		}
	}
}

// An answer names the commit each shard was read at; asking again with its
// stamp after more writes gives the same hits.
func TestRecall_ReadAtReproducesTheAnswer(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice", "apollo")
	ctx := context.Background()
	empty, err := alice.Recall(ctx, memd.RecallQuery{Q: "Lisbon"})
	if err != nil || empty.Stamp != "agent/alice@none,project/apollo@none" {
		t.Errorf("an empty view's stamp: %q, %v", empty.Stamp, err)
	}
	chat := memd.Source{Chat: "c1"}
	for i, text := range []string{"Pat asked where the offsite is", "Lisbon, at the Memmo", "Booked a flight to Lisbon for the offsite"} {
		chat.Messages = []string{fmt.Sprintf("m%d", i)}
		remember(t, alice, "agent/alice", text, memd.TierLog, chat)
	}
	remember(t, alice, "project/apollo", "The offsite is in Lisbon in March", memd.TierProfile, memd.Source{})
	remember(t, alice, "agent/alice", "Lisbon hotel shortlist: Memmo, Lumiares", memd.TierLog, memd.Source{})
	q := memd.RecallQuery{Q: "Lisbon offsite"}
	first, err := alice.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Commits) != 2 || first.Stamp == "" {
		t.Fatalf("read_at %v, stamp %q: want both shards", first.Commits, first.Stamp)
	}
	for id, c := range first.Commits {
		if want := gitIn(t, e.dir+"/shards/"+id.String(), "rev-parse", "HEAD"); c != want {
			t.Errorf("%s read at %s, HEAD is %s", id, c, want)
		}
	}
	// More writes: a better match, hits of the chat forgotten, and
	// another agent's memory full of the same words.
	remember(t, alice, "agent/alice", "Lisbon offsite: Lisbon offsite agenda", memd.TierLog, memd.Source{})
	remember(t, alice, "project/apollo", "Lisbon offsite budget approved", memd.TierLog, memd.Source{})
	for _, text := range []string{"Booked a flight to Lisbon for the offsite", "Pat asked where the offsite is"} {
		if _, err := alice.Forget(ctx, memd.ForgetRequest{Shard: memd.AgentShard("alice"), ID: memd.FactID(text)}); err != nil {
			t.Fatal(err)
		}
	}
	bob := e.agent(t, "bob")
	for i := 0; i < 30; i++ {
		remember(t, bob, "agent/bob", fmt.Sprintf("Lisbon trip note %d", i), memd.TierLog, memd.Source{})
	}
	if _, err := bob.Recall(ctx, memd.RecallQuery{Q: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	now, err := alice.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(hitTexts(now), hitTexts(first)) {
		t.Fatalf("the writes changed nothing; the test shows nothing: %v", hitTexts(now))
	}
	q.At = first.Stamp
	again, err := alice.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hitTexts(again), hitTexts(first)) {
		t.Errorf("at=%s: %v, want the first answer %v", first.Stamp, hitTexts(again), hitTexts(first))
	}
	if again.Stamp != first.Stamp {
		t.Errorf("at=stamp answers read at %q, want %q", again.Stamp, first.Stamp)
	}
	for i := range again.Hits {
		a, f := again.Hits[i], first.Hits[i]
		if a.Score != f.Score || a.SourceChat != f.SourceChat || a.Commit != f.Commit {
			t.Errorf("hit %d %q: score %v, chat %q, commit %s then; %v, %q, %s now", i, f.Text, f.Score, f.SourceChat, f.Commit, a.Score, a.SourceChat, a.Commit)
		}
	}
	// Another view's stamp is refused, not read as an empty memory.
	_, err = bob.Recall(ctx, memd.RecallQuery{Q: "Lisbon", At: first.Stamp})
	wantCode(t, err, memd.EINVALID)
	_, err = bob.Context(ctx, memd.ContextQuery{Since: first.Stamp})
	wantCode(t, err, memd.EINVALID)
	// A stamp that is not one, or names a commit the shard lacks.
	for _, bad := range []string{"agent/alice@", "agent/alice@xyz", "nobody@abcd1234", "agent/alice@0123456789abcdef0123456789abcdef01234567"} {
		_, err := alice.Recall(ctx, memd.RecallQuery{Q: "Lisbon", At: bad})
		if code := memd.ErrorCode(err); code != memd.EINVALID && code != memd.ENOTFOUND {
			t.Errorf("at=%q: %v, want invalid or not_found", bad, err)
		}
	}
}

// context?since=<stamp> returns only what changed in the agent's view, as
// + and − lines, and nothing when nothing did.
func TestContext_SinceAStamp(t *testing.T) {
	e := start(t)
	alice := e.agent(t, "alice", "apollo")
	ctx := context.Background()
	remember(t, alice, "agent/alice", "Prefers aisle seats", memd.TierProfile, memd.Source{})
	remember(t, alice, "agent/alice", "Booked a flight to Lisbon", memd.TierLog, memd.Source{})
	before, err := alice.Context(ctx, memd.ContextQuery{Projects: []string{"apollo"}})
	if err != nil {
		t.Fatal(err)
	}
	if before.Stamp == "" || !strings.Contains(before.Markdown, "Booked a flight to Lisbon") {
		t.Fatalf("context: stamp %q\n%s", before.Stamp, before.Markdown)
	}
	same, err := alice.Context(ctx, memd.ContextQuery{Projects: []string{"apollo"}, Since: before.Stamp})
	if err != nil {
		t.Fatal(err)
	}
	if same.Markdown != "" || len(same.Added)+len(same.Removed) != 0 || same.Stamp != before.Stamp {
		t.Errorf("nothing changed, yet: %q %v %v, stamp %q", same.Markdown, same.Added, same.Removed, same.Stamp)
	}
	remember(t, alice, "project/apollo", "The launch moved to May 12", memd.TierLog, memd.Source{})
	remember(t, alice, "agent/alice", "Moved the Lisbon flight to Friday", memd.TierLog, memd.Source{})
	if _, err := alice.Forget(ctx, memd.ForgetRequest{Shard: memd.AgentShard("alice"), ID: memd.FactID("Booked a flight to Lisbon")}); err != nil {
		t.Fatal(err)
	}
	// Another agent's shard changing is not in alice's view.
	bob := e.agent(t, "bob")
	remember(t, bob, "agent/bob", "Bob's own fact", memd.TierLog, memd.Source{})

	// Over plain HTTP, as an agent appends it to its conversation.
	v := url.Values{"since": {before.Stamp}, "projects": {"apollo"}}
	resp, body := memdtest.Get(t, e.d.URL(), alice.Token, "/v1/context?"+v.Encode())
	if resp.StatusCode != 200 {
		t.Fatalf("since: %d %s", resp.StatusCode, body)
	}
	date := memd.DateOf(time.Now()).String()
	want := "### Project memory: apollo\n" +
		"+ (" + date + ") The launch moved to May 12\n" +
		"### Your own memory (alice)\n" +
		"\u2212 (" + date + ") Booked a flight to Lisbon\n" +
		"+ (" + date + ") Moved the Lisbon flight to Friday\n"
	if string(body) != want {
		t.Errorf("since:\n%s\nwant:\n%s", body, want)
	}
	stamp := resp.Header.Get("Memd-Stamp")
	after, err := alice.Context(ctx, memd.ContextQuery{Projects: []string{"apollo"}, Since: stamp})
	if err != nil || after.Markdown != "" {
		t.Errorf("since the newest stamp: %q, %v", after.Markdown, err)
	}
	full, err := alice.Context(ctx, memd.ContextQuery{Projects: []string{"apollo"}})
	if err != nil || full.Stamp != stamp {
		t.Errorf("the section now is read at %q, the change note at %q (%v)", full.Stamp, stamp, err)
	}
	js, _ := json.Marshal(after)
	if !strings.Contains(string(js), `"read_at":{"agent/alice":`) {
		t.Errorf("read_at in JSON: %s", js)
	}
	_, err = alice.Context(ctx, memd.ContextQuery{Since: "2026-01-01"})
	wantCode(t, err, memd.EINVALID)
	_, err = alice.Context(ctx, memd.ContextQuery{Since: before.Stamp, At: "2026-01-01"})
	wantCode(t, err, memd.EINVALID)
}

// A stamp naming the caller's own shard at a commit of another shard is
// refused, and shows nothing of it, even once memd has read that commit
// for its own shard's reader.
func TestContext_AStampCannotBorrowAnotherShardsCommit(t *testing.T) {
	e := start(t)
	alice, bob := e.agent(t, "alice"), e.agent(t, "bob")
	ctx := context.Background()
	remember(t, alice, "agent/alice", "Alice likes tea", memd.TierProfile, memd.Source{})
	res := remember(t, bob, "agent/bob", "Bob's launch code is BANANA42", memd.TierProfile, memd.Source{})
	// bob reads his shard at that commit: memd reads its objects.
	if _, err := bob.Facts(ctx, memd.FactsQuery{Shard: memd.AgentShard("bob"), At: res.Commit}); err != nil {
		t.Fatal(err)
	}
	got, err := alice.Context(ctx, memd.ContextQuery{Since: "agent/alice@" + res.Commit})
	if err == nil || strings.Contains(got.Markdown, "BANANA42") {
		t.Fatalf("alice's context since bob's commit: %v\n%s", err, got.Markdown)
	}
	wantCode(t, err, memd.ENOTFOUND)
}

// Facts at a date before a shard's first commit are an empty list, not
// null.
func TestFacts_AtADateBeforeTheFirstCommit(t *testing.T) {
	e := start(t)
	e.agent(t, "alice")
	remember(t, e.admin, "agent/alice", "Alice likes tea", memd.TierProfile, memd.Source{})
	resp, body := memdtest.Get(t, e.d.URL(), e.admin.Token, "/v1/shards/agent/alice/facts?at=2001-01-01")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"facts":[]`) {
		t.Errorf("facts at 2001-01-01: %d %s", resp.StatusCode, body)
	}
}
