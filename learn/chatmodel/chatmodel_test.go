package chatmodel

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
