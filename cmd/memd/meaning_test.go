package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd/internal/conceptembed"
)

// handMadeShard writes a shard as a person would with git alone: n
// distractor facts over eleven months' logs, and the facts given, in one
// commit.
func handMadeShard(t *testing.T, dir string, n int, facts map[string]string) {
	t.Helper()
	who := []string{"The ops team", "Finance", "The sales lead", "Our intern", "The support desk", "A customer", "The CTO", "Legal", "The office manager", "The data team"}
	did := []string{"reviewed", "asked about", "updated", "postponed", "approved", "discussed", "rejected", "documented", "tested", "signed"}
	what := []string{"the travel policy", "the invoice template", "the quarterly budget forecast", "the database backup schedule", "the dashboard colour scheme",
		"the conference calendar", "the vendor list", "the migration checklist for the CRM", "the server room cooling", "the onboarding guide",
		"the disk quota for home folders", "the on-call schedule", "the report layout", "the expense approval flow", "the guest wifi"}
	logs := map[string]*strings.Builder{}
	line := func(date, text string) {
		month := date[:7]
		if logs[month] == nil {
			logs[month] = &strings.Builder{}
		}
		fmt.Fprintf(logs[month], "- (%s) %s\n", date, text)
	}
	for i := range n {
		line(fmt.Sprintf("2026-%02d-%02d", 1+i%11, 1+(i/11)%28), fmt.Sprintf("%s %s %s (item %d)", who[i%len(who)], did[(i/7)%len(did)], what[(i/3)%len(what)], i))
	}
	for text, date := range facts {
		line(date, text)
	}
	if err := os.MkdirAll(filepath.Join(dir, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	for month, b := range logs {
		if err := os.WriteFile(filepath.Join(dir, "log", month+".md"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "Facts written by hand")
}

// With an embeddings endpoint, the binary finds facts that share no word
// with the query among 3,000 distractors: "plane ticket" the flight, "new
// dog" the puppy. The vectors are computed in the background after the
// start, and memd status shows how far they are.
func TestServe_RecallsByMeaning(t *testing.T) {
	es := conceptembed.New("concepts")
	defer es.Close()
	home := t.TempDir()
	flight, puppy := "Booked a flight to Lisbon for the March offsite", "Adopted a puppy named Rex from the shelter"
	handMadeShard(t, filepath.Join(home, ".local", "share", "memd", "shards", "agent", "alice"), 3000, map[string]string{flight: "2026-03-02", puppy: "2026-05-09"})
	s := serveAt(t, home, "127.0.0.1:0", "--embed-url", es.URL+"/v1", "--embed-model", "concepts")
	s.must("agent", "add", "alice")
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := s.must("status")
		if strings.Contains(out, "recall by meaning: concepts, 3002 facts embedded, 0 to go") && !strings.Contains(out, "until they are done") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the vectors were not done in a minute:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond) // polling the status, not timing
	}
	for q, want := range map[string]string{"plane ticket": flight, "new dog": puppy} {
		out := s.must("recall", "--agent", "alice", q)
		first, _, _ := strings.Cut(out, "\n")
		if !strings.Contains(first, want) {
			t.Errorf("memd recall %q:\n%s\nwant %q first", q, out, want)
		}
	}
	out := s.must("recall", "--agent", "alice", "--explain", "plane ticket")
	if !strings.Contains(out, "meaning") {
		t.Errorf("--explain names no part for meaning:\n%s", out)
	}
}
