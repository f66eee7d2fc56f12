package chatmodel

import (
	"context"
	"errors"
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
