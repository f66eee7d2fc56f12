package learn

import (
	"context"
	"time"
)

// Model answers a prompt.
type Model interface {
	Name() string
	Complete(ctx context.Context, system, user string) (string, error)
}

// Busy is a model's answer that it is overloaded or rate-limited (HTTP
// 429 or 503): the learner waits at least After before trying again.
type Busy struct {
	Err   error
	After time.Duration // 0 when the server named no time
}

func (b *Busy) Error() string { return b.Err.Error() }
func (b *Busy) Unwrap() error { return b.Err }

// ModelConfig says where the model is: any OpenAI-compatible chat
// completions endpoint (OpenAI, Ollama, vLLM, llama.cpp's server). The
// client is in learn/chatmodel, so that what reads the model's answers
// does not depend on it.
type ModelConfig struct {
	BaseURL string
	APIKey  string // may be empty for local servers
	Model   string
	Timeout time.Duration // per call; 60s when zero
	// MaxTokens bounds an answer; DefaultMaxTokens when zero.
	MaxTokens int
}

// DefaultMaxTokens bounds an answer: about 4,000 characters, room for the
// 10 facts and 5 removals of an exchange at the lengths facts have (a
// fact may be 500 characters; 15 that long would be cut off, and the call
// fail). Not more by default: some servers refuse a request whose prompt
// and answer together exceed the model's context.
const DefaultMaxTokens = 1024
