package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
)

// answeredFirst is memd mcp's standard input and output for the MCP
// server: the end of the input reaches the server only once every request
// read before it has been answered, or drainLimit has passed without an
// answer, or memd mcp is stopped. The server cancels what is in flight
// when its input ends, so a client that writes its requests and closes
// its input (a script piping them in) would get no answers, and a
// remember could be cut off halfway. Messages are read one a line; a line
// the server could not read is answered here with a JSON-RPC error and not
// passed on, since the server ends the session at the first it cannot
// decode, dropping the requests it was still answering.
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
	read       []byte          // room for reading the input
	ready      []byte          // whole lines the server may read, not yet read
	refusals   [][]byte        // errors for lines the server could not read, not yet written
	skipping   bool            // the rest of a line too long to pass on is read and dropped

	writing sync.Mutex // one line written at a time, the server's or a refusal
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

// Read passes the input on a line at a time, noting the requests in it;
// at its end, it waits for their answers first.
func (a *answeredFirst) Read(p []byte) (int, error) {
	for len(a.ready) == 0 {
		if a.ended {
			a.drain()
			return 0, io.EOF
		}
		if a.read == nil {
			a.read = make([]byte, 64<<10)
		}
		n, err := a.in.Read(a.read)
		a.mu.Lock()
		data := a.read[:n]
		if a.skipping {
			if i := bytes.IndexByte(data, '\n'); i < 0 {
				data = nil
			} else {
				data, a.skipping = data[i+1:], false
			}
		}
		a.partIn = eachLine(append(a.partIn, data...), a.take)
		if len(a.partIn) > maxLine { // and no line end yet
			a.refusals = append(a.refusals, lineTooLong())
			a.partIn, a.skipping = nil, true
		}
		if err == io.EOF {
			// A last line without its line end is a message too, and
			// what came with the end reaches the server first.
			if !a.skipping {
				a.partIn = eachLine(append(a.partIn, '\n'), a.take)
			}
			a.ended = true
		}
		a.mu.Unlock()
		a.refuse()
		if err != nil && err != io.EOF {
			return 0, err
		}
	}
	n := copy(p, a.ready)
	if a.ready = a.ready[n:]; len(a.ready) == 0 {
		a.ready = nil
	}
	return n, nil
}

// take passes a line of the input on to the server, or keeps the error
// that answers it when the server could not read it.
func (a *answeredFirst) take(line []byte) {
	if len(line) > maxLine {
		a.refusals = append(a.refusals, lineTooLong())
		return
	}
	if refusal := a.unreadable(line); refusal != nil {
		a.refusals = append(a.refusals, refusal)
		return
	}
	a.noteRequest(line)
	a.ready = append(append(a.ready, line...), '\n')
}

// refuse writes the errors kept for lines the server could not read.
func (a *answeredFirst) refuse() {
	a.mu.Lock()
	refusals := a.refusals
	a.refusals = nil
	a.mu.Unlock()
	a.writing.Lock()
	defer a.writing.Unlock()
	for _, r := range refusals {
		a.out.Write(r)
	}
}

// Write passes the server's output on, noting the answers in it.
func (a *answeredFirst) Write(p []byte) (int, error) {
	a.writing.Lock()
	n, err := a.out.Write(p)
	a.writing.Unlock()
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

// maxLine bounds a line passed on to the server, as /mcp bounds a
// request: a tool's arguments are far smaller (a note is at most 256 KiB).
const maxLine = mcp.DefaultMaxRequestBodyBytes

func lineTooLong() []byte {
	return rpcError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line longer than %d bytes", maxLine))
}

// unreadable returns the JSON-RPC error that answers a line the server
// could not read (not JSON, not text as sent, not a JSON-RPC message, or
// a batch), nil for a line it can. MCP has had no batches since
// 2025-06-18, and the server reads those of earlier versions so that one
// holding a notification ends the session.
func (a *answeredFirst) unreadable(line []byte) []byte {
	if !json.Valid(line) {
		return rpcError(nil, jsonrpc.CodeParseError, "parse error: the line is not one JSON value (memd mcp reads one message a line)")
	}
	if err := memd.CheckJSONText(line); err != nil {
		return rpcError(nil, jsonrpc.CodeParseError, "parse error: "+memd.ErrorMessage(err))
	}
	if line[0] == '[' {
		return rpcError(nil, jsonrpc.CodeInvalidRequest, "invalid request: memd mcp takes one message a line, not a JSON-RPC batch (MCP has none since 2025-06-18)")
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var m message
		json.Unmarshal(line, &m)
		return rpcError(m.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return nil
}

// rpcError is a JSON-RPC error answering a message with the given ID
// (null when it had none that could be read), a line.
func rpcError(id json.RawMessage, code int64, message string) []byte {
	if idKey(id) == "" {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: jsonrpc.Error{Code: code, Message: message}})
	return append(b, '\n')
}

// noteRequest notes a client's request (a message with a method and an
// ID), and forgets one the client cancelled: it is not answered. Lines
// reach it one message each: batches are refused (see unreadable).
func (a *answeredFirst) noteRequest(line []byte) {
	var m message
	if json.Unmarshal(line, &m) != nil {
		return
	}
	switch id := idKey(m.ID); {
	case m.Method == "notifications/cancelled":
		delete(a.open, idKey(m.Params.RequestID))
	case m.Method != "" && id != "":
		a.open[id] = true
	}
}

// noteAnswer forgets the request a line of the server's answers (a
// message with an ID and no method).
func (a *answeredFirst) noteAnswer(line []byte) {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method != "" {
		return
	}
	delete(a.open, idKey(m.ID))
	a.lastAnswer = time.Now()
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
