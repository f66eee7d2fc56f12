package web

import (
	"io"
	"net/http"

	"github.com/memd/memd/web/markdown"
)

// maxMarkdown bounds a text sent to be rendered (a note is at most 1 MiB).
const maxMarkdown = 1 << 20

// renderMarkdown answers POST /markdown, for a signed-in browser: the
// body's Markdown as sanitised HTML.
func (h *Handler) renderMarkdown(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a Markdown text", http.StatusMethodNotAllowed)
		return
	}
	if !h.sessions.Session(r) {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	src, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMarkdown))
	if err != nil {
		http.Error(w, "the text is over 1 MiB", http.StatusRequestEntityTooLarge)
		return
	}
	out, err := markdown.Render(src)
	if err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(out)
}
