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

// ModelConfig says where the model is: any OpenAI-compatible chat
// completions endpoint (OpenAI, Ollama, vLLM, llama.cpp's server). The
// client is in learn/chatmodel, so that what reads the model's answers
// does not depend on it.
type ModelConfig struct {
	BaseURL string
	APIKey  string // may be empty for local servers
	Model   string
	Timeout time.Duration // per call; 60s when zero
}
