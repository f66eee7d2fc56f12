package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/memd/memd"
)

// exactKeys never panics, and takes every body a request encodes to: a
// client that marshals memd's own types is never refused.
func FuzzExactKeys(f *testing.F) {
	for _, seed := range []string{
		`{"text": "a"}`, `{"TEXT": "a"}`, `{"text": "a", "text": "b"}`,
		`{"text": "x", "source": {"messages": ["m1"], "Messages": []}}`,
		`[{"op": "replace"}]`, `{"edits": [{"Op": 1}]}`, `{`, `{"a":`, `[[[[`, `"s"`, `{"shard": "agent/alice"}`, ``,
	} {
		f.Add([]byte(seed))
	}
	types := []reflect.Type{reflect.TypeFor[*memd.RememberRequest](), reflect.TypeFor[*memd.EditNoteRequest](), reflect.TypeFor[*memd.RevertRequest]()}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, typ := range types {
			exactKeys(body, typ)
			v := reflect.New(typ.Elem()).Interface()
			if json.Unmarshal(body, v) != nil {
				continue
			}
			again, err := json.Marshal(v)
			if err != nil {
				continue
			}
			if err := exactKeys(again, typ); err != nil {
				t.Fatalf("%s encodes to %s, which exactKeys refuses: %v", typ, again, err)
			}
		}
	})
}
