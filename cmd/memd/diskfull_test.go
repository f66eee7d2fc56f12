package main_test

import (
	"encoding/json"
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
