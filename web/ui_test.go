package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/daemontest"
	"github.com/memd/memd/daemon/remote"
)

// chromium is the browser the UI test drives: Debian's, which `make test`
// installs when it is missing, or MEMD_CHROMIUM.
func chromium(t testing.TB) string {
	if p := os.Getenv("MEMD_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Fatal("no Chromium: run `make test`, which installs Debian's chromium, or set MEMD_CHROMIUM")
	return ""
}

// outputDir is where the test leaves its screenshots.
func outputDir(t testing.TB) string {
	dir := filepath.Join("..", "test-output", "ui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startDaemon(t testing.TB) (*daemon.Daemon, *client.Client) {
	t.Helper()
	return startDaemonWith(t, daemon.Config{})
}

// startDaemonWith starts a daemon on cfg, on loopback, in a fresh data
// directory unless cfg names one.
func startDaemonWith(t testing.TB, cfg daemon.Config) (*daemon.Daemon, *client.Client) {
	t.Helper()
	return daemontest.Start(t, cfg)
}

// The tests share one headless Chromium: a launch costs more than most of
// what a test does in it. Each test gets a tab in a browser context of its
// own (cookies and storage apart) sized as it asks.
var shared struct {
	once   sync.Once
	ctx    context.Context // the browser's first tab, which launched it
	cancel context.CancelFunc
	dir    string
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cancel != nil {
		shared.cancel()
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// browser returns a chromedp context on a new tab of the shared Chromium,
// in its own browser context, with a viewport of width × height.
func browser(t testing.TB, width, height int) (context.Context, context.CancelFunc) {
	t.Helper()
	exe := chromium(t) // before the Once: a test that fails here leaves it to the next
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "memd-chromium-"); shared.err != nil {
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(exe),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.UserDataDir(shared.dir),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
		)
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(actx)
		shared.ctx, shared.cancel = ctx, func() { cancelCtx(); cancelAlloc() }
		_, shared.err = chromedp.Run(ctx, chromedp.Navigate("about:blank"))
	})
	if shared.err != nil {
		t.Fatalf("start Chromium: %v", shared.err)
	}
	ctx, cancelTab := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	cancel := func() { cancelTimeout(); cancelTab() }
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	return ctx, cancel
}

func screenshot(dir, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}

// textOf reads the text of the first element matching a CSS selector.
func textOf(ctx context.Context, t testing.TB, sel string) string {
	t.Helper()
	// Read in the page in one step: a page drawn again between finding
	// the element and reading it by the node found has replaced the node,
	// and the read fails. An element gone meanwhile is waited for again.
	read := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e === null ? null : e.innerText })()`, sel)
	for {
		if _, err := chromedp.Run(ctx, chromedp.WaitReady(css(sel))); err != nil {
			t.Fatalf("wait for %s: %v", sel, err)
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[*string](read))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		if s != nil {
			return *s
		}
	}
}

func evalInt(ctx context.Context, t testing.TB, expr string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return n
}

// clickOnFactPage opens the page of alice's fact id and clicks one of its
// buttons.
func clickOnFactPage(base, id, button string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/#/fact/agent/alice/" + id),
		chromedp.WaitVisible(css(button)),
		chromedp.Click(css(button)),
	}
}

func run(ctx context.Context, t testing.TB, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

var (
	css   = func(s string) chromedp.CSS { return chromedp.CSS(s) }
	xpath = func(s string) chromedp.Search { return chromedp.Search(s) }
)

// A team lead signs in with the link memd serve prints, searches, opens a
// fact's provenance, reverts it, sees it gone and the revert in history,
// edits a note, and sees a fact written through the API appear live.
func TestUI_ReviewAndFixMemory(t *testing.T) {
	d, admin := startDaemon(t)
	ctx := context.Background()
	if _, err := admin.AddAgent(ctx, "alice", nil); err != nil {
		t.Fatal(err)
	}
	s := memd.AgentShard("alice")
	for i, text := range []string{"Lives in Austin", "Works at Acme on the billing team", "Has a cat named Miso"} {
		if _, err := admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: text,
			Source: memd.Source{Messages: []string{fmt.Sprintf("msg_%d", i+1)}, Chat: "chat_9", ChatKind: memd.ChatDirect}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "runbook.md",
		Text: "# Runbook\n\nDeploy with **care**.\n\n- build\n- ship\n"}); err != nil {
		t.Fatal(err)
	}
	out := outputDir(t)
	b, cancel := browser(t, 1280, 900)
	defer cancel()
	base := d.URL()

	run(b, t, "sign in with the printed link",
		chromedp.Navigate(base+"/login?code="+d.Sessions.LoginLink()),
		chromedp.WaitVisible(css(`#shards tr[data-shard="agent/alice"]`)),
		screenshot(out, "review-shards-1280"))

	run(b, t, "search facts",
		chromedp.Navigate(base+"/#/shard/agent/alice/facts"),
		chromedp.WaitVisible(css(`#facts tbody tr`)),
		chromedp.SendKeys(css(`#fact-q`), "acme\n"),
		chromedp.WaitVisible(xpath(`//div[@class="pager"]/span[.="1–1 of 1"]`)))
	rows := evalInt(b, t, `document.querySelectorAll('#facts tbody tr').length`)
	if rows != 1 || !strings.Contains(textOf(b, t, `#facts tbody`), "billing team") {
		t.Fatalf("search for acme shows %d rows: %q", rows, textOf(b, t, `#facts tbody`))
	}
	run(b, t, "screenshot facts", screenshot(out, "review-facts-1280"))

	run(b, t, "open the fact's provenance",
		chromedp.Click(css(`#facts tbody tr a`)),
		chromedp.WaitVisible(css(`#provenance`)),
		screenshot(out, "review-provenance-1280"))
	if p := textOf(b, t, `#provenance`); !strings.Contains(p, "msg_2") || !strings.Contains(p, "chat_9") || !strings.Contains(p, "explicit") && !strings.Contains(p, "person") {
		t.Errorf("provenance: %q", p)
	}

	run(b, t, "revert its commit, after the preview",
		chromedp.Click(css(`#revert-commit`)),
		chromedp.WaitVisible(css(`#revert-preview`)))
	if p := textOf(b, t, `#revert-preview`); !strings.Contains(p, "- ") || !strings.Contains(p, "Works at Acme on the billing team") {
		t.Errorf("revert preview: %q", p)
	}
	run(b, t, "confirm the revert",
		chromedp.Click(css(`#confirm-ok`)),
		chromedp.WaitVisible(xpath(`//p[contains(., "no longer in memory")]`)))

	run(b, t, "the fact is gone",
		chromedp.Navigate(base+"/#/shard/agent/alice/facts"),
		chromedp.WaitVisible(css(`#facts tbody tr`)))
	if f := textOf(b, t, `#facts tbody`); strings.Contains(f, "Acme") || !strings.Contains(f, "Austin") {
		t.Errorf("facts after the revert: %q", f)
	}
	run(b, t, "the revert is in history",
		chromedp.Navigate(base+"/#/shard/agent/alice/history"),
		chromedp.WaitVisible(css(`#history .commit`)),
		chromedp.WaitVisible(css(`#timeline svg`)),
		screenshot(out, "review-history-1280"))
	if first := textOf(b, t, `#history .commit`); !strings.Contains(first, "revert: remember: Works at Acme") {
		t.Errorf("newest commit in history: %q", first)
	}
	// A commit lands: the history shows it, and one landing while the
	// person types a filter does not wipe what they type.
	if _, err := admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Cycles to work"}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "the history follows memory", chromedp.WaitVisible(xpath(`//div[@id="history"]//span[contains(., "Cycles to work")]`)))
	run(b, t, "type a filter", chromedp.SendKeys(css(`#log-message`), "msg_"))
	if _, err := admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Takes the train on Mondays"}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "memory changes while the person types", chromedp.WaitVisible(css(`#changed-since`)))
	if v, err := chromedp.Run(b, chromedp.Evaluate[string](`document.getElementById('log-message').value`)); err != nil || v != "msg_" {
		t.Errorf("the filter being typed is %q after a commit (%v)", v, err)
	}

	// A revert of an exchange undoes what its preview showed, or nothing:
	// a fact learned from the message meanwhile is not undone unseen.
	miso := memd.FactID("Has a cat named Miso")
	run(b, t, "preview reverting an exchange",
		append(clickOnFactPage(base, miso, `#revert-exchange`), chromedp.WaitVisible(css(`#revert-preview`)))...)
	if _, err := admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Is vegetarian",
		Source: memd.Source{Messages: []string{"msg_3"}, Chat: "chat_9", ChatKind: memd.ChatDirect}}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "confirm it after the exchange taught more",
		chromedp.Click(css(`#confirm-ok`)),
		chromedp.WaitVisible(xpath(`//p[@role="alert"][contains(., "preview it again")]`)))
	if list, _ := admin.Facts(ctx, memd.FactsQuery{Shard: s, Text: "vegetarian"}); len(list.Facts) != 1 {
		t.Errorf("the fact learned since the preview: %+v", list.Facts)
	}
	if list, _ := admin.Facts(ctx, memd.FactsQuery{Shard: s, Text: "Miso"}); len(list.Facts) != 1 {
		t.Errorf("the fact previewed: %+v", list.Facts)
	}

	run(b, t, "a page address that steps up a folder names nothing",
		chromedp.Navigate(base+"/#/note/agent/alice/../../bob/notes/runbook.md"),
		chromedp.WaitVisible(css(`#error-back`)))

	run(b, t, "edit the note",
		chromedp.Navigate(base+"/#/note/agent/alice/runbook.md"),
		chromedp.WaitVisible(css(`#note-rendered strong`)),
		screenshot(out, "note-1280"),
		chromedp.Click(css(`#note-edit`)),
		chromedp.WaitVisible(css(`#note-text`)),
		chromedp.SetValue(css(`#note-text`), "# Runbook\n\nDeploy with **care**, never on Fridays.\n\n- build\n- test\n- ship\n"),
		chromedp.Click(css(`#note-save`)),
		chromedp.WaitVisible(xpath(`//div[@id="note-rendered"]//p[contains(., "never on Fridays")]`)))
	note, err := admin.ReadNote(ctx, s, "runbook.md", "")
	if err != nil || !strings.Contains(note.Text, "- test\n") {
		t.Errorf("the note after the edit: %q, %v", note.Text, err)
	}

	run(b, t, "open the facts page",
		chromedp.Navigate(base+"/#/shard/agent/alice/facts"),
		chromedp.WaitVisible(css(`#facts tbody tr`)),
		chromedp.WaitVisible(css(`#feed-state.on`)))
	res, err := admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Booked a flight to Lisbon", Tier: memd.TierLog})
	if err != nil {
		t.Fatal(err)
	}
	run(b, t, "a fact written through the API appears without a reload",
		chromedp.WaitVisible(css(fmt.Sprintf(`#facts tr[data-id="%s"]`, res.Fact.ID))))

	// An edit from a page drawn before someone else edited the fact says
	// so, and keeps the text typed.
	run(b, t, "open a fact to edit it",
		append(clickOnFactPage(base, miso, `#edit-fact`), chromedp.WaitVisible(css(`#edit-text`)))...)
	if _, err := admin.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: miso, Text: "Has a cat named Miso, and a dog"}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "save over an edit made meanwhile",
		chromedp.SetValue(css(`#edit-text`), "Has two cats"),
		chromedp.Click(css(`#edit-save`)),
		chromedp.WaitVisible(xpath(`//p[@role="alert"][contains(., "edited or forgotten since")]`)))

	// A fact forgotten by mistake comes back from its page.
	austin := memd.FactID("Lives in Austin")
	if _, err := admin.Forget(ctx, memd.ForgetRequest{Shard: s, ID: austin}); err != nil {
		t.Fatal(err)
	}
	run(b, t, "bring a forgotten fact back",
		append(clickOnFactPage(base, austin, `#bring-back`),
			chromedp.WaitVisible(css(`#revert-preview`)),
			chromedp.Click(css(`#confirm-ok`)),
			chromedp.WaitVisible(xpath(`//p[contains(., "in memory") and not(contains(., "no longer"))]`)))...)
	if list, _ := admin.Facts(ctx, memd.FactsQuery{Shard: s, Text: "Austin"}); len(list.Facts) != 1 {
		t.Errorf("the fact brought back: %+v", list.Facts)
	}

	run(b, t, "the live and learner pages",
		chromedp.Navigate(base+"/#/live"),
		chromedp.WaitVisible(css(`#live .commit`)),
		screenshot(out, "live-1280"),
		chromedp.Navigate(base+"/#/learner"),
		chromedp.WaitVisible(xpath(`//h1[.="Learner"]`)),
		screenshot(out, "learner-1280"))
}

// The remotes page lists each shard's remote and syncs one on request.
func TestUI_Remotes(t *testing.T) {
	bare := t.TempDir()
	d, admin := startDaemonWith(t, daemon.Config{Remote: remote.Config{Template: filepath.Join(bare, "{kind}", "{name}.git"), FetchEvery: -1, PushDelay: time.Hour}})
	ctx := context.Background()
	admin.AddAgent(ctx, "alice", nil)
	res, err := admin.Remember(ctx, memd.RememberRequest{Shard: memd.AgentShard("alice"), Text: "Prefers tea"})
	if err != nil {
		t.Fatal(err)
	}
	out := outputDir(t)
	b, cancel := browser(t, 1280, 900)
	defer cancel()
	base := d.URL()
	run(b, t, "sign in", chromedp.Navigate(base+"/login?code="+d.Sessions.LoginLink()), chromedp.WaitVisible(css(`#shards`)))
	row := `#remotes tr[data-shard="agent/alice"]`
	run(b, t, "the shard waits for its push",
		chromedp.Navigate(base+"/#/remotes"),
		chromedp.WaitVisible(xpath(`//tr[@data-shard="agent/alice"]/td[contains(., "push pending")]`)))
	run(b, t, "sync it now",
		chromedp.Click(css(row+` button.sync`)),
		chromedp.WaitVisible(xpath(`//tr[@data-shard="agent/alice"]/td[.="in step"]`)),
		screenshot(out, "remotes-1280"))
	out2, err := exec.Command("git", "-C", filepath.Join(bare, "agent", "alice.git"), "rev-parse", "main").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out2)) != res.Commit {
		t.Errorf("the remote's main after Sync: %s %v, want %s", out2, err, res.Commit)
	}
}

// Every main page is usable 400 pixels wide: nothing wider than the screen.
func TestUI_NarrowScreen(t *testing.T) {
	d, admin := startDaemon(t)
	ctx := context.Background()
	admin.AddAgent(ctx, "alice", nil)
	s := memd.AgentShard("alice")
	r, err := admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Prefers answers in German, short, with the sources listed at the end",
		Source: memd.Source{Messages: []string{"msg_1"}}})
	if err != nil {
		t.Fatal(err)
	}
	admin.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "runbook.md", Text: "# Runbook\n\nA long line of text that must wrap on a narrow screen rather than run off its edge.\n"})
	out := outputDir(t)
	b, cancel := browser(t, 400, 850)
	defer cancel()
	base := d.URL()
	// A phone-sized viewport: Chromium's window cannot be made that narrow.
	run(b, t, "sign in", chromedp.EmulateViewport(400, 850), chromedp.Navigate(base+"/login?code="+d.Sessions.LoginLink()), chromedp.WaitVisible(css(`#shards`)))
	for _, p := range []struct{ name, hash, wait string }{
		{"shards", "#/", "#shards"},
		{"facts", "#/shard/agent/alice/facts", "#facts"},
		{"provenance", "#/fact/agent/alice/" + r.Fact.ID, "#provenance"},
		{"history", "#/shard/agent/alice/history", "#history"},
		{"note", "#/note/agent/alice/runbook.md", "#note-rendered"},
		{"live", "#/live", "#live"},
		{"remotes", "#/remotes", "#remotes-title"},
		{"review", "#/review", "#review-title"},
	} {
		run(b, t, p.name,
			chromedp.Navigate(base+"/"+p.hash),
			chromedp.WaitVisible(css(p.wait)),
			screenshot(out, p.name+"-400"))
		width := evalInt(b, t, `document.documentElement.scrollWidth`)
		if width > 400 {
			t.Errorf("%s is %d pixels wide on a 400-pixel screen", p.name, width)
		}
	}
}
