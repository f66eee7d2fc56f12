package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/websocket"

	"github.com/memd/memd"
)

// Subscribe opens the websocket feed. Events replayed for since arrive on
// Events first, marked Replay, then live ones.
func (c *Client) Subscribe(ctx context.Context, q memd.FeedQuery) (memd.Subscription, error) {
	v := url.Values{}
	var shards []string
	for _, s := range q.Shards {
		shards = append(shards, s.String())
	}
	setNonEmpty(v, "shards", strings.Join(shards, ","))
	var since []string
	for s, rev := range q.Since {
		since = append(since, s.String()+":"+rev)
	}
	setNonEmpty(v, "since", strings.Join(since, ","))
	if c.ChatKind != "" {
		v.Set("chat_kind", string(c.ChatKind))
	}
	u := strings.Replace(c.BaseURL, "http", "ws", 1) + "/v1/feed?" + v.Encode()
	h := http.Header{}
	if c.Token != "" {
		h.Set("Authorization", "Bearer "+c.Token)
	}
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil {
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var e struct {
				Error struct{ Code, Message, Rule string }
			}
			if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
				return nil, &memd.Error{Code: e.Error.Code, Message: e.Error.Message, Rule: e.Error.Rule}
			}
		}
		return nil, &memd.Error{Code: memd.EUNAVAILABLE, Message: "cannot open the feed at " + c.BaseURL, Err: err}
	}
	s := &wsSubscription{conn: conn, ch: make(chan memd.FeedEvent, 64), done: make(chan struct{})}
	go s.read()
	return s, nil
}

type wsSubscription struct {
	conn *websocket.Conn
	ch   chan memd.FeedEvent
	done chan struct{}
	err  error
}

func (s *wsSubscription) read() {
	defer close(s.done)
	defer close(s.ch)
	for {
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				err = &FeedClosed{Code: ce.Code, Reason: ce.Text}
			}
			s.err = err
			return
		}
		var ev memd.FeedEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			s.err = err
			return
		}
		s.ch <- ev
	}
}

// FeedClosed is how the server ended a feed.
type FeedClosed struct {
	Code   int
	Reason string
}

func (e *FeedClosed) Error() string { return "feed closed: " + e.Reason }

// Overrun reports whether the server cut the feed off for falling behind,
// in which case the subscriber resumes with since.
func (e *FeedClosed) Overrun() bool { return e.Code == memd.CloseOverrun }

// Replay is empty: over a websocket the replay comes first on Events.
func (s *wsSubscription) Replay() iter.Seq2[memd.FeedEvent, error] {
	return func(func(memd.FeedEvent, error) bool) {}
}
func (s *wsSubscription) Events() <-chan memd.FeedEvent { return s.ch }
func (s *wsSubscription) Done() <-chan struct{}         { return s.done }
func (s *wsSubscription) Err() error                    { return s.err }
func (s *wsSubscription) Close()                        { s.conn.Close() }
