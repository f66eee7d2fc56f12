package httpapi

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/memd/memd"
)

// Feed connection limits. A connection is pinged every FeedPing (see
// Server) and dropped when silent for three times that; an event may wait
// as long for a subscriber that stopped reading (an agent in a long tool
// call), so that one reading again by then gets what it missed, or, cut
// off for falling behind, the close frame saying why.
const (
	defaultFeedPing = 20 * time.Second
	writeWait       = 10 * time.Second
	maxFrameRead    = 4 << 10   // clients only send control frames and small texts
	sendBuffer      = 256 << 10 // kernel send buffer of one feed connection
)

// upgrader refuses cross-origin browser pages (gorilla's default origin
// check) and keeps frames small.
var upgrader = websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 16 << 10}

// feed serves GET /v1/feed: the query is checked and the subscription made
// before the upgrade, so a bad request gets a JSON error.
func (s *Server) feed(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(r)
	q, err := memd.ParseFeedQuery(p.list("shards"), p.list("since"))
	if err != nil {
		return err
	}
	sub, err := s.svc.Subscribe(r.Context(), q)
	if err != nil {
		return err
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		sub.Close()
		return nil // the upgrader answered already
	}
	// Bound what a subscriber that stops reading holds in the kernel; past
	// it, its events wait in its buffer, and past that it is cut off.
	if tc, ok := conn.UnderlyingConn().(*net.TCPConn); ok {
		tc.SetWriteBuffer(sendBuffer)
	}
	// A browser's feed ends when its session does: signing out in another
	// tab stops what this one streams.
	var signedOut <-chan struct{}
	if r.Header.Get("Authorization") == "" && s.Sessions != nil {
		signedOut = s.Sessions.Ended(r)
	}
	go s.stream(conn, sub, signedOut)
	return nil
}

// stream writes a subscription's events to a websocket until either ends.
// The connection is pinged throughout, a replay included: a replay may
// take minutes, and a client reading it is not silent.
func (s *Server) stream(conn *websocket.Conn, sub memd.Subscription, signedOut <-chan struct{}) {
	defer conn.Close()
	defer sub.Close()
	pingEvery := s.FeedPing
	if pingEvery <= 0 {
		pingEvery = defaultFeedPing
	}
	pongWait := 3 * pingEvery
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		conn.SetReadLimit(maxFrameRead)
		conn.SetReadDeadline(time.Now().Add(pongWait))
		conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
		for {
			if _, _, err := conn.NextReader(); err != nil {
				return
			}
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // WriteControl may be called beside the writes of events
		ping := time.NewTicker(pingEvery)
		defer ping.Stop()
		for {
			select {
			case <-ping.C:
				if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
					return
				}
			case <-stop:
				return
			}
		}
	}()
	send := func(ev memd.FeedEvent) bool {
		b := ev.Encoded
		if b == nil {
			b, _ = json.Marshal(ev)
		}
		conn.SetWriteDeadline(time.Now().Add(pongWait))
		return conn.WriteMessage(websocket.TextMessage, b) == nil
	}
	for ev, err := range sub.Replay() {
		// An agent removed, or memd stopping, ends the feed at once; one
		// cut off for falling behind still gets its replay, then why.
		select {
		case <-sub.Done():
			if !errors.Is(sub.Err(), memd.ErrOverrun) {
				endFeed(conn, sub, send)
				return
			}
		case <-signedOut:
			return
		case <-gone:
			return
		default:
		}
		if err != nil {
			conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, closeReason("replaying history: "+err.Error())), time.Now().Add(writeWait))
			return
		}
		if !send(ev) {
			return
		}
	}
	for {
		select {
		case ev := <-sub.Events():
			if !send(ev) {
				return
			}
		case <-gone:
			return
		case <-signedOut:
			conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "signed out"), time.Now().Add(writeWait))
			return
		case <-sub.Done():
			endFeed(conn, sub, send)
			return
		}
	}
}

// endFeed closes the feed of a subscription the hub ended: what is still
// buffered goes first (not to an agent removed, whose feeds end at once),
// then the close frame says why.
func endFeed(conn *websocket.Conn, sub memd.Subscription, send func(memd.FeedEvent) bool) {
	code, reason := websocket.CloseNormalClosure, "closed"
	if err := sub.Err(); err != nil {
		reason = err.Error()
		if errors.Is(err, memd.ErrOverrun) {
			code = memd.CloseOverrun
		}
	}
	for memd.ErrorCode(sub.Err()) != memd.EUNAUTHORIZED {
		select {
		case ev := <-sub.Events():
			if !send(ev) {
				return
			}
			continue
		default:
		}
		break
	}
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, closeReason(reason)), time.Now().Add(writeWait))
}

// closeReason cuts a close frame's reason to what the frame holds (123
// bytes), on a character's boundary.
func closeReason(reason string) string {
	if len(reason) <= 120 {
		return reason
	}
	cut := 120
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}
