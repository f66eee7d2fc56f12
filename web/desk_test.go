package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/internal/scriptedmodel"
	"github.com/memd/memd/learn"
)

// factsFromExchange is the scripted model's answer: what follows "FACT: "
// on the exchange's lines.
func factsFromExchange(r scriptedmodel.Request) (int, string) {
	var lines []string
	for _, l := range strings.Split(r.User, "\n") {
		if _, fact, ok := strings.Cut(l, "FACT: "); ok {
			lines = append(lines, fact)
		}
	}
	if len(lines) == 0 {
		return http.StatusOK, "NONE"
	}
	return http.StatusOK, strings.Join(lines, "\n")
}

// A reviewer's day: search across shards, open a learned fact and read
// what was said, edit it, see the chain back to the first message, revert
// the exchange with one action, and see the Learning page count that
// against the model and prompt. Every page is photographed at 1280 and
// 400 pixels.
func TestUI_ReviewersDay(t *testing.T) {
	model := scriptedmodel.New(t, factsFromExchange)
	d, admin := startDaemonWith(t, daemon.Config{Model: &learn.ModelConfig{BaseURL: model.URL + "/v1", Model: "model-a"}})
	ctx := context.Background()
	if _, err := admin.AddAgent(ctx, "alice", []string{"apollo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AddAgent(ctx, "bob", nil); err != nil {
		t.Fatal(err)
	}
	feed, err := admin.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	st, err := admin.Learn(ctx, memd.Exchange{Agent: "alice", Chat: "chat_77", ChatKind: memd.ChatDirect, User: "pat", Messages: []memd.Message{
		{ID: "zd_9100", Role: "user", Text: "Please book me on the Friday flight to Lisbon, and I want an aisle seat.\nFACT: log: Flies to Lisbon on Friday\nFACT: profile: Prefers aisle seats"},
		{ID: "zd_9101", Role: "agent", Text: "Booked TAP 1234 on Friday, seat 14C (aisle)."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitLearned(t, feed, st.ID)
	for i, text := range []string{"Works at Acme on the billing team", "Has a cat named Miso"} {
		if _, err := admin.Remember(ctx, memd.RememberRequest{Shard: memd.AgentShard("bob"), Text: text,
			Source: memd.Source{Messages: []string{fmt.Sprintf("msg_%d", i)}, Chat: "chat_9", ChatKind: memd.ChatDirect}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Remember(ctx, memd.RememberRequest{Shard: memd.ProjectShard("apollo"), Text: "Launch review on Monday with the flight team"}); err != nil {
		t.Fatal(err)
	}
	out := outputDir(t)
	base := d.URL()
	flight := memd.FactID("Flies to Lisbon on Friday")

	b, cancel := browser(t, 1280, 900)
	defer cancel()
	run(b, t, "sign in", chromedp.Navigate(base+"/login?code="+d.Sessions.LoginLink()),
		chromedp.WaitVisible(css(`#shards tr[data-shard="agent/alice"]`)), chromedp.WaitVisible(css(`#growth svg`)),
		screenshot(out, "shards-1280"))

	run(b, t, "search every shard",
		chromedp.Navigate(base+"/#/search"),
		chromedp.WaitVisible(css(`#search-q`)),
		chromedp.SendKeys(css(`#search-q`), "flight Lisbon\n"),
		chromedp.WaitVisible(css(`#search-hits li`)),
		screenshot(out, "search-1280"))
	hits := textOf(b, t, `#search-hits`)
	if !strings.Contains(hits, "agent/alice") || !strings.Contains(hits, "project/apollo") {
		t.Errorf("search across shards: %q", hits)
	}

	run(b, t, "open the learned fact and read what was said",
		chromedp.Click(css(fmt.Sprintf(`#search-hits li[data-id="%s"] a`, flight))),
		chromedp.WaitVisible(css(`#conversation blockquote`)),
		chromedp.WaitReady(css(`.actions[data-offered="yes"]`)),
		screenshot(out, "fact-1280"))
	said := textOf(b, t, `#conversation`)
	for _, want := range []string{"pat", "Friday flight to Lisbon", "alice", "seat 14C", "zd_9100"} {
		if !strings.Contains(said, want) {
			t.Errorf("what was said lacks %q: %q", want, said)
		}
	}
	if n := evalInt(b, t, `document.querySelectorAll('#revert-exchange').length`); n != 1 {
		t.Errorf("%d Revert this exchange buttons, want one", n)
	}

	run(b, t, "edit it",
		chromedp.Click(css(`#edit-fact`)),
		chromedp.WaitVisible(css(`#edit-text`)),
		chromedp.SetValue(css(`#edit-text`), "Flies to Lisbon on Friday, seat 14C"),
		chromedp.Click(css(`#edit-save`)),
		chromedp.WaitVisible(css(`#chain li`)),
		screenshot(out, "fact-edited-1280"))
	chain := textOf(b, t, `#chain`)
	if !strings.Contains(chain, "seat 14C") || !strings.Contains(chain, "edited by admin") || !strings.Contains(chain, "first remember by alice") {
		t.Errorf("the chain: %q", chain)
	}
	if c := textOf(b, t, `#conversation`); !strings.Contains(c, "Friday flight to Lisbon") {
		t.Errorf("after the edit, what was said: %q", c)
	}
	if p := textOf(b, t, `#provenance`); !strings.Contains(p, "zd_9100") || !strings.Contains(p, "model-a") || !strings.Contains(p, learn.ExtractionPrompt) {
		t.Errorf("where it was first learned: %q", p)
	}

	run(b, t, "revert the exchange with one action",
		chromedp.Click(css(`#revert-exchange`)),
		chromedp.WaitVisible(css(`#revert-preview`)),
		screenshot(out, "revert-preview-1280"))
	if p := textOf(b, t, `#revert-preview`); !strings.Contains(p, "Prefers aisle seats") || !strings.Contains(p, "seat 14C") {
		t.Errorf("the preview: %q", p)
	}
	run(b, t, "confirm",
		chromedp.Click(css(`#confirm-ok`)),
		chromedp.WaitVisible(xpath(`//p[contains(., "no longer in memory")]`)),
		chromedp.WaitReady(css(`.actions[data-offered="yes"]`)))
	if n := evalInt(b, t, `document.querySelectorAll('#revert-exchange, #revert-commit').length`); n != 0 {
		t.Errorf("%d revert buttons remain with nothing left to undo", n)
	}

	run(b, t, "the Learning page counts it against the model and prompt",
		chromedp.Navigate(base+"/#/learning"),
		chromedp.WaitVisible(css(`#learning tbody tr[data-agent="alice"]`)))
	row := textOf(b, t, `#learning tbody tr[data-agent="alice"]`)
	for _, want := range []string{"model-a", "extraction v2", learn.ExtractionPrompt, "2 (100.0%)", "1 reverted", "1 edited"} {
		if !strings.Contains(row, want) {
			t.Errorf("learning row lacks %q: %q", want, row)
		}
	}
	run(b, t, "open the undone facts",
		chromedp.Click(css(`#learning tbody tr[data-agent="alice"] button.show-undone`)),
		chromedp.WaitVisible(css(`#learning .undone-list a`)),
		screenshot(out, "learning-1280"))
	if u := textOf(b, t, `#learning .undone-list`); !strings.Contains(u, "Prefers aisle seats") || !strings.Contains(u, "reverted by admin") {
		t.Errorf("undone facts: %q", u)
	}

	run(b, t, "facts newest first, filtered by what wrote them",
		chromedp.Navigate(base+"/#/shard/agent/bob/facts?learned_by=person"),
		chromedp.WaitVisible(css(`#facts tbody tr`)),
		screenshot(out, "facts-1280"))
	if f := textOf(b, t, `#facts tbody tr`); !strings.Contains(f, "Has a cat named Miso") || !strings.Contains(f, "person") {
		t.Errorf("the newest of bob's facts by a person: %q", f)
	}
	run(b, t, "the feed is live", chromedp.WaitVisible(css(`#feed-state.on`)))
	res, err := admin.Remember(ctx, memd.RememberRequest{Shard: memd.AgentShard("bob"), Text: "Booked a table for Friday"})
	if err != nil {
		t.Fatal(err)
	}
	run(b, t, "a fact arriving live takes its place on top, marked new",
		chromedp.WaitVisible(css(fmt.Sprintf(`#facts tbody tr:first-child[data-id="%s"] .new-badge`, res.Fact.ID))))

	run(b, t, "history and its growth chart",
		chromedp.Navigate(base+"/#/shard/agent/alice/history"),
		chromedp.WaitVisible(css(`#history .commit`)),
		chromedp.WaitVisible(css(`#growth svg polyline`)),
		screenshot(out, "history-1280"))
	if ticks := evalInt(b, t, `document.querySelectorAll('#growth svg text.tick').length`); ticks < 4 {
		t.Errorf("the growth chart has %d axis labels", ticks)
	}

	// Notes: rendered by a Markdown library, with their own history, and
	// saved as anchored edits so a change elsewhere meanwhile is kept.
	var nb strings.Builder
	nb.WriteString("# Release runbook\n\n1. Build the image.\n1b. (Only on Fridays) tell the on-call.\n2. Run the migrations.\n3. Ship it.\n\n| step | owner |\n| --- | --- |\n| build | ci |\n\n")
	for i := range 60 {
		fmt.Fprintf(&nb, "Line %d of the appendix.\n\n", i)
	}
	ps := memd.ProjectShard("apollo")
	if _, err := admin.CreateNote(ctx, memd.CreateNoteRequest{Shard: ps, Path: "release.md", Text: nb.String()}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "a rendered note",
		chromedp.Navigate(base+"/#/note/project/apollo/release.md"),
		chromedp.WaitVisible(css(`#note-rendered table`)),
		chromedp.WaitVisible(css(`#note-history details`)),
		screenshot(out, "note-1280"))
	if items := evalInt(b, t, `document.querySelectorAll('#note-rendered ol > li').length`); items != 3 {
		t.Errorf("the ordered list has %d items, want 3", items)
	}
	if c := textOf(b, t, `#note-changed`); !strings.Contains(c, "admin") {
		t.Errorf("the note's last change: %q", c)
	}
	run(b, t, "edit a line",
		chromedp.Click(css(`#note-edit`)),
		chromedp.WaitVisible(css(`#note-text`)),
		chromedp.SetValue(css(`#note-text`), strings.Replace(nb.String(), "3. Ship it.", "3. Ship it, then watch the dashboard.", 1)))
	// Meanwhile an agent edits the appendix.
	if _, err := admin.EditNote(ctx, memd.EditNoteRequest{Shard: ps, Path: "release.md",
		Edits: []memd.NoteEdit{{Op: memd.NoteReplace, Find: "Line 50 of the appendix.", Replace: "Line 50, revised by an agent."}}}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "save: both changes stand",
		chromedp.Click(css(`#note-save`)),
		chromedp.WaitVisible(xpath(`//div[@id="note-rendered"]//li[contains(., "watch the dashboard")]`)))
	note, err := admin.ReadNote(ctx, ps, "release.md", "")
	if err != nil || !strings.Contains(note.Text, "watch the dashboard") || !strings.Contains(note.Text, "revised by an agent") {
		t.Errorf("after the save: %q, %v", note.Text, err)
	}
	if h := textOf(b, t, `#note-history details`); !strings.Contains(h, "note-edit") && !strings.Contains(h, "admin") {
		t.Errorf("the newest version: %q", h)
	}
	run(b, t, "edit the same line someone else changes",
		chromedp.Click(css(`#note-edit`)),
		chromedp.WaitVisible(css(`#note-text`)),
		chromedp.SetValue(css(`#note-text`), strings.Replace(note.Text, "2. Run the migrations.", "2. Run the migrations twice.", 1)))
	if _, err := admin.EditNote(ctx, memd.EditNoteRequest{Shard: ps, Path: "release.md",
		Edits: []memd.NoteEdit{{Op: memd.NoteReplace, Find: "2. Run the migrations.", Replace: "2. Run the migrations with the new tool."}}}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "a conflict says so once, in words",
		chromedp.Click(css(`#note-save`)),
		chromedp.WaitVisible(css(`#note-problem .error`)),
		chromedp.Click(css(`#note-save`)),
		chromedp.WaitVisible(css(`#note-problem .error`)),
		screenshot(out, "note-conflict-1280"))
	if n := evalInt(b, t, `document.querySelectorAll('#note-problem .error').length`); n != 1 {
		t.Errorf("%d conflict messages after two presses", n)
	}
	if msg := textOf(b, t, `#note-problem`); !strings.Contains(msg, "Someone changed the lines you edited") || strings.Contains(msg, "sha256") {
		t.Errorf("the conflict message: %q", msg)
	}

	run(b, t, "the notes and learner pages",
		chromedp.Navigate(base+"/#/shard/project/apollo/notes"),
		chromedp.WaitVisible(css(`#notes`)),
		screenshot(out, "notes-1280"),
		chromedp.Navigate(base+"/#/learner"),
		chromedp.WaitVisible(css(`#learner-state`)),
		screenshot(out, "learner-1280"))

	run(b, t, "a page that fails has a way back",
		chromedp.Navigate(base+"/#/fact/agent/alice/000000000000"),
		chromedp.WaitVisible(css(`#error-back`)),
		screenshot(out, "error-1280"))

	// The same pages, 400 pixels wide.
	n, cancel2 := browser(t, 400, 850)
	defer cancel2()
	run(n, t, "sign in narrow", chromedp.EmulateViewport(400, 850), chromedp.Navigate(base+"/login?code="+d.Sessions.LoginLink()), chromedp.WaitVisible(css(`#shards`)))
	for _, p := range []struct{ name, hash, wait string }{
		{"shards", "#/", "#growth svg"},
		{"search", "#/search?q=flight+Lisbon", "#search-hits li"},
		{"fact", "#/fact/agent/alice/" + flight, "#conversation blockquote"},
		{"fact-edited", "#/fact/agent/alice/" + memd.FactID("Flies to Lisbon on Friday, seat 14C"), "#chain li"},
		{"learning", "#/learning", "#learning"},
		{"facts", "#/shard/agent/bob/facts", "#facts tbody tr"},
		{"history", "#/shard/agent/alice/history", "#growth svg"},
		{"note", "#/note/project/apollo/release.md", "#note-rendered table"},
		{"notes", "#/shard/project/apollo/notes", "#notes"},
		{"learner", "#/learner", "#learner-state"},
		{"error", "#/fact/agent/alice/000000000000", "#error-back"},
	} {
		run(n, t, p.name+" at 400", chromedp.Navigate(base+"/"+p.hash), chromedp.WaitVisible(css(p.wait)), screenshot(out, p.name+"-400"))
		if w := evalInt(n, t, `document.documentElement.scrollWidth`); w > 400 {
			t.Errorf("%s is %d pixels wide on a 400-pixel screen", p.name, w)
		}
	}
}

// waitLearned reads the feed until the learner says it finished job id.
func waitLearned(t *testing.T, feed memd.Subscription, id string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-feed.Events():
			if !ok {
				t.Fatalf("feed closed: %v", feed.Err())
			}
			if ev.Type == memd.EventLearned && ev.Exchange == id {
				if len(ev.Learned) == 0 {
					t.Fatalf("exchange %s taught nothing", id)
				}
				return
			}
		case <-deadline:
			t.Fatalf("exchange %s was not learned", id)
		}
	}
}
