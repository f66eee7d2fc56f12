package main

import (
	"bytes"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// The end of the input waits for the answers of the requests read before
// it, and only for those: not for a notification, nor for a request the
// client cancelled; and not forever for one never answered.
func TestAnsweredFirst_EndWaitsForAnswers(t *testing.T) {
	old := drainLimit
	t.Cleanup(func() { drainLimit = old })
	drainLimit = time.Minute
	requests := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":3.0,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	a := newAnsweredFirst(strings.NewReader(requests), &out)
	buf := make([]byte, 4096)
	if n, err := a.Read(buf); n != len(requests) || err != nil {
		t.Fatalf("read %d bytes of %d, %v", n, len(requests), err)
	}
	if got := slices.Sorted(maps.Keys(a.open)); !slices.Equal(got, []string{"float64:1", "string:two"}) {
		t.Fatalf("waiting for the answers to %q", got)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := a.Read(buf) // the end of the input
		ended <- err
	}()
	// Answers written in pieces, the server's ping to the client between.
	for _, piece := range []string{`{"jsonrpc":"2.0","id":1,"res`, "ult\":{}}\n", `{"jsonrpc":"2.0","id":9,"method":"ping"}` + "\n"} {
		a.Write([]byte(piece))
		select {
		case <-ended:
			t.Fatalf("the input ended after %q, before request two was answered", out.String())
		default:
		}
	}
	a.Write([]byte(`{"jsonrpc":"2.0","id":"two","result":{}}` + "\n"))
	if err := <-ended; err != io.EOF {
		t.Fatalf("the input ended with %v", err)
	}

	// A request never answered holds the end back for drainLimit only.
	drainLimit = 10 * time.Millisecond
	a = newAnsweredFirst(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), io.Discard)
	if _, err := io.ReadAll(a); err != nil {
		t.Fatal(err)
	}
}
