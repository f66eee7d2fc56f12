package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
)

// A person seeded alice's shard two days ago and, in a clone, committed Q
// yesterday; today memd wrote M1 and the person pulled (P: Q, M1). A
// subscriber asking for everything since yesterday's date (since resolves
// to Q, the last commit made on or before that day) must get M1, made
// today.
func TestFeed_ResumeSinceADateGetsWhatCameAfterIt(t *testing.T) {
	e := startFeed(t)
	ctx := context.Background()
	alice := e.agent(t, "alice")
	s := memd.AgentShard("alice")
	dir := e.d.Store.ShardDir(s)
	now := time.Now().UTC()
	twoDays, yesterday := now.AddDate(0, 0, -2), now.AddDate(0, 0, -1)
	t.Setenv("GIT_COMMITTER_DATE", twoDays.Format(time.RFC3339))
	t.Setenv("GIT_AUTHOR_DATE", twoDays.Format(time.RFC3339))
	os.WriteFile(filepath.Join(dir, "profile.md"), []byte(fmt.Sprintf("- (%s) Seeded by hand\n", memd.DateOf(twoDays))), 0o644)
	gitIn(t, dir, "add", "profile.md")
	gitIn(t, dir, "commit", "-qm", "seed")
	base := gitIn(t, dir, "rev-parse", "HEAD")
	clone := t.TempDir()
	gitIn(t, clone, "clone", "-q", dir, ".")
	t.Setenv("GIT_COMMITTER_DATE", yesterday.Format(time.RFC3339))
	t.Setenv("GIT_AUTHOR_DATE", yesterday.Format(time.RFC3339))
	os.MkdirAll(filepath.Join(clone, "notes"), 0o755)
	os.WriteFile(filepath.Join(clone, "notes", "pat.md"), []byte("# Pat\n\nby hand\n"), 0o644)
	gitIn(t, clone, "add", "notes")
	gitIn(t, clone, "commit", "-qm", "pat's note")
	q := gitIn(t, clone, "rev-parse", "HEAD")
	os.Unsetenv("GIT_COMMITTER_DATE")
	os.Unsetenv("GIT_AUTHOR_DATE")
	sub, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	m1 := remember(t, alice, "agent/alice", "Written by memd today", memd.TierProfile, memd.Source{}).Commit
	collect(t, sub, m1)
	gitIn(t, clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
	p := gitIn(t, clone, "rev-parse", "HEAD")
	pushedToMain(t, dir, clone)
	collect(t, sub, p)
	resumed, err := alice.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{s}, Since: map[memd.ShardID]string{s: string(memd.DateOf(yesterday).String())}})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	got := commits(collect(t, resumed, p))
	t.Logf("base %.7s Q %.7s M1 %.7s P %.7s", base, q, m1, p)
	if !strings.Contains(strings.Join(got, ","), m1) {
		t.Errorf("since %s replayed %v: M1 (%.7s, made today) missing", memd.DateOf(yesterday), short7(got), m1)
	}
}
