package gitstore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
)

var who = Signature{Name: "alice", Email: "alice@agents.memd"}

// aliceShard opens a store without fsync or repacks, closed after the
// test, and creates agent/alice in it.
func aliceShard(tb testing.TB) (*Store, *Shard) {
	tb.Helper()
	s, err := Open(tb.TempDir(), Options{NoSync: true, RepackAt: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	sh, err := s.CreateShard(memd.AgentShard("alice"))
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
