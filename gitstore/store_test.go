package gitstore_test

import (
	"errors"
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
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
	"github.com/memd/memd/provenance"
)

var alice = gitstore.Signature{Name: "alice", Email: "alice@agents.memd"}

func openStore(t *testing.T) *gitstore.Store {
	t.Helper()
	s, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage, Merge: provenance.MergeMessage})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func createShard(t *testing.T, s *gitstore.Store, id string) *gitstore.Shard {
	t.Helper()
	sid, err := memd.ParseShardID(id)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := s.CreateShard(sid)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return memdtest.Git(t, dir, args...)
}

func remember(t *testing.T, sh *gitstore.Shard, text string, tier memd.Tier, msg string) gitstore.Result {
	t.Helper()
	d, _ := memd.ParseDate("2026-11-03")
	res, err := sh.Apply(gitstore.Change{
		Author:  alice,
		Message: "remember: " + text + "\n\nSource-Message: " + msg,
		Edits:   []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: tier}}},
	})
	if err != nil {
		t.Fatalf("remember %q: %v", text, err)
	}
	return res
}

func texts(t *testing.T, sh *gitstore.Shard) []string {
	t.Helper()
	facts, _, err := sh.Facts()
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(slices.Values(memdtest.Texts(facts)))
}

func TestShard_RememberIsACommitGitReads(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	r1 := remember(t, sh, "Lives in Lisbon", memd.TierProfile, "msg_1")
	remember(t, sh, "Booked a flight to Lisbon", memd.TierLog, "msg_2")
	remember(t, sh, "Likes rooftop venues", memd.TierNote, "msg_3")

	dir := sh.Dir()
	if got := git(t, dir, "log", "--format=%(trailers:key=Source-Message,valueonly)%x00"); strings.Join(strings.Fields(strings.ReplaceAll(got, "\x00", " ")), " ") != "msg_3 msg_2 msg_1" {
		t.Errorf("trailers in git log: got %q", got)
	}
	blame := git(t, dir, "blame", "--porcelain", "profile.md")
	if !strings.Contains(blame, r1.Commit.String()) {
		t.Errorf("git blame profile.md does not name the commit %s:\n%s", r1.Commit, blame)
	}
	git(t, dir, "fsck", "--strict")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status not clean after memd writes:\n%s", st)
	}
	log := git(t, dir, "show", "HEAD:log/2026-11.md")
	if !strings.Contains(log, "- (2026-11-03) Booked a flight to Lisbon\n") || !strings.Contains(log, "- (2026-11-03) [note] Likes rooftop venues\n") {
		t.Errorf("log file content:\n%s", log)
	}
	if !strings.HasPrefix(log, "# Log 2026-11\n") {
		t.Errorf("a new log file starts with a header that says its format; got:\n%s", log)
	}
	if author := git(t, dir, "log", "-1", "--format=%an <%ae> / %cn"); strings.TrimSpace(author) != "alice <alice@agents.memd> / memd" {
		t.Errorf("author/committer: %q", author)
	}
}

func TestShard_DuplicateTextIsOneFact(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	first := remember(t, sh, "Prefers aisle seats", memd.TierProfile, "m1")
	again := remember(t, sh, "  prefers   AISLE seats ", memd.TierLog, "m2")
	if !again.Commit.IsZero() {
		t.Errorf("the same text again made commit %s", again.Commit)
	}
	if again.Facts[0].ID != first.Facts[0].ID || again.Facts[0].Text != "Prefers aisle seats" {
		t.Errorf("existing fact: got %+v", again.Facts[0])
	}
	if n := strings.Count(git(t, sh.Dir(), "log", "--oneline"), "\n"); n != 1 {
		t.Errorf("commits: got %d, want 1", n)
	}
}

func TestShard_RefusesBadFacts(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "A first fact", memd.TierProfile, "m0")
	d, _ := memd.ParseDate("2026-11-03")
	cases := map[string]memd.Fact{
		"501 characters": {Text: strings.Repeat("x", 501), Date: d},
		"a newline":      {Text: "two\nlines", Date: d},
		"no date":        {Text: "undated"},
		"tag as text":    {Text: "[note] sneaky", Date: d},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := sh.Apply(gitstore.Change{Author: alice, Message: "remember: x", Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: f}}})
			if memd.ErrorCode(err) != memd.EINVALID {
				t.Fatalf("got %v, want an invalid error", err)
			}
		})
	}
	if n := strings.Count(git(t, sh.Dir(), "log", "--oneline"), "\n"); n != 1 {
		t.Errorf("refused facts made commits: %d commits", n)
	}
	if _, err := memd.ParseDate("2026-02-30"); memd.ErrorCode(err) != memd.EINVALID {
		t.Errorf("2026-02-30 parsed: %v", err)
	}
}

func TestShard_ForgetRemovesEveryLine(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	r := remember(t, sh, "Lives in Austin", memd.TierProfile, "m1")
	remember(t, sh, "Works at Acme", memd.TierProfile, "m1")
	id := r.Facts[0].ID
	res, err := sh.Apply(gitstore.Change{Author: alice, Message: "forget: Lives in Austin", Edits: []gitstore.Edit{{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: id}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Op != "-" || res.Changes[0].Fact.Text != "Lives in Austin" {
		t.Errorf("changes: %+v", res.Changes)
	}
	if got := texts(t, sh); !slices.Equal(got, []string{"Works at Acme"}) {
		t.Errorf("facts after forget: %v", got)
	}
	if _, err := sh.Fact(id); memd.ErrorCode(err) != memd.ENOTFOUND {
		t.Errorf("forgotten fact: %v", err)
	}
	// Forgetting again changes nothing.
	res, err = sh.Apply(gitstore.Change{Author: alice, Message: "forget: again", Edits: []gitstore.Edit{{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: id}}}})
	if err != nil || !res.Commit.IsZero() {
		t.Errorf("second forget: commit %s, err %v", res.Commit, err)
	}
	git(t, sh.Dir(), "fsck", "--strict")
}

// A person's hand edit, committed with git, is what memd reads next.
func TestShard_PicksUpGitCommits(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Lives in Austin", memd.TierProfile, "m1")
	remember(t, sh, "Works at Acme", memd.TierProfile, "m2")
	dir := sh.Dir()
	profile := filepath.Join(dir, "profile.md")
	b, _ := os.ReadFile(profile)
	edited := strings.Replace(string(b), "- (2026-11-03) Lives in Austin\n", "- (2026-11-03) Lives in Porto\n", 1)
	edited = strings.Replace(edited, "- (2026-11-03) Works at Acme\n", "", 1)
	os.WriteFile(profile, []byte(edited), 0o644)
	git(t, dir, "commit", "-q", "-am", "fix where I live")

	if got := texts(t, sh); !slices.Equal(got, []string{"Lives in Porto"}) {
		t.Errorf("facts after a person's commit: %v", got)
	}
	// And memd's next write builds on the person's commit.
	remember(t, sh, "Has a cat", memd.TierProfile, "m3")
	if got := texts(t, sh); !slices.Equal(got, []string{"Has a cat", "Lives in Porto"}) {
		t.Errorf("facts: %v", got)
	}
	if log := git(t, dir, "log", "--format=%s"); !strings.Contains(log, "fix where I live") {
		t.Errorf("the person's commit is gone:\n%s", log)
	}
}

// A person committing in a loop while memd writes: every commit from both
// sides stays reachable, and the person's commit -a keeps memd's facts.
func TestShard_ConcurrentGitCLICommits(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "seed fact", memd.TierProfile, "m0")
	dir := sh.Dir()

	var wg sync.WaitGroup
	var personCommits []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 15; i++ {
			path := filepath.Join(dir, "notes", fmt.Sprintf("n%d.md", i))
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(fmt.Sprintf("note %d\n", i)), 0o644)
			cmd := exec.Command("git", "add", "-A")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				if strings.Contains(string(out), "index.lock") {
					i-- // memd held the index; git asks to retry
					continue
				}
				t.Errorf("git add: %v %s", err, out)
				return
			}
			cmd = exec.Command("git", "-c", "user.name=pat", "-c", "user.email=pat@x", "commit", "-q", "-m", fmt.Sprintf("person %d", i))
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				// git refuses when memd moved HEAD or holds the index; the
				// person retries, as people do.
				if strings.Contains(string(out), "lock") || strings.Contains(string(out), "cannot lock ref") {
					i--
					continue
				}
				t.Errorf("git commit: %v %s", err, out)
				return
			}
			personCommits = append(personCommits, fmt.Sprintf("person %d", i))
		}
	}()
	var memdFacts []string
	var mu sync.Mutex
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				text := fmt.Sprintf("fact %d from writer %d", i, w)
				remember(t, sh, text, memd.TierLog, "m")
				mu.Lock()
				memdFacts = append(memdFacts, text)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()

	subjects := git(t, dir, "log", "--format=%s", "main")
	for _, p := range personCommits {
		if !strings.Contains(subjects, p+"\n") {
			t.Errorf("person's commit %q is not reachable from main", p)
		}
	}
	got := texts(t, sh)
	for _, f := range memdFacts {
		if !slices.Contains(got, f) {
			t.Errorf("memd's fact %q is missing at HEAD", f)
		}
	}
	git(t, dir, "fsck", "--strict")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status not clean:\n%s", st)
	}
	// A person's commit -a now keeps everything memd wrote.
	os.WriteFile(filepath.Join(dir, "notes", "extra.md"), []byte("x\n"), 0o644)
	git(t, dir, "add", "notes/extra.md")
	git(t, dir, "commit", "-q", "-am", "person edits")
	if after := texts(t, sh); !slices.Equal(after, got) {
		t.Errorf("a person's commit -a changed the facts: %d before, %d after", len(got), len(after))
	}
}

// Uncommitted edits a person is making to a fact file survive memd's write.
func TestShard_KeepsUncommittedEdits(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Lives in Austin", memd.TierProfile, "m1")
	profile := filepath.Join(sh.Dir(), "profile.md")
	b, _ := os.ReadFile(profile)
	os.WriteFile(profile, append(b, "A line the person is still writing\n"...), 0o644)
	remember(t, sh, "Has a cat", memd.TierProfile, "m2")
	now, _ := os.ReadFile(profile)
	if !strings.Contains(string(now), "A line the person is still writing") || !strings.Contains(string(now), "Has a cat") {
		t.Errorf("working file lost an edit:\n%s", now)
	}
	git(t, sh.Dir(), "commit", "-q", "-am", "person")
	if got := texts(t, sh); !slices.Equal(got, []string{"Has a cat", "Lives in Austin"}) {
		t.Errorf("facts: %v", got)
	}
}

func TestStore_OneProcessAtATime(t *testing.T) {
	dir := t.TempDir()
	s, err := gitstore.Open(dir, gitstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitstore.Open(dir, gitstore.Options{}); !errors.Is(err, gitstore.ErrLocked) {
		t.Errorf("second open: got %v, want ErrLocked", err)
	}
	s.Close()
	s2, err := gitstore.Open(dir, gitstore.Options{})
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	s2.Close()
}

// A write that reaches a shard once its store has closed is refused: the
// store let go of the data directory, which another process may hold now.
func TestStore_NoWriteAfterClose(t *testing.T) {
	d, _ := memd.ParseDate("2026-11-03")
	change := gitstore.Change{Author: alice, Message: "remember: after close\n",
		Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Written after close", Date: d, Tier: memd.TierLog}}}}
	writes := []struct {
		name  string
		write func(sh *gitstore.Shard, head gitstore.Hash) error
	}{
		{"a change", func(sh *gitstore.Shard, _ gitstore.Hash) error { _, err := sh.Apply(change); return err }},
		{"a proposal", func(sh *gitstore.Shard, _ gitstore.Hash) error { _, err := sh.Propose(change); return err }},
		{"a rejection recorded", func(sh *gitstore.Shard, head gitstore.Hash) error {
			_, err := sh.RecordRejected(gitstore.Commit{Hash: head}, alice, "reject\n")
			return err
		}},
		{"an integration", func(sh *gitstore.Shard, head gitstore.Hash) error {
			_, err := sh.Integrate(head, gitstore.IntegrateOptions{From: "peer"})
			return err
		}},
		{"a push received", func(sh *gitstore.Shard, _ gitstore.Hash) error {
			_, err := sh.Receive(strings.NewReader(""))
			return err
		}},
		{"a fetch", func(sh *gitstore.Shard, _ gitstore.Hash) error {
			_, err := sh.Fetch(t.Context(), filepath.Join(t.TempDir(), "peer.git"), "refs/remotes/peer/main")
			return err
		}},
		{"the feed's heads", func(sh *gitstore.Shard, head gitstore.Hash) error { return sh.SetFeedHeads([]gitstore.Hash{head}) }},
		{"a feed head", func(sh *gitstore.Shard, head gitstore.Hash) error { return sh.AddFeedHead(head) }},
		{"a repack", func(sh *gitstore.Shard, _ gitstore.Hash) error { return sh.Repack() }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			s, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, RepackAt: -1})
			if err != nil {
				t.Fatal(err)
			}
			sh := createShard(t, s, "agent/alice")
			head := remember(t, sh, "Lives in Lisbon", memd.TierProfile, "msg_1").Commit
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			before := gitDirState(t, sh.Dir())
			if err := w.write(sh, head); memd.ErrorCode(err) != memd.EUNAVAILABLE {
				t.Errorf("after close: got %v, want unavailable", err)
			}
			if after := gitDirState(t, sh.Dir()); after != before {
				t.Errorf(".git changed after the store closed:\n%s\nthen:\n%s", before, after)
			}
		})
	}
}

// gitDirState describes a shard's refs and every file under its .git, with
// its size and time: what a write after close would change.
func gitDirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(git(t, dir, "for-each-ref"))
	err := filepath.WalkDir(filepath.Join(dir, ".git"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", path, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A read after the store closed does not catch up with a commit made
// since: catching up may commit (a restore of facts a stale index
// dropped), and the store has let go of the data directory.
func TestStore_NoCatchUpAfterClose(t *testing.T) {
	s, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage})
	if err != nil {
		t.Fatal(err)
	}
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Lives in Lisbon", memd.TierProfile, "msg_1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	dir := sh.Dir()
	os.WriteFile(filepath.Join(dir, "profile.md"), []byte("# Profile\n\n- (2026-11-03) Lives in Porto\n"), 0o644)
	git(t, dir, "commit", "-qam", "by hand")
	before := git(t, dir, "for-each-ref")
	if _, _, err := sh.Facts(); memd.ErrorCode(err) != memd.EUNAVAILABLE {
		t.Errorf("a read after close: got %v, want unavailable", err)
	}
	if after := git(t, dir, "for-each-ref"); after != before {
		t.Errorf("refs moved after the store closed:\n%s\nthen:\n%s", before, after)
	}
}

func TestShard_HistoryAndTimeTravel(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	s, err := gitstore.Open(t.TempDir(), gitstore.Options{NoSync: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := createShard(t, s, "agent/alice")
	r1 := remember(t, sh, "Lives in Austin", memd.TierProfile, "m1")
	now = now.AddDate(0, 0, 2)
	remember(t, sh, "Lives in Lisbon", memd.TierProfile, "m2")

	at, err := sh.Resolve("2026-11-02")
	if err != nil || at != r1.Commit {
		t.Fatalf("Resolve(date): %s, %v; want %s", at, err, r1.Commit)
	}
	facts, err := sh.FactsAt(at)
	if err != nil || len(facts) != 1 || facts[0].Text != "Lives in Austin" {
		t.Errorf("FactsAt: %+v %v", facts, err)
	}
	if h, err := sh.Resolve(r1.Commit.String()[:7]); err != nil || h != r1.Commit {
		t.Errorf("Resolve(prefix): %s %v", h, err)
	}
	head, _ := sh.Head()
	var subjects []string
	sh.Walk(head, func(c gitstore.Commit) error {
		d, err := sh.Diff(c)
		if err != nil {
			return err
		}
		subjects = append(subjects, fmt.Sprintf("%s %s%s", c.Subject(), d.Facts[0].Op, d.Facts[0].Fact.Text))
		return nil
	})
	want := []string{"remember: Lives in Lisbon +Lives in Lisbon", "remember: Lives in Austin +Lives in Austin"}
	if !slices.Equal(subjects, want) {
		t.Errorf("walk: %q", subjects)
	}
}

// A reader that read main just before a writer moved it must not take the
// shard's state back to the older commit: every later read, and the
// index's lookup of what a commit changed, must see the write.
func TestShard_ReadsNeverGoBackInTime(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := 0; r < 4; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := sh.Facts(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var writers sync.WaitGroup
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			d, _ := memd.ParseDate("2026-11-03")
			for i := 0; i < 100; i++ {
				text := fmt.Sprintf("Writer %d wrote fact %d", w, i)
				res, err := sh.Apply(gitstore.Change{Author: alice, Message: "remember: " + text,
					Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: memd.TierLog}}}})
				if err != nil {
					t.Error(err)
					return
				}
				id := res.Facts[0].ID
				if _, err := sh.Fact(id); err != nil {
					t.Errorf("right after its commit: %v", err)
				}
				if found, _, err := sh.Lookup([]string{id}); err != nil || found[id].ID != id {
					t.Errorf("lookup right after its commit found %v (%v)", found, err)
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	readers.Wait()
}

// memd killed while it held .git/index.lock leaves the lock with its
// marker (and maybe the index it was writing); the next open removes both
// and keeps the index in step. A lock git holds is left alone.
func TestStore_ClearsTheIndexLockACrashLeft(t *testing.T) {
	dir := t.TempDir()
	open := func() *gitstore.Store {
		s, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Likes green tea", memd.TierLog, "m1")
	gitDir := filepath.Join(sh.Dir(), ".git")
	s.Close()

	os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("memd\n"), 0o644)
	os.WriteFile(filepath.Join(gitDir, "index.memd-new"), []byte("DIRC half"), 0o644)
	s = open()
	sh, err := s.Shard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.lock", "index.memd-new"} {
		if _, err := os.Stat(filepath.Join(gitDir, name)); err == nil {
			t.Errorf("%s is still there after the restart", name)
		}
	}
	remember(t, sh, "Moved to Lisbon", memd.TierLog, "m2")
	if out := git(t, sh.Dir(), "status", "--porcelain"); out != "" {
		t.Errorf("git status after the restart and a write:\n%s", out)
	}
	s.Close()

	// A lock git holds (it starts like an index) stays.
	os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("DIRC\x00\x00\x00\x02"), 0o644)
	s = open()
	defer s.Close()
	if _, err := os.Stat(filepath.Join(gitDir, "index.lock")); err != nil {
		t.Errorf("memd removed a lock git held: %v", err)
	}
	os.Remove(filepath.Join(gitDir, "index.lock"))
}

// A fact a person wrote twice into one file is still found, and forgotten,
// once they delete one of its two lines.
func TestShard_AFactWrittenTwiceKeepsItsPlaceWhenOneLineGoes(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	r := remember(t, sh, "Has a cat", memd.TierProfile, "m1")
	remember(t, sh, "Works at Acme", memd.TierProfile, "m2")
	profile := filepath.Join(sh.Dir(), "profile.md")
	b, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(profile, append(b, "- (2026-11-04) Has a cat\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-qam", "again")
	if _, err := sh.Fact(r.Facts[0].ID); err != nil {
		t.Fatal(err)
	}
	once := strings.Replace(string(append(b, "- (2026-11-04) Has a cat\n"...)), "- (2026-11-03) Has a cat\n", "", 1)
	if err := os.WriteFile(profile, []byte(once), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-qam", "once")
	if f, err := sh.Fact(r.Facts[0].ID); err != nil || f.Date.String() != "2026-11-04" {
		t.Fatalf("the fact after one of its two lines went: %+v, %v", f, err)
	}
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "forget\n", Edits: []gitstore.Edit{{Op: gitstore.RemoveFact, Fact: r.Facts[0]}}}); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, sh); slices.Contains(got, "Has a cat") {
		t.Fatalf("forgotten, the fact is still held: %v", got)
	}
}

// The folders git merge-file is given its versions in are left behind by
// a memd killed in the middle of a merge; a start removes those an hour
// old, and leaves a merge under way and anything not memd's alone.
func TestStore_StartRemovesMergeFoldersAKillLeft(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old, fresh, other := filepath.Join(tmp, "memd-merge-1"), filepath.Join(tmp, "memd-merge-2"), filepath.Join(tmp, "someone-else")
	for _, dir := range []string{old, fresh, other} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "ours"), []byte("x\n"), 0o600)
	}
	hoursAgo := time.Now().Add(-2 * time.Hour)
	for _, dir := range []string{old, other} {
		os.Chtimes(dir, hoursAgo, hoursAgo)
	}
	s := openStore(t)
	defer s.Close()
	for dir, want := range map[string]bool{old: false, fresh: true, other: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s there after a start: %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}

// One change that puts a line of a fact back and takes away its other
// line in the same file leaves the fact held, by the line put back, as
// the file has it.
func TestShard_ALinePutBackAndAnotherTakenInOneChange(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	r := remember(t, sh, "Has a cat", memd.TierProfile, "m1")
	back := r.Facts[0]
	back.Date, _ = memd.ParseDate("2026-10-01")
	back.File = "profile.md"
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "put back one, take the other\n", Edits: []gitstore.Edit{
		{Op: gitstore.RestoreLine, Fact: back},
		{Op: gitstore.RemoveLine, Fact: memd.Fact{ID: back.ID, File: "profile.md", Date: r.Facts[0].Date}},
	}}); err != nil {
		t.Fatal(err)
	}
	lines, err := sh.FactLines(back.ID)
	if err != nil || len(lines) != 1 || lines[0].Date != back.Date {
		t.Errorf("the fact's lines: %+v, %v; want the line put back alone", lines, err)
	}
	if got := texts(t, sh); !slices.Contains(got, "Has a cat") {
		t.Errorf("facts: %v, want the fact still held", got)
	}
}

// One change that puts back two lines of a fact and then forgets it
// leaves none of them in the file.
func TestShard_LinesPutBackThenForgottenInOneChange(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	remember(t, sh, "Works at Acme", memd.TierProfile, "m0")
	var edits []gitstore.Edit
	for _, day := range []string{"2026-10-01", "2026-10-02"} {
		d, _ := memd.ParseDate(day)
		edits = append(edits, gitstore.Edit{Op: gitstore.RestoreLine, Fact: memd.Fact{ID: memd.FactID("Has a cat"), Text: "Has a cat", File: "profile.md", Date: d, Tier: memd.TierProfile}})
	}
	edits = append(edits, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: memd.FactID("Has a cat")}})
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "back and gone\n", Edits: edits}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, sh.Dir(), "show", "HEAD:profile.md"); strings.Contains(got, "Has a cat") {
		t.Errorf("the file still holds the fact:\n%s", got)
	}
	if got := texts(t, sh); !slices.Equal(got, []string{"Works at Acme"}) {
		t.Errorf("facts: %v", got)
	}
}
