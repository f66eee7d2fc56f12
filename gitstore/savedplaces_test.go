package gitstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memd/memd"
)

// placesShard returns a shard holding facts in two months' logs, whose
// places are saved however few, and counts how often a state is built by
// reading every file.
func placesShard(t *testing.T) (*Shard, *int) {
	t.Helper()
	was, wasPlacing := savePlacesAt, placingAll
	t.Cleanup(func() { savePlacesAt, placingAll = was, wasPlacing })
	savePlacesAt = 1
	all := 0
	placingAll = func() { all++ }
	_, sh := aliceShard(t)
	for _, day := range []string{"2026-10-03", "2026-11-03"} {
		d, _ := memd.ParseDate(day)
		var edits []Edit
		for i := range 5 {
			edits = append(edits, Edit{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("fact %d of %s", i, day), Date: d, Tier: memd.TierLog}})
		}
		if _, err := sh.Apply(Change{Author: Committer(), Message: "import\n", Edits: edits}); err != nil {
			t.Fatal(err)
		}
	}
	return sh, &all
}

// giveUp drops the shard's state as an idle minute would, and waits for
// its places to be saved. A background catch-up of the working tree may hold the
// shard's lock a moment: it tries until that ends.
func giveUp(t *testing.T, sh *Shard) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); sh.cur.Load() != nil; {
		if sh.dropIfIdle(time.Now().Add(idleAfter)) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the state was never given up")
			}
			time.Sleep(time.Millisecond)
		}
	}
	sh.mu.Lock()
	saving := sh.saving
	sh.mu.Unlock()
	if saving != nil {
		<-saving
	}
}

func rememberOn(t *testing.T, sh *Shard, text, day string) Result {
	t.Helper()
	d, _ := memd.ParseDate(day)
	res, err := sh.Apply(Change{Author: Committer(), Message: "remember\n", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: memd.TierLog}}}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantPlaces checks where the shard finds each fact: at file, or nowhere
// for "".
func wantPlaces(t *testing.T, sh *Shard, want map[string]string) {
	t.Helper()
	var ids []string
	for text := range want {
		ids = append(ids, memd.FactID(text))
	}
	found, _, err := sh.Lookup(ids)
	if err != nil {
		t.Fatal(err)
	}
	for text, file := range want {
		if got := found[memd.FactID(text)].File; got != file {
			t.Errorf("%q found in %q, want %q", text, got, file)
		}
	}
}

// personAppends appends a line to a working file of the shard, as a
// person editing it would.
func personAppends(t *testing.T, sh *Shard, path, line string) {
	t.Helper()
	full := filepath.Join(sh.Dir(), path)
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, append(b, line...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// personCommits commits the shard's working tree with the git CLI, as a
// person would: every file, new ones too.
func personCommits(t *testing.T, sh *Shard) {
	t.Helper()
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "by hand", "--allow-empty"}} {
		cmd := exec.Command("git", append([]string{"-C", sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
}

// A shard whose state was given up reads back where its facts were, not
// every file, and loses nothing: a fact written again is still one, and
// each is found where it is.
func TestSavedPlaces_ReadBackInsteadOfEveryFile(t *testing.T) {
	sh, all := placesShard(t)
	giveUp(t, sh)
	if _, err := os.Stat(filepath.Join(sh.gitDir, placesFile)); err != nil {
		t.Fatalf("no places saved: %v", err)
	}
	before := *all
	if again := rememberOn(t, sh, "fact 2 of 2026-10-03", "2026-11-04"); !again.Commit.IsZero() {
		t.Errorf("a fact held in October was written again in %s", again.Commit)
	}
	rememberOn(t, sh, "a new fact", "2026-11-04")
	wantPlaces(t, sh, map[string]string{"fact 0 of 2026-10-03": "log/2026-10.md", "fact 4 of 2026-11-03": "log/2026-11.md", "a new fact": "log/2026-11.md"})
	if *all != before {
		t.Errorf("every file was read %d times after the state was given up", *all-before)
	}
	// Saved again at the newer commit, and read back again.
	giveUp(t, sh)
	wantPlaces(t, sh, map[string]string{"a new fact": "log/2026-11.md"})
	if *all != before {
		t.Errorf("every file was read %d times after the second give-up", *all-before)
	}
}

// What a person commits while the state is given up is read from the
// commits since the save: a fact they added is found, one they removed is
// not, and writing that one again writes it.
func TestSavedPlaces_FollowAPersonsCommits(t *testing.T) {
	sh, all := placesShard(t)
	giveUp(t, sh)
	before := *all
	path := filepath.Join(sh.Dir(), "log", "2026-10.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for line := range strings.Lines(string(b)) {
		if !strings.Contains(line, "fact 1 of 2026-10-03") {
			kept = append(kept, line)
		}
	}
	kept = append(kept, "- (2026-10-05) written by hand\n")
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	personCommits(t, sh)

	wantPlaces(t, sh, map[string]string{"written by hand": "log/2026-10.md", "fact 1 of 2026-10-03": "", "fact 2 of 2026-10-03": "log/2026-10.md"})
	if again := rememberOn(t, sh, "fact 1 of 2026-10-03", "2026-11-04"); again.Commit.IsZero() {
		t.Error("a fact the person removed was not written again")
	}
	if *all != before {
		t.Errorf("every file was read %d times after the person's commit", *all-before)
	}
}

// A fact in two files is read back in them in the tree's order, as
// reading every file finds it, not in the order they came: the first is
// the copy a lookup gives and an edit rewrites.
func TestSavedPlaces_AFactInSeveralFilesKeepsTheTreesOrder(t *testing.T) {
	sh, _ := placesShard(t)
	d, _ := memd.ParseDate("2026-10-04")
	text := "a lasting fact"
	if _, err := sh.Apply(Change{Author: Committer(), Message: "remember\n", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: memd.TierProfile}}}}); err != nil {
		t.Fatal(err)
	}
	personAppends(t, sh, "log/2026-10.md", "- (2026-10-04) a lasting fact\n")
	personCommits(t, sh)
	if _, err := sh.Fact(memd.FactID(text)); err != nil { // read the person's commit
		t.Fatal(err)
	}
	giveUp(t, sh)
	f, err := sh.Fact(memd.FactID(text))
	if err != nil || f.File != "log/2026-10.md" {
		t.Errorf("after a give-up, the fact in two files is read as %+v, %v; want the log's copy, first in the tree", f, err)
	}
}

// A store closed and opened again reads back what it saved at close.
func TestSavedPlaces_ReadBackAfterARestart(t *testing.T) {
	sh, all := placesShard(t)
	s := sh.store
	rememberOn(t, sh, "written before the stop", "2026-11-04")
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A save a kill cut short, left beside the one written at close.
	tmp := filepath.Join(sh.gitDir, placesFile+".tmp")
	if err := os.WriteFile(tmp, []byte("memd places 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if sh, err = s.Shard(memd.AgentShard("alice")); err != nil {
		t.Fatal(err)
	}
	before := *all
	if again := rememberOn(t, sh, "written before the stop", "2026-11-05"); !again.Commit.IsZero() {
		t.Errorf("a fact written before the stop was written again in %s", again.Commit)
	}
	if *all != before {
		t.Errorf("every file was read %d times after a restart", *all-before)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the cut-short save is still there after a start: %v", err)
	}
}

// A shard given up by a reader (Release) saves in the background, and
// the next write waits for that save rather than read every file.
func TestSavedPlaces_AWriteWaitsForTheSaveOfARelease(t *testing.T) {
	sh, all := placesShard(t)
	for sh.Parsed() {
		sh.Release()
	}
	before := *all
	rememberOn(t, sh, "after a release", "2026-11-04")
	if *all != before {
		t.Errorf("every file was read %d times after a release", *all-before)
	}
}

// A shard with fewer facts than savePlacesAt saves nothing, and removes
// a save left from when it held more: it would be read, and every change
// since diffed, at each next write.
func TestSavedPlaces_ASmallShardSavesNothing(t *testing.T) {
	sh, _ := placesShard(t)
	giveUp(t, sh)
	path := filepath.Join(sh.gitDir, placesFile)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no places saved: %v", err)
	}
	savePlacesAt = 1000
	rememberOn(t, sh, "one more", "2026-11-04")
	giveUp(t, sh)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a save left beside a shard of a few facts: %v", err)
	}
}

// A save that does not read back, or that names a tree the shard does not
// have, is passed over: every file is read, and every fact found.
func TestSavedPlaces_ABadSaveIsPassedOver(t *testing.T) {
	for name, spoil := range map[string]func(b []byte) []byte{
		"a byte flipped": func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"cut short":      func(b []byte) []byte { return b[:len(b)-9] },
		"empty":          func([]byte) []byte { return nil },
		"another tree": func(b []byte) []byte {
			st, err := decodePlaces(b)
			if err != nil {
				panic(err)
			}
			st.root[0] ^= 0xff
			return encodePlaces(st)
		},
	} {
		t.Run(name, func(t *testing.T) {
			sh, all := placesShard(t)
			giveUp(t, sh)
			path := filepath.Join(sh.gitDir, placesFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, spoil(b), 0o644); err != nil {
				t.Fatal(err)
			}
			before := *all
			if again := rememberOn(t, sh, "fact 3 of 2026-11-03", "2026-11-04"); !again.Commit.IsZero() {
				t.Errorf("a fact held was written again in %s", again.Commit)
			}
			wantPlaces(t, sh, map[string]string{"fact 0 of 2026-10-03": "log/2026-10.md", "fact 3 of 2026-11-03": "log/2026-11.md"})
			if *all != before+1 {
				t.Errorf("every file read %d times, want once", *all-before)
			}
		})
	}
}

// Places read back are the places saved: IDs in one file, in several (in
// their order), and IDs memd does not write.
func TestSavedPlaces_RoundTrip(t *testing.T) {
	st := &state{head: Hash{1}, root: Hash{2}, files: map[string]fileAt{"log/2026-10.md": {blob: Hash{3}, size: 120}, ProfileFile: {blob: Hash{4}, size: 7}}, where: newFactPlaces()}
	p := st.where
	p.add("0123456789ab", "log/2026-10.md")
	p.add("ffffffffffff", ProfileFile)
	p.add("ffffffffffff", "log/2026-10.md")
	p.add("not-an-id", ProfileFile)
	got, err := decodePlaces(encodePlaces(st))
	if err != nil {
		t.Fatal(err)
	}
	if got.head != st.head || got.root != st.root || len(got.files) != 2 || got.files["log/2026-10.md"] != st.files["log/2026-10.md"] {
		t.Errorf("read back %+v", got)
	}
	// The files of an ID in several come back in the tree's order, as
	// reading every file finds them.
	for id, want := range map[string][]string{"0123456789ab": {"log/2026-10.md"}, "ffffffffffff": {"log/2026-10.md", ProfileFile}, "not-an-id": {ProfileFile}, "000000000000": nil} {
		if got := got.where.get(id); !slices.Equal(got, want) {
			t.Errorf("%s: saved in %v, read back in %v, want %v", id, p.get(id), got, want)
		}
	}
}

// FuzzDecodePlaces: whatever a file that passes its checksum holds,
// reading it is an error or a state whose every number names a path it
// has; what reads back is written the same.
func FuzzDecodePlaces(f *testing.F) {
	st := &state{files: map[string]fileAt{"log/2026-10.md": {size: 9}}, where: newFactPlaces()}
	st.where.add("0123456789ab", "log/2026-10.md")
	st.where.add("0123456789ab", ProfileFile)
	st.where.add("abcdefabcdef", ProfileFile)
	st.where.add("odd", ProfileFile)
	b := encodePlaces(st)
	f.Add(b[len(placesMagic) : len(b)-4])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		b := append(slices.Clone(placesMagic), body...)
		st, err := decodePlaces(binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)))
		if err != nil {
			return
		}
		p := st.where
		numbers := slices.Concat(slices.Collect(maps.Values(p.one)), p.baseFiles)
		for _, nums := range p.more {
			numbers = append(numbers, nums...)
		}
		for _, nums := range p.odd {
			numbers = append(numbers, nums...)
		}
		for _, n := range numbers {
			if int(n) >= len(p.paths) {
				t.Fatalf("number %d of %d paths", n, len(p.paths))
			}
		}
		again, err := decodePlaces(encodePlaces(st))
		if err != nil || again.where.len() != p.len() || len(again.files) != len(st.files) || !slices.Equal(again.where.paths, p.paths) {
			t.Fatalf("read back, written and read again: %v", err)
		}
	})
}

// What a writer keeps of where facts are, change after change, is what
// reading every file finds: a save would otherwise keep a drift for good,
// where reading the files again after an idle minute used to end it.
// Random adds, removals and edits, chained ones among them, from several
// writers at once so that changes share a commit, over files of three
// months and a profile.
func TestPlaces_AsReadAfreshAfterRandomWrites(t *testing.T) {
	_, sh := aliceShard(t)
	days := []string{"2026-09-30", "2026-10-03", "2026-11-03"}
	tiers := []memd.Tier{memd.TierLog, memd.TierLog, memd.TierProfile, memd.TierNote}
	fact := func(rng *rand.Rand) memd.Fact {
		d, _ := memd.ParseDate(days[rng.IntN(len(days))])
		text := fmt.Sprintf("fact %d", rng.IntN(40))
		return memd.Fact{ID: memd.FactID(text), Text: text, Date: d, Tier: tiers[rng.IntN(len(tiers))]}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range 60 {
				edits := randomEdits(rng, func() memd.Fact { return fact(rng) })
				if _, err := sh.Apply(Change{Author: Committer(), Message: "random\n", Edits: edits}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	placesAsReadAfresh(t, sh, 40)
}

// The same after each of many changes of several edits of a few facts:
// chains of edits within one change, each naming what an earlier one made.
func TestPlaces_AsReadAfreshAfterChainsOfEdits(t *testing.T) {
	_, sh := aliceShard(t)
	rng := rand.New(rand.NewPCG(5, 6))
	days := []string{"2026-10-03", "2026-11-03"}
	fact := func() memd.Fact {
		d, _ := memd.ParseDate(days[rng.IntN(len(days))])
		text := fmt.Sprintf("fact %d", rng.IntN(6))
		return memd.Fact{ID: memd.FactID(text), Text: text, Date: d, Tier: memd.TierLog}
	}
	for range 300 {
		edits := slices.Concat(randomEdits(rng, fact), randomEdits(rng, fact))
		if _, err := sh.Apply(Change{Author: Committer(), Message: "random\n", Edits: edits}); err != nil {
			t.Fatal(err)
		}
		placesAsReadAfresh(t, sh, 6)
		if t.Failed() {
			t.Fatalf("after %v", edits)
		}
	}
}

// randomEdits returns one to three edits of facts fact gives: adds (half
// of them), removals and rewrites.
func randomEdits(rng *rand.Rand, fact func() memd.Fact) []Edit {
	var edits []Edit
	for range 1 + rng.IntN(3) {
		f, g := fact(), fact()
		switch rng.IntN(4) {
		case 0, 1:
			edits = append(edits, Edit{Op: AddFact, Fact: f})
		case 2:
			edits = append(edits, Edit{Op: RemoveFact, Fact: memd.Fact{ID: f.ID}})
		case 3:
			edits = append(edits, Edit{Op: ReplaceFact, Fact: memd.Fact{ID: f.ID}, With: memd.Fact{ID: g.ID, Text: g.Text}})
		}
	}
	return edits
}

// placesAsReadAfresh checks that where the shard's writer holds "fact 0"
// to "fact n-1" is where reading every file finds them.
func placesAsReadAfresh(t *testing.T, sh *Shard, n int) {
	t.Helper()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st := sh.cur.Load()
	fresh := &state{head: st.head, root: st.root, files: map[string]fileAt{}, parsed: map[string]*factFile{}, where: newFactPlaces()}
	if err := sh.placeAll(fresh, nil); err != nil {
		t.Fatal(err)
	}
	if st.where.len() != fresh.where.len() {
		t.Errorf("the writer holds %d IDs, the files %d", st.where.len(), fresh.where.len())
	}
	for i := range n {
		id := memd.FactID(fmt.Sprintf("fact %d", i))
		got, want := slices.Sorted(slices.Values(st.where.get(id))), fresh.where.get(id)
		if !slices.Equal(got, want) {
			t.Errorf("fact %d: the writer has it in %q, the files in %q", i, got, want)
		}
	}
}

// The same after a person's commits between memd's writes: lines taken
// out, copied into another file, and written by hand, which the writer
// reads from the commits since it last looked.
func TestPlaces_AsReadAfreshAfterAPersonsCommits(t *testing.T) {
	was := savePlacesAt
	t.Cleanup(func() { savePlacesAt = was })
	savePlacesAt = 1
	_, sh := aliceShard(t)
	rng := rand.New(rand.NewPCG(3, 4))
	days := []string{"2026-09-30", "2026-10-03", "2026-11-03"}
	fact := func() memd.Fact {
		d, _ := memd.ParseDate(days[rng.IntN(len(days))])
		text := fmt.Sprintf("fact %d", rng.IntN(30))
		tier := memd.TierLog
		if rng.IntN(4) == 0 {
			tier = memd.TierProfile
		}
		return memd.Fact{ID: memd.FactID(text), Text: text, Date: d, Tier: tier}
	}
	files := []string{ProfileFile, "log/2026-09.md", "log/2026-10.md", "log/2026-11.md"}
	for step := range 80 {
		if step%4 != 3 {
			if _, err := sh.Apply(Change{Author: Committer(), Message: "random\n", Edits: randomEdits(rng, fact)}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// A person's commit: each file may lose a line, gain a copy of
		// another file's line, or gain a line of their own.
		var lines [][]string
		for _, path := range files {
			b, _ := os.ReadFile(filepath.Join(sh.Dir(), path))
			lines = append(lines, strings.SplitAfter(string(b), "\n"))
		}
		for i, path := range files {
			ls := lines[i]
			switch rng.IntN(3) {
			case 0:
				if j := rng.IntN(len(ls)); strings.HasPrefix(ls[j], "- (") {
					ls = slices.Delete(ls, j, j+1)
				}
			case 1:
				other := lines[rng.IntN(len(lines))]
				if j := rng.IntN(len(other)); strings.HasPrefix(other[j], "- (") {
					ls = append(ls, other[j])
				}
			case 2:
				ls = append(ls, fmt.Sprintf("- (2026-10-0%d) fact %d\n", 1+rng.IntN(9), rng.IntN(30)))
			}
			if len(ls) > 1 || path == ProfileFile {
				os.MkdirAll(filepath.Dir(filepath.Join(sh.Dir(), path)), 0o755)
				if err := os.WriteFile(filepath.Join(sh.Dir(), path), []byte(strings.Join(ls, "")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		personCommits(t, sh)
		if step%8 == 7 {
			giveUp(t, sh) // read back from a save, then the commits since
		}
	}
	if err := sh.Refresh(); err != nil { // read the last commit
		t.Fatal(err)
	}
	placesAsReadAfresh(t, sh, 30)
}
