package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// answeredFirst is memd mcp's standard input and output for the MCP
// server: the end of the input reaches the server only once every request
// read before it has been answered, or drainLimit has passed without an
// answer. The server cancels what is in flight when its input ends, so a
// client that writes its requests and closes its input (a script piping
// them in) would get no answers, and a remember could be cut off halfway.
type answeredFirst struct {
	in  io.Reader
	out io.Writer

	mu       sync.Mutex
	answered *sync.Cond
	open     map[string]bool // requests read and not yet answered, by ID
	partIn   []byte          // a line read in part
	partOut  []byte          // a line written in part
}

// drainLimit is how long the end of the input waits for an answer before
// it is passed on: a request the server never answers (one cancelled, or
// too malformed to carry an ID it can echo) must not keep memd mcp running.
var drainLimit = 30 * time.Second

func newAnsweredFirst(in io.Reader, out io.Writer) *answeredFirst {
	a := &answeredFirst{in: in, out: out, open: make(map[string]bool)}
	a.answered = sync.NewCond(&a.mu)
	return a
}

// Read passes the input on, noting the requests in it; at its end, it
// waits for their answers first.
func (a *answeredFirst) Read(p []byte) (int, error) {
	n, err := a.in.Read(p)
	a.mu.Lock()
	a.partIn = eachLine(append(a.partIn, p[:n]...), a.noteRequest)
	a.mu.Unlock()
	if err == io.EOF {
		a.drain()
	}
	return n, err
}

// Write passes the server's output on, noting the answers in it.
func (a *answeredFirst) Write(p []byte) (int, error) {
	n, err := a.out.Write(p)
	a.mu.Lock()
	a.partOut = eachLine(append(a.partOut, p[:n]...), a.noteAnswer)
	a.mu.Unlock()
	a.answered.Broadcast()
	return n, err
}

// Close closes nothing: standard output stays memd's own.
func (a *answeredFirst) Close() error { return nil }

// drain waits until every request read is answered, or drainLimit passes
// without an answer.
func (a *answeredFirst) drain() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.open) > 0 {
		before := len(a.open)
		timer := time.AfterFunc(drainLimit, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.open = map[string]bool{}
			a.answered.Broadcast()
		})
		for len(a.open) == before && before > 0 {
			a.answered.Wait()
		}
		timer.Stop()
	}
}

// message is what answeredFirst reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// noteRequest notes a request of the client's (a message with a method
// and an ID), and forgets one the client cancelled: it is not answered.
func (a *answeredFirst) noteRequest(line []byte) {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method == "" {
		return
	}
	if m.Method == "notifications/cancelled" {
		delete(a.open, idKey(m.Params.RequestID))
		return
	}
	if id := idKey(m.ID); id != "" {
		a.open[id] = true
	}
}

// noteAnswer forgets the request an answer of the server's (a message
// with an ID and no method) answers.
func (a *answeredFirst) noteAnswer(line []byte) {
	var m message
	if json.Unmarshal(line, &m) == nil && m.Method == "" {
		delete(a.open, idKey(m.ID))
	}
}

// idKey is a JSON-RPC ID as a key: 7 and 7.0 are the same ID, "7" another;
// "" for none.
func idKey(raw json.RawMessage) string {
	var id any
	if len(raw) == 0 || json.Unmarshal(raw, &id) != nil || id == nil {
		return ""
	}
	return fmt.Sprintf("%T:%v", id, id)
}

// eachLine calls fn with each whole line of buf and returns what follows
// the last, for the next read.
func eachLine(buf []byte, fn func([]byte)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		if line := bytes.TrimSpace(buf[:i]); len(line) > 0 {
			fn(line)
		}
		buf = buf[i+1:]
	}
}
