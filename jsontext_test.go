package memd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckJSONText(t *testing.T) {
	for _, c := range []struct {
		raw string
		ok  bool
	}{
		{`{"text":"plain"}`, true},
		{`{"text":"Zoé \u00e9 \u2028"}`, true},
		{`{"text":"a pair \ud83d\ude00 whole"}`, true},
		{`{"text":"a pair \uD83D\uDE00 in capitals"}`, true},
		{`{"text":"an escaped backslash \\ud800 is text"}`, true},
		{`{"text":"\\\ud83d\ude00"}`, true},
		{`{"text":"U+FFFD itself, sent: ` + "\uFFFD" + ` \ufffd"}`, true},
		{`{"text":"lone \ud800 high"}`, false},
		{`{"text":"lone \udc00 low"}`, false},
		{`{"text":"high at the end \ud83d"}`, false},
		{`{"text":"high then a letter \ud83dx"}`, false},
		{`{"text":"two highs \ud83d\ud83d"}`, false},
		{`{"text":"low then high \ude00\ud83d"}`, false},
		{`{"text":"\\\ud800"}`, false},
		{`{"lone \ud800 in a key":1}`, false},
		{"{\"text\":\"bad \xff byte\"}", false},
	} {
		err := CheckJSONText([]byte(c.raw))
		if (err == nil) != c.ok {
			t.Errorf("CheckJSONText(%s) = %v, want ok %v", c.raw, err, c.ok)
		}
		if err != nil && ErrorCode(err) != EINVALID {
			t.Errorf("CheckJSONText(%s): code %s, want invalid", c.raw, ErrorCode(err))
		}
	}
}

// JSON CheckJSONText lets through decodes to strings holding U+FFFD only
// where it was sent, as the character or its escape: nothing is replaced.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, `["\\\ud800", "\ufffd"]`, "\"\xff\"", `{"k\udc00":"v"}`, `"\uD83D\uDe00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if CheckJSONText(raw) != nil || !json.Valid(raw) {
			return
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return
		}
		sent := bytes.Count(raw, []byte("\uFFFD")) + strings.Count(strings.ToLower(string(raw)), `\ufffd`)
		if got := countReplacement(v); got > sent {
			t.Fatalf("%q decodes to %d U+FFFD, %d sent", raw, got, sent)
		}
	})
}

func countReplacement(v any) int {
	switch v := v.(type) {
	case string:
		return strings.Count(v, "\uFFFD")
	case []any:
		n := 0
		for _, e := range v {
			n += countReplacement(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += strings.Count(k, "\uFFFD") + countReplacement(e)
		}
		return n
	}
	return 0
}
