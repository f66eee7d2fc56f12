package index

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// A record encoded by hand reads back as it was, and is the JSON
// encoding/json would write for it, for any text a hand edit could hold.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"Lives in Lisbon", `quote " and \ backslash`, "tab\tnew\nline\r\x00\x1f", "naïve café 東京 \u2028", "\xff\xfe broken"} {
		f.Add(s, "profile.md", "msg_1", 42)
	}
	date, _ := memd.ParseDate("2026-11-03")
	shard := memd.AgentShard("alice")
	f.Fuzz(func(t *testing.T, text, file, msg string, offset int) {
		d := search.Doc{Fact: memd.Fact{ID: "0123456789ab", Shard: shard, Date: date, Tier: memd.TierProfile, Text: text, File: file},
			Offset: offset, Commit: "c0ffee", Messages: []string{msg, "msg_2"}, Chat: msg}
		enc := encode(d)
		var want, got any
		b, _ := json.Marshal(record{Date: d.Date.String(), Tier: string(d.Tier), Text: text, File: file, Offset: offset, Commit: d.Commit, Messages: d.Messages, Chat: d.Chat})
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(enc), &got); err != nil {
			t.Fatalf("encode gave invalid JSON %q: %v", enc, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("encode %q\n got %v\nwant %v", enc, got, want)
		}
		back, ok := decode(factKey(shard, d.ID), enc)
		if !ok {
			t.Fatalf("decode(%q) failed", enc)
		}
		if back.Offset != offset || back.Commit != d.Commit || back.Date != date || len(back.Messages) != 2 {
			t.Fatalf("decoded %+v from %q", back, enc)
		}
	})
}
