package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// deskFacts is the size of the shard the desk benchmark opens: as many
// facts as commits, one commit each, over more than a year.
const deskFacts = 20000

// BenchmarkUI_FirstPage measures, in a real browser, how long the desk
// takes from navigation to its first page drawn, on a shard of 20,000
// facts made by 20,000 commits: the facts page (newest first, with what
// wrote each) and the history page (with the growth chart over all of
// them), and the shards page with the chart of all memory. The target is
// under a second each; first-ms is the first visit after the restart, with
// nothing cached (for the shards page, the sign-in that drew it).
func BenchmarkUI_FirstPage(b *testing.B) {
	// The shard is written by one daemon; the pages are opened in another,
	// started afterwards on the same data directory: a restart, cold.
	dir := b.TempDir()
	writer, err := daemon.Open(daemon.Config{DataDir: dir, Listen: "127.0.0.1:0", NoSync: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	id := memd.AgentShard("alice")
	sh, err := writer.Store.CreateShard(id)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	work := make(chan int)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				text := fmt.Sprintf("Fact %d about the billing migration, step %d of the plan", i, i%97)
				fid := memd.FactID(text)
				p := memd.Provenance{Op: memd.OpRemember, FactIDs: []string{fid}, Tier: memd.TierLog, SourceMessages: []string{fmt.Sprintf("m_%d", i)},
					SourceChat: "chat_1", ChatKind: memd.ChatDirect, LearnedBy: memd.LearnedLearner, Model: "model-a", Prompt: "7c41a2e0"}
				_, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "alice", Email: "alice@agents.memd"},
					Message: provenance.Message(provenance.Subject(memd.OpRemember, text), p),
					Edits:   []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Tier: memd.TierLog, Date: memd.DateOf(start.Add(time.Duration(i) * 30 * time.Minute))}}}})
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range deskFacts {
		work <- i
	}
	close(work)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	if err := writer.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	d, _ := startDaemonWith(b, daemon.Config{DataDir: dir})
	br, cancel := browser(b, 1280, 900)
	defer cancel()
	base := d.URL()
	// The browser's own first page load is not memd's: open the sign-in
	// form first.
	run(br, b, "open the browser", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(css(`form`)))
	t0 := time.Now()
	run(br, b, "sign in: the shards page, first", chromedp.Navigate(base+"/login?code="+d.Sessions.LoginLink()), chromedp.WaitVisible(css(`#growth svg`)))
	signIn := time.Since(t0)
	for _, p := range []struct{ name, hash, wait string }{
		{"history", "#/shard/agent/alice/history", "#history .commit"},
		{"facts", "#/shard/agent/alice/facts", "#facts tbody tr"},
		{"shards", "#/", "#growth svg"},
	} {
		b.Run(p.name, func(b *testing.B) {
			var took, first time.Duration
			for b.Loop() {
				run(br, b, "leave", chromedp.Navigate(base+"/#/learner"), chromedp.WaitVisible(xpath(`//h1[.="Learner"]`)))

				t0 := time.Now()
				run(br, b, "open "+p.name, chromedp.Navigate(base+"/"+p.hash), chromedp.WaitVisible(css(p.wait)))
				d := time.Since(t0)
				if first == 0 {
					first = d // nothing cached yet: the history's growth is read from every commit
				}
				took += d
			}
			b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/page")
			b.ReportMetric(float64(first.Milliseconds()), "first-ms")
			if p.name == "shards" {
				first = signIn // the sign-in drew it first, on the restarted daemon
				b.ReportMetric(float64(first.Milliseconds()), "first-ms")
			}
		})
	}
}
