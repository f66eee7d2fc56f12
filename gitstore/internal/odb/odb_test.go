package odb_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd/gitstore/internal/odb"
	"github.com/memd/memd/internal/memdtest"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return memdtest.Git(t, dir, args...)
}

func treeWith(name string, blob odb.Hash) []byte {
	return append([]byte("100644 "+name+"\x00"), blob[:]...)
}

func commitBody(tree, parent odb.Hash, msg string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	if !parent.IsZero() {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	b.WriteString("author a <a@x> 1700000000 +0000\ncommitter a <a@x> 1700000000 +0000\n\n" + msg + "\n")
	return b.Bytes()
}

// A chain of commits whose file grows by splice deltas reads back the same
// through the git CLI and passes git fsck --strict.
func TestDB_WritePackReadByGit(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	db, err := odb.Open(filepath.Join(dir, ".git", "objects"), odb.NewCache(1<<20), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// Large enough that the base is stored uncompressed.
	content := bytes.Repeat([]byte("- (2026-01-02) a fact line of memory\n"), 3000)
	var parent odb.Hash
	var blob odb.Hash
	var want []string
	for round := 0; round < 3; round++ {
		b := odb.NewBuilder()
		blob = b.Add(plumbing.BlobObject, content)
		for i := 0; i < 5; i++ {
			line := []byte(fmt.Sprintf("- (2026-01-03) fact %d.%d\n", round, i))
			next := append(content[:len(content):len(content)], line...)
			if i == 3 { // a removal in the middle
				next = append(append([]byte{}, content[:37]...), content[74:]...)
				blob = b.AddDelta(plumbing.BlobObject, blob, splice(len(content), 37, 37, nil), next)
			} else {
				blob = b.AddDelta(plumbing.BlobObject, blob, splice(len(content), len(content), 0, line), next)
			}
			content = next
			tree := b.Add(plumbing.TreeObject, treeWith("log.md", blob))
			parent = b.Add(plumbing.CommitObject, commitBody(tree, parent, fmt.Sprintf("c%d.%d", round, i)))
			want = append(want, fmt.Sprintf("c%d.%d", round, i))
		}
		if _, err := db.WritePack(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "main"), []byte(parent.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
	if got := git(t, dir, "cat-file", "blob", blob.String()); got != string(content) {
		t.Errorf("git cat-file blob: got %d bytes, want %d", len(got), len(content))
	}
	log := strings.Fields(git(t, dir, "log", "--format=%s", "--reverse"))
	if strings.Join(log, " ") != strings.Join(want, " ") {
		t.Errorf("git log: got %v, want %v", log, want)
	}

	// memd reads it back, including through a fresh database (no cache).
	fresh, err := odb.Open(filepath.Join(dir, ".git", "objects"), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	obj, err := fresh.Get(blob)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Type != plumbing.BlobObject || !bytes.Equal(obj.Data, content) {
		t.Errorf("Get(blob): type %v, %d bytes; want blob, %d bytes", obj.Type, len(obj.Data), len(content))
	}
}

// Objects git writes (loose, then repacked with deltas) read back the same.
func TestDB_ReadsWhatGitWrites(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	var text strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&text, "- (2026-02-01) line %d of a growing file with some words in it\n", i)
		os.WriteFile(filepath.Join(dir, "f.md"), []byte(text.String()), 0o644)
		git(t, dir, "add", "f.md")
		git(t, dir, "commit", "-q", "-m", fmt.Sprint("c", i))
	}
	db, err := odb.Open(filepath.Join(dir, ".git", "objects"), odb.NewCache(1<<20), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	blob := odb.NewHash(strings.TrimSpace(git(t, dir, "rev-parse", "HEAD:f.md")))
	check := func(stage string) {
		t.Helper()
		obj, err := db.Get(blob)
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		if string(obj.Data) != text.String() {
			t.Fatalf("%s: content differs", stage)
		}
	}
	check("loose")
	git(t, dir, "repack", "-a", "-d", "-q", "-f", "--depth=50")
	git(t, dir, "prune-packed")
	// A fresh lookup of an older version forces delta resolution in git's pack.
	old := odb.NewHash(strings.TrimSpace(git(t, dir, "rev-parse", "HEAD~20:f.md")))
	if _, err := db.Get(old); err != nil {
		t.Fatalf("after repack: %v", err)
	}
	check("packed")
}

func TestSplicePatch(t *testing.T) {
	base := bytes.Repeat([]byte("abcdefghij"), 10000)
	cases := []struct {
		name     string
		pos, del int
		ins      []byte
	}{
		{"append", len(base), 0, []byte("tail\n")},
		{"prepend", 0, 0, bytes.Repeat([]byte("x"), 300)},
		{"remove middle", 500, 37, nil},
		{"replace", 65536, 10, []byte("y")},
		{"remove all", 0, len(base), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := append(append(append([]byte{}, base[:c.pos]...), c.ins...), base[c.pos+c.del:]...)
			got, err := odb.Patch(base, splice(len(base), c.pos, c.del, c.ins))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("patch result differs: got %d bytes, want %d", len(got), len(want))
			}
		})
	}
}

// A crash while a pack is staged, or between publishing its index and its
// pack, leaves files that git fsck would fail on or that nobody removes;
// opening the database as its writer clears them and keeps the rest.
func TestDB_OpenRepairedClearsWhatACrashLeft(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	objects := filepath.Join(dir, ".git", "objects")
	db, err := odb.Open(objects, odb.NewCache(1<<20), false)
	if err != nil {
		t.Fatal(err)
	}
	pack := func(msg string) (*odb.StagedPack, odb.Hash) {
		b := odb.NewBuilder()
		blob := b.Add(plumbing.BlobObject, []byte(msg+"\n"))
		tree := b.Add(plumbing.TreeObject, treeWith("log.md", blob))
		commit := b.Add(plumbing.CommitObject, commitBody(tree, odb.Hash{}, msg))
		sp, err := db.StagePack(b)
		if err != nil {
			t.Fatal(err)
		}
		return sp, commit
	}
	kept, commit := pack("published")
	if err := kept.Publish(); err != nil {
		t.Fatal(err)
	}
	kept.Close()
	os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "main"), []byte(commit.String()+"\n"), 0o644)
	staged, _ := pack("staged, never published")
	staged.Close()
	half, _ := pack("index published, pack not")
	half.Close()
	packDir := filepath.Join(objects, "pack")
	// The crash came between the two renames of Publish.
	if err := os.Rename(filepath.Join(packDir, "tmp-memd-"+half.Name().String()+"-idx"),
		filepath.Join(packDir, "pack-"+half.Name().String()+".idx")); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, removed, err := odb.OpenRepaired(objects, odb.NewCache(1<<20), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if removed != 4 {
		t.Errorf("removed %d leftover files, want 4 (two staged packs, a staged index, an index without its pack)", removed)
	}
	entries, _ := os.ReadDir(packDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"pack-" + kept.Name().String() + ".idx", "pack-" + kept.Name().String() + ".pack"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("pack directory holds %v, want %v", names, want)
	}
	if _, err := db.Get(commit); err != nil {
		t.Errorf("the published commit: %v", err)
	}
	git(t, dir, "fsck", "--strict")
}

// splice returns a git delta that turns a base of baseLen bytes into the
// base with del bytes at pos replaced by ins.
func splice(baseLen, pos, del int, ins []byte) []byte {
	return odb.Delta(baseLen, []odb.Edit{{Pos: pos, Del: del, Ins: ins}})
}
