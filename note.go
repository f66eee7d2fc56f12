package memd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"
)

// Notes are Markdown documents in a shard's notes/ folder, which people
// open and fix and agents amend one anchored edit at a time (README,
// "Notes"). A note is named by its path under notes/, such as
// "runbooks/deploy.md".

// MaxNoteBytes is the largest note memd writes.
const MaxNoteBytes = 256 << 10

// NoteRevision is the revision of a note's text: the hex SHA-256 of it.
func NoteRevision(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// NoteFile is the file in a shard that holds a note.
func NoteFile(path string) string { return "notes/" + path }

// NoteInfo describes a note without its text.
type NoteInfo struct {
	Shard    ShardID `json:"shard"`
	Path     string  `json:"path"`
	Revision string  `json:"revision"`
	Size     int     `json:"size"`
	Title    string  `json:"title,omitempty"` // its first heading
}

// Note is a note's text and revision, as read from a commit.
type Note struct {
	NoteInfo
	Text   string `json:"text"`
	Commit string `json:"commit,omitempty"` // the commit it was read from, or written in
}

// NoteEdit is one anchored edit. Op is one of the NoteOp constants:
//
//	replace        Find -> Replace
//	insert_after   Text after Anchor
//	insert_before  Text before Anchor
//	delete         Find removed
//
// Find and Anchor must occur exactly once unless All is set (replace and
// delete only).
type NoteEdit struct {
	Op      string `json:"op"`
	Find    string `json:"find,omitempty"`
	Replace string `json:"replace,omitempty"`
	Anchor  string `json:"anchor,omitempty"`
	Text    string `json:"text,omitempty"`
	All     bool   `json:"all,omitempty"`
	// Exact turns off the folded match: the text must occur as given.
	// A person's edit uses it, so that a change someone else made to the
	// same text (even only its quotes or spaces) refuses it.
	Exact bool `json:"exact,omitempty"`
}

// The operations of an anchored edit.
const (
	NoteReplace      = "replace"
	NoteInsertAfter  = "insert_after"
	NoteInsertBefore = "insert_before"
	NoteDelete       = "delete"
)

// CreateNoteRequest creates a note; ECONFLICT if it exists.
type CreateNoteRequest struct {
	Shard  ShardID `json:"shard"`
	Path   string  `json:"path"`
	Text   string  `json:"text"`
	Source Source  `json:"source,omitzero"`
	Create bool    `json:"create,omitempty"` // as RememberRequest.Create
}

// EditNoteRequest applies anchored edits to a note, all or none, in one
// commit. With ExpectedRevision, the call fails with EREVISION unless the
// note is at that revision.
type EditNoteRequest struct {
	Shard            ShardID    `json:"shard"`
	Path             string     `json:"path"`
	ExpectedRevision string     `json:"expectedRevision,omitempty"`
	Edits            []NoteEdit `json:"edits"`
	Source           Source     `json:"source,omitzero"`
}

// DeleteNoteRequest deletes a note, optionally only at a revision.
type DeleteNoteRequest struct {
	Shard            ShardID `json:"shard"`
	Path             string  `json:"path"`
	ExpectedRevision string  `json:"expectedRevision,omitempty"`
	Source           Source  `json:"source,omitzero"`
}

// NoteResult is a note after a write and the commit that wrote it (empty
// when the edit changed nothing).
type NoteResult struct {
	Note   Note      `json:"note"`
	Commit string    `json:"commit,omitempty"`
	Time   time.Time `json:"time,omitzero"`
}

// Notes is the notes part of the service.
type Notes interface {
	// ListNotes lists a shard's notes; an unknown shard has none.
	ListNotes(ctx context.Context, shard ShardID) ([]NoteInfo, error)
	// ReadNote reads a note at HEAD, or at a commit or date; ENOTFOUND if
	// it does not exist there.
	ReadNote(ctx context.Context, shard ShardID, path, at string) (Note, error)
	// CreateNote writes a new note; ECONFLICT if one exists at the path.
	CreateNote(ctx context.Context, req CreateNoteRequest) (NoteResult, error)
	// EditNote applies anchored edits, all or none; EANCHORNOTFOUND,
	// EANCHORAMBIGUOUS or EREVISION name the edit that failed.
	EditNote(ctx context.Context, req EditNoteRequest) (NoteResult, error)
	// DeleteNote removes a note; ENOTFOUND if there is none.
	DeleteNote(ctx context.Context, req DeleteNoteRequest) (NoteResult, error)
	// NoteHistory lists the commits that changed a note, newest first,
	// each with the note's diff; ENOTFOUND if no commit ever touched it.
	NoteHistory(ctx context.Context, q NoteHistoryQuery) ([]NoteVersion, error)
}

// NoteHistoryQuery pages through a note's history.
type NoteHistoryQuery struct {
	Shard  ShardID
	Path   string
	Limit  int // at most this many; 0 means 20
	Offset int // skip this many (a later page)
}

// NoteVersion is one commit that changed a note, with the unified diff of
// the note in it.
type NoteVersion struct {
	Commit
	Diff string `json:"diff"`
}

// CheckNoteText holds a note's text to memd's rules for notes, whichever
// way it comes (the API, MCP, a git push): at most MaxNoteBytes, UTF-8,
// no NUL byte.
func CheckNoteText(text string) error {
	switch {
	case len(text) > MaxNoteBytes:
		return Errorf(ETOOLARGE, "a note holds at most %d KiB, this one would be %d KiB", MaxNoteBytes>>10, (len(text)+1023)>>10)
	case !utf8.ValidString(text):
		return Errorf(EINVALID, "a note must be UTF-8 text")
	case strings.ContainsRune(text, 0):
		return Errorf(EINVALID, "a note may not contain NUL bytes")
	}
	return nil
}
