package gitstore

import "github.com/memd/memd/gitstore/internal/odb"

// Hash names a git object: a commit, a tree or a blob. It is the object
// database's own type, so that hashes pass between the two unconverted;
// packages outside gitstore know git objects by it alone.
type Hash = odb.Hash

// NewHash reads a hash written as 40 hex digits; malformed input gives a
// hash naming no object memd has. Check with IsHash where the text comes
// from outside.
func NewHash(s string) Hash { return odb.NewHash(s) }

// IsHash reports whether s is a hash written as 40 hex digits.
func IsHash(s string) bool { return odb.IsHash(s) }
