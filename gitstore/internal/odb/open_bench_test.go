package odb_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd/gitstore/internal/odb"
)

// Opening a shard reads every pack's index: before a repack a busy shard
// holds hundreds of small packs, one per chain of commits.
func BenchmarkOpen_ManyPacks(b *testing.B) {
	for _, packs := range []int{100, 400} {
		b.Run(fmt.Sprintf("packs=%d", packs), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "objects")
			db, err := odb.Open(dir, nil, false)
			if err != nil {
				b.Fatal(err)
			}
			var parent odb.Hash
			for i := range packs {
				bld := odb.NewBuilder()
				blob := bld.Add(plumbing.BlobObject, fmt.Appendf(nil, "- (2026-01-02) fact %d\n", i))
				tree := bld.Add(plumbing.TreeObject, treeWith("log.md", blob))
				parent = bld.Add(plumbing.CommitObject, commitBody(tree, parent, fmt.Sprint(i)))
				if _, err := db.WritePack(bld); err != nil {
					b.Fatal(err)
				}
			}
			db.Close()
			b.ResetTimer()
			for b.Loop() {
				db, err := odb.Open(dir, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}
