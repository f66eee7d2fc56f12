package httpapi

import (
	"net/http"
	"strings"

	"github.com/memd/memd"
)

func (s *Server) listNotes(_ http.ResponseWriter, r *http.Request, id memd.ShardID) (any, error) {
	notes, err := s.svc.ListNotes(r.Context(), id)
	return map[string]any{"notes": notes}, err
}

// readNote answers GET on a note's path: the note, or with ":history"
// after the path, its versions.
func (s *Server) readNote(_ http.ResponseWriter, r *http.Request, id memd.ShardID) (any, error) {
	p := paramsOf(r)
	path, history := strings.CutSuffix(r.PathValue("path"), ":history")
	if !history {
		return s.svc.ReadNote(r.Context(), id, path, p.get("at"))
	}
	q := memd.NoteHistoryQuery{Shard: id, Path: path, Limit: p.int("limit"), Offset: p.int("offset")}
	if p.err != nil {
		return nil, p.err
	}
	versions, err := s.svc.NoteHistory(r.Context(), q)
	return map[string]any{"versions": versions}, err
}

// createNoteBody is the body of POST /v1/shards/{shard}/notes.
type createNoteBody struct {
	Path   string      `json:"path"`
	Text   string      `json:"text"`
	Source memd.Source `json:"source,omitzero"`
	Create bool        `json:"create,omitempty"`
}

func (s *Server) createNote(w http.ResponseWriter, r *http.Request, id memd.ShardID) (memd.NoteResult, error) {
	var b createNoteBody
	if err := decode(w, r, &b); err != nil {
		return memd.NoteResult{}, err
	}
	return s.svc.CreateNote(r.Context(), memd.CreateNoteRequest{Shard: id, Path: b.Path, Text: b.Text, Source: b.Source, Create: b.Create})
}

// editNoteBody is the body of POST /v1/shards/{shard}/notes/{path}:edit.
type editNoteBody struct {
	ExpectedRevision string          `json:"expectedRevision,omitempty"`
	Edits            []memd.NoteEdit `json:"edits"`
	Source           memd.Source     `json:"source,omitzero"`
}

// notePost is POST on a note's path: only ":edit" is one, which is told
// before the shard is read.
func (s *Server) notePost(w http.ResponseWriter, r *http.Request) (memd.NoteResult, error) {
	path, ok := strings.CutSuffix(r.PathValue("path"), ":edit")
	if !ok {
		return memd.NoteResult{}, memd.Errorf(memd.EINVALID, "POST a note's path with :edit to edit it (…/notes/%s:edit); create notes with POST …/notes", r.PathValue("path"))
	}
	id, err := shardOf(r)
	if err != nil {
		return memd.NoteResult{}, err
	}
	var b editNoteBody
	if err := decode(w, r, &b); err != nil {
		return memd.NoteResult{}, err
	}
	return s.svc.EditNote(r.Context(), memd.EditNoteRequest{Shard: id, Path: path, ExpectedRevision: b.ExpectedRevision, Edits: b.Edits, Source: b.Source})
}

func (s *Server) deleteNote(_ http.ResponseWriter, r *http.Request, id memd.ShardID) (memd.NoteResult, error) {
	p := paramsOf(r)
	return s.svc.DeleteNote(r.Context(), memd.DeleteNoteRequest{
		Shard: id, Path: r.PathValue("path"), ExpectedRevision: p.get("expectedRevision"), Source: p.source(),
	})
}
