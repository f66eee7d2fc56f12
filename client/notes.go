package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/memd/memd"
)

// notePath is the URL path of a note. The path is checked here, as the
// daemon checks it: a ".." segment would otherwise be cleaned out of the
// URL on its way and name a note of another shard.
func notePath(s memd.ShardID, path string) (string, error) {
	if err := memd.ValidateNotePath(path); err != nil {
		return "", err
	}
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return shardPath(s) + "/notes/" + strings.Join(segs, "/"), nil
}

// withSource puts a write's source in its body, when it holds any.
func withSource(body map[string]any, src memd.Source) {
	if !src.IsZero() {
		body["source"] = src
	}
}

// ListNotes implements memd.Service.
func (c *Client) ListNotes(ctx context.Context, shard memd.ShardID) ([]memd.NoteInfo, error) {
	var out struct {
		Notes []memd.NoteInfo `json:"notes"`
	}
	err := c.Do(ctx, http.MethodGet, shardPath(shard)+"/notes", nil, nil, &out)
	return out.Notes, err
}

// ReadNote implements memd.Service.
func (c *Client) ReadNote(ctx context.Context, shard memd.ShardID, path, at string) (memd.Note, error) {
	var out memd.Note
	var q url.Values
	if at != "" {
		q = url.Values{"at": {at}}
	}
	p, err := notePath(shard, path)
	if err == nil {
		err = c.Do(ctx, http.MethodGet, p, q, nil, &out)
	}
	return out, err
}

// CreateNote implements memd.Service.
func (c *Client) CreateNote(ctx context.Context, req memd.CreateNoteRequest) (memd.NoteResult, error) {
	var out memd.NoteResult
	body := map[string]any{"path": req.Path, "text": req.Text}
	err := c.add(ctx, req.Shard, "/notes", body, req.Source, req.Create, &out)
	return out, err
}

// EditNote implements memd.Service.
func (c *Client) EditNote(ctx context.Context, req memd.EditNoteRequest) (memd.NoteResult, error) {
	var out memd.NoteResult
	body := map[string]any{"edits": req.Edits}
	if req.ExpectedRevision != "" {
		body["expectedRevision"] = req.ExpectedRevision
	}
	withSource(body, req.Source)
	p, err := notePath(req.Shard, req.Path)
	if err == nil {
		err = c.Do(ctx, http.MethodPost, p+":edit", nil, body, &out)
	}
	return out, err
}

// DeleteNote implements memd.Service.
func (c *Client) DeleteNote(ctx context.Context, req memd.DeleteNoteRequest) (memd.NoteResult, error) {
	var out memd.NoteResult
	q := url.Values{}
	if req.ExpectedRevision != "" {
		q.Set("expectedRevision", req.ExpectedRevision)
	}
	p, err := notePath(req.Shard, req.Path)
	if err == nil {
		err = c.Do(ctx, http.MethodDelete, p, sourceQuery(q, req.Source), nil, &out)
	}
	return out, err
}
