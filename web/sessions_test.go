package web

import (
	"net/http"
	"testing"
	"time"
)

// A session left idle past its time ends, and so does what it has open,
// though nothing asked about it (a tab with only the live feed open).
func TestSessions_AnIdleSessionEnds(t *testing.T) {
	s := NewSessions()
	s.idle = 500 * time.Millisecond
	id := s.start()
	r, _ := http.NewRequest("GET", "/v1/feed", nil)
	r.AddCookie(&http.Cookie{Name: CookieName, Value: id})
	ended := s.Ended(r)
	select {
	case <-ended:
		t.Fatal("the session ended at once")
	default:
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle session did not end")
	}
	if s.Session(r) {
		t.Error("the ended session still signs the browser in")
	}
}
