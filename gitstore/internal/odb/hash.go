// Package odb is memd's git object database for one repository: it reads
// objects from packs and loose files and writes new objects as packs, one pack
// per group of commits, with each new version of a file stored as a small
// delta against the previous one. It speaks git's on-disk formats exactly, so
// the git CLI and go-git read what it writes and it reads what they write.
package odb

import (
	"crypto/sha1"
	"encoding/hex"
	"hash"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// Hash names a git object: the SHA-1 of its type, size and content. The
// zero Hash names none.
type Hash [sha1.Size]byte

// NewHash reads a hash written as 40 hex digits. Like git's own parsers
// it does not report malformed input (that gives a hash naming no object
// memd has): check with IsHash where the text comes from outside.
func NewHash(s string) Hash {
	var h Hash
	b, _ := hex.DecodeString(s)
	copy(h[:], b)
	return h
}

// IsHash reports whether s is a hash written as 40 hex digits.
func IsHash(s string) bool {
	if len(s) != 2*sha1.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// IsZero reports whether h names no object.
func (h Hash) IsZero() bool { return h == Hash{} }

// String returns h as 40 lowercase hex digits, as git writes it.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// HashObject returns the git object ID of content of type t.
func HashObject(t plumbing.ObjectType, content []byte) Hash {
	h := sha1.New()
	writeObjectHeader(h, t, len(content))
	h.Write(content)
	var id Hash
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
