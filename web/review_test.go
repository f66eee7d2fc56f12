package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/internal/scriptedmodel"
	"github.com/memd/memd/learn"
)

// A reviewer accepts one of an agent's proposals and rejects the other in
// the browser, reading the exchange each came from; then a synthesis merge
// shows its evidence and approval on the merged fact's page.
func TestUI_ReviewProposalsAndSynthesis(t *testing.T) {
	tea, green := memd.FactID("Drinks tea"), memd.FactID("Likes green tea")
	model := scriptedmodel.New(t, func(r scriptedmodel.Request) (int, string) {
		switch {
		case strings.Contains(r.System, "You tidy the long-term memory"):
			return http.StatusOK, fmt.Sprintf("merge: %s, %s => Drinks tea, green mostly | evidence: c2-m0", tea, green)
		case strings.Contains(r.System, "You review changes"):
			return http.StatusOK, "1: approve"
		}
		return factsFromExchange(r)
	})
	d, admin := startDaemonWith(t, daemon.Config{Model: &learn.ModelConfig{BaseURL: model.URL + "/v1", Model: "model-a"},
		Synthesis: &daemon.SynthesisConfig{}})
	ctx := context.Background()
	if _, err := admin.AddAgent(ctx, "alice", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetReview(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	feed, err := admin.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	learnOne := func(chat, said string) {
		st, err := admin.Learn(ctx, memd.Exchange{Agent: "alice", Chat: chat, ChatKind: memd.ChatDirect, User: "pat", Messages: []memd.Message{
			{ID: chat + "-m0", Role: "user", Text: said}, {ID: chat + "-m1", Role: "agent", Text: "Noted."}}})
		if err != nil {
			t.Fatal(err)
		}
		waitLearned(t, feed, st.ID)
	}
	learnOne("c1", "Book the Lisbon flight.\nFACT: log: Flies to Lisbon on Friday\nFACT: profile: Owns a parrot")
	list, err := admin.Proposals(ctx, memd.AgentShard("alice"))
	if err != nil || len(list) != 2 {
		t.Fatalf("proposals: %+v, %v", list, err)
	}
	flight, parrot := list[0].ID, list[1].ID
	out := outputDir(t)
	base := d.URL()
	b, cancel := browser(t, 1280, 900)
	defer cancel()
	run(b, t, "sign in and open the review page", chromedp.Navigate(base+"/login?code="+d.Sessions.LoginLink()),
		chromedp.WaitVisible(css(`#shards`)),
		chromedp.Navigate(base+"/#/review"),
		chromedp.WaitVisible(css(fmt.Sprintf(`.proposal[data-id="%s"] blockquote`, flight))),
		screenshot(out, "review-1280"))
	card := textOf(b, t, fmt.Sprintf(`.proposal[data-id="%s"]`, flight))
	for _, want := range []string{"Flies to Lisbon on Friday", "Book the Lisbon flight", "c1-m0", "learner", "model-a"} {
		if !strings.Contains(card, want) {
			t.Errorf("the proposal lacks %q: %q", want, card)
		}
	}
	run(b, t, "accept one", chromedp.Click(css(fmt.Sprintf(`.proposal[data-id="%s"] button.accept`, flight))),
		chromedp.WaitNotPresent(css(fmt.Sprintf(`.proposal[data-id="%s"]`, flight))))
	run(b, t, "reject the other", chromedp.Click(css(fmt.Sprintf(`.proposal[data-id="%s"] button.reject`, parrot))),
		chromedp.WaitVisible(xpath(`//p[contains(., "No proposals wait for review")]`)))
	if s := textOf(b, t, `#review-state`); !strings.Contains(s, "0 waiting · 1 accepted · 1 rejected") {
		t.Errorf("review state: %q", s)
	}
	res, err := admin.Recall(ctx, memd.RecallQuery{Q: "parrot Lisbon", Agent: "alice"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Text != "Flies to Lisbon on Friday" {
		t.Errorf("recall after the review: %+v, %v", res.Hits, err)
	}

	// Out of review mode, from the page, a merge by synthesis shows what
	// it rests on.
	run(b, t, "take alice out of review mode",
		chromedp.Click(css(`#review-agents tr[data-agent="alice"] button.toggle-review`)),
		chromedp.WaitVisible(xpath(`//tr[@data-agent="alice"]//button[contains(., "Review what it learns")]`)))
	if a, _ := admin.Agents(ctx); len(a) != 1 || a[0].Review {
		t.Fatalf("agents after the toggle: %+v", a)
	}
	learnOne("c2", "I drink tea.\nFACT: profile: Drinks tea\nFACT: profile: Likes green tea")
	st, err := admin.Synthesize(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	waitLearned(t, feed, st.ID)
	// The page may be drawn again as the synthesis's commits reach it:
	// wait for the versions drawn last, the merge approved by the model.
	run(b, t, "the merged fact's page", chromedp.Navigate(base+"/#/fact/agent/alice/"+memd.FactID("Drinks tea, green mostly")),
		chromedp.WaitVisible(css(`#chain .evidence`)),
		chromedp.WaitVisible(xpath(`//*[@id="chain"][contains(., "approved by model-a")]`)),
		screenshot(out, "synthesis-fact-1280"))
	if c := textOf(b, t, `#chain`); !strings.Contains(c, "Evidence: "+tea+", "+green+", c2-m0") || !strings.Contains(c, "approved by model-a") || !strings.Contains(c, "synthesis") {
		t.Errorf("the merged fact's versions: %q", c)
	}
}
