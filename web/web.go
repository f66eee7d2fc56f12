// Package web is memd's web UI: a page for the people who review and fix
// what agents learned, embedded in the binary and served at /. It speaks
// the same JSON API as everyone else, signed in with a session cookie that
// the admin token (or the one-time link `memd serve` prints) opens.
package web

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/memd/memd"
)

//go:embed static
var static embed.FS

// CookieName is the session cookie.
const CookieName = "memd_session"

// Lifetimes of a session (renewed by use) and of a one-time login link.
const (
	sessionIdle = 12 * time.Hour
	linkValid   = 15 * time.Minute
)

// Sessions are the signed-in browsers, in memory: a restart signs everyone
// out. Only admins sign in.
type Sessions struct {
	mu       sync.Mutex
	sessions map[string]*session
	links    map[string]time.Time // one-time login code -> expiry
	now      func() time.Time
	idle     time.Duration // how long a session lasts unused
}

// session is a signed-in browser: until when, and closed when it ends, so
// that what it has open (the live feed) ends with it.
type session struct {
	expires time.Time
	ended   chan struct{}
	timer   *time.Timer // ends it once idle past expires, though nothing asks
}

// NewSessions returns an empty set of sessions.
func NewSessions() *Sessions {
	return &Sessions{sessions: make(map[string]*session), links: make(map[string]time.Time), now: time.Now, idle: sessionIdle}
}

func randomID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// LoginLink returns a one-time code that signs a browser in, valid for 15
// minutes. It is not the admin token, so printing it leaks nothing lasting.
func (s *Sessions) LoginLink() string {
	code := randomID()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.links[code] = s.now().Add(linkValid)
	return code
}

// redeem uses up a login code.
func (s *Sessions) redeem(code string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.links[code]
	delete(s.links, code)
	return ok && s.now().Before(exp)
}

func (s *Sessions) start() string {
	id := randomID()
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := &session{expires: s.now().Add(s.idle), ended: make(chan struct{})}
	ss.timer = time.AfterFunc(s.idle, func() { s.expire(id) })
	s.sessions[id] = ss
	return id
}

// expire ends a session idle past its time (a feed left open renews
// nothing), or waits again for the time its use moved it to.
func (s *Sessions) expire(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[id]
	if !ok {
		return
	}
	if left := ss.expires.Sub(s.now()); left > 0 {
		ss.timer.Reset(left)
		return
	}
	s.endLocked(id)
}

func (s *Sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(id)
}

// endLocked ends a session, closing what it has open; s.mu is held.
func (s *Sessions) endLocked(id string) {
	if ss, ok := s.sessions[id]; ok {
		ss.timer.Stop()
		close(ss.ended)
		delete(s.sessions, id)
	}
}

// Session reports whether a request carries a live session cookie, and
// renews it.
func (s *Sessions) Session(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[c.Value]
	if !ok || s.now().After(ss.expires) {
		return false
	}
	ss.expires = s.now().Add(s.idle)
	return true
}

// Ended returns a channel closed when the session of a request ends: it
// signs out (in any tab), or stays idle past its time. A request without a
// live session gets one closed already.
func (s *Sessions) Ended(r *http.Request) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, err := r.Cookie(CookieName); err == nil {
		if ss, ok := s.sessions[c.Value]; ok && !s.now().After(ss.expires) {
			return ss.ended
		}
	}
	ended := make(chan struct{})
	close(ended)
	return ended
}

// Authenticator checks a token, as the API does.
type Authenticator interface {
	Authenticate(token string) (memd.Caller, error)
}

// Handler serves the UI and its sign-in.
type Handler struct {
	sessions *Sessions
	auth     Authenticator
	files    http.Handler
	csrf     *http.CrossOriginProtection
}

// New returns the UI's handler.
func New(sessions *Sessions, auth Authenticator) *Handler {
	sub, _ := fs.Sub(static, "static")
	return &Handler{sessions: sessions, auth: auth, files: http.FileServerFS(sub), csrf: http.NewCrossOriginProtection()}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	switch r.URL.Path {
	case "/login":
		h.login(w, r)
	case "/logout":
		h.logout(w, r)
	case "/markdown":
		h.csrf.Handler(http.HandlerFunc(h.renderMarkdown)).ServeHTTP(w, r)
	case "/", "/index.html":
		if !h.sessions.Session(r) {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h.files.ServeHTTP(w, r)
	default:
		if strings.HasPrefix(r.URL.Path, "/static/") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/static")
			h.files.ServeHTTP(w, r2)
			return
		}
		http.NotFound(w, r)
	}
}

func (h *Handler) setSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: h.sessions.start(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(sessionIdle / time.Second)})
}

// login signs a browser in with a one-time code (GET /login?code=...), or
// with the admin token typed into the form (POST /login).
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		if code := r.URL.Query().Get("code"); code != "" {
			if h.sessions.redeem(code) {
				h.setSession(w, r)
				http.Redirect(w, r, "/", http.StatusSeeOther)
				return
			}
			loginPage(w, "That sign-in link was used already or has expired. Sign in with the admin token.")
			return
		}
		loginPage(w, "")
	case http.MethodPost:
		if err := h.csrf.Check(r); err != nil {
			http.Error(w, "cross-origin sign-in refused", http.StatusForbidden)
			return
		}
		token := strings.TrimSpace(r.PostFormValue("token"))
		c, err := h.auth.Authenticate(token)
		if err != nil || !c.Admin {
			w.WriteHeader(http.StatusUnauthorized)
			loginPage(w, "That is not the admin token. It is in admin.token in memd's data directory.")
			return
		}
		h.setSession(w, r)
		http.Redirect(w, r, "/", http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := h.csrf.Check(r); err != nil {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	if c, err := r.Cookie(CookieName); err == nil {
		h.sessions.end(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func loginPage(w http.ResponseWriter, problem string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	msg := ""
	if problem != "" {
		msg = `<p class="problem" role="alert">` + htmlEscape(problem) + `</p>`
	}
	w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>memd · sign in</title>
<link rel="stylesheet" href="/static/style.css"></head><body class="login">
<main><h1>memd</h1><p>Sign in with the link <code>memd serve</code> printed, or with the admin token
(the file <code>admin.token</code> in memd's data directory).</p>` + msg + `
<form method="post" action="/login"><label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button></form></main></body></html>`))
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}
