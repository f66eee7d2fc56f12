// Package scriptedmodel is the one fake memd's tests allow: a local
// OpenAI-compatible chat completions endpoint that answers from a script,
// so the learner's real openai-go client is tested end to end. It records
// every request it is sent.
package scriptedmodel

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Request is what one chat completion call asked: its system and user
// messages (the last of each), and the call's context, which ends when the
// caller gives up.
type Request struct {
	Model, System, User string
	Context             context.Context
}

// Answer gives a request's HTTP status and, for 200, the assistant's text.
// A status of 0 answers nothing (the caller went away).
type Answer func(Request) (status int, content string)

// Server is a running scripted model; its URL plus "/v1" is the base URL
// memd takes.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	answer   Answer
}

// New starts a scripted model, closed when the test ends.
func New(t testing.TB, answer Answer) *Server {
	s := &Server{answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Reply answers every request with status 200 and text.
func Reply(text string) Answer {
	return func(Request) (int, string) { return http.StatusOK, text }
}

// Script replaces the answers from now on.
func (s *Server) Script(answer Answer) {
	s.mu.Lock()
	s.answer = answer
	s.mu.Unlock()
}

// Asked returns the requests received so far.
func (s *Server) Asked() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct{ Role, Content string }
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
		http.Error(w, "want a chat completion request", http.StatusBadRequest)
		return
	}
	req := Request{Model: body.Model, Context: r.Context()}
	for _, m := range body.Messages {
		switch m.Role {
		case "system":
			req.System = m.Content
		case "user":
			req.User = m.Content
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	answer := s.answer
	s.mu.Unlock()
	status, content := answer(req)
	switch {
	case status == 0:
		return
	case status != http.StatusOK:
		http.Error(w, `{"error":{"message":"scripted failure"}}`, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}
