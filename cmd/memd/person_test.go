package main_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
)

var personSeconds = flag.Int("person.seconds", 8, "how long each TestPerson test runs")

// A person appends fact lines to the month's log by hand and runs git
// status and git commit -am in a loop, while two agents write facts to the
// same file through the API. Nothing either of them wrote is lost: every
// line the person appended reaches HEAD (with their last commit), and so
// does every fact memd acknowledged. `-person.seconds 60` runs it longer.
func TestPerson_EditsWhileMemdWrites(t *testing.T) {
	c, dir := asAlice(t)
	ctx := context.Background()
	shard := memd.AgentShard("alice")
	first, err := c.Remember(ctx, memd.RememberRequest{Shard: shard, Text: "The first fact", Tier: memd.TierLog})
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, filepath.FromSlash(first.Fact.File))
	day := first.Fact.Date.String()

	deadline := time.Now().Add(time.Duration(*personSeconds) * time.Second)
	var mu sync.Mutex
	var acked []string
	agentsDone := twoAgents(deadline, func(w, i int) bool {
		text := fmt.Sprintf("Agent writer %d fact %d", w, i)
		if _, err := c.Remember(ctx, memd.RememberRequest{Shard: shard, Text: text, Tier: memd.TierLog}); err != nil {
			t.Errorf("remember: %v", err)
			return false
		}
		mu.Lock()
		acked = append(acked, text)
		mu.Unlock()
		return true
	})
	var hand []string
	commits := 0
	for i := 0; time.Now().Before(deadline); i++ {
		line := fmt.Sprintf("Appended by hand %d", i)
		appendByHand(t, logFile, fmt.Sprintf("- (%s) %s", day, line))
		hand = append(hand, line)
		exec.Command("git", "-C", dir, "status", "--porcelain").Run()
		if commitAsPerson(dir, fmt.Sprintf("hand %d", i)) {
			commits++
		}
	}
	agentsDone()
	commitTheRest(t, dir)
	head := git(t, dir, "show", "HEAD:"+first.Fact.File)
	working, _ := os.ReadFile(logFile)
	lost := 0
	for _, line := range hand {
		if n := strings.Count(head, ") "+line+"\n"); n != 1 {
			lost++
			if lost <= 5 {
				t.Errorf("the line appended by hand %q is in HEAD %d times", line, n)
			}
		}
	}
	list, err := c.Facts(ctx, memd.FactsQuery{Shard: shard})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range list.Facts {
		have[f.Text] = true
	}
	missing := 0
	for _, text := range acked {
		if !have[text] || !strings.Contains(string(working), ") "+text+"\n") {
			missing++
			if missing <= 5 {
				hist, _ := exec.Command("git", "-C", dir, "log", "--format=%h %an %s", "-S", text, "main").CombinedOutput()
				t.Errorf("acknowledged %q: listed %v, in the working file %v; git log -S:\n%s", text, have[text], strings.Contains(string(working), ") "+text+"\n"), hist)
			}
		}
	}
	t.Logf("person and memd for %ds: %d lines appended by hand (%d lost), %d git commits by the person, %d facts acknowledged by memd (%d lost)",
		*personSeconds, len(hand), lost, commits, len(acked), missing)
}

// A person appends lines to a note by hand and runs git status and git
// commit -am in a loop, leaving some lines uncommitted a while, while two
// agents add a line after the last line of the note as they read it
// (through the API): both add at the end. Nothing either wrote is lost:
// every line the person appended reaches HEAD, and so does every line
// memd acknowledged (memd's first, as main holds them). memd refuses a
// change (conflict) where the person's uncommitted edit touches the same
// lines, so that their next commit takes nothing of memd's away.
func TestPerson_EditsANoteWhileMemdWrites(t *testing.T) {
	c, dir := asAlice(t)
	ctx := context.Background()
	shard := memd.AgentShard("alice")
	const path = "journal.md"
	if _, err := c.CreateNote(ctx, memd.CreateNoteRequest{Shard: shard, Path: path, Text: "# Journal\n\nstart\n"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "notes", path)

	deadline := time.Now().Add(time.Duration(*personSeconds) * time.Second)
	var mu sync.Mutex
	var acked []string
	refused := 0
	agentsDone := twoAgents(deadline, func(w, i int) bool {
		n, err := c.ReadNote(ctx, shard, path, "")
		if err != nil {
			t.Errorf("read: %v", err)
			return false
		}
		lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
		line := fmt.Sprintf("agent %d line %d", w, i)
		_, err = c.EditNote(ctx, memd.EditNoteRequest{Shard: shard, Path: path, ExpectedRevision: n.Revision,
			Edits: []memd.NoteEdit{{Op: memd.NoteInsertAfter, Anchor: "\n" + lines[len(lines)-1] + "\n", Text: line + "\n"}}})
		mu.Lock()
		defer mu.Unlock()
		switch memd.ErrorCode(err) {
		case "":
			acked = append(acked, line)
		case memd.ECONFLICT:
			refused++
		case memd.EREVISION: // the other agent's line came first
		default:
			t.Errorf("edit: %v", err)
		}
		return true
	})
	var hand []string
	commits := 0
	for i := 0; time.Now().Before(deadline); i++ {
		line := fmt.Sprintf("by hand %d", i)
		appendByHand(t, file, line)
		hand = append(hand, line)
		exec.Command("git", "-C", dir, "status", "--porcelain").Run()
		if i%4 == 3 {
			if commitAsPerson(dir, fmt.Sprintf("hand %d", i)) {
				commits++
			}
		}
	}
	agentsDone()
	commitTheRest(t, dir)
	head := git(t, dir, "show", "HEAD:notes/"+path)
	lost := 0
	for _, line := range append(slices.Clone(hand), acked...) {
		if n := strings.Count(head, "\n"+line+"\n"); n != 1 {
			lost++
			if lost <= 5 {
				t.Errorf("%q is in HEAD %d times", line, n)
			}
		}
	}
	if len(acked) == 0 {
		t.Error("memd acknowledged no change")
	}
	t.Logf("person and memd for %ds: %d lines by hand, %d by memd acknowledged, %d refused, %d lost; %d commits by the person",
		*personSeconds, len(hand), len(acked), refused, lost, commits)
}

// asAlice serves memd with an agent alice, and returns a client as the
// admin and the directory of alice's shard.
func asAlice(t *testing.T) (*client.Client, string) {
	t.Helper()
	s := serve(t)
	token, err := os.ReadFile(filepath.Join(s.data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(s.url, strings.TrimSpace(string(token)))
	if _, err := c.AddAgent(context.Background(), "alice", nil); err != nil {
		t.Fatal(err)
	}
	return c, filepath.Join(s.data, "shards", "agent", "alice")
}

// commitAsPerson runs git commit -am in dir as a person, again while git
// refuses (memd holds a lock), three times at most; false when it made no
// commit.
func commitAsPerson(dir, msg string) bool {
	for range 3 {
		cmd := exec.Command("git", "-c", "user.name=pat", "-c", "user.email=pat@example.com", "-c", "gc.auto=0", "commit", "-qam", msg)
		cmd.Dir = dir
		if cmd.Run() == nil {
			return true
		}
	}
	return false
}

// appendByHand appends a line to a file, as a person's echo >> does.
func appendByHand(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintln(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// commitTheRest makes the person's last commit once memd is quiet, and
// checks it leaves git status clean.
func commitTheRest(t *testing.T, dir string) {
	t.Helper()
	for try := 0; try < 50 && strings.TrimSpace(git(t, dir, "status", "--porcelain")) != ""; try++ {
		commitAsPerson(dir, "hand, last")
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after the person's last commit:\n%s", st)
	}
}

// twoAgents runs two agents until deadline, each calling write with its
// number and its count of writes, at an agent's pace, until write returns
// false. It returns a function that waits for both to end.
func twoAgents(deadline time.Time, write func(w, i int) bool) (wait func()) {
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline) && write(w, i); i++ {
				time.Sleep(40 * time.Millisecond) // an agent's pace, not a synchronisation
			}
		})
	}
	return wg.Wait
}
