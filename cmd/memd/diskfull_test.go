package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd/internal/memdtest"
)

// The disk holding memd's data fills up: a write fails with an error that
// says so (503, unavailable), and nothing of it is kept; the facts already
// acknowledged stay, the shard stays a sound git repository with a clean
// working tree, memd stops and starts, and once there is room again writes
// succeed.
func TestServe_ADiskThatFillsUp(t *testing.T) {
	home := memdtest.SmallDisk(t, "8m")
	s := serveAt(t, home, "127.0.0.1:0")
	s.must("agent", "add", "alice")
	s.must("remember", "--shard", "agent/alice", "Booked a flight to Lisbon")
	planFile := filepath.Join(t.TempDir(), "plan.md")
	os.WriteFile(planFile, []byte("# Plan\n\n- book the hotel\n"), 0o644)
	s.must("notes", "create", "--shard", "agent/alice", "plan.md", planFile)
	token, err := os.ReadFile(filepath.Join(s.data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	remember := func(text string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/shards/agent/alice/facts", strings.NewReader(`{"text":"`+text+`"}`))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Error.Code, body.Error.Message
	}

	free := memdtest.FillDisk(t, home)
	status, code, msg := remember("Packed a raincoat")
	if status != http.StatusServiceUnavailable || code != "unavailable" || !strings.Contains(msg, "disk holding memd's data is full") {
		t.Errorf("remember on a full disk: %d %s %q, want 503 unavailable saying the disk is full", status, code, msg)
	}
	out, err := s.memd(nil, "notes", "edit", "--shard", "agent/alice", "plan.md", "--find", "book the hotel", "--replace", "book the hotel near the venue")
	if err == nil || !strings.Contains(out, "disk holding memd's data is full") {
		t.Errorf("a note edit on a full disk: %v\n%s", err, out)
	}

	// Stopped and started again while the disk is full: the stop is a
	// clean one though the index's snapshot cannot be written, and the
	// start reads the shard and answers.
	s.stop()
	s = serveAt(t, home, "127.0.0.1:0")
	if out := s.must("recall", "--agent", "alice", "Lisbon"); !strings.Contains(out, "Booked a flight to Lisbon") {
		t.Errorf("recall after a start on a full disk:\n%s", out)
	}

	free()
	if status, code, msg := remember("Took the night train"); status != http.StatusCreated {
		t.Fatalf("remember with room again: %d %s %s", status, code, msg)
	}
	facts := s.must("facts", "--shard", "agent/alice")
	for text, want := range map[string]bool{"Booked a flight to Lisbon": true, "Packed a raincoat": false, "Took the night train": true} {
		if strings.Contains(facts, text) != want {
			t.Errorf("after the disk filled and emptied, %q listed: %v, want %v\n%s", text, !want, want, facts)
		}
	}
	shard := filepath.Join(s.data, "shards", "agent", "alice")
	if plan, _ := os.ReadFile(filepath.Join(shard, "notes", "plan.md")); string(plan) != "# Plan\n\n- book the hotel\n" {
		t.Errorf("the note after its edit failed: %q", plan)
	}
	git(t, shard, "fsck", "--strict", "--no-progress")
	if st := git(t, shard, "status", "--porcelain"); st != "" {
		t.Errorf("git status after the disk filled and emptied:\n%s", st)
	}
}

// A large file changed a little: memd's pack holds the change, but the
// working file is written whole again. On a disk with room for the first
// and not the second, the write is refused (503) and main stays: had main
// moved, a person's next git commit, made from the working tree and index
// that lack the change, would have taken it back. With room again the
// same write goes through.
func TestServe_AWriteWhoseWorkingFileFindsNoRoom(t *testing.T) {
	home := memdtest.SmallDisk(t, "8m")
	s := serveAt(t, home, "127.0.0.1:0")
	s.must("agent", "add", "alice")
	s.must("remember", "--shard", "agent/alice", "Booked a flight to Lisbon")
	shard := filepath.Join(s.data, "shards", "agent", "alice")
	token, err := os.ReadFile(filepath.Join(s.data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A long profile and a long note, committed by a person.
	long := func(line string) string { return strings.Repeat(line, (240<<10)/len(line)) }
	prof, _ := os.ReadFile(filepath.Join(shard, "profile.md"))
	os.WriteFile(filepath.Join(shard, "profile.md"), append(prof, long("- (2026-11-03) Likes one more city on the long list\n")...), 0o644)
	os.MkdirAll(filepath.Join(shard, "notes"), 0o755)
	os.WriteFile(filepath.Join(shard, "notes", "big.md"), []byte("# Big\n\n"+long("- check the deploy runbook before shipping\n")), 0o644)
	git(t, shard, "add", "-A")
	git(t, shard, "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qm", "long files")
	var list struct{ Facts []struct{ ID, Text string } }
	_, out := call(http.MethodGet, "/v1/shards/agent/alice/facts?q=Lisbon", "")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Facts) != 1 {
		t.Fatalf("the fact to forget: %v %s", err, out)
	}
	writes := []struct{ name, method, path, body string }{
		{"forget", http.MethodDelete, "/v1/shards/agent/alice/facts/" + list.Facts[0].ID, ""},
		{"note edit", http.MethodPost, "/v1/shards/agent/alice/notes/big.md:edit", `{"edits":[{"op":"insert_after","anchor":"# Big\n","text":"Edited by memd.\n"}]}`},
	}
	for _, w := range writes {
		head := git(t, shard, "rev-parse", "HEAD")
		free := memdtest.LeaveFree(t, home, 360<<10) // room for the pack, not the file again
		status, body := call(w.method, w.path, w.body)
		if status != http.StatusServiceUnavailable || !strings.Contains(body, "disk holding memd's data is full") {
			t.Errorf("%s whose working file finds no room: %d %s, want 503 saying the disk is full", w.name, status, body)
		}
		if now := git(t, shard, "rev-parse", "HEAD"); now != head {
			t.Errorf("%s refused for want of room moved main: %s", w.name, git(t, shard, "log", "-2", "--format=%an %s"))
		}
		if st := git(t, shard, "status", "--porcelain"); st != "" {
			t.Errorf("git status after %s was refused: %q", w.name, st)
		}
		free()
		if status, body := call(w.method, w.path, w.body); status != http.StatusOK {
			t.Errorf("%s again with room: %d %s", w.name, status, body)
		}
		if st := git(t, shard, "status", "--porcelain"); st != "" {
			t.Errorf("git status after %s with room: %q", w.name, st)
		}
	}
}

// An agent whose shard finds no room is not registered: adding it again
// with more room works, and gives its token.
func TestServe_AgentAddOnAFullDisk(t *testing.T) {
	home := memdtest.SmallDisk(t, "8m")
	s := serveAt(t, home, "127.0.0.1:0")
	s.must("agent", "add", "bob")
	refused := 0
	for _, room := range []int64{4 << 10, 8 << 10, 12 << 10, 16 << 10, 64 << 10} {
		free := memdtest.LeaveFree(t, home, room)
		out, err := s.memd(nil, "agent", "add", "alice")
		free()
		if err == nil {
			if refused == 0 {
				t.Fatal("agent add never found the disk full; the test shows nothing")
			}
			if !strings.Contains(out, "token") {
				t.Errorf("agent add with %d bytes free, after %d refused: %s", room, refused, out)
			}
			return
		}
		refused++
		if !strings.Contains(out, "disk holding memd's data is full") {
			t.Errorf("agent add with %d bytes free: %v\n%s", room, err, out)
		}
	}
	t.Errorf("agent add refused %d times, the last with 64 KiB free: %s", refused, s.must("agent", "list"))
}

// A git push to memd while its disk is full is refused saying so, not
// blamed on the pusher's pack; with room again, the same push goes in.
func TestServe_APushToAFullDisk(t *testing.T) {
	home := memdtest.SmallDisk(t, "8m")
	s := serveAt(t, home, "127.0.0.1:0")
	alice := tokenOf(t, s.must("agent", "add", "alice"))
	s.must("remember", "--shard", "agent/alice", "Booked a flight to Lisbon")
	base := strings.Replace(s.url, "http://", "http://alice:"+alice+"@", 1)
	clone := filepath.Join(t.TempDir(), "alice")
	gitQuiet(t, "", "clone", "-q", base+"/git/agent/alice.git", clone)
	f, err := os.OpenFile(filepath.Join(clone, "profile.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- (2026-11-03) Has a cat called Miso\n")
	f.Close()
	gitQuiet(t, clone, "commit", "-qam", "hand edit: the cat")

	free := memdtest.FillDisk(t, home)
	out, err := gitOut(clone, "push", "origin", "main")
	if err == nil {
		t.Fatal("the push went in on a full disk; the test did not fill it")
	}
	if strings.Contains(out, "not valid") || !strings.Contains(out, "disk holding memd's data is full") {
		t.Errorf("a push refused for want of room:\n%s", out)
	}
	free()
	if out, err := gitOut(clone, "push", "origin", "main"); err != nil {
		t.Errorf("the push again with room: %v\n%s", err, out)
	}
	if facts := s.must("facts", "--shard", "agent/alice"); !strings.Contains(facts, "Has a cat called Miso") {
		t.Errorf("the pushed fact is not listed:\n%s", facts)
	}
}
