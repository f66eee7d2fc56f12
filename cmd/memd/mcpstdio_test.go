package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// pending lists the requests a's end of input waits for.
func (a *answeredFirst) pending() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(maps.Keys(a.open))
}

// readEnd reads a's end of input in the background; failSafe bounds a
// wait that should end, so that a broken drain fails rather than hangs.
func readEnd(a *answeredFirst) <-chan error {
	ended := make(chan error, 1)
	go func() {
		_, err := a.Read(make([]byte, 64))
		ended <- err
	}()
	return ended
}

const failSafe = 10 * time.Second

func wantEnd(t *testing.T, ended <-chan error) {
	t.Helper()
	select {
	case err := <-ended:
		if err != io.EOF {
			t.Fatalf("the input ended with %v, want EOF", err)
		}
	case <-time.After(failSafe):
		t.Fatal("the input did not end")
	}
}

// The end of the input waits for the answers of the requests read before
// it, and only for those: not for a notification, nor for a request the
// client cancelled; IDs match as JSON values; answers may come in pieces.
func TestAnsweredFirst_EndWaitsForAnswers(t *testing.T) {
	requests := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3.0,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	a := newAnsweredFirst(context.Background(), strings.NewReader(requests), &out)
	if n, err := a.Read(make([]byte, 4096)); n != len(requests) || err != nil {
		t.Fatalf("read %d bytes of %d, %v", n, len(requests), err)
	}
	ended := readEnd(a)
	steps := []struct {
		written string
		pending []string
	}{
		{"", []string{"float64:1", "float64:4", "float64:5", "string:two"}},
		{`{"jsonrpc":"2.0","id":1,"res`, []string{"float64:1", "float64:4", "float64:5", "string:two"}},
		{"ult\":{}}\n" + `{"jsonrpc":"2.0","id":9,"method":"ping"}` + "\n", []string{"float64:4", "float64:5", "string:two"}},
		{`{"jsonrpc":"2.0","id":5.0,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":"two","error":{"code":-1}}` + "\n", []string{"float64:4"}},
	}
	for _, s := range steps {
		a.Write([]byte(s.written))
		if got := a.pending(); !slices.Equal(got, s.pending) {
			t.Fatalf("after writing %q, waiting for %q, want %q", s.written, got, s.pending)
		}
	}
	a.Write([]byte(`{"jsonrpc":"2.0","id":4,"result":{}}` + "\n"))
	wantEnd(t, ended)
}

// A request never answered holds the end back for drainLimit only, and
// not at all once memd mcp is stopped.
func TestAnsweredFirst_EndIsNotHeldForever(t *testing.T) {
	unanswered := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n"

	a := newAnsweredFirst(context.Background(), strings.NewReader(unanswered), io.Discard)
	a.limit = 20 * time.Millisecond
	a.Read(make([]byte, 4096))
	wantEnd(t, readEnd(a))

	ctx, stop := context.WithCancel(context.Background())
	a = newAnsweredFirst(ctx, strings.NewReader(unanswered), io.Discard)
	a.limit = time.Hour
	a.Read(make([]byte, 4096))
	ended := readEnd(a)
	stop()
	wantEnd(t, ended)
}

// A reader that returns its last bytes with the end has them passed on
// first, and their requests waited for: a last one without its line end
// too.
func TestAnsweredFirst_DataWithTheEnd(t *testing.T) {
	a := newAnsweredFirst(context.Background(), &lastWithEOF{s: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}, io.Discard)
	buf := make([]byte, 4096)
	if n, err := a.Read(buf); n == 0 || err != nil {
		t.Fatalf("read %d bytes, %v; want the bytes, and the end at the next read", n, err)
	}
	if got := a.pending(); !slices.Equal(got, []string{"float64:1"}) {
		t.Fatalf("waiting for %q", got)
	}
	ended := readEnd(a)
	a.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	wantEnd(t, ended)
}

// lastWithEOF returns all it holds with io.EOF, as io.Reader allows.
type lastWithEOF struct{ s string }

func (r *lastWithEOF) Read(p []byte) (int, error) {
	n := copy(p, r.s)
	r.s = r.s[n:]
	return n, io.EOF
}

// A line the server could not read is answered with a JSON-RPC error and
// kept from it (the server would end the session), and the lines around
// it go on: not JSON, not UTF-8, half a surrogate pair, not JSON-RPC, a
// batch, a line too long.
func TestAnsweredFirst_LinesTheServerCannotRead(t *testing.T) {
	valid := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	bad := []struct {
		line string
		code int
		id   string
	}{
		{`garbage{{`, -32700, "null"},
		{"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"text\":\"\xff\"}}", -32700, "null"},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"text":"\ud800"}}`, -32700, "null"},
		{`{"foo":1}`, -32600, "null"},
		{`{"jsonrpc":"1.0","id":"six","method":"ping"}`, -32600, `"six"`},
		{`[]`, -32600, "null"},
		{`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, -32600, "null"},
		// The server ends the session at a batch holding a notification.
		{`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]`, -32600, "null"},
		// Read in many pieces; the rest of it dropped up to its end.
		{`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"` + strings.Repeat("a", maxLine) + `"}}`, -32600, "null"},
	}
	var in strings.Builder
	in.WriteString(valid[0] + "\n")
	for i, b := range bad {
		in.WriteString(b.line + "\n")
		if i == 2 {
			in.WriteString(valid[1] + "\n")
		}
	}
	in.WriteString(valid[2] + "\n")
	var out bytes.Buffer
	a := newAnsweredFirst(context.Background(), strings.NewReader(in.String()), &out)
	a.limit = 0 // nothing answers the requests passed on: the end waits for none
	passed, err := io.ReadAll(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(valid, "\n") + "\n"; string(passed) != want {
		t.Errorf("passed on:\n%s\nwant:\n%s", passed, want)
	}
	answers := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(answers) != len(bad) {
		t.Fatalf("%d answers for %d lines: %s", len(answers), len(bad), out.String())
	}
	for i, b := range bad {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(answers[i]), &m); err != nil || m.JSONRPC != "2.0" || m.Error.Code != b.code || string(m.ID) != b.id || m.Error.Message == "" {
			t.Errorf("%q answered %s, want code %d and id %s", b.line, answers[i], b.code, b.id)
		}
	}
}
