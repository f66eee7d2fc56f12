package gitstore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
)

var who = Signature{Name: "alice", Email: "alice@agents.memd"}

// aliceShard opens a store without fsync or repacks, closed after the
// test, and creates agent/alice in it.
func aliceShard(tb testing.TB) (*Store, *Shard) { return agentShard(tb, "alice") }

// agentShard is aliceShard for the agent named.
func agentShard(tb testing.TB, name string) (*Store, *Shard) {
	tb.Helper()
	return agentShardWith(tb, name, Options{NoSync: true, RepackAt: -1})
}

// agentShardWith is agentShard in a store opened with opts.
func agentShardWith(tb testing.TB, name string, opts Options) (*Store, *Shard) {
	tb.Helper()
	s, err := Open(tb.TempDir(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	sh, err := s.CreateShard(memd.AgentShard(name))
	if err != nil {
		tb.Fatal(err)
	}
	return s, sh
}

// The Diff the writer caches for each commit is the one git's trees give:
// random adds, forgets, rewrites and note edits, several writers at once so
// that they go out in groups.
func TestDiffCache_MatchesTheTrees(t *testing.T) {
	s, sh := aliceShard(t)
	var mu sync.Mutex
	var texts []string
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 60; i++ {
				var c Change
				mu.Lock()
				n := len(texts)
				mu.Unlock()
				switch op := rng.IntN(10); {
				case op < 5 || n == 0:
					text := fmt.Sprintf("Fact %d of writer %d", i, w)
					date := memd.DateOf(time.Date(2026, time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC))
					tier := []memd.Tier{memd.TierProfile, memd.TierLog, memd.TierNote, memd.TierEpisode}[rng.IntN(4)]
					c = Change{Author: who, Message: "remember: " + text, Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: date, Tier: tier}}}}
					mu.Lock()
					texts = append(texts, text)
					mu.Unlock()
				case op < 7:
					mu.Lock()
					text := texts[rng.IntN(n)]
					mu.Unlock()
					c = Change{Author: who, Message: "forget: " + text, Edits: []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: memd.FactID(text)}}}}
				case op < 9:
					mu.Lock()
					text := texts[rng.IntN(n)]
					mu.Unlock()
					c = Change{Author: who, Message: "edit: " + text, Edits: []Edit{{Op: ReplaceFact, Fact: memd.Fact{ID: memd.FactID(text)},
						With: memd.Fact{Text: text + " (edited)"}}}}
				default:
					line := fmt.Sprintf("line %d of writer %d\n", i, w)
					c = Change{Author: who, Message: "note-edit: plan", Note: &NoteChange{Path: "notes/plan.md",
						Update: func(cur []byte, _ bool) ([]byte, bool, error) { return append(slices.Clone(cur), line...), false, nil }}}
				}
				if _, err := sh.Apply(c); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	head, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	cached := 0
	err = sh.Walk(head, func(c Commit) error {
		got, ok := s.diffs.get(commitKey{sh.id, c.Hash})
		if !ok {
			return nil
		}
		cached++
		parentTree, err := sh.parentTree(c)
		if err != nil {
			return err
		}
		want, err := sh.diffTrees(parentTree, c.Tree)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("commit %s %q:\n cached %+v\n  trees %+v", short(c.Hash), c.Subject(), got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cached < 150 {
		t.Fatalf("only %d commits were cached", cached)
	}
	t.Logf("%d commits compared", cached)
}

// AddedFacts, read a file at a time from git's trees, names the facts each
// commit's Diff adds, no more and no fewer: adds, forgets, rewrites, and
// a fact moved to another tier's file (removed from one, added to another).
func TestAddedFacts_AreTheDiffsAdditions(t *testing.T) {
	s, sh := aliceShard(t)
	day := memd.DateOf(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	add := func(texts ...string) Change {
		c := Change{Author: who, Message: "import"}
		for _, text := range texts {
			c.Edits = append(c.Edits, Edit{Op: AddFact, Fact: memd.Fact{Text: text, Date: day, Tier: memd.TierLog}})
		}
		return c
	}
	var first []string
	for i := range 300 {
		first = append(first, fmt.Sprintf("Fact %d of the import", i))
	}
	changes := []Change{
		add(first...),
		add("Booked a flight to Lisbon", "Paid the hotel"),
		{Author: who, Message: "forget", Edits: []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: memd.FactID("Paid the hotel")}}}},
		{Author: who, Message: "edit", Edits: []Edit{{Op: ReplaceFact, Fact: memd.Fact{ID: memd.FactID("Fact 7 of the import")}, With: memd.Fact{Text: "Fact seven of the import"}}}},
	}
	for _, c := range changes {
		if _, err := sh.Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	// A person moves a fact to the profile: the same line in another file.
	logFile := filepath.Join(sh.Dir(), "log", "2026-11.md")
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	line := "- (2026-11-03) Booked a flight to Lisbon\n"
	if !strings.Contains(string(data), line) {
		t.Fatalf("the log holds no line %q:\n%s", line, data)
	}
	if err := os.WriteFile(logFile, []byte(strings.Replace(string(data), line, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sh.Dir(), "profile.md"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qm", "to the profile"}} {
		if out, err := exec.Command("git", append([]string{"-C", sh.Dir()}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	s.diffs = newDiffCache() // read from the trees, as for commits memd did not just make
	head, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	err = sh.Walk(head, func(c Commit) error {
		commits++
		d, err := sh.Diff(c)
		if err != nil {
			return err
		}
		var want, got []string
		for _, ch := range d.Facts {
			if ch.Op == "+" {
				want = append(want, ch.Fact.ID)
			}
		}
		if err := sh.AddedFacts(c, func(f memd.Fact) error { got = append(got, f.ID); return nil }); err != nil {
			return err
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) || len(want) == 0 && c.Subject() != "forget" {
			t.Errorf("commit %q: added %v, want %v", c.Subject(), got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if commits < len(changes)+1 {
		t.Fatalf("walked %d commits, want %d", commits, len(changes)+1)
	}
}

// A shard's fact lines are counted across its files, up to the number
// asked about.
func TestMoreFactLines(t *testing.T) {
	_, sh := aliceShard(t)
	day := memd.DateOf(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	var edits []Edit
	for i := range 7 {
		tier := memd.TierLog
		if i < 2 {
			tier = memd.TierProfile
		}
		edits = append(edits, Edit{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Fact %d", i), Date: day, Tier: tier}})
	}
	if _, err := sh.Apply(Change{Author: who, Message: "import", Edits: edits}); err != nil {
		t.Fatal(err)
	}
	head, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]bool{0: true, 6: true, 7: false, 100: false} {
		if more, err := sh.MoreFactLines(head, n); err != nil || more != want {
			t.Errorf("more than %d fact lines: %v, %v; want %v", n, more, err, want)
		}
	}
}
