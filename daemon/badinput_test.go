package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
)

// badCase is one request that must be refused with a specific code.
type badCase struct {
	name   string
	method string
	path   string
	body   string
	token  string // "admin" (default), "alice", "none", or a literal header value
	want   string
}

// heads reads the HEAD of every shard with the git CLI.
func heads(t *testing.T, e *env) map[string]string {
	t.Helper()
	ids, err := e.d.Store.Shards()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, id := range ids {
		// An empty shard has no HEAD yet; "" then.
		b, _ := exec.Command("git", "-C", e.d.Store.ShardDir(id), "rev-parse", "--verify", "-q", "HEAD").Output()
		out[id.String()] = strings.TrimSpace(string(b))
	}
	return out
}

// Bad input at every HTTP endpoint and MCP tool gets a clear error with
// the right code, and no shard's HEAD moves.
func TestBadInput(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	agent, err := e.admin.AddAgent(ctx, "alice", []string{"apollo"})
	if err != nil {
		t.Fatal(err)
	}
	e.admin.AddAgent(ctx, "bob", nil)
	s := memd.AgentShard("alice")
	fact, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Lives in Lisbon"})
	if err != nil {
		t.Fatal(err)
	}
	note, err := e.admin.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "plan.md", Text: "# Plan\n\nShip it. Ship it.\n"})
	if err != nil {
		t.Fatal(err)
	}
	e.admin.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "plan.md", Edits: []memd.NoteEdit{{Op: "insert_after", Anchor: "# Plan\n", Text: "\nv2\n"}}})
	stale := note.Note.Revision
	if _, err := e.admin.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "a1000.md", Text: strings.Repeat("a", 1000)}); err != nil {
		t.Fatal(err)
	}
	blowUp := `{"op": "replace", "find": "a", "replace": "` + strings.Repeat("a", 1000) + `", "all": true}`
	before := heads(t, e)

	long := strings.Repeat("x", 501)
	nested := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	cases := []badCase{
		// Facts.
		{"501-character fact", "POST", "/v1/shards/agent/alice/facts", `{"text": "` + long + `"}`, "", memd.EINVALID},
		{"multi-line fact", "POST", "/v1/shards/agent/alice/facts", `{"text": "one\ntwo"}`, "", memd.EINVALID},
		{"empty fact", "POST", "/v1/shards/agent/alice/facts", `{"text": "   "}`, "", memd.EINVALID},
		{"control character", "POST", "/v1/shards/agent/alice/facts", `{"text": "bell \u0007"}`, "", memd.EINVALID},
		{"NUL byte", "POST", "/v1/shards/agent/alice/facts", `{"text": "a\u0000b"}`, "", memd.EINVALID},
		// encoding/json would take these for text and source.messages, and the last text given.
		{"a field in capitals", "POST", "/v1/shards/agent/alice/facts", `{"TEXT": "upper key"}`, "", memd.EINVALID},
		{"a nested field in another case", "POST", "/v1/shards/agent/alice/facts", `{"text": "x", "source": {"Messages": ["m1"]}}`, "", memd.EINVALID},
		{"a field given twice", "POST", "/v1/shards/agent/alice/facts", `{"text": "first", "text": "second"}`, "", memd.EINVALID},
		{"an array for a body", "POST", "/v1/shards/agent/alice/facts", `[{"text": "x"}]`, "", memd.EINVALID},
		{"a byte-order mark", "POST", "/v1/shards/agent/alice/facts", "\uFEFF{\"text\": \"x\"}", "", memd.EINVALID},
		{"invalid UTF-8", "POST", "/v1/shards/agent/alice/facts", "{\"text\": \"caf\xe9\"}", "", memd.EINVALID},
		// encoding/json reads both as U+FFFD: the fact would be kept with other text than sent.
		{"a lone surrogate escape", "POST", "/v1/shards/agent/alice/facts", `{"text": "lone \ud800 half"}`, "", memd.EINVALID},
		{"a low surrogate escape first", "POST", "/v1/shards/agent/alice/facts", `{"text": "\udc00\ud800"}`, "", memd.EINVALID},
		{"a query not valid UTF-8", "GET", "/v1/recall?q=%ff%fe", "", "alice", memd.EINVALID},
		{"a parameter given twice", "POST", "/v1/shards/user/pat/facts?chat_kind=direct&chat_kind=group", `{"text": "x"}`, "alice", memd.EINVALID},
		{"a list's parameter given twice where one is read", "GET", "/v1/context?since=agent/alice@abcd1234&since=agent/alice@0123abcd", "", "alice", memd.EINVALID},
		{"an unknown chat kind in the source", "POST", "/v1/shards/user/pat/facts", `{"text": "x", "source": {"chat_kind": "bogus"}}`, "alice", memd.EINVALID},
		{"a body cut short", "POST", "/v1/shards/agent/alice/facts", `{"text": "a"`, "", memd.EINVALID},
		{"an empty body", "POST", "/v1/shards/agent/alice/facts", ``, "", memd.EINVALID},
		{"February 30th", "POST", "/v1/shards/agent/alice/facts", `{"text": "x", "date": "2026-02-30"}`, "", memd.EINVALID},
		{"date in another format", "POST", "/v1/shards/agent/alice/facts", `{"text": "x", "date": "30/11/2026"}`, "", memd.EINVALID},
		{"unknown tier", "POST", "/v1/shards/agent/alice/facts", `{"text": "x", "tier": "secret"}`, "", memd.EINVALID},
		{"unknown field", "POST", "/v1/shards/agent/alice/facts", `{"text": "x", "admin": true}`, "", memd.EINVALID},
		{"malformed JSON", "POST", "/v1/shards/agent/alice/facts", `{"text": "x"`, "", memd.EINVALID},
		{"JSON array", "POST", "/v1/shards/agent/alice/facts", `["x"]`, "", memd.EINVALID},
		{"deeply nested JSON", "POST", "/v1/shards/agent/alice/facts", `{"text": ` + nested + `}`, "", memd.EINVALID},
		{"two JSON values", "POST", "/v1/shards/agent/alice/facts", `{"text": "x"} {"text": "y"}`, "", memd.EINVALID},
		{"huge body", "POST", "/v1/shards/agent/alice/facts", `{"text": "` + strings.Repeat("y", 2<<20) + `"}`, "", memd.ETOOLARGE},
		{"trailer injection in a message ID", "POST", "/v1/shards/agent/alice/facts", `{"text": "x", "source": {"messages": ["m1\nReverts: abc"]}}`, "", memd.EINVALID},
		{"101 source messages", "POST", "/v1/shards/agent/alice/facts", `{"text": "x", "source": {"messages": [` + strings.Repeat(`"m",`, 100) + `"m"]}}`, "", memd.EINVALID},
		{"chat kinds that disagree", "POST", "/v1/shards/agent/alice/facts?chat_kind=group", `{"text": "x", "source": {"chat_kind": "direct"}}`, "", memd.EINVALID},
		{"unknown chat kind", "POST", "/v1/shards/agent/alice/facts?chat_kind=private", `{"text": "x"}`, "", memd.EINVALID},
		{"uppercase name", "POST", "/v1/shards/agent/Alice/facts", `{"text": "x"}`, "", memd.EINVALID},
		{"unknown shard kind", "POST", "/v1/shards/team/alice/facts", `{"text": "x"}`, "", memd.EINVALID},
		{"path traversal in a shard", "POST", "/v1/shards/agent/..%2F..%2Fetc/facts", `{"text": "x"}`, "", memd.EINVALID},
		{"dot name", "POST", "/v1/shards/agent/.git/facts", `{"text": "x"}`, "", memd.EINVALID},
		{"wrong token", "POST", "/v1/shards/agent/alice/facts", `{"text": "x"}`, "Bearer nonsense", memd.EUNAUTHORIZED},
		{"no token", "POST", "/v1/shards/agent/alice/facts", `{"text": "x"}`, "none", memd.EUNAUTHORIZED},
		{"basic auth", "POST", "/v1/shards/agent/alice/facts", `{"text": "x"}`, "Basic YWRtaW46eA==", memd.EUNAUTHORIZED},
		{"another agent's shard", "POST", "/v1/shards/agent/bob/facts", `{"text": "x"}`, "alice", memd.EFORBIDDEN},
		{"user memory from a group chat", "POST", "/v1/shards/user/pat/facts?chat_kind=group", `{"text": "x"}`, "alice", memd.EFORBIDDEN},
		{"project not a member of", "POST", "/v1/shards/project/zeus/facts", `{"text": "x"}`, "alice", memd.EFORBIDDEN},
		{"forget a malformed ID", "DELETE", "/v1/shards/agent/alice/facts/xyz%2F..", "", "", memd.EINVALID},
		{"forget an unknown fact", "DELETE", "/v1/shards/agent/alice/facts/000000000000", "", "", memd.ENOTFOUND},
		{"edit into 501 characters", "PATCH", "/v1/shards/agent/alice/facts/" + fact.Fact.ID, `{"text": "` + long + `"}`, "", memd.EINVALID},
		{"edit an unknown fact", "PATCH", "/v1/shards/agent/alice/facts/000000000000", `{"text": "x"}`, "", memd.ENOTFOUND},
		{"trace a malformed ID", "GET", "/v1/shards/agent/alice/facts/zz/trace", "", "", memd.EINVALID},
		{"facts at a bad date", "GET", "/v1/shards/agent/alice/facts?at=2026-13-01", "", "", memd.EINVALID},
		{"facts from a bad date", "GET", "/v1/shards/agent/alice/facts?from=yesterday", "", "", memd.EINVALID},
		{"log limit below one", "GET", "/v1/shards/agent/alice/log?limit=-1", "", "", memd.EINVALID},
		{"log limit not a number", "GET", "/v1/shards/agent/alice/log?limit=lots", "", "", memd.EINVALID},
		{"log limit too high", "GET", "/v1/shards/agent/alice/log?limit=100000", "", "", memd.EINVALID},
		{"log of an op memd never writes", "GET", "/v1/shards/agent/alice/log?op=bogus", "", "", memd.EINVALID},
		{"facts learned by nobody memd knows", "GET", "/v1/shards/agent/alice/facts?learned_by=bogus", "", "", memd.EINVALID},
		{"revert naming nothing", "POST", "/v1/revert", "{}", "", memd.EINVALID},
		// Revert.
		{"revert a commit and a message", "POST", "/v1/revert", `{"shard": "agent/alice", "commit": "abc", "message": "m"}`, "", memd.EINVALID},
		{"revert nothing", "POST", "/v1/revert", `{}`, "", memd.EINVALID},
		{"revert a date", "POST", "/v1/revert", `{"shard": "agent/alice", "commit": "2026-12-05"}`, "", memd.EINVALID},
		{"revert a branch name", "POST", "/v1/revert", `{"shard": "agent/alice", "commit": "main"}`, "", memd.EINVALID},
		{"revert an unknown commit", "POST", "/v1/revert", `{"shard": "agent/alice", "commit": "0123456789abcdef0123456789abcdef01234567"}`, "", memd.ENOTFOUND},
		{"revert a commit that is not hex", "POST", "/v1/revert", `{"shard": "agent/alice", "commit": "HEAD~1"}`, "", memd.EINVALID},
		{"revert an unknown message", "POST", "/v1/revert", `{"message": "never-sent"}`, "", memd.ENOTFOUND},
		{"revert another agent's commit", "POST", "/v1/revert", `{"shard": "agent/bob", "commit": "abc"}`, "alice", memd.EFORBIDDEN},
		{"revert confirming what is not a commit", "POST", "/v1/revert", `{"message": "never-sent", "confirmed": ["zzz"]}`, "", memd.EINVALID},
		// Agents.
		{"agent named with a path", "POST", "/v1/agents", `{"name": "../x"}`, "", memd.EINVALID},
		{"agent named in capitals", "POST", "/v1/agents", `{"name": "Alice"}`, "", memd.EINVALID},
		{"agent added twice", "POST", "/v1/agents", `{"name": "alice"}`, "", memd.ECONFLICT},
		{"agent named as the admin", "POST", "/v1/agents", `{"name": "admin"}`, "", memd.EINVALID},
		{"agent named as memd", "POST", "/v1/agents", `{"name": "memd"}`, "", memd.EINVALID},
		{"agent adding an agent", "POST", "/v1/agents", `{"name": "mallory"}`, "alice", memd.EFORBIDDEN},
		{"agent listing agents", "GET", "/v1/agents", "", "alice", memd.EFORBIDDEN},
		{"remove an unknown agent", "DELETE", "/v1/agents/nobody", "", "", memd.ENOTFOUND},
		// Reading.
		{"recall nothing", "GET", "/v1/recall?q=%20", "", "alice", memd.EINVALID},
		{"recall k=51", "GET", "/v1/recall?q=x&k=51", "", "alice", memd.EINVALID},
		{"recall 2000-byte query", "GET", "/v1/recall?q=" + strings.Repeat("w", 2000), "", "alice", memd.EINVALID},
		{"recall another agent's view", "GET", "/v1/recall?q=x&agent=bob", "", "alice", memd.EFORBIDDEN},
		{"context with four projects", "GET", "/v1/context?agent=alice&projects=a,b,c,d", "", "", memd.EINVALID},
		{"context of no agent", "GET", "/v1/context", "", "", memd.EINVALID},
		{"recall at a malformed stamp", "GET", "/v1/recall?q=x&at=agent/alice@zz", "", "alice", memd.EINVALID},
		{"recall at a stamp naming an unknown commit", "GET", "/v1/recall?q=x&at=agent/alice@0123456789abcdef0123456789abcdef01234567", "", "alice", memd.ENOTFOUND},
		{"recall explain not a boolean", "GET", "/v1/recall?q=x&explain=maybe", "", "alice", memd.EINVALID},
		{"context since a date", "GET", "/v1/context?since=2026-01-01", "", "alice", memd.EINVALID},
		{"context since a stamp and at", "GET", "/v1/context?since=agent/alice@abcd1234&at=2026-01-01", "", "alice", memd.EINVALID},
		{"context since a commit alice's shard lacks", "GET", "/v1/context?since=agent/alice@0123456789abcdef0123456789abcdef01234567", "", "alice", memd.ENOTFOUND},
		{"context at an unknown commit", "GET", "/v1/context?at=0123456789ab", "", "alice", memd.ENOTFOUND},
		// Notes.
		{"note path traversal", "POST", "/v1/shards/agent/alice/notes", `{"path": "../../etc/passwd.md", "text": "x"}`, "", memd.EINVALID},
		{"note that is not Markdown", "POST", "/v1/shards/agent/alice/notes", `{"path": "run.sh", "text": "x"}`, "", memd.EINVALID},
		{"note path with a capital", "POST", "/v1/shards/agent/alice/notes", `{"path": "Plan.md", "text": "x"}`, "", memd.EINVALID},
		{"note created twice", "POST", "/v1/shards/agent/alice/notes", `{"path": "plan.md", "text": "x"}`, "", memd.ECONFLICT},
		{"note over 256 KiB", "POST", "/v1/shards/agent/alice/notes", `{"path": "big.md", "text": "` + strings.Repeat("z", 300<<10) + `"}`, "", memd.ETOOLARGE},
		{"note with a NUL byte", "POST", "/v1/shards/agent/alice/notes", `{"path": "nul.md", "text": "a\u0000"}`, "", memd.EINVALID},
		{"read a note by traversal", "GET", "/v1/shards/agent/alice/notes/..%2F..%2Fprofile.md", "", "", memd.EINVALID},
		{"read an absent note", "GET", "/v1/shards/agent/alice/notes/absent.md", "", "", memd.ENOTFOUND},
		{"edit at a stale revision", "POST", "/v1/shards/agent/alice/notes/plan.md:edit", `{"expectedRevision": "` + stale + `", "edits": [{"op": "replace", "find": "Plan", "replace": "Goal"}]}`, "", memd.EREVISION},
		{"edit at a malformed revision", "POST", "/v1/shards/agent/alice/notes/plan.md:edit", `{"expectedRevision": "abc", "edits": [{"op": "replace", "find": "Plan", "replace": "Goal"}]}`, "", memd.EINVALID},
		{"edits that each multiply the note", "POST", "/v1/shards/agent/alice/notes/a1000.md:edit", `{"edits": [` + blowUp + `, ` + blowUp + `, ` + blowUp + `]}`, "", memd.ETOOLARGE},
		{"ambiguous anchor", "POST", "/v1/shards/agent/alice/notes/plan.md:edit", `{"edits": [{"op": "replace", "find": "Ship it.", "replace": "Done."}]}`, "", memd.EANCHORAMBIGUOUS},
		{"missing anchor", "POST", "/v1/shards/agent/alice/notes/plan.md:edit", `{"edits": [{"op": "insert_after", "anchor": "## Risks", "text": "x"}]}`, "", memd.EANCHORNOTFOUND},
		{"second edit's anchor missing", "POST", "/v1/shards/agent/alice/notes/plan.md:edit", `{"edits": [{"op": "replace", "find": "Plan", "replace": "Goal"}, {"op": "delete", "find": "Risks"}]}`, "", memd.EANCHORNOTFOUND},
		{"unknown edit op", "POST", "/v1/shards/agent/alice/notes/plan.md:edit", `{"edits": [{"op": "append", "text": "x"}]}`, "", memd.EINVALID},
		{"no edits", "POST", "/v1/shards/agent/alice/notes/plan.md:edit", `{"edits": []}`, "", memd.EINVALID},
		{"POST a note without :edit", "POST", "/v1/shards/agent/alice/notes/plan.md", `{}`, "", memd.EINVALID},
		{"delete an absent note", "DELETE", "/v1/shards/agent/alice/notes/absent.md", "", "", memd.ENOTFOUND},
		{"another agent's notes", "GET", "/v1/shards/agent/bob/notes", "", "alice", memd.EFORBIDDEN},
		// Learning, feed, and the rest.
		{"exchange with learning off", "POST", "/v1/exchanges", `{"agent": "alice", "chat": "c", "chat_kind": "direct", "messages": [{"id": "m", "role": "user", "text": "hi"}]}`, "alice", memd.EUNAVAILABLE},
		{"feed since a malformed commit", "GET", "/v1/feed?since=agent/alice:zz", "", "alice", memd.EINVALID},
		{"feed since another shard's commit", "GET", "/v1/feed?since=agent/alice:0123456789abcdef0123456789abcdef01234567", "", "alice", memd.ENOTFOUND},
		{"feed since without a shard", "GET", "/v1/feed?since=abc", "", "alice", memd.EINVALID},
		{"unknown endpoint", "GET", "/v1/secrets", "", "", memd.ENOTFOUND},
		{"a method the endpoint does not take", "PUT", "/v1/shards/agent/alice/facts", `{"text": "x"}`, "", "method_not_allowed"},
		{"recall by POST", "POST", "/v1/recall?q=x", `{}`, "alice", "method_not_allowed"},
		// GET and POST take it; DELETE only redirects to notes/, which no
		// method's endpoint is. TestBadInput_AllowNamesTheEndpoints reads Allow.
		{"a note list by PUT", "PUT", "/v1/shards/agent/alice/notes", `{}`, "", "method_not_allowed"},
		// A typo in a name makes no new shard.
		{"remember in the shard of no agent", "POST", "/v1/shards/agent/alcie/facts", `{"text": "x"}`, "", memd.ENOTFOUND},
		{"a note in the shard of no agent", "POST", "/v1/shards/agent/alcie/notes", `{"path": "a.md", "text": "x"}`, "", memd.ENOTFOUND},
		// Synthesis and review.
		{"synthesis with learning off", "POST", "/v1/synthesis", `{"agent": "alice"}`, "alice", memd.EUNAVAILABLE},
		{"synthesis over another agent's memory", "POST", "/v1/synthesis", `{"agent": "bob"}`, "alice", memd.EFORBIDDEN},
		{"agent setting its own review mode", "PUT", "/v1/agents/alice/review", `{"on": false}`, "alice", memd.EFORBIDDEN},
		{"review mode of an unknown agent", "PUT", "/v1/agents/nobody/review", `{"on": true}`, "", memd.ENOTFOUND},
		{"review mode without on", "PUT", "/v1/agents/alice/review", `{}`, "", memd.EINVALID},
		{"agent reviewing proposals", "POST", "/v1/proposals/review", `{"verdict": "accept", "all": true}`, "alice", memd.EFORBIDDEN},
		{"review with no verdict", "POST", "/v1/proposals/review", `{"all": true}`, "", memd.EINVALID},
		{"review naming nothing", "POST", "/v1/proposals/review", `{"verdict": "reject"}`, "", memd.EINVALID},
		{"review naming IDs and all", "POST", "/v1/proposals/review", `{"verdict": "reject", "ids": ["abcd"], "all": true}`, "", memd.EINVALID},
		{"review of an unknown proposal", "POST", "/v1/proposals/review", `{"verdict": "accept", "ids": ["abcdef"]}`, "", memd.ENOTFOUND},
		{"reviewer with a newline", "POST", "/v1/proposals/review", `{"verdict": "accept", "all": true, "reviewer": "pat\nEvil: x"}`, "", memd.EINVALID},
		{"proposals of another agent's shard", "GET", "/v1/proposals?shard=agent/bob", "", "alice", memd.EFORBIDDEN},
		{"proposals of every shard, as an agent", "GET", "/v1/proposals", "", "alice", memd.EFORBIDDEN},
		{"recall include_proposed and at", "GET", "/v1/recall?q=x&include_proposed=true&at=2026-01-01", "", "alice", memd.EINVALID},
		{"context since and include_proposed", "GET", "/v1/context?since=agent/alice@abcd1234&include_proposed=true", "", "alice", memd.EINVALID},
		// Query parameters that do not parse.
		{"facts with a limit in words", "GET", "/v1/shards/agent/alice/facts?limit=ten", "", "alice", memd.EINVALID},
		{"facts with origins not a bool", "GET", "/v1/shards/agent/alice/facts?origins=maybe", "", "alice", memd.EINVALID},
		{"log with a negative-looking offset", "GET", "/v1/shards/agent/alice/log?offset=-x", "", "alice", memd.EINVALID},
		{"note history with a limit in words", "GET", "/v1/shards/agent/alice/notes/plan.md:history?limit=ten", "", "alice", memd.EINVALID},
		{"recall with k in words", "GET", "/v1/recall?q=x&k=five", "", "alice", memd.EINVALID},
		{"recall with explain not a bool", "GET", "/v1/recall?q=x&explain=yes-please", "", "alice", memd.EINVALID},
		{"context with include_proposed not a bool", "GET", "/v1/context?include_proposed=2", "", "alice", memd.EINVALID},
		{"learning stats to a malformed date", "GET", "/v1/stats/learning?to=yesterday", "", "", memd.EINVALID},
		{"growth of a malformed shard", "GET", "/v1/stats/growth?shard=nobody", "", "", memd.EINVALID},
		{"proposals of a malformed shard", "GET", "/v1/proposals?shard=agent/", "", "", memd.EINVALID},
		{"facts of a malformed shard", "GET", "/v1/shards/team/x/facts", "", "", memd.EINVALID},
		// Shards over git's smart HTTP.
		{"git: another agent's shard", "GET", "/git/agent/bob.git/info/refs?service=git-upload-pack", "", "alice", memd.EFORBIDDEN},
		{"git: user shard, no chat declared", "GET", "/git/user/pat.git/info/refs?service=git-upload-pack", "", "alice", memd.EFORBIDDEN},
		{"git: user shard, a direct chat claimed in the URL", "GET", "/git/user/pat.git/info/refs?service=git-upload-pack&chat_kind=direct", "", "alice", memd.EFORBIDDEN},
		{"git: fetch a user shard, a direct chat claimed", "POST", "/git/user/pat.git/git-upload-pack?chat_kind=direct", "0000", "alice", memd.EFORBIDDEN},
		{"git: push to a user shard, a direct chat claimed", "GET", "/git/user/pat.git/info/refs?service=git-receive-pack&chat_kind=direct", "", "alice", memd.EFORBIDDEN},
		{"git: push a user shard's pack, a direct chat claimed", "POST", "/git/user/pat.git/git-receive-pack?chat_kind=direct", "0000", "alice", memd.EFORBIDDEN},
		{"git: push to another agent's shard", "GET", "/git/agent/bob.git/info/refs?service=git-receive-pack", "", "alice", memd.EFORBIDDEN},
		{"git: push body not pkt-lines", "POST", "/git/agent/alice.git/git-receive-pack", "zzzz", "alice", memd.EINVALID},
		{"git: push command malformed", "POST", "/git/agent/alice.git/git-receive-pack", "000dnot a ref0000", "alice", memd.EINVALID},
		{"git: push by GET", "GET", "/git/agent/alice.git/git-receive-pack", "", "alice", memd.EINVALID},
		{"git: dot-dot shard", "GET", "/git/agent/%2e%2e.git/info/refs", "", "", memd.EINVALID},
		{"git: dumb protocol file", "GET", "/git/agent/alice.git/objects/info/packs", "", "", memd.ENOTFOUND},
		{"git: wrong token", "GET", "/git/agent/alice.git/info/refs?service=git-upload-pack", "", "Bearer memd_nope", memd.EUNAUTHORIZED},
		{"git: no token", "GET", "/git/agent/alice.git/info/refs?service=git-upload-pack", "", "none", memd.EUNAUTHORIZED},
	}
	tokens := map[string]string{"": "Bearer " + e.admin.Token, "admin": "Bearer " + e.admin.Token, "alice": "Bearer " + agent.Token, "none": ""}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, e.d.URL()+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			auth, ok := tokens[c.token]
			if !ok {
				auth = c.token
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				Error struct{ Code, Message string }
			}
			body, _ := io.ReadAll(resp.Body)
			err = json.Unmarshal(body, &got)
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
				// git clients read errors as text: "<code>: <message>".
				got.Error.Code, got.Error.Message, _ = strings.Cut(strings.TrimSpace(string(body)), ": ")
				err = nil
			}
			if err != nil || got.Error.Code != c.want || got.Error.Message == "" {
				t.Errorf("%s %s: %d %s, want code %s", c.method, c.path[:min(len(c.path), 80)], resp.StatusCode, bytes.TrimSpace(body[:min(len(body), 300)]), c.want)
			}
		})
	}
	mcpCases := mcpBadInput(t, e, agent.Token)

	if after := heads(t, e); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("HEADs moved:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("bad input: %d HTTP cases, %d MCP cases", len(cases), mcpCases)
}

// mcpBadInput calls the MCP tools with bad arguments; each must be a tool
// error starting with the right code.
func mcpBadInput(t *testing.T, e *env, token string) int {
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: e.d.URL() + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bad-input", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{"text": strings.Repeat("x", 501)}, "invalid: "},
		{"remember", map[string]any{"text": "one\ntwo"}, "invalid: "},
		{"remember", map[string]any{"text": "x", "date": "2026-02-30"}, "invalid: "},
		{"remember", map[string]any{"text": "x", "shard": "agent/../bob"}, "invalid: "},
		{"remember", map[string]any{"text": "x", "shard": "agent/bob"}, "forbidden (rule agent-own-shard): "},
		{"remember", map[string]any{"text": "x", "shard": "user/pat", "chat_kind": "group"}, "forbidden (rule user-memory-direct-chat): "},
		// The schema's enum refuses it first, naming the values it takes.
		{"remember", map[string]any{"text": "x", "chat_kind": "secret"}, `validating "arguments"`},
		{"remember", map[string]any{"text": "x", "source_messages": []string{"m\nReverts: x"}}, "invalid: "},
		{"remember", map[string]any{"text": 5}, ""},
		{"forget", map[string]any{"id": "../x"}, "invalid: "},
		{"forget", map[string]any{"id": "000000000000"}, "not_found: "},
		{"recall", map[string]any{"query": "x", "k": 100}, "invalid: "},
		{"recall", map[string]any{"query": ""}, "invalid: "},
		{"memory_context", map[string]any{"projects": []string{"a", "b", "c", "d"}}, "invalid: "},
		{"trace", map[string]any{"id": "zz"}, "invalid: "},
		{"history", map[string]any{"limit": 5000}, "invalid: "},
		{"read_note", map[string]any{"path": "../profile.md"}, "invalid: "},
		{"create_note", map[string]any{"path": "plan.md", "text": "x"}, "conflict: "},
		{"create_note", map[string]any{"path": "big.md", "text": strings.Repeat("z", 300<<10)}, "too_large: "},
		{"edit_note", map[string]any{"path": "plan.md", "edits": []map[string]any{{"op": "replace", "find": "Ship it.", "replace": "x"}}}, "anchor_ambiguous: edit 1 (replace)"},
		{"edit_note", map[string]any{"path": "plan.md", "edits": []map[string]any{{"op": "delete", "find": "nowhere"}}}, "anchor_not_found: edit 1 (delete)"},
		{"edit_note", map[string]any{"path": "plan.md", "expectedRevision": strings.Repeat("0", 64), "edits": []map[string]any{{"op": "delete", "find": "Plan"}}}, "revision_mismatch: "},
		{"delete_note", map[string]any{"path": "plan.md", "expectedRevision": strings.Repeat("0", 64)}, "revision_mismatch: "},
		{"delete_note", map[string]any{"path": "plan.md", "expected_revision": strings.Repeat("0", 64)}, "revision_mismatch: "},
		{"delete_note", map[string]any{"path": "plan.md", "expectedRevision": strings.Repeat("0", 64), "expected_revision": strings.Repeat("1", 64)}, "invalid: "},
		// Folded, "#\u00a0Plan" is the heading; exact, it is nowhere.
		{"edit_note", map[string]any{"path": "plan.md", "edits": []map[string]any{{"op": "replace", "find": "#\u00a0Plan", "replace": "# Goal", "exact": true}}}, "anchor_not_found: edit 1 (replace)"},
		{"edit_fact", map[string]any{"id": memd.FactID("Lives in Lisbon"), "text": "Lives in Porto", "source_messages": []string{"m9"}, "source_excerpt": strings.Repeat("e", 2001)}, "invalid: "},
	}
	for _, c := range cases {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Errorf("%s %v: %v", c.tool, c.args["text"], err)
			continue
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || !strings.HasPrefix(text, c.want) {
			t.Errorf("%s: error %v %q, want it to start with %q", c.tool, res.IsError, text[:min(len(text), 200)], c.want)
		}
	}
	return len(cases)
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// A method a path does not take is answered 405 with the methods it
// does, and only those: a path the mux would only redirect is none.
func TestBadInput_AllowNamesTheEndpoints(t *testing.T) {
	e := start(t)
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/v1/shards/agent/alice/notes", "GET, POST"},
		{"DELETE", "/v1/recall", "GET"},
		{"POST", "/v1/shards/agent/alice/facts/0debdaf7d96f", "PATCH, DELETE"},
	} {
		req, err := http.NewRequest(c.method, e.d.URL()+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.admin.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405 and %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), c.allow)
		}
	}
}

// Frames and bodies: a feed client sending a huge frame is cut off, and a
// client trickling its body slows nobody else down.
func TestBadInput_FramesAndSlowBodies(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	a, _ := e.admin.AddAgent(ctx, "alice", nil)
	url := strings.Replace(e.d.URL(), "http://", "ws://", 1) + "/v1/feed"
	conn, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + a.Token}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 1<<20))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err = conn.ReadMessage(); err != nil {
			break
		}
	}
	if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) && !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("after a 1 MiB frame: %v, want the connection closed", err)
	}

	// A body sent one byte at a time, never finished.
	slow, err := net.Dial("tcp", strings.TrimPrefix(e.d.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /v1/shards/agent/alice/facts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"te", a.Token)
	res, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: memd.AgentShard("alice"), Text: "Written while another client trickles"})
	if err != nil || res.Commit == "" {
		t.Errorf("a write beside a slow body: %+v, %v", res, err)
	}
}
