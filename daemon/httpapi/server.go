// Package httpapi serves memd's JSON API over HTTP. Handlers parse the
// request, call one memd.Service method and render the result; the service
// (wrapped by access.Guard) does the rest. Errors are JSON
// {"error": {"code", "message", "rule"}} with the status from one table.
package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memd/memd"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// Authenticator turns a bearer token into a caller.
type Authenticator interface {
	Authenticate(token string) (memd.Caller, error)
}

// Server is the HTTP API.
type Server struct {
	svc  memd.Service
	auth Authenticator
	log  *slog.Logger
	mux  *http.ServeMux

	// Sessions, when set, lets a signed-in browser (the web UI) call the
	// API as the admin with its session cookie instead of a token.
	Sessions interface {
		Session(*http.Request) bool
		Ended(*http.Request) <-chan struct{} // closed when the request's session ends
	}
	// Ready, when set, says whether memd is ready to answer (/readyz),
	// and if not, why.
	Ready func() (ok bool, waiting []string)
	// Observe, when set, is told of every API request answered: its route
	// pattern, status and duration.
	Observe func(route string, status int, took time.Duration)
	// FeedPing is how often an open feed is pinged; one silent for three
	// times that is dropped. 20s when zero.
	FeedPing time.Duration
	csrf     *http.CrossOriginProtection
}

// New returns the API handler for a service, with metrics (when given)
// at /metrics.
func New(svc memd.Service, auth Authenticator, log *slog.Logger, metrics http.Handler) *Server {
	s := &Server{svc: svc, auth: auth, log: log, mux: http.NewServeMux(), csrf: http.NewCrossOriginProtection()}
	s.routes()
	if metrics != nil {
		s.mux.Handle("GET /metrics", metrics)
	}
	return s
}

func (s *Server) routes() {
	shard := "/v1/shards/{kind}/{name}"
	ok, created, accepted := http.StatusOK, http.StatusCreated, http.StatusAccepted
	s.handle("POST "+shard+"/facts", s.remember)
	s.handle("GET "+shard+"/facts", replies(ok, inShard(s.facts)))
	s.handle("DELETE "+shard+"/facts/{id}", replies(ok, inShard(s.forget)))
	s.handle("PATCH "+shard+"/facts/{id}", replies(ok, inShard(s.editFact)))
	s.handle("GET "+shard+"/facts/{id}/trace", replies(ok, inShard(s.trace)))
	s.handle("GET "+shard+"/log", replies(ok, inShard(s.history)))
	s.handle("GET "+shard+"/notes", replies(ok, inShard(s.listNotes)))
	s.handle("POST "+shard+"/notes", replies(created, inShard(s.createNote)))
	s.handle("GET "+shard+"/notes/{path...}", replies(ok, inShard(s.readNote)))
	s.handle("POST "+shard+"/notes/{path...}", replies(ok, s.notePost))
	s.handle("DELETE "+shard+"/notes/{path...}", replies(ok, inShard(s.deleteNote)))
	s.handle("GET /v1/shards", replies(ok, s.shards))
	s.handle("POST /v1/revert", replies(ok, takes(s.svc.Revert)))
	s.handle("DELETE /v1/messages/{id}", replies(ok, s.purgeMessage))
	s.handle("GET /v1/stats/learning", replies(ok, s.learningStats))
	s.handle("GET /v1/stats/growth", replies(ok, s.growth))
	s.handle("GET /v1/agents", replies(ok, s.agents))
	s.handle("POST /v1/agents", replies(created, s.addAgent))
	s.handle("DELETE /v1/agents/{name}", s.removeAgent)
	s.handle("PUT /v1/agents/{name}/review", replies(ok, s.setReview))
	s.handle("GET /v1/proposals", replies(ok, s.proposals))
	s.handle("POST /v1/proposals/review", replies(ok, takes(s.svc.Review)))
	s.handle("GET /v1/status", replies(ok, s.status))
	s.handle("GET /v1/remotes", replies(ok, s.remotes))
	s.handle("POST /v1/remotes/sync", replies(ok, s.syncRemotes))
	s.handle("GET /v1/recall", replies(ok, s.recall))
	s.handle("GET /v1/context", s.context)
	s.handle("GET /v1/feed", s.feed)
	s.handle("POST /v1/exchanges", replies(accepted, takes(s.svc.Learn)))
	s.handle("GET /v1/exchanges", replies(ok, s.exchanges))
	s.handle("POST /v1/exchanges/{id}/retry", replies(accepted, s.retryExchange))
	s.handle("POST /v1/synthesis", replies(accepted, s.synthesize))
	// Health needs no token: a supervisor or load balancer asks.
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ok, waiting := true, []string{}
		if s.Ready != nil {
			ok, waiting = s.Ready()
		}
		status, code := "ready", http.StatusOK
		if !ok {
			status, code = "not ready", http.StatusServiceUnavailable
		}
		writeJSON(w, code, map[string]any{"status": status, "waiting": waiting})
	})
	s.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		if allowed := s.methodsFor(r); len(allowed) > 0 {
			var body ErrorBody
			body.Error.Code = "method_not_allowed"
			body.Error.Message = fmt.Sprintf("%s takes %s, not %s", r.URL.Path, strings.Join(allowed, ", "), r.Method)
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeJSON(w, http.StatusMethodNotAllowed, body)
			return
		}
		writeError(w, memd.Errorf(memd.ENOTFOUND, "no API endpoint %s %s", r.Method, r.URL.Path))
	})
}

// methodsFor lists the methods an endpoint at r's path takes, none when
// there is no endpoint there: the mux's catch-all for /v1/ takes every
// path any method of an endpoint does not, where the mux alone would
// have answered 405.
func (s *Server) methodsFor(r *http.Request) []string {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		// A path the mux would redirect (to add a slash) is answered by
		// a handler of its own: not an endpoint of that method.
		if h, pattern := s.mux.Handler(probe); pattern != "/v1/" && pattern != "" && fmt.Sprintf("%T", h) != "*http.redirectHandler" {
			allowed = append(allowed, m)
		}
	}
	return allowed
}

// handle registers an authenticated JSON endpoint.
func (s *Server) handle(pattern string, h func(w http.ResponseWriter, r *http.Request) error) {
	route := pattern
	s.mux.HandleFunc(pattern, func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w, ok := rw.(*statusWriter) // as ServeHTTP wraps every request
		if !ok {
			w = &statusWriter{ResponseWriter: rw}
		}
		w.route = route
		caller, err := s.authenticate(r)
		if err == nil {
			w.caller = caller.Name()
			r = r.WithContext(memd.NewContext(r.Context(), caller))
			err = h(w, r)
		}
		if err != nil {
			if memd.ErrorCode(err) == memd.EINTERNAL || memd.DiskFull(err) {
				s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, err)
		}
		if s.Observe != nil {
			s.Observe(route, w.code(), time.Since(start))
		}
	})
}

// replies adapts an endpoint that answers one value: written as JSON
// with status, unless the endpoint fails.
func replies[T any](status int, h func(http.ResponseWriter, *http.Request) (T, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := h(w, r)
		if err != nil {
			return err
		}
		writeJSON(w, status, v)
		return nil
	}
}

// inShard adapts an endpoint under /v1/shards/{kind}/{name}: the shard
// named in the path is parsed before h runs.
func inShard[T any](h func(http.ResponseWriter, *http.Request, memd.ShardID) (T, error)) func(http.ResponseWriter, *http.Request) (T, error) {
	return func(w http.ResponseWriter, r *http.Request) (T, error) {
		id, err := shardOf(r)
		if err != nil {
			var none T
			return none, err
		}
		return h(w, r, id)
	}
}

// takes adapts a service call whose request is the body, one JSON value.
func takes[B, T any](call func(context.Context, B) (T, error)) func(http.ResponseWriter, *http.Request) (T, error) {
	return func(w http.ResponseWriter, r *http.Request) (T, error) {
		var b B
		if err := decode(w, r, &b); err != nil {
			var none T
			return none, err
		}
		return call(r.Context(), b)
	}
}

// statusWriter remembers the status a handler answered with. It passes
// Flush and Hijack through (the feed's websocket upgrade needs them).
type statusWriter struct {
	http.ResponseWriter
	status int
	// route and caller, for the access log: the pattern an API request
	// matched, and who made it once known.
	route, caller string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Unwrap lets http.ResponseController reach the connection beneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack hands the connection over (the feed's websocket), answering 101.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be taken over")
	}
	w.status = http.StatusSwitchingProtocols
	return h.Hijack()
}

// Flush sends what was written so far.
func (w *statusWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Open serves h at pattern with no authentication of its own (the web
// UI, which signs people in).
func (s *Server) Open(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Mount serves h at pattern for authenticated callers, with the caller in
// the request's context; others get the API's 401.
func (s *Server) Mount(pattern string, h http.Handler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		caller, err := s.authenticate(r)
		if err != nil {
			writeError(w, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(memd.NewContext(r.Context(), caller)))
	})
}

// MountGit serves h at pattern for git clients: they authenticate with
// HTTP Basic (any user name, the token as password) or a Bearer header,
// are challenged for Basic when they sent neither, and read refusals as
// plain text, which git shows its user as "remote: …" lines.
func (s *Server) MountGit(pattern string, h http.Handler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if _, pass, ok := r.BasicAuth(); ok {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+pass)
		}
		// A git client declares no chat: a chat_kind on its URL is not
		// read (git appends its paths after the query, so it could not
		// be read rightly anyway).
		caller, err := s.identify(r)
		if err != nil {
			if memd.ErrorCode(err) == memd.EUNAUTHORIZED {
				w.Header().Set("WWW-Authenticate", `Basic realm="memd"`)
			}
			WriteGitError(w, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(memd.NewContext(r.Context(), caller)))
	})
}

// WriteGitError answers a git client with an error it shows its user.
func WriteGitError(w http.ResponseWriter, err error) {
	msg := memd.ErrorMessage(err)
	if rule := memd.ErrorRule(err); rule != "" {
		msg += " (rule: " + rule + ")"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(StatusOf(memd.ErrorCode(err)))
	io.WriteString(w, memd.ErrorCode(err)+": "+msg+"\n")
}

// ServeHTTP logs each request (the access log, at debug level: method,
// path, route, status, caller and time; never a token) and turns panics
// into internal errors.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", p)
			writeError(rec, fmt.Errorf("panic: %v", p))
		}
		route := rec.route
		if route == "" {
			route = r.Pattern // set by the mux: pages, files, git
		}
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "route", route, "status", rec.code(), "caller", rec.caller, "took", time.Since(start))
	}()
	s.mux.ServeHTTP(rec, r)
}

// authenticate returns the caller of an API request: who the token or
// session names, in the chat kind the query declares.
func (s *Server) authenticate(r *http.Request) (memd.Caller, error) {
	c, err := s.identify(r)
	if err != nil {
		return c, err
	}
	query := r.URL.Query()
	if err := checkQuery(query); err != nil {
		return c, err
	}
	if c.ChatKind, err = memd.ParseChatKind(query.Get("chat_kind")); err != nil {
		return c, err
	}
	return c, nil
}

// repeatable are the query parameters that may be given more than once:
// a list each. Any other given twice is refused rather than one of the two
// taken.
var repeatable = map[string]bool{"message": true, "projects": true, "shards": true, "since": true}

// checkQuery refuses a query whose names or values are not valid UTF-8
// (decoded, they would stand for other text than was sent) or that gives
// a parameter twice that is not a list.
func checkQuery(query url.Values) error {
	for key, vs := range query {
		if !utf8.ValidString(key) {
			return memd.Errorf(memd.EINVALID, "a query parameter's name is not valid UTF-8")
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return memd.Errorf(memd.EINVALID, "query parameter %s is not valid UTF-8", key)
			}
		}
		if len(vs) > 1 && !repeatable[key] {
			return memd.Errorf(memd.EINVALID, "query parameter %s is given %d times; give it once", key, len(vs))
		}
	}
	return nil
}

// identify returns who a request's token or session names, in no chat.
func (s *Server) identify(r *http.Request) (memd.Caller, error) {
	h := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if h != "" && !ok {
		return memd.Caller{}, memd.Errorf(memd.EUNAUTHORIZED, "Authorization must be \"Bearer <token>\"")
	}
	var c memd.Caller
	if h == "" && s.Sessions != nil && s.Sessions.Session(r) {
		// A cookie is sent by the browser whoever asks it to: writes must
		// come from the UI's own pages.
		if err := s.csrf.Check(r); err != nil {
			return c, memd.Errorf(memd.EFORBIDDEN, "cross-origin request refused")
		}
		c = memd.Caller{Admin: true}
	} else {
		var err error
		if c, err = s.auth.Authenticate(strings.TrimSpace(token)); err != nil {
			return c, err
		}
	}
	return c, nil
}

// statuses maps error codes to HTTP statuses, in one place.
var statuses = map[string]int{
	memd.EINVALID:         http.StatusBadRequest,
	memd.EUNAUTHORIZED:    http.StatusUnauthorized,
	memd.EFORBIDDEN:       http.StatusForbidden,
	memd.ENOTFOUND:        http.StatusNotFound,
	memd.ECONFLICT:        http.StatusConflict,
	memd.ETOOLARGE:        http.StatusRequestEntityTooLarge,
	memd.EANCHORNOTFOUND:  http.StatusUnprocessableEntity,
	memd.EANCHORAMBIGUOUS: http.StatusUnprocessableEntity,
	memd.EREVISION:        http.StatusConflict,
	memd.EUNAVAILABLE:     http.StatusServiceUnavailable,
	memd.EINTERNAL:        http.StatusInternalServerError,
}

// StatusOf returns the HTTP status for an error code.
func StatusOf(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON form of an error.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Rule    string `json:"rule,omitempty"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, err error) {
	var body ErrorBody
	body.Error.Code = memd.ErrorCode(err)
	body.Error.Message = memd.ErrorMessage(err)
	body.Error.Rule = memd.ErrorRule(err)
	if body.Error.Code == memd.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memd"`)
	}
	writeJSON(w, StatusOf(body.Error.Code), body)
}

// writeJSON answers with v as JSON, whole and with its length: a recall's
// answer outgrows the server's buffer, and written as it was encoded it
// went out in chunks, a system call each.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, "encode the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	w.Write(body.Bytes())
}

// decode reads one JSON value into v: at most MaxBody bytes of valid UTF-8,
// no unknown fields, nothing after the value.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return memd.Errorf(memd.ETOOLARGE, "request body is larger than %d bytes", MaxBody)
	}
	if err != nil {
		return memd.Errorf(memd.EINVALID, "read request body: %v", err)
	}
	if err := memd.CheckJSONText(body); err != nil {
		return memd.Errorf(memd.EINVALID, "request body: %s", memd.ErrorMessage(err))
	}
	if bytes.HasPrefix(body, []byte("\uFEFF")) {
		return memd.Errorf(memd.EINVALID, "request body begins with a byte-order mark; send the JSON without it")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return memd.Errorf(memd.EINVALID, "request body is empty; expected a JSON object")
	}
	if err := exactKeys(body, reflect.TypeOf(v)); err != nil {
		return memd.Errorf(memd.EINVALID, "request body: %s", jsonError(err))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return memd.Errorf(memd.EINVALID, "request body: %s", jsonError(err))
	}
	if dec.More() {
		return memd.Errorf(memd.EINVALID, "request body: unexpected data after the JSON value")
	}
	return nil
}

// jsonError makes a decoding error readable without Go type names.
func jsonError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var me *memd.Error
	switch {
	case errors.As(err, &me):
		return me.Message
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Sprintf("expected a JSON object, got a JSON %s", typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Sprintf("field %q has the wrong type (got a JSON %s)", typeErr.Field, typeErr.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends before its value does; expected a whole JSON object"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func shardOf(r *http.Request) (memd.ShardID, error) {
	return memd.ParseShardID(r.PathValue("kind") + "/" + r.PathValue("name"))
}

// params reads a request's query parameters, absent ones as zero, and
// keeps the first that does not parse as err.
type params struct {
	v   url.Values
	err error
}

func paramsOf(r *http.Request) *params { return &params{v: r.URL.Query()} }

// get reads a parameter given once; a list's given several times where
// one is read (since for the memory section, message for the log) keeps
// an error rather than the first.
func (p *params) get(key string) string {
	if vs := p.v[key]; len(vs) > 1 && p.err == nil {
		p.err = memd.Errorf(memd.EINVALID, "query parameter %s is given %d times here; give it once", key, len(vs))
	}
	return p.v.Get(key)
}

// list reads a comma-separated or repeated parameter.
func (p *params) list(key string) []string {
	var out []string
	for _, v := range p.v[key] {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// source is the source a DELETE names in its query: message (one or
// more) and chat.
func (p *params) source() memd.Source {
	return memd.Source{Messages: p.v["message"], Chat: p.get("chat")}
}

// parsed reads the parameter key with parse: absent, its zero value; not
// parsing, its zero value and the first error, as wrong words it.
func parsed[T any](p *params, key string, parse func(string) (T, error), wrong func(v string, err error) error) T {
	var zero T
	v := p.get(key)
	if v == "" {
		return zero
	}
	x, err := parse(v)
	if err != nil {
		if p.err == nil {
			p.err = wrong(v, err)
		}
		return zero
	}
	return x
}

func (p *params) date(key string) memd.Date {
	return parsed(p, key, memd.ParseDate, func(_ string, err error) error {
		return memd.Errorf(memd.EINVALID, "%s: %s", key, memd.ErrorMessage(err))
	})
}

func (p *params) int(key string) int {
	return parsed(p, key, strconv.Atoi, func(v string, _ error) error {
		return memd.Errorf(memd.EINVALID, "%s must be a whole number, got %q", key, v)
	})
}

func (p *params) bool(key string) bool {
	return parsed(p, key, strconv.ParseBool, func(v string, _ error) error {
		return memd.Errorf(memd.EINVALID, "%s must be true or false, got %q", key, v)
	})
}

// shard reads an optional shard ID.
func (p *params) shard(key string) memd.ShardID {
	return parsed(p, key, memd.ParseShardID, func(_ string, err error) error { return err })
}
