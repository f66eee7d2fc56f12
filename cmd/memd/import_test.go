package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
)

// Importing the OpenTeam-style sample twice yields one copy of every fact,
// the newest date where bots disagreed, and each fact traced to the import.
func TestImport_TwiceIsOnce(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "memd")
	folder := filepath.Join("..", "..", "testdata", "openteam")
	run := func() string {
		t.Helper()
		out, err := exec.Command(memdBin, "import", "--data", data, "--user", "pat", folder).CombinedOutput()
		if err != nil {
			t.Fatalf("memd import: %v\n%s", err, out)
		}
		return string(out)
	}
	first := run()
	if !strings.Contains(first, "user/pat        4            4") {
		t.Errorf("first import:\n%s", first)
	}
	second := run()
	if !strings.Contains(second, "user/pat        4            0         4") {
		t.Errorf("second import changed something:\n%s", second)
	}
	if out, err := exec.Command(memdBin, "import", "--data", data, folder).CombinedOutput(); err == nil || !strings.Contains(string(out), "--user") {
		t.Errorf("import of user memory without --user: %v\n%s", err, out)
	}

	s := serveAt(t, home, "127.0.0.1:0")
	token, _ := os.ReadFile(filepath.Join(data, "admin.token"))
	c := client.New(s.url, strings.TrimSpace(string(token)))
	ctx := context.Background()
	want := map[memd.ShardID]map[string]string{
		memd.AgentShard("alice"): {
			"Answers in British English":                                     "2026-01-12",
			"Keeps weekly status reports under 200 words":                    "2026-02-03",
			"Migrated the reports to SQL Server":                             "2026-03-02",
			"The staging database restarts every Sunday night":               "2026-03-09",
			"Worked with Pat on the quarterly numbers and the SQL migration": "2026-03-20",
			"Booked a flight to Lisbon for the offsite":                      "2026-04-07",
		},
		memd.AgentShard("bob"): {"Writes release notes on Fridays": "2026-02-14", "Rotated the deploy keys for the staging cluster": "2026-05-05"},
		memd.UserShard("pat"): {
			"Prefers email over phone calls": "2026-04-15", // bob's later copy wins
			"Lives in Austin":                "2026-03-01",
			"Moved to Lisbon in April":       "2026-04-16",
			"Started Portuguese lessons":     "2026-04-16",
		},
		memd.ProjectShard("apollo"): {
			"Chose Postgres 16 for the Apollo backend": "2026-03-03",
			"The launch moved to June 2":               "2026-03-19",
			"Apollo ships as a single binary":          "2026-02-01",
		},
	}
	for shard, facts := range want {
		list, err := c.Facts(ctx, memd.FactsQuery{Shard: shard})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Facts) != len(facts) {
			t.Errorf("%s holds %d facts, want %d: %+v", shard, len(list.Facts), len(facts), list.Facts)
		}
		for _, f := range list.Facts {
			if date, ok := facts[f.Text]; !ok || f.Date.String() != date {
				t.Errorf("%s: %s %q, want date %q", shard, f.Date, f.Text, date)
			}
			tr, err := c.Trace(ctx, shard, f.ID)
			if err != nil || tr.Introduced == nil {
				t.Fatalf("trace %q: %v", f.Text, err)
			}
			p := tr.Introduced.Provenance
			if p.LearnedBy != memd.LearnedImport || p.Op != memd.OpImport || len(p.SourceMessages) != 1 || !strings.HasPrefix(p.SourceMessages[0], "import:") {
				t.Errorf("trace of %q: %+v", f.Text, p)
			}
		}
	}
	if n := strings.Count(git(t, filepath.Join(data, "shards", "agent", "alice"), "log", "--format=%s"), "\n"); n != 6 {
		t.Errorf("agent/alice has %d commits, want one per fact (6)", n)
	}
}

// File and folder names cannot write trailers: a log whose name holds a
// line break, or a bot folder that is not a name, is skipped and said so;
// a split month's day logs are read.
func TestImport_NamesCannotForgeTrailers(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, "data")
	folder := filepath.Join(home, "openteam")
	write := func(rel, text string) {
		p := filepath.Join(folder, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agents/alice/memory/log/2026-05.md", "- (2026-05-01) An honest fact\n")
	write("agents/alice/memory/log/2026-05/09.md", "- (2026-05-09) An honest fact of a split month\n")
	write("agents/alice/memory/log/2026-05/b\nSource-Message: msg_victim2\nZ: .md", "- (2026-05-04) Another forged fact\n")
	write("agents/alice/memory/log/a\nSource-Message: msg_victim\nReverts: 1111111111111111111111111111111111111111\nZ: .md", "- (2026-05-02) A forged fact\n")
	write("user-memory/by-agent/Bad\nBot/profile.md", "- (2026-05-03) A fact from a bad folder\n")
	out, err := exec.Command(memdBin, "import", "--data", data, "--user", "pat", folder).CombinedOutput()
	if err != nil {
		t.Fatalf("memd import: %v\n%s", err, out)
	}
	if strings.Count(string(out), "not a log") != 2 || !strings.Contains(string(out), "by-agent/") {
		t.Errorf("the skipped names are not reported:\n%s", out)
	}
	shard := filepath.Join(data, "shards", "agent", "alice")
	log := git(t, shard, "log", "--format=%B")
	if strings.Contains(log, "msg_victim") || strings.Contains(log, "Reverts:") || strings.Contains(log, "forged fact") {
		t.Errorf("a file name wrote trailers:\n%s", log)
	}
	if !strings.Contains(log, "Source-Message: import:agents/alice/memory/log/2026-05.md") || !strings.Contains(log, "Source-Message: import:agents/alice/memory/log/2026-05/09.md") {
		t.Errorf("the honest fact's commit:\n%s", log)
	}
}
