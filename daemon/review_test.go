package daemon_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/internal/scriptedmodel"
)

// recalls reports whether alice's recall of q finds text.
func recalls(t *testing.T, e *env, q, text string, proposed bool) (memd.Hit, bool) {
	t.Helper()
	res, err := e.admin.Recall(context.Background(), memd.RecallQuery{Q: q, Agent: "alice", IncludeProposed: proposed})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Text == text {
			return h, true
		}
	}
	return memd.Hit{}, false
}

// In review mode a learned exchange becomes a proposal recall does not
// return unless asked; accepting it puts it in main with its original
// Source-Message and Reviewed-By; rejecting another leaves main as it was
// and counts in the learning statistics; a person's `git merge proposed`
// is read as accepting what is left; and proposals stay on top of main as
// it moves.
func TestReview_ProposalsWaitForAPerson(t *testing.T) {
	ctx := context.Background()
	m := newModelServer(t, nil)
	e, feed := startLearningWith(t, m, func(c *daemon.Config) {})
	m.Script(synthesisModel(func(user string) string {
		_, ex, _ := strings.Cut(user, "\nEXCHANGE")
		for _, w := range []string{"tea", "coffee", "juice", "milk"} {
			if strings.Contains(ex, w) {
				return "profile: Pat drinks " + w
			}
		}
		return "NONE"
	}, nil, nil))
	e.agent(t, "alice")
	if a, err := e.admin.SetReview(ctx, "alice", true); err != nil || !a.Review {
		t.Fatalf("review mode: %+v, %v", a, err)
	}
	s := memd.AgentShard("alice")
	sh, _ := e.d.Store.Shard(s)
	mainBefore, _ := sh.Head()

	if _, err := e.admin.Learn(ctx, exchange("alice", "c1", memd.ChatDirect, "pat", "I drink tea.", "Noted.")); err != nil {
		t.Fatal(err)
	}
	ev := waitFor(t, feed, "the proposal", func(ev memd.FeedEvent) bool { return ev.Type == memd.EventProposed })
	waitFor(t, feed, "the exchange learned", func(ev memd.FeedEvent) bool { return ev.Type == memd.EventLearned })
	if ev.Shard != s || len(ev.Changes) != 1 || ev.Changes[0].Fact.Text != "Pat drinks tea" || !slices.Contains(ev.Provenance.SourceMessages, "c1-m0") {
		t.Errorf("proposed event: %+v", ev)
	}
	if head, _ := sh.Head(); head != mainBefore {
		t.Fatal("a proposal moved main")
	}
	if _, ok := recalls(t, e, "tea", "Pat drinks tea", false); ok {
		t.Error("recall returned a proposal without include_proposed")
	}
	if _, ok := recalls(t, e, "tea", "Pat drinks tea", true); !ok {
		t.Error("recall with include_proposed missed the proposal")
	}
	for _, proposed := range []bool{false, true} {
		mc, err := e.admin.Context(ctx, memd.ContextQuery{Agent: "alice", IncludeProposed: proposed})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(mc.Markdown, "Pat drinks tea") != proposed {
			t.Errorf("memory section with include_proposed=%v:\n%s", proposed, mc.Markdown)
		}
	}
	if out := gitIn(t, e.d.Store.ShardDir(s), "status", "--porcelain"); out != "" {
		t.Errorf("git status after a proposal: %q", out)
	}

	list, err := e.admin.Proposals(ctx, s)
	if err != nil || len(list) != 1 {
		t.Fatalf("proposals: %+v, %v", list, err)
	}
	if m := metricsOf(t, e); !strings.Contains(m, "\nmemd_proposals_pending 1\n") {
		t.Errorf("with one proposal waiting, /metrics has %q", metricLine(m, "memd_proposals_pending"))
	}
	res, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewAccept, IDs: []string{list[0].ID}, Reviewer: "pat"})
	if err != nil || len(res.Reviewed) != 1 || res.Reviewed[0].Commit == "" {
		t.Fatalf("accept: %+v, %v", res, err)
	}
	if m := metricsOf(t, e); !strings.Contains(m, "\nmemd_proposals_pending 0\n") {
		t.Errorf("with the last proposal accepted, /metrics has %q", metricLine(m, "memd_proposals_pending"))
	}
	h, ok := recalls(t, e, "tea", "Pat drinks tea", false)
	if !ok || !slices.Equal(h.SourceMessages, []string{"c1-m0", "c1-m1"}) || h.Commit != res.Reviewed[0].Commit {
		t.Errorf("recall after accepting: %+v (found %v)", h, ok)
	}
	log, err := e.admin.Log(ctx, memd.LogQuery{Shard: s, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p := log[0].Provenance; p.ReviewedBy != "pat" || p.LearnedBy != memd.LearnedLearner || p.Model != "scripted-model" || log[0].Author.Name != "alice" {
		t.Errorf("the accepted commit: %+v by %s", p, log[0].Author.Name)
	}

	// Rejected: main stays, the statistics count it.
	learnFrom(t, e, feed, "c2", "I drink coffee.")
	mainNow, _ := sh.Head()
	list, _ = e.admin.Proposals(ctx, s)
	if len(list) != 1 {
		t.Fatalf("proposals: %+v", list)
	}
	if _, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewReject, IDs: []string{list[0].ID[:6]}}); err != nil {
		t.Fatal(err)
	}
	if head, _ := sh.Head(); head != mainNow {
		t.Error("a rejection moved main")
	}
	if _, ok := recalls(t, e, "coffee", "Pat drinks coffee", true); ok {
		t.Error("a rejected proposal is still proposed")
	}
	stats, err := e.admin.LearningStats(ctx, memd.LearningQuery{Agent: "alice"})
	if err != nil || len(stats.Rows) != 1 || stats.Rows[0].Learned != 2 || stats.Rows[0].Within7.Rejected != 1 {
		t.Errorf("learning statistics: %+v, %v", stats, err)
	}
	if out := gitIn(t, e.d.Store.ShardDir(s), "log", "--format=%s", "refs/memd/rejected"); !strings.Contains(out, "reject: Pat drinks coffee") {
		t.Errorf("git log refs/memd/rejected:\n%s", out)
	}

	// A proposal stays on top of main as main moves.
	learnFrom(t, e, feed, "c3", "I drink juice.")
	remember(t, e.admin, "agent/alice", "Pat's desk is by the window", memd.TierProfile, memd.Source{})
	list, _ = e.admin.Proposals(ctx, s)
	main, _ := sh.Head()
	if len(list) != 1 || list[0].Commit.Parents[0] != main.String() {
		t.Fatalf("the proposal is not on top of main %s: %+v", main, list)
	}
	// A person merges the branch by hand: memd reads it as accepted.
	dir := e.d.Store.ShardDir(s)
	gitIn(t, dir, "merge", "-q", "--ff-only", "proposed")
	if _, ok := recalls(t, e, "juice", "Pat drinks juice", false); !ok {
		t.Error("recall after git merge proposed missed the proposal")
	}
	if list, _ := e.admin.Proposals(ctx, s); len(list) != 0 {
		t.Errorf("proposals after git merge: %+v", list)
	}
	st, err := e.admin.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Review; r == nil || r.Pending != 0 || r.Accepted != 2 || r.Rejected != 1 {
		t.Errorf("review status: %+v", st.Review)
	}
	resp, err := http.Get(e.d.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`memd_proposals_reviewed_total{verdict="accept"} 1`, `memd_proposals_reviewed_total{verdict="reject"} 1`, "memd_proposals_pending 0"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A person deletes the branch with a proposal on it: none waits.
	learnFrom(t, e, feed, "c4", "I drink milk.")
	if m := metricsOf(t, e); !strings.Contains(m, "\nmemd_proposals_pending 1\n") {
		t.Errorf("with a proposal waiting again, /metrics has %q", metricLine(m, "memd_proposals_pending"))
	}
	gitIn(t, dir, "branch", "-q", "-D", "proposed")
	if list, _ := e.admin.Proposals(ctx, s); len(list) != 0 {
		t.Errorf("proposals after the branch was deleted: %+v", list)
	}
	if m := metricsOf(t, e); !strings.Contains(m, "\nmemd_proposals_pending 0\n") {
		t.Errorf("with the branch deleted, /metrics has %q", metricLine(m, "memd_proposals_pending"))
	}
	if out := gitIn(t, dir, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Errorf("git fsck: %s", out)
	}
}

func metricsOf(t *testing.T, e *env) string {
	t.Helper()
	resp, err := http.Get(e.d.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return "\n" + string(b)
}

func metricLine(metrics, name string) string {
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, name+" ") {
			return line
		}
	}
	return ""
}

// A synthesis merge proposed in review mode survives main moving under it,
// and accepting it replaces both facts in main with its trailers kept.
func TestReview_SynthesisMergeRebuiltAndAccepted(t *testing.T) {
	ctx := context.Background()
	m := newModelServer(t, nil)
	e, feed := startLearningWith(t, m, func(c *daemon.Config) { c.Synthesis = &daemon.SynthesisConfig{} })
	tea, green := memd.FactID("Pat drinks tea"), memd.FactID("Pat drinks green tea")
	m.Script(synthesisModel(func(string) string { return "profile: Pat drinks tea\nprofile: Pat drinks green tea" },
		func(scriptedmodel.Request) string {
			return "merge: " + tea + ", " + green + " => Pat drinks tea, green mostly | evidence: c1-m0"
		},
		func(scriptedmodel.Request) string { return "1: approve" }))
	e.agent(t, "alice")
	s := memd.AgentShard("alice")
	learnFrom(t, e, feed, "c1", "I drink tea, green mostly.")
	if _, err := e.admin.SetReview(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	st := synthesize(t, e, feed)
	if st.Synthesis.Applied != 1 {
		t.Fatalf("pass: %+v", st.Synthesis)
	}
	remember(t, e.admin, "agent/alice", "Pat's desk is by the window", memd.TierProfile, memd.Source{})
	list, err := e.admin.Proposals(ctx, s)
	sh, _ := e.d.Store.Shard(s)
	main, _ := sh.Head()
	if err != nil || len(list) != 1 || list[0].Commit.Parents[0] != main.String() {
		t.Fatalf("proposals on main %s: %+v, %v", main, list, err)
	}
	if _, ok := recalls(t, e, "tea", "Pat drinks tea, green mostly", false); ok {
		t.Error("the proposed merge is in main")
	}
	if _, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewAccept, All: true}); err != nil {
		t.Fatal(err)
	}
	facts, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: s, Text: "Pat drinks"})
	if err != nil || len(facts.Facts) != 1 || facts.Facts[0].Text != "Pat drinks tea, green mostly" {
		t.Fatalf("facts after accepting the merge: %+v, %v", facts.Facts, err)
	}
	log, _ := e.admin.Log(ctx, memd.LogQuery{Shard: s, Limit: 1})
	p := log[0].Provenance
	if p.LearnedBy != memd.LearnedSynthesis || p.ApprovedBy != "scripted-model" || p.ReviewedBy != "admin" || p.Replaces != tea ||
		!slices.Contains(p.Evidence, green) || len(log[0].Changes) != 3 {
		t.Errorf("the accepted merge: %+v, changes %+v", p, log[0].Changes)
	}
}

// In review mode a second pass plans its merge against the proposals, not
// main: merging a fact an earlier proposal already merged away loses
// nothing once both are accepted.
func TestReview_SecondMergeOverProposals(t *testing.T) {
	ctx := context.Background()
	m := newModelServer(t, nil)
	e, feed := startLearningWith(t, m, func(c *daemon.Config) { c.Synthesis = &daemon.SynthesisConfig{} })
	a, b, c := memd.FactID("Pat drinks tea"), memd.FactID("Pat likes tea"), memd.FactID("Pat drinks coffee")
	pass := 0
	m.Script(synthesisModel(func(string) string {
		return "profile: Pat drinks tea\nprofile: Pat likes tea\nprofile: Pat drinks coffee"
	},
		func(scriptedmodel.Request) string {
			pass++
			if pass == 1 {
				return "merge: " + a + ", " + b + " => Pat drinks and likes tea"
			}
			return "merge: " + b + ", " + c + " => Pat drinks tea and coffee"
		},
		func(scriptedmodel.Request) string { return "1: approve" }))
	e.agent(t, "alice")
	learnFrom(t, e, feed, "c1", "Tea and coffee.")
	if _, err := e.admin.SetReview(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	synthesize(t, e, feed)
	synthesize(t, e, feed)
	if _, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewAccept, All: true}); err != nil {
		t.Fatal(err)
	}
	texts := sortedFactTexts(t, e, memd.AgentShard("alice"))
	if want := []string{"Pat drinks and likes tea", "Pat drinks tea and coffee"}; !slices.Equal(texts, want) {
		t.Errorf("facts after accepting both merges: %q, want %q", texts, want)
	}
}

// Accepting a synthesis proposal is refused once main holds a fact it
// changes as written on purpose; and a commit a person drops from main is
// not offered back as a proposal.
func TestReview_AcceptKeepsTheRuleAndOnlyModelsPropose(t *testing.T) {
	ctx := context.Background()
	m := newModelServer(t, nil)
	e, feed := startLearningWith(t, m, func(c *daemon.Config) { c.Synthesis = &daemon.SynthesisConfig{} })
	jazz := memd.FactID("Pat likes jazz")
	m.Script(synthesisModel(func(string) string { return "profile: Pat likes jazz" },
		func(scriptedmodel.Request) string { return "remove: " + jazz + " | evidence: c1-m0" },
		func(scriptedmodel.Request) string { return "1: approve" }))
	e.agent(t, "alice")
	s := memd.AgentShard("alice")
	learnFrom(t, e, feed, "c1", "Jazz, mostly.")
	if _, err := e.admin.SetReview(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	synthesize(t, e, feed)
	// A person rewrites the line by hand (its date): the fact is theirs now.
	dir := e.d.Store.ShardDir(s)
	profile, err := os.ReadFile(filepath.Join(dir, "profile.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`\(\d{4}-\d{2}-\d{2}\) Pat likes jazz`)
	os.WriteFile(filepath.Join(dir, "profile.md"), line.ReplaceAll(profile, []byte("(2026-01-05) Pat likes jazz")), 0o644)
	gitIn(t, dir, "commit", "-qam", "jazz since January")
	// The proposal is dropped when memd next makes the proposals again on
	// main (or, had it not, refused on accepting): the person's line stays.
	res, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewAccept, All: true})
	if err != nil && memd.ErrorCode(err) != memd.ECONFLICT || len(res.Reviewed) != 0 {
		t.Fatalf("accepting the removal of a fact saved on purpose: %+v, %v", res, err)
	}
	if list, _ := e.admin.Proposals(ctx, s); len(list) != 0 {
		t.Errorf("the removal is still proposed: %+v", list)
	}
	if _, ok := recalls(t, e, "jazz", "Pat likes jazz", false); !ok {
		t.Error("the person's fact is gone")
	}

	remember(t, e.admin, "agent/alice", "Pat's password hint is blue", memd.TierProfile, memd.Source{})
	gitIn(t, dir, "reset", "-q", "--hard", "HEAD~1")
	list, err := e.admin.Proposals(ctx, s)
	if err != nil || len(list) != 0 {
		t.Errorf("proposals after a person dropped a commit from main: %+v, %v", list, err)
	}
}

// A new agent in review mode, its shard without a commit yet: rejecting
// its first proposal leaves no branch behind, later ones still work, and
// a learned fact a person resets away from main does not come back as a
// proposal.
func TestReview_NewShardAndResets(t *testing.T) {
	ctx := context.Background()
	m := newModelServer(t, nil)
	e, feed := startLearningWith(t, m, func(c *daemon.Config) {})
	m.Script(synthesisModel(func(user string) string {
		_, ex, _ := strings.Cut(user, "\nEXCHANGE")
		for _, w := range []string{"tea", "coffee"} {
			if strings.Contains(ex, w) {
				return "profile: Pat drinks " + w
			}
		}
		return "NONE"
	}, nil, nil))
	if _, err := e.admin.AddAgent(ctx, "nora", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.SetReview(ctx, "nora", true); err != nil {
		t.Fatal(err)
	}
	s := memd.AgentShard("nora")
	learn := func(chat, said string) {
		st, err := e.admin.Learn(ctx, exchange("nora", chat, memd.ChatDirect, "pat", said, "Noted."))
		if err != nil {
			t.Fatal(err)
		}
		learned(t, feed, st.ID)
	}
	learn("c1", "I drink tea.")
	if _, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewReject, All: true}); err != nil {
		t.Fatal(err)
	}
	dir := e.d.Store.ShardDir(s)
	if refs := gitIn(t, dir, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "proposed") && !strings.Contains(refs, "proposed-base") {
		t.Errorf("refs after rejecting the only proposal: %q", refs)
	}
	gitIn(t, dir, "log", "--all", "--oneline")
	remember(t, e.admin, "agent/nora", "Pat works in Lisbon", memd.TierProfile, memd.Source{})
	learn("c2", "I drink coffee.")
	list, err := e.admin.Proposals(ctx, s)
	if err != nil || len(list) != 1 || list[0].Commit.Changes[0].Fact.Text != "Pat drinks coffee" {
		t.Fatalf("proposals: %+v, %v", list, err)
	}
	if _, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewAccept, All: true}); err != nil {
		t.Fatal(err)
	}
	learn("c3", "I drink tea.")
	if list, _ := e.admin.Proposals(ctx, s); len(list) != 1 {
		t.Fatalf("proposals: %+v", list)
	}
	remember(t, e.admin, "agent/nora", "Pat's desk is by the window", memd.TierProfile, memd.Source{})
	// A person drops the accepted coffee and the desk from main.
	gitIn(t, dir, "reset", "-q", "--hard", "HEAD~2")
	list, err = e.admin.Proposals(ctx, s)
	if err != nil || len(list) != 1 || list[0].Commit.Changes[0].Fact.Text != "Pat drinks tea" {
		t.Errorf("proposals after a person's reset: %+v, %v", list, err)
	}
}

// A merge proposal one of whose facts a person forgets on main before the
// review is dropped, not accepted: its merged text would bring the
// forgotten words back.
func TestReview_MergeOfAFactForgottenSince(t *testing.T) {
	for _, which := range []string{"first", "second"} {
		t.Run(which, func(t *testing.T) { testReviewMergeOfAFactForgottenSince(t, which == "first") })
	}
}

func testReviewMergeOfAFactForgottenSince(t *testing.T, first bool) {
	ctx := context.Background()
	m := newModelServer(t, nil)
	e, feed := startLearningWith(t, m, func(c *daemon.Config) { c.Synthesis = &daemon.SynthesisConfig{} })
	code, door := memd.FactID("The office door code is 4321"), memd.FactID("The office door is the blue one")
	forgotten, kept := door, "The office door code is 4321"
	if first {
		forgotten, kept = code, "The office door is the blue one"
	}
	m.Script(synthesisModel(func(string) string {
		return "profile: The office door code is 4321\nprofile: The office door is the blue one"
	},
		func(scriptedmodel.Request) string {
			return "merge: " + code + ", " + door + " => The office door is the blue one, code 4321"
		},
		func(scriptedmodel.Request) string { return "1: approve" }))
	e.agent(t, "alice")
	s := memd.AgentShard("alice")
	learnFrom(t, e, feed, "c1", "The door.")
	if _, err := e.admin.SetReview(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	synthesize(t, e, feed)
	if list, _ := e.admin.Proposals(ctx, s); len(list) != 1 {
		t.Fatalf("proposals: %+v, want the merge", list)
	}
	if _, err := e.admin.Forget(ctx, memd.ForgetRequest{Shard: s, ID: forgotten}); err != nil {
		t.Fatal(err)
	}
	res, err := e.admin.Review(ctx, memd.ReviewRequest{Verdict: memd.ReviewAccept, All: true})
	if err != nil && memd.ErrorCode(err) != memd.ECONFLICT || len(res.Reviewed) != 0 {
		t.Errorf("accepting the merge of a forgotten fact: %+v, %v", res, err)
	}
	if texts := sortedFactTexts(t, e, s); !slices.Equal(texts, []string{kept}) {
		t.Errorf("facts after the review: %q, want %q", texts, kept)
	}
	if list, _ := e.admin.Proposals(ctx, s); len(list) != 0 {
		t.Errorf("the merge is still proposed: %+v", list)
	}
}
