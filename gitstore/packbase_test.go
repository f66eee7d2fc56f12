package gitstore_test

import (
	"encoding/ascii85"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// importInto writes one commit of log facts dated in month ("2026-10"), of
// at least size bytes, the series making their texts new, and returns them.
func importInto(t *testing.T, sh *gitstore.Shard, month, series string, size int) []memd.Fact {
	t.Helper()
	var edits []gitstore.Edit
	for n, i := 0, 0; n < size; i++ {
		d, _ := memd.ParseDate(fmt.Sprintf("%s-%02d", month, 1+i%28))
		f := memd.Fact{Text: fmt.Sprintf("Item %d of the %s import: the Lisbon office ordered %d chairs", i, series, i*7%1000), Date: d, Tier: memd.TierLog}
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: f})
		n += len(gitstore.FormatLine(f))
	}
	res, err := sh.Apply(gitstore.Change{Author: alice, Message: "import: " + series + "\n", Edits: edits})
	if err != nil {
		t.Fatal(err)
	}
	return res.Facts
}

// newPacks tells the sizes of the packs written into a shard since it
// last looked.
type newPacks struct {
	dir  string
	seen map[string]bool
}

func watchPacks(t *testing.T, sh *gitstore.Shard) *newPacks {
	p := &newPacks{dir: filepath.Join(sh.Dir(), ".git", "objects", "pack"), seen: make(map[string]bool)}
	p.since(t)
	return p
}

func (p *newPacks) since(t *testing.T) []int64 {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(p.dir, "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, name := range names {
		if p.seen[name] {
			continue
		}
		p.seen[name] = true
		info, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, info.Size())
	}
	return sizes
}

func fileSize(t *testing.T, sh *gitstore.Shard, path string) int64 {
	t.Helper()
	return int64(len(readWorking(t, sh, path)))
}

// A commit that adds a line to a large file writes a pack of a compressed
// copy of the file and a delta, not the whole file again: what a lone
// writer writes, syncs and leaves on disk until a repack does not grow
// with the file as it did. Plain git reads every version.
func TestPackedBase_CommitToALargeFileWritesFarLessThanTheFile(t *testing.T) {
	root := t.TempDir()
	opts := gitstore.Options{NoSync: true, RepackAt: -1, Restore: restoreMessage, Merge: provenance.MergeMessage}
	s, err := gitstore.Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := createShard(t, s, "agent/alice")
	const path = "log/2026-10.md"
	imported := importInto(t, sh, "2026-10", "first", 120<<10)
	packs := watchPacks(t, sh)
	wrote := map[string]string{} // commit -> the file as memd wrote it
	// check records the file as memd wrote it, and whether the commit's
	// pack was small (a delta) or held the file whole.
	check := func(what string, small bool) {
		t.Helper()
		sizes := packs.since(t)
		size := fileSize(t, sh, path)
		if len(sizes) != 1 || small && sizes[0] > size/3 || !small && sizes[0] < size {
			t.Errorf("%s: new packs of %v bytes for a file of %d, small: %v", what, sizes, size, small)
		}
		wrote[strings.TrimSpace(git(t, sh.Dir(), "rev-parse", "HEAD"))] = readWorking(t, sh, path)
	}
	for i := range 6 {
		rememberOn(t, sh, "2026-10-20", fmt.Sprintf("Appended fact %d about the Porto branch", i))
		check(fmt.Sprintf("remember %d", i), true)
	}
	// A line taken from the middle since: still a delta. A second one far
	// above the end moves the file far from its base: written whole, it is
	// the base of the commits after it.
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "forget: one\n", Edits: []gitstore.Edit{{Op: gitstore.RemoveFact, Fact: imported[500]}}}); err != nil {
		t.Fatal(err)
	}
	check("forget", true)
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "correct: one\n", Edits: []gitstore.Edit{{Op: gitstore.ReplaceFact, Fact: imported[100], With: memd.Fact{Text: "The Lisbon office ordered 12 desks"}}}}); err != nil {
		t.Fatal(err)
	}
	check("correct", false)
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "correct: another\n", Edits: []gitstore.Edit{{Op: gitstore.ReplaceFact, Fact: imported[900], With: memd.Fact{Text: "The Lisbon office ordered 30 lamps"}}}}); err != nil {
		t.Fatal(err)
	}
	check("correct again", true)
	// Several writers' changes in one group: one pack, each version a delta.
	var group []gitstore.Change
	for i := range 5 {
		d, _ := memd.ParseDate("2026-10-21")
		group = append(group, gitstore.Change{Author: alice, Message: fmt.Sprintf("remember: grouped %d\n", i),
			Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Grouped fact %d", i), Date: d, Tier: memd.TierLog}}}})
	}
	if errs := sh.ApplyTogether(group...); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		t.Fatal(errs)
	}
	check("a group of five", true)

	dir := sh.Dir()
	verifyPacks(t, dir)
	git(t, dir, "fsck", "--strict")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	for commit, data := range wrote {
		if got := git(t, dir, "cat-file", "blob", commit+":"+path); got != data {
			t.Errorf("git reads %s of %s otherwise than memd wrote it", path, commit[:8])
		}
	}
	// memd reads them back cold, from the packs alone.
	s.Close()
	s2, err := gitstore.Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	sh2, err := s2.Shard(sh.ID())
	if err != nil {
		t.Fatal(err)
	}
	for commit, want := range wrote {
		got, ok, err := sh2.FileAt(gitstore.NewHash(commit), path)
		if err != nil || !ok || string(got) != want {
			t.Errorf("memd reads %s of %s back otherwise (ok %v, err %v)", path, commit[:8], ok, err)
		}
	}
}

// A shard keeps bases for a few files, the ones it used last, and gives
// them up with the rest of its state when idle.
func TestPackedBase_FewPerShardAndGivenUpWhenIdle(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	months := []string{"2026-01", "2026-02", "2026-03", "2026-04", "2026-05", "2026-06"}
	for i, month := range months {
		importInto(t, sh, month, "bulk "+month, 40<<10)
		if got, want := sh.PackedBases(), min(i+1, gitstore.MaxPackedBases); got != want {
			t.Fatalf("after %d large files written, %d bases held, want %d", i+1, got, want)
		}
	}
	if s.PackedBaseBytes() <= 0 {
		t.Fatalf("bases held take %d bytes", s.PackedBaseBytes())
	}
	// The months written last keep theirs: a commit to one is small.
	packs := watchPacks(t, sh)
	rememberOn(t, sh, "2026-06-20", "A late June fact")
	if sizes, size := packs.since(t), fileSize(t, sh, "log/2026-06.md"); len(sizes) != 1 || sizes[0] > size/3 {
		t.Errorf("a commit to a file written last: packs of %v bytes for a file of %d", sizes, size)
	}
	rememberOn(t, sh, "2026-01-20", "A late January fact")
	if sizes, size := packs.since(t), fileSize(t, sh, "log/2026-01.md"); len(sizes) != 1 || sizes[0] < size {
		t.Errorf("a commit to a file whose base was given up: packs of %v bytes for a file of %d", sizes, size)
	}
	sh.SyncWorktree(0) // once the writer let go of the shard: bases are taken after the answer
	sh.Release()
	if n, b := sh.PackedBases(), s.PackedBaseBytes(); n != 0 || b != 0 {
		t.Errorf("after the state was given up: %d bases, %d bytes", n, b)
	}
}

// verifyPacks has git read every object of every pack of a shard: fsck
// takes some objects git cannot read for sound.
func verifyPacks(t *testing.T, dir string) {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if err != nil || len(packs) == 0 {
		t.Fatalf("no packs in %s: %v", dir, err)
	}
	git(t, dir, append([]string{"verify-pack"}, packs...)...)
}

// A large file a person took the header out of, emptied by a change
// grouped after one that added to it, is written whole: git reads a delta
// to an empty object as an error. One shrunk below the size for a base is
// written whole too, rather than with the copy of what it was.
func TestPackedBase_FilesEmptiedOrShrunkGoWhole(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	const path = "log/2026-07.md"
	facts := importInto(t, sh, "2026-07", "July", 60<<10)
	sh.SyncWorktree(0)
	var body []byte
	for _, f := range facts {
		body = append(body, gitstore.FormatLine(f)...)
	}
	if err := os.WriteFile(filepath.Join(sh.Dir(), path), body, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-q", "-am", "the header taken out")
	forgetting := func(facts []memd.Fact) gitstore.Change {
		var edits []gitstore.Edit
		for _, f := range facts {
			edits = append(edits, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: f.ID}})
		}
		return gitstore.Change{Author: alice, Message: "forget\n", Edits: edits}
	}
	// In one group, a line added, then every line taken: the emptied
	// version follows one in the same pack.
	d, _ := memd.ParseDate("2026-07-02")
	late := memd.Fact{Text: "A late July fact", Date: d, Tier: memd.TierLog}
	errs := sh.ApplyTogether(gitstore.Change{Author: alice, Message: "remember\n", Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: late}}},
		forgetting(append(slices.Clone(facts), memd.Fact{ID: memd.FactID(late.Text)})))
	if slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		t.Fatal(errs)
	}
	if size := strings.TrimSpace(git(t, sh.Dir(), "cat-file", "-s", "HEAD:"+path)); size != "0" {
		t.Errorf("git reads the emptied file as %s bytes", size)
	}
	git(t, sh.Dir(), "checkout", "-q", "HEAD~1")
	git(t, sh.Dir(), "checkout", "-q", "main")
	verifyPacks(t, sh.Dir())

	facts = importInto(t, sh, "2026-08", "August", 120<<10)
	if _, err := sh.Apply(forgetting(facts[20:])); err != nil {
		t.Fatal(err)
	}
	packs := watchPacks(t, sh)
	rememberOn(t, sh, "2026-08-20", "A fact after the August log shrank")
	if sizes, size := packs.since(t), fileSize(t, sh, "log/2026-08.md"); len(sizes) != 1 || sizes[0] > size+2<<10 {
		t.Errorf("a commit to a shrunk file: packs of %v bytes for a file of %d", sizes, size)
	}
	verifyPacks(t, sh.Dir())
}

// A file of text that hardly compresses gets no base: its copy would cost
// a commit as much as the file whole.
func TestPackedBase_NoneForTextThatDoesNotCompress(t *testing.T) {
	s := openStore(t)
	sh := createShard(t, s, "agent/alice")
	rng := rand.New(rand.NewPCG(1, 2))
	var edits []gitstore.Edit
	for range 130 {
		key := make([]byte, 256)
		for i := range key {
			key[i] = byte(rng.IntN(256))
		}
		d, _ := memd.ParseDate("2026-09-01")
		text := make([]byte, ascii85.MaxEncodedLen(len(key)))
		text = text[:ascii85.Encode(text, key)]
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Key " + string(text), Date: d, Tier: memd.TierLog}})
	}
	if _, err := sh.Apply(gitstore.Change{Author: alice, Message: "import: keys\n", Edits: edits}); err != nil {
		t.Fatal(err)
	}
	if size := fileSize(t, sh, "log/2026-09.md"); size < 32<<10 {
		t.Fatalf("the file holds %d bytes; the test needs a large one", size)
	}
	if n := sh.PackedBases(); n != 0 {
		t.Errorf("%d bases held for a file of random keys", n)
	}
}
