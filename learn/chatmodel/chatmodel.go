// Package chatmodel is the learner's model client: any OpenAI-compatible
// chat completions endpoint, through openai-go.
package chatmodel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/memd/memd/learn"
)

// New returns a model client for cfg. The learner retries by itself,
// so the client does not.
func New(cfg learn.ModelConfig) learn.Model {
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = learn.DefaultMaxTokens
	}
	c := openai.NewClient(
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithRequestTimeout(cfg.Timeout),
		option.WithMaxRetries(0),
	)
	return &chatModel{client: c, cfg: cfg}
}

type chatModel struct {
	client openai.Client
	cfg    learn.ModelConfig
}

func (m *chatModel) Name() string { return m.cfg.Model }

func (m *chatModel) Complete(ctx context.Context, system, user string) (string, error) {
	resp, err := m.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       m.cfg.Model,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(user)},
		Temperature: openai.Float(0),
		MaxTokens:   openai.Int(int64(m.cfg.MaxTokens)),
	})
	if err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			err := fmt.Errorf("model %s at %s answered %d", m.cfg.Model, m.cfg.BaseURL, apiErr.StatusCode)
			if apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode == http.StatusServiceUnavailable {
				return "", &learn.Busy{Err: err, After: retryAfter(apiErr.Response)}
			}
			return "", err
		}
		return "", fmt.Errorf("model %s at %s: %w", m.cfg.Model, m.cfg.BaseURL, err)
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("model %s answered with no choices", m.cfg.Model)
	}
	choice := resp.Choices[0]
	answer := strings.TrimSpace(choice.Message.Content)
	switch {
	case choice.FinishReason == "length":
		// Its last line may be a fact cut in half: none of it is taken.
		return "", fmt.Errorf("model %s's answer was cut off at its limit of %d tokens (raise it with --model-max-tokens)", m.cfg.Model, m.cfg.MaxTokens)
	case answer == "":
		// Asked to say NONE when there is nothing: an empty answer is a
		// model or a server at fault, not an exchange without facts.
		return "", fmt.Errorf("model %s answered nothing (finish reason %q)", m.cfg.Model, choice.FinishReason)
	}
	return answer, nil
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when
// there is none, and at most an hour.
func retryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	return min(max(d, 0), time.Hour)
}
