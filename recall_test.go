package memd_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/memd/memd"
)

func TestStamp_RoundTrip(t *testing.T) {
	commits := map[memd.ShardID]string{
		memd.AgentShard("alice"):    "0123456789abcdef0123456789abcdef01234567",
		memd.UserShard("pat"):       "89abcdef0123456789abcdef0123456789abcdef",
		memd.ProjectShard("apollo"): "fedcba9876543210fedcba9876543210fedcba98",
	}
	r := memd.NewReadAt(commits, []memd.ShardID{memd.UserShard("pat"), memd.ProjectShard("apollo"), memd.ProjectShard("zeus"), memd.AgentShard("alice")})
	want := "agent/alice@0123456789abcdef0123456789abcdef01234567,project/apollo@fedcba9876543210fedcba9876543210fedcba98,project/zeus@none,user/pat@89abcdef0123456789abcdef0123456789abcdef"
	if r.Stamp != want {
		t.Errorf("stamp %q, want %q", r.Stamp, want)
	}
	got, ok, err := memd.ParseStamp(r.Stamp)
	commits[memd.ProjectShard("zeus")] = ""
	if !ok || err != nil || !maps.Equal(got, commits) {
		t.Errorf("ParseStamp(%q) = %v, %v, %v", r.Stamp, got, ok, err)
	}
	for _, notStamp := range []string{"2026-03-14", "0123abcd", ""} {
		if _, ok, _ := memd.ParseStamp(notStamp); ok {
			t.Errorf("%q read as a stamp", notStamp)
		}
	}
	for _, bad := range []string{"agent/alice@", "alice@0123abcd", "agent/alice@01", "agent/Alice@0123abcd", "agent/alice@0123abcd,,"} {
		if _, ok, err := memd.ParseStamp(bad); !ok || memd.ErrorCode(err) != memd.EINVALID {
			t.Errorf("%q: ok %v, err %v; want an invalid stamp", bad, ok, err)
		}
	}
}

// FuzzParseStamp checks any text either is no stamp, is refused, or reads
// back to itself through NewReadAt.
func FuzzParseStamp(f *testing.F) {
	f.Add("agent/alice@0123456789abcdef0123456789abcdef01234567")
	f.Add("agent/alice@0123abcd,user/pat@89abcdef")
	f.Add("2026-03-14")
	f.Fuzz(func(t *testing.T, s string) {
		commits, ok, err := memd.ParseStamp(s)
		if !ok || err != nil {
			return
		}
		var shards []memd.ShardID
		for id := range commits {
			shards = append(shards, id)
		}
		again, ok, err := memd.ParseStamp(memd.NewReadAt(commits, shards).Stamp)
		if !ok || err != nil || !maps.Equal(again, commits) {
			t.Fatalf("%q: read %v, written and read again %v (%v)", s, commits, again, err)
		}
	})
}

func TestAgreedChatKind(t *testing.T) {
	from := func(kinds ...memd.ChatKind) []memd.ChatKindFrom {
		var out []memd.ChatKindFrom
		for i, k := range kinds {
			out = append(out, memd.ChatKindFrom{Where: fmt.Sprintf("place %d", i+1), Kind: k})
		}
		return out
	}
	for _, tc := range []struct {
		kinds []memd.ChatKind
		want  memd.ChatKind
		err   string
	}{
		{nil, "", ""},
		{[]memd.ChatKind{"", ""}, "", ""},
		{[]memd.ChatKind{memd.ChatDirect, ""}, memd.ChatDirect, ""},
		{[]memd.ChatKind{"", memd.ChatGroup, memd.ChatGroup}, memd.ChatGroup, ""},
		{[]memd.ChatKind{memd.ChatDirect, memd.ChatGroup}, "", `chat_kind "direct" in place 1 and "group" in place 2 disagree`},
		{[]memd.ChatKind{memd.ChatDirect, "", memd.ChatRoutine}, "", `chat_kind "direct" in place 1 and "routine" in place 3 disagree`},
	} {
		got, err := memd.AgreedChatKind(from(tc.kinds...)...)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && (memd.ErrorCode(err) != memd.EINVALID || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("AgreedChatKind(%q) = %q, %v", tc.kinds, got, err)
		}
	}
}

// An empty answer names the shards searched, when few: an agent or project
// name mistyped shows in it.
func TestRecallResult_NothingFound(t *testing.T) {
	many := make([]memd.ShardID, 6)
	for i := range many {
		many[i] = memd.ProjectShard(fmt.Sprintf("p%d", i))
	}
	for _, c := range []struct {
		searched []memd.ShardID
		want     string
	}{
		{nil, "nothing found in 0 shards"},
		{[]memd.ShardID{memd.AgentShard("nobdy")}, "nothing found in agent/nobdy"},
		{[]memd.ShardID{memd.AgentShard("alice"), memd.UserShard("pat")}, "nothing found in agent/alice, user/pat"},
		{many, "nothing found in 6 shards"},
	} {
		if got := (memd.RecallResult{Searched: c.searched}).NothingFound(); got != c.want {
			t.Errorf("%v: %q, want %q", c.searched, got, c.want)
		}
	}
}
