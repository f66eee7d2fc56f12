// Package client speaks memd's HTTP API: it implements memd.Service against
// a running daemon, so the CLI (and any Go program) uses the same API the
// web UI and agents use. Errors come back as *memd.Error with the server's
// code, message and rule.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/memd/memd"
)

// Client calls a memd daemon.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:7420
	Token   string // bearer token
	// TokenFrom says where Token came from ("in MEMD_TOKEN"), for the
	// error of a daemon that does not know it.
	TokenFrom string
	ChatKind  memd.ChatKind // declared on every call, if set
	HTTP      *http.Client
}

var _ memd.Service = (*Client)(nil)

// New returns a client for the daemon at baseURL.
func New(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: http.DefaultClient}
}

// Do sends one request and decodes a JSON response into out (if not nil).
// The chat kind declared is the one the client's, that of a memd.Caller in
// ctx (so a program serving several chats can declare one per call) and
// the query's agree on.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	caller, _ := memd.CallerFrom(ctx)
	kind, err := memd.AgreedChatKind(memd.ChatKindFrom{Where: "the client", Kind: c.ChatKind}, memd.ChatKindFrom{Where: "the context", Kind: caller.ChatKind}, memd.ChatKindFrom{Where: "the request", Kind: memd.ChatKind(query.Get("chat_kind"))})
	if err != nil {
		return err
	}
	if kind != "" {
		if query == nil {
			query = url.Values{}
		}
		query.Set("chat_kind", string(kind))
	}
	u := c.BaseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return &memd.Error{Code: memd.EUNAVAILABLE, Message: fmt.Sprintf("cannot reach memd at %s: is `memd serve` running?", c.BaseURL), Err: err}
		}
		return &memd.Error{Code: memd.EUNAVAILABLE, Message: fmt.Sprintf("cannot reach memd at %s", c.BaseURL), Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error struct{ Code, Message, Rule string }
		}
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			return &memd.Error{Code: memd.EINTERNAL, Message: fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))}
		}
		if e.Error.Code == memd.EUNAUTHORIZED && c.TokenFrom != "" {
			e.Error.Message += " (the token " + c.TokenFrom + ")"
		}
		return &memd.Error{Code: e.Error.Code, Message: e.Error.Message, Rule: e.Error.Rule}
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode response of %s %s: %w", method, path, err)
	}
	return nil
}

func shardPath(s memd.ShardID) string {
	return "/v1/shards/" + url.PathEscape(string(s.Kind)) + "/" + url.PathEscape(s.Name)
}

// Remember implements memd.Service.
func (c *Client) Remember(ctx context.Context, req memd.RememberRequest) (memd.RememberResult, error) {
	var out memd.RememberResult
	body := map[string]any{"text": req.Text}
	if req.Tier != "" {
		body["tier"] = req.Tier
	}
	if !req.Date.IsZero() {
		body["date"] = req.Date
	}
	err := c.add(ctx, req.Shard, "/facts", body, req.Source, req.Create, &out)
	return out, err
}

// add posts body to one of a shard's collections, with the write's source
// and whether the shard may be created.
func (c *Client) add(ctx context.Context, shard memd.ShardID, collection string, body map[string]any, src memd.Source, create bool, out any) error {
	withSource(body, src)
	if create {
		body["create"] = true
	}
	return c.Do(ctx, http.MethodPost, shardPath(shard)+collection, nil, body, out)
}

// Forget implements memd.Service.
func (c *Client) Forget(ctx context.Context, req memd.ForgetRequest) (memd.ForgetResult, error) {
	var out memd.ForgetResult
	err := c.Do(ctx, http.MethodDelete, shardPath(req.Shard)+"/facts/"+url.PathEscape(req.ID), sourceQuery(url.Values{}, req.Source), nil, &out)
	return out, err
}

// sourceQuery adds a write's source to the query of a DELETE, which has
// no body, and returns q.
func sourceQuery(q url.Values, src memd.Source) url.Values {
	for _, m := range src.Messages {
		q.Add("message", m)
	}
	if src.Chat != "" {
		q.Set("chat", src.Chat)
	}
	if src.ChatKind != "" {
		q.Set("chat_kind", string(src.ChatKind))
	}
	return q
}

// EditFact implements memd.Service.
func (c *Client) EditFact(ctx context.Context, req memd.EditFactRequest) (memd.EditFactResult, error) {
	var out memd.EditFactResult
	body := map[string]any{"text": req.Text}
	withSource(body, req.Source)
	err := c.Do(ctx, http.MethodPatch, shardPath(req.Shard)+"/facts/"+url.PathEscape(req.ID), nil, body, &out)
	return out, err
}

// Facts implements memd.Service.
func (c *Client) Facts(ctx context.Context, q memd.FactsQuery) (memd.FactList, error) {
	var out memd.FactList
	v := url.Values{}
	setNonEmpty(v, "tier", string(q.Tier))
	setNonEmpty(v, "from", q.From.String())
	setNonEmpty(v, "to", q.To.String())
	setNonEmpty(v, "at", q.At)
	setNonEmpty(v, "q", q.Text)
	setNonEmpty(v, "learned_by", q.LearnedBy)
	setNonEmpty(v, "model", q.Model)
	setNonEmpty(v, "agent", q.Agent)
	setNonEmpty(v, "sort", q.Sort)
	if q.Origins {
		v.Set("origins", "true")
	}
	if q.Offset != 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	err := c.Do(ctx, http.MethodGet, shardPath(q.Shard)+"/facts", v, nil, &out)
	return out, err
}

func setNonEmpty(v url.Values, k, val string) {
	if val != "" {
		v.Set(k, val)
	}
}

// Trace implements memd.Service.
func (c *Client) Trace(ctx context.Context, s memd.ShardID, id string) (memd.Trace, error) {
	var out memd.Trace
	err := c.Do(ctx, http.MethodGet, shardPath(s)+"/facts/"+url.PathEscape(id)+"/trace", nil, nil, &out)
	return out, err
}

// LearningStats implements memd.Service.
func (c *Client) LearningStats(ctx context.Context, q memd.LearningQuery) (memd.LearningStats, error) {
	var out memd.LearningStats
	v := url.Values{}
	setNonEmpty(v, "from", q.From.String())
	setNonEmpty(v, "to", q.To.String())
	setNonEmpty(v, "agent", q.Agent)
	setNonEmpty(v, "model", q.Model)
	setNonEmpty(v, "prompt", q.Prompt)
	err := c.Do(ctx, http.MethodGet, "/v1/stats/learning", v, nil, &out)
	return out, err
}

// Growth implements memd.Service.
func (c *Client) Growth(ctx context.Context, q memd.GrowthQuery) (memd.Growth, error) {
	var out memd.Growth
	v := url.Values{}
	if !q.Shard.IsZero() {
		v.Set("shard", q.Shard.String())
	}
	err := c.Do(ctx, http.MethodGet, "/v1/stats/growth", v, nil, &out)
	return out, err
}

// NoteHistory implements memd.Service.
func (c *Client) NoteHistory(ctx context.Context, q memd.NoteHistoryQuery) ([]memd.NoteVersion, error) {
	var out struct {
		Versions []memd.NoteVersion `json:"versions"`
	}
	v := url.Values{}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset != 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	p, err := notePath(q.Shard, q.Path)
	if err != nil {
		return nil, err
	}
	err = c.Do(ctx, http.MethodGet, p+":history", v, nil, &out)
	return out.Versions, err
}

// PurgeMessage implements memd.Service.
func (c *Client) PurgeMessage(ctx context.Context, req memd.PurgeRequest) (memd.PurgeResult, error) {
	var out memd.PurgeResult
	v := url.Values{}
	setNonEmpty(v, "chat", req.Chat)
	err := c.Do(ctx, http.MethodDelete, "/v1/messages/"+url.PathEscape(req.Message), v, nil, &out)
	return out, err
}

// Log implements memd.Service.
func (c *Client) Log(ctx context.Context, q memd.LogQuery) ([]memd.Commit, error) {
	var out struct{ Commits []memd.Commit }
	v := url.Values{}
	setNonEmpty(v, "message", q.Message)
	setNonEmpty(v, "agent", q.Agent)
	setNonEmpty(v, "op", q.Op)
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset != 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	err := c.Do(ctx, http.MethodGet, shardPath(q.Shard)+"/log", v, nil, &out)
	return out.Commits, err
}

// Revert implements memd.Service.
func (c *Client) Revert(ctx context.Context, req memd.RevertRequest) (memd.RevertResult, error) {
	var out memd.RevertResult
	err := c.Do(ctx, http.MethodPost, "/v1/revert", nil, req, &out)
	return out, err
}

// Shards implements memd.Service.
func (c *Client) Shards(ctx context.Context) ([]memd.ShardInfo, error) {
	var out struct{ Shards []memd.ShardInfo }
	err := c.Do(ctx, http.MethodGet, "/v1/shards", nil, nil, &out)
	return out.Shards, err
}

// AddAgent implements memd.Service.
func (c *Client) AddAgent(ctx context.Context, name string, projects []string) (memd.NewAgent, error) {
	var out memd.NewAgent
	err := c.Do(ctx, http.MethodPost, "/v1/agents", nil, map[string]any{"name": name, "projects": projects}, &out)
	return out, err
}

// Agents implements memd.Service.
func (c *Client) Agents(ctx context.Context) ([]memd.Agent, error) {
	var out struct{ Agents []memd.Agent }
	err := c.Do(ctx, http.MethodGet, "/v1/agents", nil, nil, &out)
	return out.Agents, err
}

// RemoveAgent implements memd.Service.
// Git is not offered over the API: point git at <addr>/git/<kind>/<name>.git.
func (c *Client) Git(ctx context.Context, shard memd.ShardID, push bool) (memd.GitRepo, error) {
	return memd.GitRepo{}, memd.Errorf(memd.EINVALID, "use git itself: git clone %s/git/%s.git", c.BaseURL, shard)
}

func (c *Client) RemoveAgent(ctx context.Context, name string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/agents/"+url.PathEscape(name), nil, nil, nil)
}

// SetReview implements memd.Service.
func (c *Client) SetReview(ctx context.Context, agent string, on bool) (memd.Agent, error) {
	var out memd.Agent
	err := c.Do(ctx, http.MethodPut, "/v1/agents/"+url.PathEscape(agent)+"/review", nil, map[string]bool{"on": on}, &out)
	return out, err
}

// Proposals implements memd.Service.
func (c *Client) Proposals(ctx context.Context, shard memd.ShardID) ([]memd.Proposal, error) {
	var out struct{ Proposals []memd.Proposal }
	v := url.Values{}
	if !shard.IsZero() {
		v.Set("shard", shard.String())
	}
	err := c.Do(ctx, http.MethodGet, "/v1/proposals", v, nil, &out)
	return out.Proposals, err
}

// Review implements memd.Service.
func (c *Client) Review(ctx context.Context, req memd.ReviewRequest) (memd.ReviewResult, error) {
	var out memd.ReviewResult
	err := c.Do(ctx, http.MethodPost, "/v1/proposals/review", nil, req, &out)
	return out, err
}

// Status implements memd.Service.
func (c *Client) Status(ctx context.Context) (memd.Status, error) {
	var out memd.Status
	err := c.Do(ctx, http.MethodGet, "/v1/status", nil, nil, &out)
	return out, err
}

// Remotes implements memd.Service.
func (c *Client) Remotes(ctx context.Context) ([]memd.RemoteStatus, error) {
	var out struct{ Remotes []memd.RemoteStatus }
	err := c.Do(ctx, http.MethodGet, "/v1/remotes", nil, nil, &out)
	return out.Remotes, err
}

// SyncRemotes implements memd.Service.
func (c *Client) SyncRemotes(ctx context.Context, shards []memd.ShardID) ([]memd.RemoteStatus, error) {
	var out struct{ Remotes []memd.RemoteStatus }
	body := struct {
		Shards []memd.ShardID `json:"shards,omitempty"`
	}{shards}
	err := c.Do(ctx, http.MethodPost, "/v1/remotes/sync", nil, body, &out)
	return out.Remotes, err
}

// Recall implements memd.Service.
func (c *Client) Recall(ctx context.Context, q memd.RecallQuery) (memd.RecallResult, error) {
	var out memd.RecallResult
	v := url.Values{"q": {q.Q}}
	setNonEmpty(v, "agent", q.Agent)
	setNonEmpty(v, "user", q.User)
	setNonEmpty(v, "projects", strings.Join(q.Projects, ","))
	setNonEmpty(v, "at", q.At)
	if q.K != 0 {
		v.Set("k", strconv.Itoa(q.K))
	}
	if q.Explain {
		v.Set("explain", "true")
	}
	if q.IncludeProposed {
		v.Set("include_proposed", "true")
	}
	err := c.Do(ctx, http.MethodGet, "/v1/recall", v, nil, &out)
	return out, err
}

// Context implements memd.Service.
func (c *Client) Context(ctx context.Context, q memd.ContextQuery) (memd.MemoryContext, error) {
	var out memd.MemoryContext
	v := url.Values{"format": {"json"}}
	setNonEmpty(v, "agent", q.Agent)
	setNonEmpty(v, "user", q.User)
	setNonEmpty(v, "projects", strings.Join(q.Projects, ","))
	setNonEmpty(v, "at", q.At)
	setNonEmpty(v, "since", q.Since)
	if q.IncludeProposed {
		v.Set("include_proposed", "true")
	}
	err := c.Do(ctx, http.MethodGet, "/v1/context", v, nil, &out)
	return out, err
}

// Learn implements memd.Service.
func (c *Client) Learn(ctx context.Context, ex memd.Exchange) (memd.ExchangeStatus, error) {
	var out memd.ExchangeStatus
	err := c.Do(ctx, http.MethodPost, "/v1/exchanges", nil, ex, &out)
	return out, err
}

// Exchanges implements memd.Service.
func (c *Client) Exchanges(ctx context.Context, state string) ([]memd.ExchangeStatus, error) {
	var out struct{ Exchanges []memd.ExchangeStatus }
	v := url.Values{}
	setNonEmpty(v, "state", state)
	err := c.Do(ctx, http.MethodGet, "/v1/exchanges", v, nil, &out)
	return out.Exchanges, err
}

// Synthesize implements memd.Service.
func (c *Client) Synthesize(ctx context.Context, agent string) (memd.ExchangeStatus, error) {
	var out memd.ExchangeStatus
	err := c.Do(ctx, http.MethodPost, "/v1/synthesis", nil, map[string]string{"agent": agent}, &out)
	return out, err
}

// RetryExchange implements memd.Service.
func (c *Client) RetryExchange(ctx context.Context, id string) (memd.ExchangeStatus, error) {
	var out memd.ExchangeStatus
	err := c.Do(ctx, http.MethodPost, "/v1/exchanges/"+url.PathEscape(id)+"/retry", nil, nil, &out)
	return out, err
}
