package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

var crashRounds = flag.Int("crash.rounds", 3, "rounds of the kill -9 harness (TestCrash_KillAtRandom)")

// ledger is what the daemon acknowledged, across rounds.
type ledger struct {
	mu        sync.Mutex
	facts     map[string]string // ID -> text, acknowledged remembers
	commits   map[string]string // fact ID -> the commit that added it
	reverted  map[string]bool   // acknowledged reverts (fact must be gone)
	uncertain map[string]bool   // reverts sent but not acknowledged
	notes     map[string][]int  // note path -> acknowledged line numbers, in order
	exchanges map[string]bool   // acknowledged exchanges, by chat
	writes    int
}

// crashModel answers every extraction with one fact naming the chat.
func crashModel(t *testing.T) *httptest.Server {
	m := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
			http.Error(w, "want a chat completion request", http.StatusBadRequest) // a request cut off by the kill
			return
		}
		user := body.Messages[len(body.Messages)-1].Content
		answer := "Worked through a crash drill."
		if i := strings.Index(user, "from chat "); i >= 0 {
			answer = "log: Learned from " + strings.Fields(user[i+len("from chat "):])[0]
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	t.Cleanup(m.Close)
	return m
}

// startCrashable starts memd serve with fsync on (the point of the test)
// and learning through the model.
func startCrashable(t *testing.T, home, modelURL string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(memdBin, "serve", "--listen", "127.0.0.1:0", "--model-url", modelURL+"/v1", "--model", "m", "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MEMD_DATA=")
	cmd.Stderr = os.Stderr
	// Its own process group, so that the kill takes a git repack it
	// started with it, as a crash of the machine would; one left running
	// would delete packs under the git fsck that follows.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("memd serve printed nothing after a restart: %v", sc.Err())
	}
	url := sc.Text()[strings.Index(sc.Text(), "http://"):]
	go io.Copy(io.Discard, out)
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd, url
}

// A kill -9 at a random moment while facts, notes, exchanges and reverts
// are written concurrently, round after round. After each: every
// acknowledged write is in HEAD, git fsck passes in every shard, nothing is
// duplicated, and the index a restart catches up equals a fresh rebuild.
// At the end the learner's queue drains with each exchange learned once.
// `go test -run Crash -crash.rounds 300 ./cmd/memd` runs hundreds.
func TestCrash_KillAtRandom(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "memd")
	model := crashModel(t)
	l := &ledger{facts: map[string]string{}, commits: map[string]string{}, reverted: map[string]bool{}, uncertain: map[string]bool{},
		notes: map[string][]int{}, exchanges: map[string]bool{}}
	s := memd.AgentShard("crash")
	for round := 1; round <= *crashRounds; round++ {
		cmd, url := startCrashable(t, home, model.URL)
		token, err := os.ReadFile(filepath.Join(data, "admin.token"))
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(url, strings.TrimSpace(string(token)))
		if round == 1 {
			if _, err := c.AddAgent(context.Background(), "crash", nil); err != nil {
				t.Fatal(err)
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() { defer wg.Done(); writeFacts(c, s, l, round, w, stop) }()
		}
		for _, f := range []func(){
			func() { writeNote(c, s, l, round, stop) },
			func() { postExchanges(c, l, round, stop) },
			func() { revertFacts(c, s, l, round, stop) },
		} {
			wg.Add(1)
			go func() { defer wg.Done(); f() }()
		}
		time.Sleep(time.Duration(200+rand.IntN(1000)) * time.Millisecond) // the random moment
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		close(stop)
		wg.Wait()
		checkAfterCrash(t, data, s, l, round)
		if t.Failed() {
			return
		}
	}

	// The last start runs to the end of the learner's queue.
	cmd, url := startCrashable(t, home, model.URL)
	token, _ := os.ReadFile(filepath.Join(data, "admin.token"))
	c := client.New(url, strings.TrimSpace(string(token)))
	drainStart := time.Now()
	last, lastMoved := -1, time.Now()
	for {
		st, err := c.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Learning.Pending == 0 {
			break
		}
		if st.Learning.Pending != last {
			last, lastMoved = st.Learning.Pending, time.Now()
		}
		if time.Since(lastMoved) > 30*time.Second {
			pending, _ := c.Exchanges(context.Background(), memd.ExchangePending)
			if len(pending) > 3 {
				pending = pending[:3]
			}
			lock, _ := os.ReadFile(filepath.Join(data, "shards", "agent", "crash", ".git", "refs", "heads", "main.lock"))
			t.Fatalf("the learner is stuck with %d exchanges pending; the first: %+v; main.lock holds %q", st.Learning.Pending, pending, lock)
		}
		time.Sleep(50 * time.Millisecond) // polling a status, not synchronising
	}
	t.Logf("the learner drained its queue in %v", time.Since(drainStart).Round(time.Millisecond))
	list, err := c.Facts(context.Background(), memd.FactsQuery{Shard: s})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	learned := map[string]int{}
	for _, f := range list.Facts {
		if chat, ok := strings.CutPrefix(f.Text, "Learned from "); ok {
			learned[chat]++
		}
	}
	shardDir := filepath.Join(data, "shards", "agent", "crash")
	subjects := git(t, shardDir, "log", "--format=%s")
	for chat := range l.exchanges {
		if learned[chat] != 1 {
			t.Errorf("exchange %s learned %d times, want once", chat, learned[chat])
		}
	}
	for chat := range learned {
		if n := strings.Count(subjects, "remember: Learned from "+chat+"\n"); n != 1 {
			t.Errorf("exchange %s was committed %d times", chat, n)
		}
	}
	t.Logf("crash harness: %d rounds, %d acknowledged writes checked, %d exchanges learned once each", *crashRounds, l.writes, len(l.exchanges))
}

func writeFacts(c *client.Client, s memd.ShardID, l *ledger, round, w int, stop chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		text := fmt.Sprintf("Crash round %d writer %d fact %d", round, w, i)
		res, err := c.Remember(context.Background(), memd.RememberRequest{Shard: s, Text: text, Tier: memd.TierLog, Source: memd.Source{Messages: []string{fmt.Sprintf("r%dw%d-%d", round, w, i)}}})
		if err != nil {
			return // the daemon is gone
		}
		l.mu.Lock()
		l.facts[res.Fact.ID] = text
		l.commits[res.Fact.ID] = res.Commit
		l.writes++
		l.mu.Unlock()
	}
}

func writeNote(c *client.Client, s memd.ShardID, l *ledger, round int, stop chan struct{}) {
	path := fmt.Sprintf("round-%d.md", round)
	if _, err := c.CreateNote(context.Background(), memd.CreateNoteRequest{Shard: s, Path: path, Text: "# Round\n\nEND\n"}); err != nil {
		return
	}
	l.mu.Lock()
	l.notes[path] = []int{}
	l.writes++
	l.mu.Unlock()
	for i := 1; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		_, err := c.EditNote(context.Background(), memd.EditNoteRequest{Shard: s, Path: path,
			Edits: []memd.NoteEdit{{Op: memd.NoteReplace, Find: "END", Replace: fmt.Sprintf("line %d\nEND", i)}}})
		if err != nil {
			return
		}
		l.mu.Lock()
		l.notes[path] = append(l.notes[path], i)
		l.writes++
		l.mu.Unlock()
	}
}

// exchangesPerRound bounds the learner's backlog, which the last start
// drains.
const exchangesPerRound = 40

func postExchanges(c *client.Client, l *ledger, round int, stop chan struct{}) {
	for i := 0; i < exchangesPerRound; i++ {
		select {
		case <-stop:
			return
		default:
		}
		chat := fmt.Sprintf("r%d-x%d", round, i)
		ex := memd.Exchange{Agent: "crash", Chat: chat, ChatKind: memd.ChatDirect, User: "pat", Messages: []memd.Message{
			{ID: chat + "-1", Role: "user", Text: fmt.Sprintf("Please keep item %d of round %d in mind", i, round)},
			{ID: chat + "-2", Role: "agent", Text: "I will."}}}
		if _, err := c.Learn(context.Background(), ex); err != nil {
			return
		}
		l.mu.Lock()
		l.exchanges[chat] = true
		l.writes++
		l.mu.Unlock()
	}
}

func revertFacts(c *client.Client, s memd.ShardID, l *ledger, round int, stop chan struct{}) {
	prefix := fmt.Sprintf("Crash round %d writer 0 ", round)
	for {
		select {
		case <-stop:
			return
		default:
		}
		var id, commit string
		l.mu.Lock()
		for fid, text := range l.facts {
			if strings.HasPrefix(text, prefix) && !l.reverted[fid] && !l.uncertain[fid] {
				id, commit = fid, l.commits[fid]
				break
			}
		}
		if id != "" {
			l.uncertain[id] = true
		}
		l.mu.Unlock()
		if id == "" {
			time.Sleep(5 * time.Millisecond) // nothing to revert yet
			continue
		}
		if _, err := c.Revert(context.Background(), memd.RevertRequest{Shard: s, Commit: commit}); err != nil {
			return
		}
		l.mu.Lock()
		delete(l.uncertain, id)
		l.reverted[id] = true
		l.writes++
		l.mu.Unlock()
	}
}

// checkAfterCrash opens the data directory as the next start would and
// checks what the daemon acknowledged before the kill.
func checkAfterCrash(t *testing.T, data string, s memd.ShardID, l *ledger, round int) {
	t.Helper()
	store, err := gitstore.Open(data, gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatalf("round %d: open after the kill: %v", round, err)
	}
	sh, err := store.Shard(s)
	if err != nil {
		t.Fatal(err)
	}
	facts, _, err := sh.Facts()
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	present := map[string]int{}
	for _, f := range facts {
		present[f.ID]++
	}
	l.mu.Lock()
	for id, text := range l.facts {
		switch {
		case l.reverted[id] && present[id] > 0:
			t.Errorf("round %d: %q was reverted (acknowledged) but is in HEAD", round, text)
		case !l.reverted[id] && !l.uncertain[id] && present[id] == 0:
			t.Errorf("round %d: acknowledged %q is not in HEAD", round, text)
		}
	}
	for path, lines := range l.notes {
		data, ok, _, err := sh.Note(plumbing.ZeroHash, memd.NoteFile(path))
		if err != nil || !ok {
			t.Errorf("round %d: acknowledged note %s: %v, %v", round, path, ok, err)
			continue
		}
		var have []int
		for _, line := range strings.Split(string(data), "\n") {
			var n int
			if _, err := fmt.Sscanf(line, "line %d", &n); err == nil {
				have = append(have, n)
			}
		}
		if len(have) < len(lines) || !slices.Equal(have[:len(lines)], lines) || len(have) > len(lines)+1 {
			t.Errorf("round %d: note %s has lines %v, acknowledged %v", round, path, have, lines)
		}
	}
	l.mu.Unlock()
	for id, n := range present {
		if n > 1 {
			t.Errorf("round %d: fact %s is in HEAD %d times", round, id, n)
		}
	}
	ids, _ := store.Shards()
	for _, id := range ids {
		if out, err := exec.Command("git", "-C", store.ShardDir(id), "fsck", "--strict").CombinedOutput(); err != nil {
			t.Errorf("round %d: git fsck %s: %v\n%s", round, id, err, out)
		}
	}
	caughtUp := indexDump(t, store, filepath.Join(data, daemon.IndexFile))
	store.Close()

	// A fresh rebuild, on a copy with no index.
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", data, cp).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	os.Remove(filepath.Join(cp, daemon.IndexFile))
	fresh, err := gitstore.Open(cp, gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := indexDump(t, fresh, filepath.Join(cp, daemon.IndexFile))
	fresh.Close()
	if !slices.Equal(caughtUp, rebuilt) {
		t.Errorf("round %d: the index after catching up differs from a fresh rebuild: %d facts against %d", round, len(caughtUp), len(rebuilt))
		for _, f := range rebuilt {
			if !slices.Contains(caughtUp, f) {
				t.Errorf("  only in the rebuild: %s", f)
			}
		}
		for _, f := range caughtUp {
			if !slices.Contains(rebuilt, f) {
				t.Errorf("  only in the caught-up index: %s", f)
			}
		}
	}
}

// indexDump opens the index as the daemon does, catches it up, and lists
// every fact it holds.
func indexDump(t *testing.T, store *gitstore.Store, path string) []string {
	t.Helper()
	x, err := index.Open(path, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.CatchUpAll(); err != nil {
		t.Fatal(err)
	}
	ids, _ := store.Shards()
	var out []string
	for _, id := range ids {
		for _, profile := range []bool{true, false} {
			x.Search().Walk(id, profile, func(d search.Doc) bool {
				out = append(out, fmt.Sprintf("%s %s %s %s %s %s", d.Shard, d.ID, d.Date, d.Tier, d.File, d.Text))
				return true
			})
		}
	}
	slices.Sort(out)
	return out
}
