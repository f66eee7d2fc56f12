package httpapi

import (
	"net/http"
	"strings"

	"github.com/memd/memd"
)

func (s *Server) listNotes(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	notes, err := s.svc.ListNotes(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"notes": notes})
	return nil
}

func (s *Server) readNote(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	if path, ok := strings.CutSuffix(r.PathValue("path"), ":history"); ok {
		return s.noteHistory(w, r, id, path)
	}
	note, err := s.svc.ReadNote(r.Context(), id, r.PathValue("path"), r.URL.Query().Get("at"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, note)
	return nil
}

// noteHistory answers GET /v1/shards/{shard}/notes/{path}:history.
func (s *Server) noteHistory(w http.ResponseWriter, r *http.Request, id memd.ShardID, path string) error {
	q := memd.NoteHistoryQuery{Shard: id, Path: path}
	var err error
	if q.Limit, err = queryInt(r, "limit"); err != nil {
		return err
	}
	if q.Offset, err = queryInt(r, "offset"); err != nil {
		return err
	}
	versions, err := s.svc.NoteHistory(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": versions})
	return nil
}

// createNoteBody is the body of POST /v1/shards/{shard}/notes.
type createNoteBody struct {
	Path   string      `json:"path"`
	Text   string      `json:"text"`
	Source memd.Source `json:"source,omitzero"`
	Create bool        `json:"create,omitempty"`
}

func (s *Server) createNote(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	var b createNoteBody
	if err := decode(w, r, &b); err != nil {
		return err
	}
	res, err := s.svc.CreateNote(r.Context(), memd.CreateNoteRequest{Shard: id, Path: b.Path, Text: b.Text, Source: b.Source, Create: b.Create})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, res)
	return nil
}

// editNoteBody is the body of POST /v1/shards/{shard}/notes/{path}:edit.
type editNoteBody struct {
	ExpectedRevision string          `json:"expectedRevision,omitempty"`
	Edits            []memd.NoteEdit `json:"edits"`
	Source           memd.Source     `json:"source,omitzero"`
}

// notePost is POST on a note's path: only ":edit" is one.
func (s *Server) notePost(w http.ResponseWriter, r *http.Request) error {
	path, ok := strings.CutSuffix(r.PathValue("path"), ":edit")
	if !ok {
		return memd.Errorf(memd.EINVALID, "POST a note's path with :edit to edit it (…/notes/%s:edit); create notes with POST …/notes", r.PathValue("path"))
	}
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	var b editNoteBody
	if err := decode(w, r, &b); err != nil {
		return err
	}
	res, err := s.svc.EditNote(r.Context(), memd.EditNoteRequest{Shard: id, Path: path, ExpectedRevision: b.ExpectedRevision, Edits: b.Edits, Source: b.Source})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) deleteNote(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	res, err := s.svc.DeleteNote(r.Context(), memd.DeleteNoteRequest{
		Shard: id, Path: r.PathValue("path"), ExpectedRevision: q.Get("expectedRevision"),
		Source: memd.Source{Messages: q["message"], Chat: q.Get("chat")},
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
