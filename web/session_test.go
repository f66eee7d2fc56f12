package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/memd/memd"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestSignIn(t *testing.T) {
	d, admin := startDaemon(t)
	token := admin.Token
	agent, err := admin.AddAgent(context.Background(), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	base := d.URL()

	resp, err := noRedirect.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("the UI without a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	// A one-time link works once.
	code := d.Sessions.LoginLink()
	resp, _ = noRedirect.Get(base + "/login?code=" + code)
	resp.Body.Close()
	cookie := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookie) != 1 || !cookie[0].HttpOnly || cookie[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign in with the link: %d %+v", resp.StatusCode, cookie)
	}
	resp, _ = noRedirect.Get(base + "/login?code=" + code)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(resp.Cookies()) != 0 || !strings.Contains(string(body), "used already or has expired") {
		t.Errorf("the link used twice: %d %s", resp.StatusCode, body)
	}

	// The form takes the admin token, and no other.
	for _, c := range []struct {
		token string
		want  int
	}{{"nonsense", http.StatusUnauthorized}, {agent.Token, http.StatusUnauthorized}, {token, http.StatusSeeOther}} {
		resp, err := noRedirect.PostForm(base+"/login", url.Values{"token": {c.token}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("sign in with %q: %d, want %d", c.token[:4], resp.StatusCode, c.want)
		}
	}

	// With the cookie, the API answers as the admin; a write from another
	// site's page is refused.
	write := func(site string) int {
		req, _ := http.NewRequest("POST", base+"/v1/shards/agent/alice/facts", strings.NewReader(`{"text": "Likes jazz"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Sec-Fetch-Site", site)
		req.AddCookie(cookie[0])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := write("cross-site"); got != http.StatusForbidden {
		t.Errorf("a cross-site write with the cookie: %d, want 403", got)
	}
	if got := write("same-origin"); got != http.StatusCreated {
		t.Errorf("a write from the UI: %d, want 201", got)
	}
	// The live feed another tab opened with the session ends when it
	// signs out: nothing written after reaches it.
	ws, _, err := websocket.DefaultDialer.Dial(strings.Replace(base, "http://", "ws://", 1)+"/v1/feed",
		http.Header{"Cookie": {cookie[0].Name + "=" + cookie[0].Value}, "Origin": {base}, "Sec-Fetch-Site": {"same-origin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	req, _ := http.NewRequest("POST", base+"/logout", nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(cookie[0])
	resp, _ = noRedirect.Do(req)
	resp.Body.Close()
	if got := write("same-origin"); got != http.StatusUnauthorized {
		t.Errorf("a write after signing out: %d, want 401", got)
	}
	if _, err := admin.Remember(context.Background(), memd.RememberRequest{Shard: memd.AgentShard("alice"), Text: "The vault code is 4711"}); err != nil {
		t.Fatal(err)
	}
	// A commit made before signing out may still be on its way to the
	// feed (the hub publishes after the write's answer); the one made
	// after must not arrive, and the feed ends saying why.
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			if !strings.Contains(err.Error(), "signed out") {
				t.Errorf("the feed after signing out ended with %v", err)
			}
			break
		}
		if strings.Contains(string(msg), "vault code") {
			t.Errorf("the feed after signing out: %s", msg)
			break
		}
	}
}
