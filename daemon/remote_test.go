package daemon_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/remote"
)

// startWithRemote starts a daemon whose shards push to and fetch from the
// remotes the template names, pushing 10ms after a commit and fetching
// every 100ms, so that the two sides' writes cross while they sync.
func startWithRemote(t *testing.T, template string) *env {
	t.Helper()
	return startQuiet(t, daemon.Config{Remote: remote.Config{Template: template, PushDelay: 10 * time.Millisecond, FetchEvery: 100 * time.Millisecond}})
}

// gitDaemon serves the bare repositories under base over git's own
// protocol on loopback, pushes allowed, and returns its address.
func gitDaemon(t *testing.T, base string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
		"--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
	// Its own process group: git daemon forks a child per connection.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("git daemon is not listening on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process that is starting
	}
}

// Two daemons share agent/alice through a remote, write to it at the same
// time, and converge: the same facts on both, none lost, every forget
// honoured, and each side's feed reports every commit the other side made.
func TestRemote_TwoDaemonsConverge(t *testing.T) {
	for _, transport := range []string{"bare repository", "git daemon", "memd's git endpoint"} {
		t.Run(transport, func(t *testing.T) {
			base := t.TempDir()
			bare := filepath.Join(base, "agent", "alice.git")
			switch transport {
			case "bare repository":
				template := filepath.Join(base, "{kind}", "{name}.git") // created on the first push
				convergeThrough(t, startWithRemote(t, template), startWithRemote(t, template))
				gitIn(t, bare, "fsck", "--strict")
			case "git daemon":
				gitIn(t, base, "init", "--quiet", "--bare", "--initial-branch=main", bare)
				template := "git://" + gitDaemon(t, base) + "/{shard}.git"
				convergeThrough(t, startWithRemote(t, template), startWithRemote(t, template))
				gitIn(t, bare, "fsck", "--strict")
			case "memd's git endpoint":
				// b is a's remote: a pushes to b over HTTP, and b checks
				// and integrates each push.
				b := startWithRemote(t, "")
				template := strings.Replace(b.d.URL(), "http://", "http://admin:"+b.admin.Token+"@", 1) + "/git/{shard}.git"
				convergeThrough(t, startWithRemote(t, template), b)
			}
		})
	}
}

func convergeThrough(t *testing.T, a, b *env) {
	ctx := context.Background()
	alice := shard(t, "agent/alice")
	for _, e := range []*env{a, b} {
		e.agent(t, "alice")
	}
	subA, err := a.admin.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{alice}})
	if err != nil {
		t.Fatal(err)
	}
	defer subA.Close()
	subB, err := b.admin.Subscribe(ctx, memd.FeedQuery{Shards: []memd.ShardID{alice}})
	if err != nil {
		t.Fatal(err)
	}
	defer subB.Close()

	// A fact both start with, which b will forget.
	if _, err := a.admin.Remember(ctx, memd.RememberRequest{Shard: alice, Text: "Worked from the Porto office"}); err != nil {
		t.Fatal(err)
	}
	syncAll(t, a, b)

	// Both write at once: two writers each, and b forgets the shared fact.
	var mu sync.Mutex
	made := map[*env][]string{} // commits each side made
	want := map[string]bool{"Both daemons heard this": true}
	var wg sync.WaitGroup
	for _, e := range []*env{a, b} {
		side := "a"
		if e == b {
			side = "b"
		}
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 12 {
					text := fmt.Sprintf("Fact %d from writer %d on daemon %s", i, w, side)
					res, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: alice, Text: text})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					want[text] = true
					made[e] = append(made[e], res.Commit)
					mu.Unlock()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: alice, Text: "Both daemons heard this"})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			if !res.Existing {
				made[e] = append(made[e], res.Commit)
			}
			mu.Unlock()
		}()
	}
	forgot, err := b.admin.Forget(ctx, memd.ForgetRequest{Shard: alice, ID: memd.FactID("Worked from the Porto office")})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	made[b] = append(made[b], forgot.Commit)
	mu.Unlock()
	wg.Wait()
	if t.Failed() {
		return
	}

	head := syncAll(t, a, b)
	t.Logf("converged at %s after %s merge commits", head[:12], gitIn(t, a.d.Store.ShardDir(alice), "rev-list", "--merges", "--count", head))
	for _, e := range []*env{a, b} {
		list, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: alice})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range list.Facts {
			got = append(got, f.Text)
		}
		slices.Sort(got)
		wantList := slices.Sorted(mapKeys(want))
		if !slices.Equal(got, wantList) {
			t.Fatalf("facts on %s:\n got %q\nwant %q", e.d.URL(), got, wantList)
		}
		dir := e.d.Store.ShardDir(alice)
		gitIn(t, dir, "fsck", "--strict")
		if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
			t.Fatalf("git status in %s:\n%s", dir, st)
		}
	}

	// Each index has the other side's facts, traced to the commit that
	// wrote them rather than to a merge.
	for _, c := range []struct {
		e, other *env
		side     string
	}{{a, b, "b"}, {b, a, "a"}} {
		text := "Fact 11 from writer 1 on daemon " + c.side
		res, err := c.e.admin.Recall(ctx, memd.RecallQuery{Q: text, Agent: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Hits, func(h memd.Hit) bool { return h.Text == text })
		if i < 0 || i > 1 || !slices.Contains(made[c.other], res.Hits[i].Commit) {
			t.Fatalf("recall of %q on the other daemon: hit %d of %+v", text, i, res.Hits)
		}
		tr, err := c.e.admin.Trace(ctx, alice, memd.FactID(text))
		if err != nil {
			t.Fatal(err)
		}
		if tr.Introduced == nil || !slices.Contains(made[c.other], tr.Introduced.Hash) {
			t.Fatalf("trace of %q on the other daemon: introduced by %+v, want the other side's commit", text, tr.Introduced)
		}
	}

	// Each feed reports the commits the other daemon made, one event each.
	for _, c := range []struct {
		sub   memd.Subscription
		other *env
	}{{subA, b}, {subB, a}} {
		seen := make(map[string]int)
		evs := collect(t, c.sub, head)
		for _, ev := range evs {
			seen[ev.Commit]++
		}
		for _, h := range made[c.other] {
			if seen[h] != 1 {
				for _, ev := range evs {
					t.Logf("event %s %.7s parent %.7s %s", ev.Type, ev.Commit, ev.Parent, ev.Subject)
				}
				t.Log(gitIn(t, a.d.Store.ShardDir(alice), "log", "--graph", "--format=%h %ct %s", head))
				t.Fatalf("feed reported the other daemon's commit %s %d times, want once", h, seen[h])
			}
		}
	}
}

// syncAll syncs both daemons (those with a remote) until they stand on the
// same commit, which it returns; a pending push or a merge just made may
// take a round or two.
func syncAll(t *testing.T, a, b *env) string {
	t.Helper()
	ctx := context.Background()
	alice := shard(t, "agent/alice")
	for round := 0; round < 10; round++ {
		var heads []string
		for _, e := range []*env{a, b, a} {
			if _, ok := e.d.Service.Syncer.URL(alice); ok {
				list, err := e.admin.SyncRemotes(ctx, []memd.ShardID{alice})
				if err != nil {
					t.Fatal(err)
				}
				if len(list) != 1 || list[0].Error != "" {
					t.Fatalf("sync: %+v", list)
				}
			}
			sh, err := e.d.Store.Shard(alice)
			if err != nil {
				t.Fatal(err)
			}
			h, err := sh.Head()
			if err != nil {
				t.Fatal(err)
			}
			heads = append(heads, h.String())
		}
		if heads[1] == heads[2] && heads[2] == heads[0] {
			return heads[0]
		}
	}
	t.Fatal("the two daemons did not converge in 10 rounds of sync")
	return ""
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// A daemon that joins later gets every shard the shared directory of bare
// repositories holds, not only those it has.
func TestRemote_NewDaemonGetsEveryShard(t *testing.T) {
	ctx := context.Background()
	template := filepath.Join(t.TempDir(), "{shard}.git")
	a := startWithRemote(t, template)
	for _, s := range []string{"agent/alice", "project/apollo"} {
		if _, err := a.admin.Remember(ctx, memd.RememberRequest{Shard: shard(t, s), Text: "Written on a in " + s, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.admin.SyncRemotes(ctx, nil); err != nil {
		t.Fatal(err)
	}
	b := startWithRemote(t, template)
	list, err := b.admin.SyncRemotes(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("b synced %+v, want both of a's shards", list)
	}
	for _, s := range []string{"agent/alice", "project/apollo"} {
		facts, err := b.admin.Facts(ctx, memd.FactsQuery{Shard: shard(t, s)})
		if err != nil || len(facts.Facts) != 1 || facts.Facts[0].Text != "Written on a in "+s {
			t.Fatalf("%s on b: %+v, %v", s, facts, err)
		}
	}
}

// A push to the shard of an agent that does not exist (a typo in the URL)
// is refused and makes no shard.
func TestGitPush_ToATyposShardMakesNone(t *testing.T) {
	e := start(t)
	token, err := auth.ReadAdminToken(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "profile.md"), []byte("# Profile\n\n- (2026-12-01) Likes tea\n"), 0o644)
	gitIn(t, repo, "add", "profile.md")
	gitIn(t, repo, "commit", "-qm", "first")
	url := strings.Replace(e.d.URL(), "http://", "http://admin:"+token+"@", 1) + "/git/agent/alcie.git"
	cmd := exec.Command("git", "-C", repo, "push", url, "main")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "404") {
		t.Errorf("git push to agent/alcie: %v\n%q", err, out)
	}
	if _, err := os.Stat(e.d.Store.ShardDir(memd.AgentShard("alcie"))); !os.IsNotExist(err) {
		t.Errorf("the shard agent/alcie was made: %v", err)
	}
}

// What git's own object checks refuse (a .gitmodules that would break
// every clone's fetch) is not taken from a remote, even when a later
// commit removed it. What another daemon's people committed there is
// taken, as that daemon took it, so that the two keep syncing: a line
// with no such date, a link later removed, a file memd does not read.
func TestRemote_FetchedHistoryIsTakenUnlessGitRefusesIt(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, want string // want: the refusal; "" for taken
		add        func(t *testing.T, clone string)
	}{
		{"a fact line with no such date", "", func(t *testing.T, clone string) {
			f, err := os.OpenFile(filepath.Join(clone, "profile.md"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("- (2026-02-30) Never was\n")
			f.Close()
		}},
		{"a note named as memd reads none", "", func(t *testing.T, clone string) {
			if err := os.MkdirAll(filepath.Join(clone, "notes"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(clone, "notes", "README.md"), []byte("# Notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symbolic link", "", func(t *testing.T, clone string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(clone, "me.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a submodule list git refuses", "gitmodules", func(t *testing.T, clone string) {
			gm := "[submodule \"x\"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/pwned\n"
			if err := os.WriteFile(filepath.Join(clone, ".gitmodules"), []byte(gm), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			remotes := t.TempDir()
			e := startWithRemote(t, filepath.Join(remotes, "{shard}.git"))
			e.agent(t, "alice")
			s := memd.AgentShard("alice")
			remember(t, e.admin, "agent/alice", "Lives in Lisbon", memd.TierProfile, memd.Source{})
			if _, err := e.admin.SyncRemotes(ctx, []memd.ShardID{s}); err != nil {
				t.Fatal(err)
			}
			dir := e.d.Store.ShardDir(s)
			head := gitIn(t, dir, "rev-parse", "HEAD")
			clone := filepath.Join(t.TempDir(), "clone")
			gitIn(t, remotes, "clone", "-q", filepath.Join(remotes, "agent", "alice.git"), clone)
			c.add(t, clone)
			gitIn(t, clone, "add", "-A")
			gitIn(t, clone, "commit", "-qm", "bad")
			// The next commit takes it back out: only history holds it.
			gitIn(t, clone, "revert", "--no-edit", "HEAD")
			gitIn(t, clone, "push", "-q", "origin", "main")

			remote := gitIn(t, clone, "rev-parse", "HEAD")
			list, err := e.admin.SyncRemotes(ctx, []memd.ShardID{s})
			now := gitIn(t, dir, "rev-parse", "HEAD")
			if c.want == "" {
				if err != nil || now != remote {
					t.Errorf("sync of %s: main at %.12s, want the remote's %.12s: %v %+v", c.name, now, remote, err, list)
				}
			} else {
				if err == nil && (len(list) != 1 || !strings.Contains(list[0].Error, c.want)) {
					t.Errorf("sync took %s: %+v", c.name, list)
				} else if err != nil && !strings.Contains(err.Error(), c.want) {
					t.Errorf("sync refused it with %v, want it named (%q)", err, c.want)
				}
				if now != head {
					t.Errorf("main moved to %s", now)
				}
			}
			gitIn(t, dir, "fsck", "--strict", "--no-progress")
			if st := gitIn(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status:\n%s", st)
			}
		})
	}
}

// Two daemons learn the same fact apart, one as lasting, one in its log
// from another message. The merge keeps one line of it; each daemon's
// recall names the commit that wrote that line, and trace agrees.
func TestRemote_AFactLearnedOnBothSidesNamesTheLineKept(t *testing.T) {
	ctx := context.Background()
	// Synced only when told, so that the two learn the fact apart.
	template := filepath.Join(t.TempDir(), "{kind}", "{name}.git")
	only := remote.Config{Template: template, PushDelay: time.Hour, FetchEvery: -1}
	a, b := startQuiet(t, daemon.Config{Remote: only}), startQuiet(t, daemon.Config{Remote: only})
	alice := shard(t, "agent/alice")
	for _, e := range []*env{a, b} {
		e.agent(t, "alice")
	}
	if _, err := a.admin.Remember(ctx, memd.RememberRequest{Shard: alice, Text: "Started the shard"}); err != nil {
		t.Fatal(err)
	}
	syncAll(t, a, b)
	learned := map[*env]memd.RememberResult{}
	for _, c := range []struct {
		e    *env
		tier memd.Tier
		msg  string
	}{{a, memd.TierProfile, "msg-a"}, {b, memd.TierLog, "msg-b"}} {
		res, err := c.e.admin.Remember(ctx, memd.RememberRequest{Shard: alice, Text: "Allergic to peanuts", Tier: c.tier, Source: memd.Source{Messages: []string{c.msg}}})
		if err != nil {
			t.Fatal(err)
		}
		learned[c.e] = res
	}
	syncAll(t, a, b)
	for name, e := range map[string]*env{"a": a, "b": b} {
		lines, err := e.d.Store.Shard(alice)
		if err != nil {
			t.Fatal(err)
		}
		held, err := lines.Fact(learned[a].Fact.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := learned[a]
		if held.Tier == memd.TierLog {
			want = learned[b]
		}
		if _, err := e.admin.Recall(ctx, memd.RecallQuery{Q: "peanuts", Agent: "alice"}); err != nil {
			t.Fatal(err)
		}
		waitAttributed(t, e.admin, alice)
		res, err := e.admin.Recall(ctx, memd.RecallQuery{Q: "peanuts", Agent: "alice"})
		if err != nil || len(res.Hits) == 0 || res.Hits[0].ID != want.Fact.ID {
			t.Fatalf("%s: recall %+v, %v", name, res, err)
		}
		if h := res.Hits[0]; h.Commit != want.Commit || h.Tier != held.Tier {
			t.Errorf("%s: the hit is %s from %.12s %v, want %s from %.12s", name, h.Tier, h.Commit, h.SourceMessages, held.Tier, want.Commit)
		}
		if tr, err := e.admin.Trace(ctx, alice, want.Fact.ID); err != nil || tr.Introduced == nil || tr.Introduced.Hash != want.Commit {
			t.Errorf("%s: the trace names %+v, %v, want %.12s", name, tr.Introduced, err, want.Commit)
		}
	}
}
