package gitstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memd/memd"
)

// factPlaces answers as a map from each ID to the paths holding it would,
// through random adds, drops and sets of IDs held by one file, by several,
// and IDs that are not memd's 12 hex digits; also when now and then saved
// and read back, its IDs of one file each then in its sorted base.
func TestFactPlaces_AnswersAsAMapOfPaths(t *testing.T) {
	for _, saved := range []bool{false, true} {
		t.Run(fmt.Sprintf("read back from a save: %v", saved), func(t *testing.T) {
			answersAsAMapOfPaths(t, saved)
		})
	}
}

func answersAsAMapOfPaths(t *testing.T, saved bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []string{"0123456789ab", "000000000000", "ffffffffffff", "a1b2c3d4e5f6", "ABCDEF012345", "short", "0123456789abc", "0123456789ag", "00000000000a", "0000000000a0"}
	paths := []string{ProfileFile, "log/2026-10.md", "log/2026-11.md", "log/2026-11/03.md"}
	model := map[string][]string{}
	p := newFactPlaces()
	for step := 0; step < 5000; step++ {
		if saved && step%97 == 96 {
			st, err := decodePlaces(encodePlaces(&state{files: map[string]fileAt{}, where: p}))
			if err != nil {
				t.Fatal(err)
			}
			p = st.where
		}
		id, path := ids[rng.IntN(len(ids))], paths[rng.IntN(len(paths))]
		switch rng.IntN(3) {
		case 0:
			if !slices.Contains(model[id], path) {
				model[id] = append(model[id], path)
			}
			p.add(id, path)
		case 1:
			if i := slices.Index(model[id], path); i >= 0 {
				model[id] = slices.Delete(model[id], i, i+1)
			}
			if len(model[id]) == 0 {
				delete(model, id)
			}
			p.drop(id, path)
		case 2:
			var to []string
			for _, q := range paths {
				if rng.IntN(3) == 0 {
					to = append(to, q)
				}
			}
			if len(to) == 0 {
				delete(model, id)
			} else {
				model[id] = to
			}
			p.set(id, to)
		}
		if p.len() != len(model) {
			t.Fatalf("step %d: %d IDs held, want %d", step, p.len(), len(model))
		}
		for _, id := range ids {
			got, want := slices.Sorted(slices.Values(p.get(id))), slices.Sorted(slices.Values(model[id]))
			if !slices.Equal(got, want) || p.has(id) != (len(want) > 0) {
				t.Fatalf("step %d: %s is in %v (has %v), want %v", step, id, got, p.has(id), want)
			}
		}
	}
}

// A write into a shard of many files reads the file it changes, and holds
// only the files it changed parsed, until the next write: the other files'
// facts are known by ID and place. A fact found in another file, for a
// dedup or a lookup, is read and let go.
func TestShard_AWriteHoldsOnlyTheFilesItChanges(t *testing.T) {
	sh := anaShard(t)
	add := func(date, text string) Result {
		t.Helper()
		d, err := memd.ParseDate(date)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sh.Apply(Change{Author: Committer(), Message: "remember\n", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: memd.TierLog}}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var first []memd.Fact
	for m := 1; m <= 12; m++ {
		first = append(first, add(fmt.Sprintf("2026-%02d-01", m), fmt.Sprintf("the first fact of month %d", m)).Facts[0])
		add(fmt.Sprintf("2026-%02d-02", m), fmt.Sprintf("the second fact of month %d", m))
	}
	// Given up as an idle shard's is (Release would leave it to a
	// background sync of the working tree holding the lock).
	sh.mu.Lock()
	sh.cur.Store(nil)
	sh.mu.Unlock()
	held := func(facts int) []string {
		t.Helper()
		st := sh.cur.Load()
		if st == nil {
			t.Fatal("the shard holds no state after a write")
		}
		if len(st.files) != 12 || st.facts() != facts {
			t.Fatalf("the state knows %d files and %d facts, want 12 and %d", len(st.files), st.facts(), facts)
		}
		return slices.Sorted(func(yield func(string) bool) {
			for p := range st.parsed {
				if !yield(p) {
					return
				}
			}
		})
	}

	// The same text again is found in March's file and not written twice.
	if res := add("2026-12-24", "the first fact of month 3"); res.Facts[0].File != "log/2026-03.md" || res.Commit != (Hash{}) {
		t.Fatalf("a known fact was written again: %+v", res)
	}
	if got := held(24); len(got) != 0 {
		t.Fatalf("a dedup left %v parsed", got)
	}
	// One change: June's first fact again, found there, and a new fact.
	nov, _ := memd.ParseDate("2026-11-20")
	res, err := sh.Apply(Change{Author: Committer(), Message: "remember\n", Edits: []Edit{
		{Op: AddFact, Fact: memd.Fact{Text: first[5].Text, Date: nov, Tier: memd.TierLog}},
		{Op: AddFact, Fact: memd.Fact{Text: "a new fact of November", Date: nov, Tier: memd.TierLog}},
	}})
	if err != nil || res.Facts[0].File != "log/2026-06.md" || res.Facts[1].File != "log/2026-11.md" {
		t.Fatalf("remember: %+v, %v", res, err)
	}
	if got := held(25); !slices.Equal(got, []string{"log/2026-11.md"}) {
		t.Fatalf("after a write into November, held parsed: %v", got)
	}
	if _, err := sh.Apply(Change{Author: Committer(), Message: "forget\n", Edits: []Edit{{Op: RemoveFact, Fact: first[4]}}}); err != nil {
		t.Fatal(err)
	}
	if got := held(24); !slices.Equal(got, []string{"log/2026-05.md"}) {
		t.Fatalf("after forgetting a fact of May, held parsed: %v", got)
	}
	if f, err := sh.Fact(first[7].ID); err != nil || f.Text != first[7].Text {
		t.Fatalf("August's first fact: %+v, %v", f, err)
	}
	if _, err := sh.Fact(first[4].ID); memd.ErrorCode(err) != memd.ENOTFOUND {
		t.Fatalf("the forgotten fact is still found: %v", err)
	}
	if got := held(24); len(got) != 1 {
		t.Fatalf("a lookup left more files parsed: %v", got)
	}
}

// The IDs a state records where facts are equal those of the facts a file
// parses into, line for line, whatever the file holds.
func FuzzFactLineKeys(f *testing.F) {
	f.Add([]byte("# Log 2026-11\n\n- (2026-11-03) Lives in Lisbon\n- (2026-11-03) [note] x\r\nprose\n-\n- (2026-11-04)  \n- (2024-02-29) [episode] y"))
	f.Add([]byte("- (2026-11-03) a\n\n- (2026-11-03) A\n- (2026-13-03) b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var want []uint64
		for _, lf := range parseFactFile("log/2026-11.md", data) {
			k, ok := idKey(lf.ID)
			if !ok {
				t.Fatalf("a parsed fact's ID %q is not 12 hex digits", lf.ID)
			}
			want = append(want, k)
		}
		if got := factLineKeys(data); !slices.Equal(got, want) {
			t.Fatalf("factLineKeys = %x, the parsed facts' IDs %x", got, want)
		}
	})
}

// A fact's text replaced by one another file holds leaves the fact in
// both files, and a forget then takes it from both.
func TestShard_AReplaceOntoAHeldTextIsForgottenEverywhere(t *testing.T) {
	sh := anaShard(t)
	apply := func(e Edit) {
		t.Helper()
		if _, err := sh.Apply(Change{Author: Committer(), Message: "change\n", Edits: []Edit{e}}); err != nil {
			t.Fatal(err)
		}
	}
	oct, _ := memd.ParseDate("2026-10-05")
	nov, _ := memd.ParseDate("2026-11-03")
	apply(Edit{Op: AddFact, Fact: memd.Fact{Text: "Lives in Porto", Date: oct, Tier: memd.TierLog}})
	apply(Edit{Op: AddFact, Fact: memd.Fact{Text: "Lives in Lisbon", Date: nov, Tier: memd.TierLog}})
	apply(Edit{Op: ReplaceFact, Fact: memd.Fact{ID: memd.FactID("Lives in Lisbon")}, With: memd.Fact{ID: memd.FactID("Lives in Porto"), Text: "Lives in Porto"}})
	apply(Edit{Op: RemoveFact, Fact: memd.Fact{ID: memd.FactID("Lives in Porto")}})
	facts, _, err := sh.Facts()
	if err != nil || len(facts) != 0 {
		t.Fatalf("after the forget the shard holds %+v, %v", facts, err)
	}
}

// A lookup of many facts in a shard whose state it builds keeps, of the
// files it reads, those holding a fact it wants, and finds each such fact.
func TestShard_ALargeLookupKeepsTheFilesItWants(t *testing.T) {
	seen := seenFiles{want: map[string]bool{memd.FactID("b"): true}}
	for _, f := range []struct{ path, data string }{{"log/2026-01.md", "- (2026-01-02) a\n"}, {"log/2026-02.md", "- (2026-02-02) b\n"}} {
		seen.see(Hash{1}, &factFile{path: f.path, facts: parseFactFile(f.path, []byte(f.data))})
	}
	if len(seen.files) != 1 || seen.files["log/2026-02.md"] == nil {
		t.Fatalf("kept %v", seen.files)
	}

	sh := anaShard(t)
	var march []string
	for m := 1; m <= 4; m++ {
		d, _ := memd.ParseDate(fmt.Sprintf("2026-%02d-01", m))
		var edits []Edit
		for i := range 50 {
			edits = append(edits, Edit{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("fact %d of month %d", i, m), Date: d, Tier: memd.TierLog}})
		}
		res, err := sh.Apply(Change{Author: Committer(), Message: "import\n", Edits: edits})
		if err != nil {
			t.Fatal(err)
		}
		if m == 3 {
			for _, f := range res.Facts {
				march = append(march, f.ID)
			}
		}
	}
	sh.Release()
	ids := slices.Clone(march)
	for i := len(ids); i < lookupMany; i++ {
		ids = append(ids, fmt.Sprintf("%012x", i)) // held by no file
	}
	found, _, err := sh.Lookup(ids)
	if err != nil || len(found) != len(march) {
		t.Fatalf("found %d of March's %d facts: %v", len(found), len(march), err)
	}
	for _, id := range march {
		if found[id].File != "log/2026-03.md" {
			t.Fatalf("%s found as %+v", id, found[id])
		}
	}
}

// anaShard is a new shard in a store of its own, closed after the test.
func anaShard(t *testing.T) *Shard {
	t.Helper()
	_, sh := agentShard(t, "ana")
	return sh
}
