package daemon

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/gitstore/anchor"
	"github.com/memd/memd/internal/udiff"
	"github.com/memd/memd/provenance"
)

// maxNoteEdits bounds the anchored edits of one call.
const maxNoteEdits = 100

// ListNotes lists a shard's notes at HEAD.
func (s *Service) ListNotes(ctx context.Context, shard memd.ShardID) ([]memd.NoteInfo, error) {
	sh, err := s.shard(shard)
	if memd.ErrorCode(err) == memd.ENOTFOUND {
		return []memd.NoteInfo{}, nil
	}
	if err != nil {
		return nil, err
	}
	files, _, err := sh.Notes(gitstore.Hash{})
	if err != nil {
		return nil, err
	}
	out := make([]memd.NoteInfo, 0, len(files))
	for _, f := range files {
		out = append(out, noteInfo(shard, strings.TrimPrefix(f.Path, gitstore.NotesDir+"/"), f.Data))
	}
	return out, nil
}

func noteInfo(shard memd.ShardID, path string, data []byte) memd.NoteInfo {
	return memd.NoteInfo{Shard: shard, Path: path, Revision: memd.NoteRevision(string(data)), Size: len(data), Title: noteTitle(data)}
}

// noteTitle is a note's first Markdown heading.
func noteTitle(data []byte) string {
	for _, line := range strings.SplitN(string(data), "\n", 50) {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
			return strings.TrimSpace(strings.TrimLeft(t, "#"))
		}
	}
	return ""
}

// ReadNote reads a note at HEAD or at a commit or date.
func (s *Service) ReadNote(ctx context.Context, shard memd.ShardID, path, at string) (memd.Note, error) {
	if err := memd.ValidateNotePath(path); err != nil {
		return memd.Note{}, err
	}
	sh, err := s.shard(shard)
	if err != nil {
		return memd.Note{}, err
	}
	var h gitstore.Hash
	if at != "" {
		if h, err = resolve(sh, at); err != nil {
			return memd.Note{}, err
		}
		if h.IsZero() {
			return memd.Note{}, memd.Errorf(memd.ENOTFOUND, "shard %s had no commits by %s", shard, at)
		}
	}
	data, ok, commit, err := sh.Note(h, memd.NoteFile(path))
	if err != nil {
		return memd.Note{}, err
	}
	if !ok {
		return memd.Note{}, memd.Errorf(memd.ENOTFOUND, "shard %s has no note %s", shard, path)
	}
	return memd.Note{NoteInfo: noteInfo(shard, path, data), Text: string(data), Commit: commit.String()}, nil
}

// CreateNote writes a new note as one commit.
func (s *Service) CreateNote(ctx context.Context, req memd.CreateNoteRequest) (memd.NoteResult, error) {
	if err := memd.ValidateNotePath(req.Path); err != nil {
		return memd.NoteResult{}, err
	}
	if err := memd.CheckNoteText(req.Text); err != nil {
		return memd.NoteResult{}, err
	}
	if err := provenance.CheckSource(req.Source); err != nil {
		return memd.NoteResult{}, err
	}
	sh, err := s.shardToWrite(req.Shard, req.Create)
	if err != nil {
		return memd.NoteResult{}, err
	}
	create := func(cur []byte, exists bool) ([]byte, bool, error) {
		if exists {
			return nil, false, memd.Errorf(memd.ECONFLICT, "note %s exists (revision %s); edit it instead", req.Path, memd.NoteRevision(string(cur)))
		}
		return []byte(req.Text), false, nil
	}
	return s.writeNote(ctx, sh, req.Shard, req.Path, "create "+req.Path, req.Source, create)
}

// EditNote applies anchored edits to a note, all or none, as one commit.
func (s *Service) EditNote(ctx context.Context, req memd.EditNoteRequest) (memd.NoteResult, error) {
	if err := memd.ValidateNotePath(req.Path); err != nil {
		return memd.NoteResult{}, err
	}
	switch {
	case len(req.Edits) == 0:
		return memd.NoteResult{}, memd.Errorf(memd.EINVALID, "no edits given")
	case len(req.Edits) > maxNoteEdits:
		return memd.NoteResult{}, memd.Errorf(memd.EINVALID, "at most %d edits per call, got %d", maxNoteEdits, len(req.Edits))
	}
	for i, e := range req.Edits {
		for _, v := range []string{e.Find, e.Replace, e.Anchor, e.Text} {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return memd.NoteResult{}, memd.Errorf(memd.EINVALID, "edit %d (%s): text must be UTF-8 without NUL bytes", i+1, e.Op)
			}
		}
	}
	sh, err := s.noteShard(req.Shard, req.ExpectedRevision, req.Source)
	if err != nil {
		return memd.NoteResult{}, err
	}
	edit := func(cur []byte, exists bool) ([]byte, bool, error) {
		if !exists {
			return nil, false, memd.Errorf(memd.ENOTFOUND, "shard %s has no note %s", req.Shard, req.Path)
		}
		if err := matchRevision(req.Path, cur, req.ExpectedRevision); err != nil {
			return nil, false, err
		}
		next, err := anchor.Apply(string(cur), req.Edits, memd.MaxNoteBytes)
		if err != nil {
			return nil, false, err
		}
		if err := memd.CheckNoteText(next); err != nil {
			return nil, false, err
		}
		return []byte(next), false, nil
	}
	return s.writeNote(ctx, sh, req.Shard, req.Path, editSummary(req.Path, req.Edits), req.Source, edit)
}

// noteShard checks what an edit or a deletion of a note names besides the
// note (the revision it expects, where it came from) and opens its shard.
func (s *Service) noteShard(id memd.ShardID, revision string, src memd.Source) (*gitstore.Shard, error) {
	if err := checkRevision(revision); err != nil {
		return nil, err
	}
	if err := provenance.CheckSource(src); err != nil {
		return nil, err
	}
	return s.shard(id)
}

// DeleteNote removes a note as one commit.
func (s *Service) DeleteNote(ctx context.Context, req memd.DeleteNoteRequest) (memd.NoteResult, error) {
	if err := memd.ValidateNotePath(req.Path); err != nil {
		return memd.NoteResult{}, err
	}
	sh, err := s.noteShard(req.Shard, req.ExpectedRevision, req.Source)
	if err != nil {
		return memd.NoteResult{}, err
	}
	del := func(cur []byte, exists bool) ([]byte, bool, error) {
		if exists {
			if err := matchRevision(req.Path, cur, req.ExpectedRevision); err != nil {
				return nil, false, err
			}
		}
		return nil, true, nil
	}
	return s.writeNote(ctx, sh, req.Shard, req.Path, "delete "+req.Path, req.Source, del)
}

// writeNote commits one note change with the caller's provenance.
func (s *Service) writeNote(ctx context.Context, sh *gitstore.Shard, shard memd.ShardID, path, summary string, src memd.Source, u gitstore.NoteUpdate) (memd.NoteResult, error) {
	c := callerOf(ctx)
	msg := provenance.Message(provenance.Subject(memd.OpNoteEdit, summary), memd.Provenance{
		Op: memd.OpNoteEdit, SourceMessages: src.Messages, SourceChat: src.Chat, ChatKind: chatKindOf(src), LearnedBy: learnedBy(c),
	})
	res, err := sh.Apply(gitstore.Change{Author: author(c), Message: msg, Note: &gitstore.NoteChange{Path: memd.NoteFile(path), Update: u}})
	if err != nil {
		return memd.NoteResult{}, err
	}
	out := memd.NoteResult{Note: memd.Note{NoteInfo: memd.NoteInfo{Shard: shard, Path: path}}}
	if res.Note.Exists {
		out.Note = memd.Note{NoteInfo: noteInfo(shard, path, res.Note.Data), Text: string(res.Note.Data)}
	}
	if !res.Commit.IsZero() {
		out.Commit, out.Time = res.Commit.String(), res.Time
		out.Note.Commit = out.Commit
	}
	return out, nil
}

// editSummary names a note and the kinds of edit made to it.
func editSummary(path string, edits []memd.NoteEdit) string {
	var ops []string
	for _, e := range edits {
		if len(ops) == 0 || ops[len(ops)-1] != e.Op {
			ops = append(ops, e.Op)
		}
	}
	return path + " (" + strings.Join(ops, ", ") + ")"
}

func checkRevision(rev string) error {
	if rev == "" {
		return nil
	}
	if len(rev) != 64 || strings.Trim(rev, "0123456789abcdef") != "" {
		return memd.Errorf(memd.EINVALID, "expectedRevision %q: want the 64 hex digits read_note returned", memd.Shorten(rev, 80))
	}
	return nil
}

func matchRevision(path string, cur []byte, want string) error {
	if want == "" {
		return nil
	}
	if have := memd.NoteRevision(string(cur)); have != want {
		return memd.Errorf(memd.EREVISION, "note %s is at revision %s, not %s: it changed since it was read; read it again", path, have, want)
	}
	return nil
}

const (
	defaultNoteHistory = 20
	maxNoteHistory     = 50 // a diff may take 100 ms; a page of them stays a few seconds
)

// NoteHistory lists the commits that changed a note, newest first, each
// with the note's diff in it.
func (s *Service) NoteHistory(ctx context.Context, q memd.NoteHistoryQuery) ([]memd.NoteVersion, error) {
	if err := memd.ValidateNotePath(q.Path); err != nil {
		return nil, err
	}
	page, err := newPager(q.Limit, q.Offset, defaultNoteHistory, maxNoteHistory)
	if err != nil {
		return nil, err
	}
	sh, head, err := s.shardAtHead(q.Shard)
	if err != nil {
		return nil, err
	}
	out := []memd.NoteVersion{}
	seen := 0
	file := memd.NoteFile(q.Path)
	err = sh.FileHistory(head, file, func(c gitstore.Commit, before, after []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		seen++
		if !page.take() {
			return nil
		}
		commit, err := provenance.DescribeCommit(sh, c)
		if err != nil {
			return err
		}
		out = append(out, memd.NoteVersion{Commit: commit, Diff: udiff.Diff(q.Path, string(before), string(after))})
		return page.kept()
	})
	if err != nil {
		return nil, err
	}
	if seen == 0 {
		return nil, memd.Errorf(memd.ENOTFOUND, "shard %s has no history of note %s", q.Shard, q.Path)
	}
	return out, nil
}
