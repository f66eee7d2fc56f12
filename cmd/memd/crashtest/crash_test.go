package crashtest_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
	"github.com/memd/memd/internal/scriptedmodel"
	"github.com/memd/memd/provenance"
)

var crashRounds = flag.Int("crash.rounds", 10, "rounds of the kill -9 harness (TestCrash_KillAtRandom)")

// ledger is what the daemon acknowledged, across rounds.
type ledger struct {
	mu        sync.Mutex
	facts     map[string]string   // ID -> text, acknowledged remembers
	commits   map[string]string   // fact ID -> the commit that added it
	reverted  map[string]bool     // acknowledged reverts (fact must be gone)
	uncertain map[string]bool     // reverts sent but not acknowledged
	notes     map[string][]int    // note path -> acknowledged line numbers, in order
	exchanges map[string]bool     // acknowledged exchanges, by chat
	inserted  map[string][]string // shared note path -> acknowledged inserted lines
	hand      []string            // lines a person appended by hand (kept, committed or not)
	pushed    []string            // fact lines in acknowledged git pushes
	imported  int                 // facts of completed imports
	writes    int
}

// crashModel answers every extraction with one fact naming the chat.
func crashModel(t *testing.T) *scriptedmodel.Server {
	return scriptedmodel.New(t, func(r scriptedmodel.Request) (int, string) {
		if i := strings.Index(r.User, "from chat "); i >= 0 {
			return http.StatusOK, "log: Learned from " + strings.Fields(r.User[i+len("from chat "):])[0]
		}
		return http.StatusOK, "Worked through a crash drill."
	})
}

// A kill -9 at a random moment while facts, notes (four writers inserting
// into three notes at once), exchanges, reverts and git pushes are written
// concurrently and a person appends lines by hand and commits them, round
// after round; every tenth round kills a memd import instead. After each:
// every acknowledged write is in HEAD, the person's lines are all in the
// working tree, which differs from HEAD by nothing else, git status is
// clean in every shard once the person commits, git fsck passes, nothing
// is duplicated, and the index a restart catches up equals a fresh
// rebuild. At the end the learner's queue drains with each exchange
// learned once. `go test -run Crash -count 10 -timeout 3h ./cmd/memd/crashtest -args
// -crash.rounds=100` runs a thousand (in ten histories: the checks of a
// round grow with the history).
func TestCrash_KillAtRandom(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "memd")
	model := crashModel(t)
	l := &ledger{facts: map[string]string{}, commits: map[string]string{}, reverted: map[string]bool{}, uncertain: map[string]bool{},
		notes: map[string][]int{}, exchanges: map[string]bool{}, inserted: map[string][]string{}}
	s := memd.AgentShard("crash")
	shardDir := filepath.Join(data, "shards", "agent", "crash")
	folder := importFolder(t)
	var clone string
	for round := 1; round <= *crashRounds; round++ {
		if round%10 == 5 {
			importRound(t, data, folder, l, round)
			if t.Failed() {
				return
			}
			continue
		}
		cmd, url := memdtest.StartCrashable(t, memdBin, home, model.URL)
		token, err := os.ReadFile(filepath.Join(data, "admin.token"))
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(url, strings.TrimSpace(string(token)))
		if round == 1 {
			if _, err := c.AddAgent(context.Background(), "crash", nil); err != nil {
				t.Fatal(err)
			}
			for _, n := range sharedNotes {
				if _, err := c.CreateNote(context.Background(), memd.CreateNoteRequest{Shard: s, Path: n, Text: "# Shared\n\nTOP\n"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Remember(context.Background(), memd.RememberRequest{Shard: s, Text: "The person's log starts here", Tier: memd.TierLog}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(shardDir, "notes", "hand.md"), []byte("# By hand\n"), 0o644)
			memdtest.Git(t, shardDir, "add", "notes/hand.md")
			personCommit(shardDir)
			clone = filepath.Join(home, "clone")
			memdtest.Git(t, "", "clone", "-q", strings.Replace(url, "http://", "http://admin:"+strings.TrimSpace(string(token))+"@", 1)+"/git/agent/crash.git", clone)
		}
		memdtest.Git(t, clone, "remote", "set-url", "origin", strings.Replace(url, "http://", "http://admin:"+strings.TrimSpace(string(token))+"@", 1)+"/git/agent/crash.git")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(2)
			go func() { defer wg.Done(); writeFacts(c, s, l, round, w, stop) }()
			go func() { defer wg.Done(); insertLines(c, s, l, round, w, stop) }()
		}
		for _, f := range []func(){
			func() { writeNote(c, s, l, round, stop) },
			func() { postExchanges(c, l, round, stop) },
			func() { revertFacts(c, s, l, round, stop) },
			func() { editByHand(shardDir, l, round, stop) },
			func() { pushLines(clone, l, round, stop) },
		} {
			wg.Add(1)
			go func() { defer wg.Done(); f() }()
		}
		time.Sleep(time.Duration(200+rand.IntN(1000)) * time.Millisecond) // the random moment
		memdtest.Kill(t, cmd, false)
		close(stop)
		wg.Wait()
		checkAfterCrash(t, data, s, l, round)
		if t.Failed() {
			return
		}
	}

	// The last start runs to the end of the learner's queue.
	cmd, url := memdtest.StartCrashable(t, memdBin, home, model.URL)
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
	if err := cmd.Wait(); err != nil {
		t.Errorf("memd serve did not shut down cleanly: %v", err)
	}
	learned := map[string]int{}
	for _, f := range list.Facts {
		if chat, ok := strings.CutPrefix(f.Text, "Learned from "); ok {
			learned[chat]++
		}
	}
	subjects := memdtest.Git(t, shardDir, "log", "--format=%s")
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
	inserted := 0
	for _, lines := range l.inserted {
		inserted += len(lines)
	}
	t.Logf("crash harness: %d rounds, %d acknowledged writes checked (%d facts, %d note lines inserted, %d lines pushed, %d facts imported), %d lines by hand kept, %d exchanges learned once each",
		*crashRounds, l.writes, len(l.facts), inserted, len(l.pushed), l.imported, len(l.hand), len(l.exchanges))
}

func writeFacts(c *client.Client, s memd.ShardID, l *ledger, round, w int, stop chan struct{}) {
	for i := 0; !stopped(stop); i++ {
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
	for i := 1; !stopped(stop); i++ {
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
	for i := 0; i < exchangesPerRound && !stopped(stop); i++ {
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
	for !stopped(stop) {
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

// startOptions open a store as memd's start does, restoring what a commit
// from a stale git index dropped (without fsync: the check is no crash).
var startOptions = gitstore.Options{NoSync: true, RepackAt: -1, Restore: provenance.RestoreMessage}

// stopped reports whether the round's kill has come.
func stopped(stop chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// checkAfterCrash opens the data directory as the next start would and
// checks what the daemon acknowledged before the kill.
func checkAfterCrash(t *testing.T, data string, s memd.ShardID, l *ledger, round int) {
	t.Helper()
	store, err := gitstore.Open(data, startOptions)
	if err != nil {
		t.Fatalf("round %d: open after the kill: %v", round, err)
	}
	// Every shard opened, as memd's start opens them all (the index
	// catches up with each): opening one is what repairs it.
	all, err := store.Shards()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range all {
		if _, err := store.Shard(id); err != nil {
			t.Fatalf("round %d: open %s after the kill: %v", round, id, err)
		}
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
		data, ok, _, err := sh.Note(gitstore.Hash{}, memd.NoteFile(path))
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
	for path, lines := range l.inserted {
		data, _, _, err := sh.Note(gitstore.Hash{}, memd.NoteFile(path))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range lines {
			if strings.Count(string(data), line+"\n") != 1 {
				t.Errorf("round %d: note %s: the acknowledged line %q is there %d times", round, path, line, strings.Count(string(data), line+"\n"))
			}
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
	checkWorkingTrees(t, store, sh, l, round)
	caughtUp := indexDump(t, store, filepath.Join(data, daemon.IndexFile))
	store.Close()

	// A fresh rebuild, on a copy with no index.
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", data, cp).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	os.Remove(filepath.Join(cp, daemon.IndexFile))
	fresh, err := gitstore.Open(cp, startOptions)
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
			x.Engine().Walk(id, profile, func(d search.Doc) bool {
				out = append(out, fmt.Sprintf("%s %s %s %s %s %s", d.Shard, d.ID, d.Date, d.Tier, d.File, d.Text))
				return true
			})
		}
	}
	slices.Sort(out)
	return out
}

// sharedNotes are the notes four writers insert lines into at once.
var sharedNotes = []string{"n1.md", "n2.md", "n3.md"}

func insertLines(c *client.Client, s memd.ShardID, l *ledger, round, w int, stop chan struct{}) {
	for i := 0; !stopped(stop); i++ {
		path := sharedNotes[(w+i)%len(sharedNotes)]
		line := fmt.Sprintf("inserted r%d w%d i%d", round, w, i)
		_, err := c.EditNote(context.Background(), memd.EditNoteRequest{Shard: s, Path: path,
			Edits: []memd.NoteEdit{{Op: memd.NoteInsertAfter, Anchor: "TOP\n", Text: line + "\n"}}})
		if err != nil {
			return
		}
		l.mu.Lock()
		l.inserted[path] = append(l.inserted[path], line)
		l.writes++
		l.mu.Unlock()
	}
}

// editByHand is a person appending lines to the shard's log and to a note
// of their own, and now and then committing them with git.
func editByHand(dir string, l *ledger, round int, stop chan struct{}) {
	day := time.Now().UTC().Format("2006-01-02")
	logFile := filepath.Join(dir, "log", day[:7]+".md")
	for i := 0; !stopped(stop); i++ {
		line := fmt.Sprintf("- (%s) By hand r%d i%d", day, round, i)
		file := logFile
		if i%3 == 2 {
			file, line = filepath.Join(dir, "notes", "hand.md"), fmt.Sprintf("hand r%d i%d", round, i)
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return
		}
		_, err = f.WriteString(line + "\n")
		f.Close()
		if err != nil {
			return
		}
		l.mu.Lock()
		l.hand = append(l.hand, line)
		l.mu.Unlock()
		if i%5 == 4 {
			personCommit(dir)
		}
		time.Sleep(10 * time.Millisecond) // a person's pace
	}
}

func personCommit(dir string) bool {
	cmd := exec.Command("git", "-c", "user.name=pat", "-c", "user.email=pat@example.com", "-c", "gc.auto=0", "commit", "-qam", "by hand")
	cmd.Dir = dir
	return cmd.Run() == nil
}

// pushLines commits fact lines in a clone and force-pushes them, which
// memd merges into main.
func pushLines(clone string, l *ledger, round int, stop chan struct{}) {
	day := time.Now().UTC().Format("2006-01-02")
	for i := 0; !stopped(stop); i++ {
		line := fmt.Sprintf("- (%s) Pushed r%d i%d", day, round, i)
		f, err := os.OpenFile(filepath.Join(clone, "profile.md"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return
		}
		f.WriteString(line + "\n")
		f.Close()
		if _, err := memdtest.GitOut(clone, "commit", "-qam", "pushed"); err != nil {
			memdtest.GitOut(clone, "add", "profile.md")
			if _, err := memdtest.GitOut(clone, "commit", "-qam", "pushed"); err != nil {
				return
			}
		}
		if _, err := memdtest.GitOut(clone, "push", "-q", "--force", "origin", "main"); err != nil {
			return // the daemon is gone, or the push was refused: not acknowledged
		}
		l.mu.Lock()
		l.pushed = append(l.pushed, line)
		l.writes++
		l.mu.Unlock()
	}
}

// importFolder is an OpenTeam memory folder of two bots, for import rounds.
func importFolder(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "openteam")
	for _, bot := range []string{"ivan", "jane"} {
		var b strings.Builder
		for i := 0; i < 150; i++ {
			fmt.Fprintf(&b, "- (2026-05-%02d) %s imported fact %d\n", 1+i%28, bot, i)
		}
		p := filepath.Join(dir, "agents", bot, "memory", "log", "2026-05.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// importRound kills memd import at a random moment, checks the store as
// after any crash, then imports to the end: each fact is there once.
func importRound(t *testing.T, data, folder string, l *ledger, round int) {
	t.Helper()
	run := func() *exec.Cmd {
		cmd := exec.Command(memdBin, "import", "--data", data, folder)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	cmd := run()
	time.Sleep(time.Duration(rand.IntN(400)) * time.Millisecond) // the random moment
	memdtest.Kill(t, cmd, true)
	checkAfterCrash(t, data, memd.AgentShard("crash"), l, round)
	if out, err := exec.Command(memdBin, "import", "--data", data, folder).CombinedOutput(); err != nil {
		t.Fatalf("round %d: import after the kill: %v\n%s", round, err, out)
	}
	store, err := gitstore.Open(data, startOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, bot := range []string{"ivan", "jane"} {
		sh, err := store.Shard(memd.AgentShard(bot))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		facts, _, err := sh.Facts()
		if err != nil {
			t.Fatal(err)
		}
		if len(facts) != 150 {
			t.Errorf("round %d: agent/%s holds %d facts after the import, want 150", round, bot, len(facts))
		}
		if st := memdtest.Git(t, store.ShardDir(memd.AgentShard(bot)), "status", "--porcelain"); st != "" {
			t.Errorf("round %d: git status in agent/%s after the import:\n%s", round, bot, st)
		}
	}
	l.mu.Lock()
	l.imported = 300
	l.mu.Unlock()
}

// checkWorkingTrees checks, after a restart's repairs, that the lines the
// person appended are all still in the working tree; then the person
// commits them, after which git status is clean in every shard and HEAD
// holds the pushed lines and every hand line.
func checkWorkingTrees(t *testing.T, store *gitstore.Store, sh *gitstore.Shard, l *ledger, round int) {
	t.Helper()
	dir := sh.Dir()
	l.mu.Lock()
	defer l.mu.Unlock()
	working := ""
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			b, _ := os.ReadFile(p)
			working += string(b)
		}
		return nil
	})
	for _, line := range l.hand {
		if !strings.Contains(working, line+"\n") {
			t.Errorf("round %d: the line a person appended, %q, is gone from the working tree", round, line)
		}
	}
	// Before the person commits, the working tree differs from HEAD by
	// the person's lines alone.
	for _, line := range strings.Split(memdtest.Git(t, dir, "diff", "HEAD", "-U0", "--no-color"), "\n") {
		if (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-")) && !strings.HasPrefix(line, "+++") && !strings.HasPrefix(line, "---") &&
			!strings.Contains(line, "By hand r") && !strings.Contains(line, "hand r") {
			t.Errorf("round %d: the working tree differs from HEAD by more than the person's lines: %q", round, line)
		}
	}
	if len(l.hand) > 0 && !personCommit(dir) && memdtest.Git(t, dir, "status", "--porcelain") != "" {
		t.Errorf("round %d: the person's git commit -a failed", round)
	}
	ids, _ := store.Shards()
	for _, id := range ids {
		if st := memdtest.Git(t, store.ShardDir(id), "status", "--porcelain"); st != "" {
			dir := store.ShardDir(id)
			journal, _ := os.ReadFile(filepath.Join(dir, ".git", "memd-worktree-log"))
			t.Errorf("round %d: git status in %s:\n%s\nstaged:\n%s\nlog:\n%s\njournal:\n%s", round, id, st,
				memdtest.Git(t, dir, "diff", "--cached", "--stat"), memdtest.Git(t, dir, "log", "-3", "--format=%h %an %s"), journal)
		}
	}
	if len(l.hand)+len(l.pushed) == 0 {
		return
	}
	head := memdtest.Git(t, dir, "grep", "-h", "-e", "By hand", "-e", "Pushed", "-e", "hand r", "HEAD", "--", "log", "profile.md", "notes/hand.md")
	for _, line := range append(slices.Clone(l.hand), l.pushed...) {
		if !strings.Contains(head, line+"\n") {
			t.Errorf("round %d: %q is not in HEAD", round, line)
		}
	}
}
