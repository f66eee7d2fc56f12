package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// answeredFirst is memd mcp's standard input and output for the MCP
// server: the end of the input reaches the server only once every request
// read before it has been answered, or drainLimit has passed without an
// answer, or memd mcp is stopped. The server cancels what is in flight
// when its input ends, so a client that writes its requests and closes
// its input (a script piping them in) would get no answers, and a
// remember could be cut off halfway. Messages are read one a line.
type answeredFirst struct {
	ctx   context.Context
	in    io.Reader
	out   io.Writer
	limit time.Duration // how long the end waits after the last answer: drainLimit

	mu         sync.Mutex
	answered   *sync.Cond      // an answer was written, the limit passed, or ctx is done
	open       map[string]bool // requests read and not yet answered, by ID
	lastAnswer time.Time       // when the last answer was written, or the input ended
	partIn     []byte          // a line read in part
	partOut    []byte          // a line written in part
	ended      bool            // the input ended: the next Read says so
}

// drainLimit is how long the end of the input waits for an answer before
// it is passed on: a request the server never answers (one too malformed
// to carry an ID it can echo) must not keep memd mcp running.
const drainLimit = 30 * time.Second

func newAnsweredFirst(ctx context.Context, in io.Reader, out io.Writer) *answeredFirst {
	a := &answeredFirst{ctx: ctx, in: in, out: out, limit: drainLimit, open: make(map[string]bool)}
	a.answered = sync.NewCond(&a.mu)
	return a
}

// Read passes the input on, noting the requests in it; at its end, it
// waits for their answers first.
func (a *answeredFirst) Read(p []byte) (int, error) {
	if a.ended {
		a.drain()
		return 0, io.EOF
	}
	n, err := a.in.Read(p)
	a.mu.Lock()
	a.partIn = eachLine(append(a.partIn, p[:n]...), a.noteRequest)
	if err == io.EOF {
		// A last line without its line end is a message too.
		a.partIn = eachLine(append(a.partIn, '\n'), a.noteRequest)
	}
	a.mu.Unlock()
	if err == io.EOF && n > 0 {
		// What came with the end reaches the server first, and is waited for.
		a.ended = true
		return n, nil
	}
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

// drain waits until every request read is answered, a.limit passes
// without an answer, or the context is done.
func (a *answeredFirst) drain() {
	// Each wakes the wait below; under the lock, a wake-up never falls
	// between the wait's checks and its sleep.
	wake := func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.answered.Broadcast()
	}
	stop := context.AfterFunc(a.ctx, wake)
	defer stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastAnswer = time.Now()
	timer := time.AfterFunc(a.limit, wake)
	defer timer.Stop()
	for len(a.open) > 0 && a.ctx.Err() == nil {
		left := a.limit - time.Since(a.lastAnswer)
		if left <= 0 {
			return
		}
		timer.Reset(left)
		a.answered.Wait()
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

// messages decodes a line: one message, or a batch of them.
func messages(line []byte) []message {
	var batch []message
	if line[0] == '[' {
		if json.Unmarshal(line, &batch) != nil {
			return nil
		}
		return batch
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []message{m}
}

// noteRequest notes the requests of the client's (messages with a method
// and an ID) in a line, and forgets those the client cancelled: they are
// not answered.
func (a *answeredFirst) noteRequest(line []byte) {
	for _, m := range messages(line) {
		switch id := idKey(m.ID); {
		case m.Method == "notifications/cancelled":
			delete(a.open, idKey(m.Params.RequestID))
		case m.Method != "" && id != "":
			a.open[id] = true
		}
	}
}

// noteAnswer forgets the requests the server's answers (messages with an
// ID and no method) in a line answer.
func (a *answeredFirst) noteAnswer(line []byte) {
	for _, m := range messages(line) {
		if m.Method == "" {
			delete(a.open, idKey(m.ID))
			a.lastAnswer = time.Now()
		}
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
