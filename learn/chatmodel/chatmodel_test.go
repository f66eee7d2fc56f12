package chatmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd/learn"
)

// A model that answers 429 with Retry-After says how long to wait; other
// failures do not.
func TestComplete_BusyWithRetryAfter(t *testing.T) {
	status, after := http.StatusTooManyRequests, "20"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if after != "" {
			w.Header().Set("Retry-After", after)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(`{"error": {"message": "slow down", "type": "rate_limit"}}`))
	}))
	defer srv.Close()
	m := New(learn.ModelConfig{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second})
	_, err := m.Complete(context.Background(), "s", "u")
	var busy *learn.Busy
	if !errors.As(err, &busy) || busy.After != 20*time.Second {
		t.Errorf("429 with Retry-After: 20: %v (%+v)", err, busy)
	}
	status, after = http.StatusServiceUnavailable, time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat)
	if _, err = m.Complete(context.Background(), "s", "u"); !errors.As(err, &busy) || busy.After < 80*time.Second || busy.After > 91*time.Second {
		t.Errorf("503 with a Retry-After date: %v (%+v)", err, busy)
	}
	status, after = http.StatusBadRequest, ""
	if _, err = m.Complete(context.Background(), "s", "u"); err == nil || errors.As(err, &busy) {
		t.Errorf("400: %v", err)
	}
}

// An answer cut off at the token limit, or an empty one, is an error the
// learner retries and then shows, not an answer: a cut line would be
// committed as a fact, and nothing would read as an exchange without one.
func TestComplete_CutOrEmptyAnswersAreErrors(t *testing.T) {
	answer := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	}))
	defer srv.Close()
	m := New(learn.ModelConfig{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second})
	reply := func(content, finish string) string {
		return `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":` + content + `},"finish_reason":"` + finish + `"}]}`
	}
	for _, c := range []struct {
		answer, want string
	}{
		{reply(`"profile: Likes tea\nprofile: The on-call rotation is handed over at"`, "length"), "cut off"},
		{reply(`null`, "stop"), "answered nothing"},
		{reply(`"  "`, "stop"), "answered nothing"},
	} {
		answer = c.answer
		if got, err := m.Complete(context.Background(), "s", "u"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error saying %q", c.answer, got, err, c.want)
		}
	}
	answer = reply(`"NONE"`, "stop")
	if got, err := m.Complete(context.Background(), "s", "u"); err != nil || got != "NONE" {
		t.Errorf("a whole answer: %q, %v", got, err)
	}
}

// The longest answer asked for is the one configured, 1024 tokens by
// default, and an answer cut off there says how to ask for more.
func TestComplete_AsksForTheConfiguredLongestAnswer(t *testing.T) {
	var asked []int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			MaxTokens int64 `json:"max_tokens"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		asked = append(asked, req.MaxTokens)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"profile: Likes"},"finish_reason":"length"}]}`))
	}))
	defer srv.Close()
	for _, c := range []struct {
		set  int
		want int64
	}{{0, 1024}, {4096, 4096}} {
		m := New(learn.ModelConfig{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second, MaxTokens: c.set})
		_, err := m.Complete(context.Background(), "s", "u")
		if got := asked[len(asked)-1]; got != c.want {
			t.Errorf("MaxTokens %d: asked for %d tokens, want %d", c.set, got, c.want)
		}
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("limit of %d tokens", c.want)) || !strings.Contains(err.Error(), "--model-max-tokens") {
			t.Errorf("MaxTokens %d: %v", c.set, err)
		}
	}
}
