// Package odb is memd's git object database for one repository: it reads
// objects from packs and loose files and writes new objects as packs, one pack
// per group of commits, with each new version of a file stored as a small
// delta against the previous one. It speaks git's on-disk formats exactly, so
// the git CLI and go-git read what it writes and it reads what they write.
package odb

import (
	"crypto/sha1"
	"hash"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// Hash returns the git object ID of content of type t.
func Hash(t plumbing.ObjectType, content []byte) plumbing.Hash {
	h := sha1.New()
	writeObjectHeader(h, t, len(content))
	h.Write(content)
	var id plumbing.Hash
	h.Sum(id[:0])
	return id
}

func writeObjectHeader(h hash.Hash, t plumbing.ObjectType, size int) {
	var buf [32]byte
	b := append(buf[:0], t.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, 0)
	h.Write(b)
}
