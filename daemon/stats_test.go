package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/learn"
	"github.com/memd/memd/provenance"
)

// movable is a clock a test sets.
type movable struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movable) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *movable) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// factAnswers makes the model learn what follows "FACT:" in the exchange.
func factAnswers(r modelRequest) (int, string) {
	_, rest, ok := strings.Cut(r.User, "FACT: ")
	if !ok {
		return http.StatusOK, "NONE"
	}
	fact, _, _ := strings.Cut(rest, "\n")
	return http.StatusOK, "log: " + fact
}

// Learning statistics count, per model, prompt and agent, the facts people
// undid within 7 and 30 days, and equal what plain git's trailers give.
func TestLearningStats_MatchGitLog(t *testing.T) {
	m := newModelServer(t, factAnswers)
	clock := &movable{t: time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)}
	e := startQuietIn(t, t.TempDir(), daemon.Config{Now: clock.now,
		Model: &learn.ModelConfig{BaseURL: m.URL + "/v1", Model: "model-a"}, LearnRetryBase: 5 * time.Millisecond})
	ctx := context.Background()
	feed, err := e.admin.Subscribe(ctx, memd.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	agents := map[string]*client.Client{"alice": e.agent(t, "alice"), "bob": e.agent(t, "bob")}
	chats := 0
	learnFact := func(agent, fact string) (memd.FactChange, memd.Exchange) {
		t.Helper()
		chats++
		ex := exchange(agent, fmt.Sprintf("c%d", chats), memd.ChatDirect, "pat", "Please keep this in mind. FACT: "+fact, "Noted.")
		st, err := agents[agent].Learn(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		ev := learned(t, feed, st.ID)
		if len(ev.Learned) != 1 {
			t.Fatalf("%s learned %v from %q", agent, ev.Learned, fact)
		}
		return memd.FactChange{Fact: memd.Fact{ID: memd.FactID(fact), Shard: memd.AgentShard(agent)}}, ex
	}
	var alice []memd.FactChange
	var aliceEx []memd.Exchange
	for i := range learn.EpisodeEvery - 1 { // no episode: each fact from its own exchange
		f, ex := learnFact("alice", fmt.Sprintf("Alice fact number %d", i))
		alice, aliceEx = append(alice, f), append(aliceEx, ex)
	}
	for i := range 3 {
		learnFact("bob", fmt.Sprintf("Bob fact number %d", i))
	}
	// Another model wrote to bob's shard once (its trailers say so).
	sh, _ := e.d.Store.Shard(memd.AgentShard("bob"))
	other := "Bob fact from model b"
	_, err = sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "bob", Email: "bob@agents.memd"},
		Message: provenance.Message(provenance.Subject(memd.OpRemember, other), memd.Provenance{Op: memd.OpRemember,
			FactIDs: []string{memd.FactID(other)}, Tier: memd.TierLog, LearnedBy: memd.LearnedLearner, Model: "model-b", Prompt: "0badc0de"}),
		Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: other, Date: memd.DateOf(clock.now()), Tier: memd.TierLog}}}})
	if err != nil {
		t.Fatal(err)
	}

	as := memd.AgentShard("alice")
	clock.add(24 * time.Hour)
	// Reverted the next day, by the exchange it came from.
	if _, err := e.admin.Revert(ctx, memd.RevertRequest{Messages: aliceEx[0].MessageIDs()}); err != nil {
		t.Fatal(err)
	}
	// Counted now, so that the counts below take only the commits since.
	if mid, err := e.admin.LearningStats(ctx, memd.LearningQuery{Agent: "alice"}); err != nil || len(mid.Rows) != 1 || mid.Rows[0].Within7.Reverted != 1 {
		t.Fatalf("stats after the first revert: %+v, %v", mid, err)
	}
	// Edited by a person two days on.
	clock.add(24 * time.Hour)
	if _, err := e.admin.EditFact(ctx, memd.EditFactRequest{Shard: as, ID: alice[1].Fact.ID, Text: "Alice fact number one, corrected"}); err != nil {
		t.Fatal(err)
	}
	// Forgotten by alice herself: not a person's verdict. She writes it
	// again, and a person forgets her line: not the model's either.
	if _, err := agents["alice"].Forget(ctx, memd.ForgetRequest{Shard: as, ID: alice[2].Fact.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := agents["alice"].Remember(ctx, memd.RememberRequest{Shard: as, Text: "Alice fact number 2", Tier: memd.TierLog}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Forget(ctx, memd.ForgetRequest{Shard: as, ID: alice[2].Fact.ID}); err != nil {
		t.Fatal(err)
	}
	// Forgotten by a person after 10 days, and reverted after 40.
	clock.add(8 * 24 * time.Hour)
	if _, err := e.admin.Forget(ctx, memd.ForgetRequest{Shard: as, ID: alice[3].Fact.ID}); err != nil {
		t.Fatal(err)
	}
	clock.add(30 * 24 * time.Hour)
	log, err := e.admin.Log(ctx, memd.LogQuery{Shard: as, Message: aliceEx[4].Messages[0].ID})
	if err != nil || len(log) != 1 {
		t.Fatalf("log of the fifth fact: %v %v", log, err)
	}
	if _, err := e.admin.Revert(ctx, memd.RevertRequest{Shard: as, Commit: log[0].Hash}); err != nil {
		t.Fatal(err)
	}

	stats, err := e.admin.LearningStats(ctx, memd.LearningQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]string)
	for _, r := range stats.Rows {
		got[r.Model+" "+r.Prompt+" "+r.Agent] = fmt.Sprintf("learned %d, 7d %d/%d/%d, 30d %d/%d/%d, listed %d",
			r.Learned, r.Within7.Reverted, r.Within7.Forgotten, r.Within7.Edited, r.Within30.Reverted, r.Within30.Forgotten, r.Within30.Edited, len(r.Facts))
		if r.Agent == "alice" && (r.PromptName != "extraction v2" || r.Within7.Rate != 2.0/5) {
			t.Errorf("alice's row: prompt name %q, 7-day rate %v", r.PromptName, r.Within7.Rate)
		}
	}
	want := map[string]string{
		"model-a " + learn.ExtractionPrompt + " alice": "learned 5, 7d 1/0/1, 30d 1/1/1, listed 4",
		"model-a " + learn.ExtractionPrompt + " bob":   "learned 3, 7d 0/0/0, 30d 0/0/0, listed 0",
		"model-b 0badc0de bob":                         "learned 1, 7d 0/0/0, 30d 0/0/0, listed 0",
	}
	if !mapsEqual(got, want) {
		t.Errorf("stats:\n got %v\nwant %v", got, want)
	}
	if fromGit := statsFromGitLog(t, filepath.Join(e.dir, "shards")); !mapsEqual(got, fromGit) {
		t.Errorf("the API's figures differ from git log's:\n api %v\n git %v", got, fromGit)
	}

	// A period: only what was learned in it.
	day := memd.DateOf(clock.now())
	if s, err := e.admin.LearningStats(ctx, memd.LearningQuery{From: day}); err != nil || len(s.Rows) != 0 {
		t.Errorf("stats from %s: %+v, %v", day, s.Rows, err)
	}
	_, err = agents["alice"].LearningStats(ctx, memd.LearningQuery{})
	wantCode(t, err, memd.EFORBIDDEN)
}

// statsFromGitLog recomputes the figures with the git CLI alone: each
// shard's log, oldest first, with its trailers.
func statsFromGitLog(t *testing.T, shards string) map[string]string {
	t.Helper()
	type fact struct {
		key      string
		commit   string
		at       int64
		undoneAt int64
		how      string
	}
	counts := make(map[string]*[7]int) // learned, 7d r/f/e, 30d r/f/e
	listed := make(map[string]int)
	dirs, _ := filepath.Glob(filepath.Join(shards, "*", "*"))
	for _, dir := range dirs {
		out, err := exec.Command("git", "-C", dir, "log", "--reverse", "--format=%H%x1f%an%x1f%ct%x1f%(trailers:unfold,separator=%x1e)%x1d").Output()
		if err != nil {
			t.Fatal(err)
		}
		var all []*fact
		byCommit := map[string]*fact{}
		live := map[string]*fact{}
		for _, rec := range strings.Split(string(out), "\x1d") {
			parts := strings.Split(strings.TrimSpace(rec), "\x1f")
			if len(parts) < 4 {
				continue
			}
			at, _ := strconv.ParseInt(parts[2], 10, 64)
			tr := map[string][]string{}
			for _, kv := range strings.Split(parts[3], "\x1e") {
				k, v, _ := strings.Cut(kv, ": ")
				tr[k] = append(tr[k], strings.TrimSpace(v))
			}
			first := func(k string) string {
				if len(tr[k]) == 0 {
					return ""
				}
				return tr[k][0]
			}
			by := first("Learned-By")
			undo := func(f *fact, how string) {
				if f != nil && f.how == "" {
					f.how, f.undoneAt = how, at
					delete(live, first("Fact-Id"))
				}
			}
			switch op := first("Memory-Op"); {
			case op == "remember" && (by == "learner" || by == "episode" || by == "synthesis"):
				f := &fact{key: first("Model") + " " + first("Prompt") + " " + parts[1], commit: parts[0], at: at}
				all = append(all, f)
				byCommit[f.commit] = f
				live[first("Fact-Id")] = f
			case op == "revert":
				undo(byCommit[first("Reverts")], "r")
			case op == "forget":
				for _, id := range tr["Fact-Id"] {
					if by == "person" {
						undo(live[id], "f")
					}
					delete(live, id)
				}
			case op == "edit":
				if by == "person" {
					undo(live[first("Replaces")], "e")
				}
				delete(live, first("Replaces"))
			}
		}
		for _, f := range all {
			c := counts[f.key]
			if c == nil {
				c = new([7]int)
				counts[f.key] = c
			}
			c[0]++
			if f.how == "" {
				continue
			}
			listed[f.key]++
			slot := strings.Index("rfe", f.how)
			if f.undoneAt-f.at <= 7*24*3600 {
				c[1+slot]++
			}
			if f.undoneAt-f.at <= 30*24*3600 {
				c[4+slot]++
			}
		}
	}
	out := make(map[string]string)
	for k, c := range counts {
		out[k] = fmt.Sprintf("learned %d, 7d %d/%d/%d, 30d %d/%d/%d, listed %d", c[0], c[1], c[2], c[3], c[4], c[5], c[6], listed[k])
	}
	return out
}
