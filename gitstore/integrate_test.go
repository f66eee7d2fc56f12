package gitstore_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// fetchInto copies main of one shard into another's objects, as git fetch
// from a remote does, and returns the commit fetched.
func fetchInto(t *testing.T, to, from *gitstore.Shard) gitstore.Hash {
	t.Helper()
	git(t, to.Dir(), "fetch", "--quiet", from.Dir(), "+refs/heads/main:refs/remotes/peer/main")
	h, err := to.Ref("refs/remotes/peer/main")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func forget(t *testing.T, sh *gitstore.Shard, text string) {
	t.Helper()
	_, err := sh.Apply(gitstore.Change{Author: alice, Message: "forget: " + text,
		Edits: []gitstore.Edit{{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: memd.FactID(text)}}}})
	if err != nil {
		t.Fatal(err)
	}
}

func integrate(t *testing.T, to, from *gitstore.Shard) gitstore.Integration {
	t.Helper()
	in, err := to.Integrate(fetchInto(t, to, from), gitstore.IntegrateOptions{From: "peer"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestShard_IntegrateFastForwardsAndMergesFacts(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	remember(t, a, "Lives in Lisbon", memd.TierProfile, "m1")
	remember(t, a, "Prefers tea", memd.TierProfile, "m2")
	remember(t, a, "Shipped the importer", memd.TierLog, "m3")

	// b has nothing: it takes a's commits as they are.
	in := integrate(t, b, a)
	if in.Kind != gitstore.IntegrateFastForward || in.Commits != 3 {
		t.Fatalf("first integration: %+v, want a fast-forward of 3 commits", in)
	}
	ha, _ := a.Head()
	if hb, _ := b.Head(); hb != ha {
		t.Fatalf("b at %s after fast-forward, want %s", hb, ha)
	}
	if st := git(t, b.Dir(), "status", "--porcelain"); st != "" {
		t.Fatalf("git status after fast-forward:\n%s", st)
	}

	// Both sides write, and each forgets one fact the other keeps.
	remember(t, a, "Learning Portuguese", memd.TierProfile, "m4")
	forget(t, a, "Prefers tea")
	remember(t, a, "Reviewed the merge code", memd.TierLog, "m5")
	remember(t, b, "Has a cat called Miso", memd.TierProfile, "m6")
	forget(t, b, "Shipped the importer")
	remember(t, b, "Wrote the sync loop", memd.TierLog, "m7")
	remember(t, b, "Learning Portuguese", memd.TierProfile, "m8") // the same fact on both sides

	before, _ := a.Head()
	in = integrate(t, a, b)
	if in.Kind != gitstore.IntegrateMerge || len(in.Conflicts) != 0 {
		t.Fatalf("integration of diverged histories: %+v, want a merge without conflicts", in)
	}
	want := []string{"Has a cat called Miso", "Learning Portuguese", "Lives in Lisbon", "Reviewed the merge code", "Wrote the sync loop"}
	if got := texts(t, a); !slices.Equal(got, want) {
		t.Fatalf("facts after merge:\n got %q\nwant %q", got, want)
	}
	profile := git(t, a.Dir(), "show", "HEAD:profile.md")
	if strings.Count(profile, "Learning Portuguese") != 1 {
		t.Fatalf("a fact both sides added is there once:\n%s", profile)
	}
	if st := git(t, a.Dir(), "status", "--porcelain"); st != "" {
		t.Fatalf("git status after merge:\n%s", st)
	}
	git(t, a.Dir(), "fsck", "--strict")
	parents := strings.Fields(git(t, a.Dir(), "log", "-1", "--format=%P"))
	if len(parents) != 2 {
		t.Fatalf("merge commit parents %q", parents)
	}
	if op := strings.TrimSpace(git(t, a.Dir(), "log", "-1", "--format=%(trailers:key=Memory-Op,valueonly)")); op != memd.OpMerge {
		t.Fatalf("Memory-Op of the merge: %q", op)
	}

	// What the merge brought in, as the feed and the index walk it: b's
	// four commits (all made within the same second as a's), then the
	// merge, each once, parents first.
	brought, reached, err := a.Range(before, in.Head, 100)
	if err != nil || !reached {
		t.Fatalf("range: %v, reached %v (the merge's first parent is a's old head)", err, reached)
	}
	var subjects []string
	for _, c := range brought {
		subjects = append(subjects, c.Subject())
	}
	wantSubjects := []string{"forget: Shipped the importer", "remember: Has a cat called Miso", "remember: Learning Portuguese", "remember: Wrote the sync loop"}
	if len(subjects) != 5 || !strings.HasPrefix(subjects[4], "merge: 4 commits from peer") || !slices.Equal(slices.Sorted(slices.Values(subjects[:4])), wantSubjects) {
		t.Fatalf("range before..merge: %q", subjects)
	}

	// The other side now fast-forwards to the merge, and both agree.
	beforeB, _ := b.Head()
	in = integrate(t, b, a)
	if in.Kind != gitstore.IntegrateFastForward {
		t.Fatalf("b after a merged: %+v", in)
	}
	// From b's side the merge brings a's three commits, not the three
	// both started from, though they share one second with them.
	brought, _, err = b.Range(beforeB, in.Head, 100)
	if err != nil || len(brought) != 4 || brought[3].Hash != in.Head {
		t.Fatalf("range on b: %v, %d commits", err, len(brought))
	}
	for _, c := range brought[:3] {
		if !strings.Contains("remember: Learning Portuguese|forget: Prefers tea|remember: Reviewed the merge code", c.Subject()) {
			t.Fatalf("range on b took %q", c.Subject())
		}
	}
	if got := texts(t, b); !slices.Equal(got, want) {
		t.Fatalf("b's facts:\n got %q\nwant %q", got, want)
	}
	// Integrating what is already there does nothing.
	if in := integrate(t, a, b); in.Kind != gitstore.IntegrateNone {
		t.Fatalf("integrating an ancestor: %+v", in)
	}
}

func TestShard_IntegrateUnrelatedHistories(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	remember(t, a, "Written on a", memd.TierProfile, "m1")
	remember(t, b, "Written on b", memd.TierProfile, "m2")
	in := integrate(t, a, b)
	if in.Kind != gitstore.IntegrateMerge {
		t.Fatalf("%+v", in)
	}
	if got := texts(t, a); !slices.Equal(got, []string{"Written on a", "Written on b"}) {
		t.Fatalf("facts: %q", got)
	}
	if p := git(t, a.Dir(), "show", "HEAD:profile.md"); strings.Count(p, "# Profile") != 1 {
		t.Fatalf("profile after merging two new files:\n%s", p)
	}
}

func TestShard_IntegrateNotesLineByLine(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	apply := func(sh *gitstore.Shard, c gitstore.Change) {
		t.Helper()
		if _, err := sh.Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	apply(a, noteChange("notes/runbook.md", "note-edit: runbook", setNote("# Runbook\n\nstep one\nstep two\nstep three\n")))
	apply(a, noteChange("notes/plan.md", "note-edit: plan", setNote("plan v1\n")))
	integrate(t, b, a)

	// Edits to different lines merge cleanly; the same line edited two
	// ways is kept both ways, between markers.
	apply(a, noteChange("notes/runbook.md", "note-edit", setNote("# Runbook\n\nstep one (checked)\nstep two\nstep three\n")))
	apply(b, noteChange("notes/runbook.md", "note-edit", setNote("# Runbook\n\nstep one\nstep two\nstep three (checked)\n")))
	apply(a, noteChange("notes/plan.md", "note-edit", setNote("plan v2 from a\n")))
	apply(b, noteChange("notes/plan.md", "note-edit", setNote("plan v2 from b\n")))
	in := integrate(t, a, b)
	if in.Kind != gitstore.IntegrateMerge || !slices.Equal(in.Conflicts, []string{"notes/plan.md"}) {
		t.Fatalf("%+v, want a merge reporting a conflict in notes/plan.md", in)
	}
	if got := git(t, a.Dir(), "show", "HEAD:notes/runbook.md"); got != "# Runbook\n\nstep one (checked)\nstep two\nstep three (checked)\n" {
		t.Fatalf("runbook merged:\n%s", got)
	}
	plan := git(t, a.Dir(), "show", "HEAD:notes/plan.md")
	for _, want := range []string{"<<<<<<< memd", "plan v2 from a", "=======", "plan v2 from b", ">>>>>>> peer"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("plan lacks %q:\n%s", want, plan)
		}
	}
	if c := strings.TrimSpace(git(t, a.Dir(), "log", "-1", "--format=%(trailers:key=Conflict,valueonly)")); c != "notes/plan.md" {
		t.Fatalf("Conflict trailer %q", c)
	}
	if st := git(t, a.Dir(), "status", "--porcelain"); st != "" {
		t.Fatalf("git status after merge:\n%s", st)
	}
}

// A note both sides changed, one of them with a NUL byte in it, cannot be
// merged line by line (git takes it for binary): the merge keeps both
// versions whole between conflict markers and names the note in its
// Conflict trailer, as for any conflict, so that the other side's edit
// stays in front of whoever syncs it, on both sides. The NUL is written as
// U+FFFD: a note memd's rules allow, which memd can edit and push to a
// peer memd. Before, the whole fetch failed, each time.
func TestShard_IntegrateANoteGitTakesForBinary(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	if _, err := a.Apply(noteChange("notes/plan.md", "note-edit: plan", setNote("plan v1\n"))); err != nil {
		t.Fatal(err)
	}
	integrate(t, b, a)
	if _, err := a.Apply(noteChange("notes/plan.md", "note-edit", setNote("plan v1\nfrom a\n"))); err != nil {
		t.Fatal(err)
	}
	// A person, working in b, adds a paragraph; a NUL came with a paste.
	mine := "plan v1\nthe person's paragraph\x00\n"
	if err := os.WriteFile(filepath.Join(b.Dir(), "notes", "plan.md"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, b.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-q", "-a", "-m", "plan from b")

	in := integrate(t, a, b)
	if in.Kind != gitstore.IntegrateMerge || !slices.Equal(in.Conflicts, []string{"notes/plan.md"}) {
		t.Fatalf("%+v, want a merge reporting a conflict in notes/plan.md", in)
	}
	want := "<<<<<<< memd\nplan v1\nfrom a\n=======\nplan v1\nthe person's paragraph\uFFFD\n>>>>>>> peer\n"
	if got := git(t, a.Dir(), "show", "HEAD:notes/plan.md"); got != want {
		t.Errorf("the note after the merge: %q, want both versions between markers: %q", got, want)
	}

	if c := strings.TrimSpace(git(t, a.Dir(), "log", "-1", "--format=%(trailers:key=Conflict,valueonly)")); c != "notes/plan.md" {
		t.Errorf("Conflict trailer %q", c)
	}
	if st := git(t, a.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status after merge:\n%s", st)
	}
	// b is a peer memd: a's merge, and a's commits after it, pass its
	// rules for pushes.
	d, _ := memd.ParseDate("2026-11-03")
	if _, err := a.Apply(gitstore.Change{Author: alice, Message: "remember", Edits: []gitstore.Edit{{Op: gitstore.AddFact, Fact: memd.Fact{Text: "Booked a flight to Lisbon", Date: d, Tier: memd.TierLog}}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.CheckPushed(fetchInto(t, b, a)); err != nil {
		t.Errorf("a peer memd refuses the merge's push: %v", err)
	}
	// The person's side takes the merge: their paragraph is still there.
	integrate(t, b, a)
	if file, _ := os.ReadFile(filepath.Join(b.Dir(), "notes", "plan.md")); string(file) != want {
		t.Errorf("the person's working file after syncing: %q, want %q", file, want)
	}
}

// Where both versions of a note git takes for binary would not fit in one
// note, the merge keeps this side's; a file that is not a note keeps this
// side's too, as git merge does with a binary file, rather than both
// between text markers (an image that is neither). Either way the file is
// named a conflict.
func TestShard_IntegrateABinaryFileItCannotKeepBothWays(t *testing.T) {
	long := strings.Repeat("a line of the plan, one of many\n", 150<<10/32) // 150 KiB
	png := func(tail string) string { return "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + tail }
	for _, tc := range []struct {
		name, path, base, ours, theirs string
	}{
		{"a note too large twice", "notes/plan.md", long, long + "from a\n", "pasted\x00\n" + long},
		{"an image", "assets/map.png", png("v1"), png("edited in a"), png("edited in b")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := createShard(t, openStore(t), "agent/x")
			b := createShard(t, openStore(t), "agent/x")
			commit := func(sh *gitstore.Shard, text, msg string) {
				t.Helper()
				file := filepath.Join(sh.Dir(), filepath.FromSlash(tc.path))
				os.MkdirAll(filepath.Dir(file), 0o755)
				os.WriteFile(file, []byte(text), 0o644)
				git(t, sh.Dir(), "add", tc.path)
				git(t, sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-q", "-m", msg)
			}
			remember(t, a, "Booked a flight to Lisbon", memd.TierLog, "m1")
			commit(a, tc.base, "base")
			integrate(t, b, a)
			commit(a, tc.ours, "ours")
			commit(b, tc.theirs, "theirs")
			in := integrate(t, a, b)
			if !slices.Equal(in.Conflicts, []string{tc.path}) {
				t.Fatalf("%+v, want a conflict in %s", in, tc.path)
			}
			if got := git(t, a.Dir(), "show", "HEAD:"+tc.path); got != tc.ours {
				t.Errorf("%s after the merge holds %d bytes, want this side's %d", tc.path, len(got), len(tc.ours))
			}
		})
	}
}

// A push whose note cannot be merged for a NUL byte on this side is
// refused saying so, not as a change of the same lines: the lines differ.
func TestShard_APushRefusedForABinaryNoteSaysWhy(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	if _, err := a.Apply(noteChange("notes/plan.md", "note-edit: plan", setNote("one\ntwo\nthree\nfour\nfive\n"))); err != nil {
		t.Fatal(err)
	}
	integrate(t, b, a)
	// In a, a person commits a NUL on the first line.
	os.WriteFile(filepath.Join(a.Dir(), "notes", "plan.md"), []byte("one\x00\ntwo\nthree\nfour\nfive\n"), 0o644)
	git(t, a.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-q", "-a", "-m", "nul")
	// The pusher (b) changes the last line.
	if _, err := b.Apply(noteChange("notes/plan.md", "note-edit", setNote("one\ntwo\nthree\nfour\nFIVE\n"))); err != nil {
		t.Fatal(err)
	}
	_, err := a.Integrate(fetchInto(t, a, b), gitstore.IntegrateOptions{From: "a push by bob", RefuseConflicts: true})
	if memd.ErrorCode(err) != memd.ECONFLICT {
		t.Fatalf("%v, want a conflict", err)
	}
	if msg := memd.ErrorMessage(err); strings.Contains(msg, "same lines") || !strings.Contains(msg, "NUL") {
		t.Errorf("the refusal says %q: the lines differ; what stands in the way is the NUL byte", msg)
	}
}

// A fetched change to a fact file's other lines (a heading reworded) reaches
// the working file a person is editing, beside their uncommitted line:
// git status then shows only the person's edit, and their commit -a keeps
// the fetched change.
func TestShard_IntegrateReachesAWorkingFileBeingEdited(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(map[bool]string{false: "edited", true: "edited and staged"}[staged], func(t *testing.T) {
			testIntegrateReachesAWorkingFile(t, staged)
		})
	}
}

func testIntegrateReachesAWorkingFile(t *testing.T, staged bool) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	remember(t, a, "Lives in Lisbon", memd.TierProfile, "m1")
	integrate(t, b, a)
	// On a, a person rewords the file's heading and commits.
	profile := filepath.Join(a.Dir(), "profile.md")
	data, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	if err := os.WriteFile(profile, []byte("# What x keeps for good\n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, a.Dir(), "commit", "-qam", "a better heading")
	if first == "# What x keeps for good" {
		t.Fatal("the heading did not change")
	}
	// On b, a person has a line of their own, not committed.
	mine := filepath.Join(b.Dir(), "profile.md")
	f, err := os.OpenFile(mine, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- (2026-11-02) Has a cat\n")
	f.Close()
	if staged {
		git(t, b.Dir(), "add", "profile.md")
	}
	integrate(t, b, a)
	got, _ := os.ReadFile(mine)
	if !strings.HasPrefix(string(got), "# What x keeps for good\n") || !strings.HasSuffix(string(got), "- (2026-11-02) Has a cat\n") {
		t.Errorf("the working file:\n%s", got)
	}
	for _, args := range [][]string{{"diff", "HEAD"}, {"diff", "--cached", "HEAD"}} {
		diff := git(t, b.Dir(), args...)
		if strings.Contains(diff, "\n-#") || strings.Contains(diff, "\n+#") || staged != strings.Contains(diff, "+- (2026-11-02) Has a cat") && args[1] == "--cached" {
			t.Errorf("git %s shows more than the person's line:\n%s", strings.Join(args, " "), diff)
		}
	}
}

// IsAncestor tells an ancestor from a commit rewritten away, as git does.
func TestShard_IsAncestor(t *testing.T) {
	sh := createShard(t, openStore(t), "agent/x")
	remember(t, sh, "Lives in Lisbon", memd.TierProfile, "m1")
	first, _ := sh.Head()
	remember(t, sh, "Prefers tea", memd.TierProfile, "m2")
	second, _ := sh.Head()
	git(t, sh.Dir(), "commit", "-q", "--amend", "-m", "reworded")
	amended := gitstore.NewHash(strings.TrimSpace(git(t, sh.Dir(), "rev-parse", "HEAD")))
	for _, c := range []struct {
		a, b gitstore.Hash
		want bool
	}{{first, second, true}, {second, second, true}, {second, first, false}, {second, amended, false}, {first, amended, true}} {
		if got, err := sh.IsAncestor(c.a, c.b); err != nil || got != c.want {
			t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
	if _, err := sh.IsAncestor(gitstore.NewHash(strings.Repeat("ab", 20)), second); err == nil {
		t.Error("a commit the shard lacks is no error")
	}
}

// A person on the other side writes in a fact file around its facts (a
// line of prose, a heading reworded) while an agent here remembers into
// the same file. The merge keeps what each side wrote: their lines join
// ours as a line merge places them, and a line both reworded is kept
// both ways, ours first, with the file named in Conflict. Before, the
// merge took only their fact changes, and their prose left main without
// a word.
func TestShard_IntegrateKeepsAPersonsLinesInAFactFile(t *testing.T) {
	const title = "# Profile\n"
	cases := []struct {
		name      string
		theirs    func(profile string) string // the person's edit on the other side
		ours      func(t *testing.T, a *gitstore.Shard)
		want      []string // lines main's profile.md must hold, in this order
		gone      []string // lines it must not hold
		conflicts []string
	}{
		{
			name:   "a line of prose below the title, a fact remembered here",
			theirs: func(p string) string { return strings.Replace(p, title, title+"\nAsk before booking travel.\n", 1) },
			ours:   func(t *testing.T, a *gitstore.Shard) { remember(t, a, "Has a cat called Miso", memd.TierProfile, "m3") },
			want:   []string{"# Profile", "Ask before booking travel.", "- (2026-11-03) Lives in Lisbon", "- (2026-11-03) Has a cat called Miso"},
		},
		{
			name:   "a line of prose at the end, where a fact is appended here",
			theirs: func(p string) string { return p + "\nSee also the travel runbook.\n" },
			ours:   func(t *testing.T, a *gitstore.Shard) { remember(t, a, "Has a cat called Miso", memd.TierProfile, "m3") },
			want:   []string{"- (2026-11-03) Prefers tea", "See also the travel runbook.", "- (2026-11-03) Has a cat called Miso"},
		},
		{
			name:   "the title reworded, a fact forgotten here",
			theirs: func(p string) string { return strings.Replace(p, title, "# Profile of Pat\n", 1) },
			ours:   func(t *testing.T, a *gitstore.Shard) { forget(t, a, "Prefers tea") },
			want:   []string{"# Profile of Pat", "- (2026-11-03) Lives in Lisbon"},
			gone:   []string{"# Profile\n", "Prefers tea"},
		},
		{
			name:   "the title reworded on both sides",
			theirs: func(p string) string { return strings.Replace(p, title, "# Profile of Pat\n", 1) },
			ours: func(t *testing.T, a *gitstore.Shard) {
				reword(t, a, title, "# Pat's profile\n")
				remember(t, a, "Has a cat called Miso", memd.TierProfile, "m3")
			},
			want:      []string{"# Pat's profile", "# Profile of Pat", "- (2026-11-03) Lives in Lisbon", "- (2026-11-03) Has a cat called Miso"},
			conflicts: []string{"profile.md"},
		},
		{
			name:   "a line of prose, and the same fact remembered on both sides",
			theirs: func(p string) string { return p + "Ask before booking travel.\n- (2026-11-03) Has a cat called Miso\n" },
			ours:   func(t *testing.T, a *gitstore.Shard) { remember(t, a, "Has a cat called Miso", memd.TierProfile, "m3") },
			want:   []string{"- (2026-11-03) Prefers tea", "Ask before booking travel.", "- (2026-11-03) Has a cat called Miso"},
			gone:   []string{"Miso\n- (2026-11-03) Has a cat called Miso", "Miso\nAsk before booking travel.\n- (2026-11-03) Has a cat called Miso"},
		},
		{
			name: "a fact replaced by a line of prose, a fact appended beside it here",
			theirs: func(p string) string {
				return strings.Replace(p, "- (2026-11-03) Prefers tea\n", "Prefers coffee now, ask.\n", 1)
			},
			ours: func(t *testing.T, a *gitstore.Shard) { remember(t, a, "Has a cat called Miso", memd.TierProfile, "m3") },
			want: []string{"- (2026-11-03) Lives in Lisbon", "Prefers coffee now, ask.", "- (2026-11-03) Has a cat called Miso"},
			gone: []string{"Prefers tea"},
		},
		{
			name: "a fact reworded where it stands (as memd rewrites one), a fact remembered here",
			theirs: func(p string) string {
				return strings.Replace(p, "Lives in Lisbon\n", "Lives in Lisbon, near the river\n", 1)
			},
			ours: func(t *testing.T, a *gitstore.Shard) { remember(t, a, "Has a cat called Miso", memd.TierProfile, "m3") },
			want: []string{"- (2026-11-03) Lives in Lisbon, near the river", "- (2026-11-03) Prefers tea", "- (2026-11-03) Has a cat called Miso"},
			gone: []string{"Lives in Lisbon\n"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := createShard(t, openStore(t), "agent/x")
			b := createShard(t, openStore(t), "agent/x")
			remember(t, a, "Lives in Lisbon", memd.TierProfile, "m1")
			remember(t, a, "Prefers tea", memd.TierProfile, "m2")
			integrate(t, b, a)

			reword(t, b, "", "") // b's person edits by hand, below
			path := filepath.Join(b.Dir(), "profile.md")
			old, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c.theirs(string(old))), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, b.Dir(), "commit", "-q", "-am", "profile by hand")
			c.ours(t, a)

			in := integrate(t, a, b)
			if in.Kind != gitstore.IntegrateMerge || !slices.Equal(in.Conflicts, c.conflicts) {
				t.Fatalf("%+v, want a merge with conflicts %q", in, c.conflicts)
			}
			profile := git(t, a.Dir(), "show", "HEAD:profile.md")
			at := 0
			for _, line := range c.want {
				k := strings.Index(profile[at:], line+"\n")
				if k < 0 {
					t.Fatalf("main's profile.md lacks %q (in this order):\n%s", line, profile)
				}
				at += k + len(line)
			}
			for _, line := range c.gone {
				if strings.Contains(profile, line) {
					t.Fatalf("main's profile.md still holds %q:\n%s", line, profile)
				}
			}
			if st := git(t, a.Dir(), "status", "--porcelain"); st != "" {
				t.Fatalf("git status after merge:\n%s", st)
			}
		})
	}
}

// reword has a person replace text in a shard's profile.md and commit it
// with git; with old empty, it only checks the working tree is in step.
func reword(t *testing.T, sh *gitstore.Shard, old, new string) {
	t.Helper()
	if !sh.SyncWorktree(time.Second) {
		t.Fatal("the working tree is behind main")
	}
	if old == "" {
		return
	}
	path := filepath.Join(sh.Dir(), "profile.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-q", "-am", "profile by hand")
}

// handEdit has b's person rewrite a file and commit it with git.
func handEdit(t *testing.T, sh *gitstore.Shard, file string, edit func(string) string) {
	t.Helper()
	reword(t, sh, "", "")
	path := filepath.Join(sh.Dir(), file)
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(old))), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, sh.Dir(), "commit", "-q", "-am", "by hand")
}

// Both sides start the same new month's log (each agent remembers into
// it): the file has no common version to merge lines from, so it is
// merged by facts, and their person's line in it is named in Conflict.
func TestShard_IntegrateNamesALogStartedOnBothSides(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	remember(t, a, "Lives in Lisbon", memd.TierProfile, "m1")
	integrate(t, b, a)

	remember(t, a, "Shipped the importer", memd.TierLog, "m2")
	remember(t, b, "Met Ana about the budget", memd.TierLog, "m3")
	handEdit(t, b, "log/2026-11.md", func(s string) string { return s + "Budget meeting notes are in notes/budget.md.\n" })

	in := integrate(t, a, b)
	log := git(t, a.Dir(), "show", "HEAD:log/2026-11.md")
	if !strings.Contains(log, "Budget meeting notes") && len(in.Conflicts) == 0 {
		t.Fatalf("their line left main and no conflict is named (%+v):\n%s", in, log)
	}
}

// Their person rewords the profile's last line while our agent
// remembers: the merge has their wording alone, and our fact.
func TestShard_IntegrateTakesALineTheyReworded(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	remember(t, a, "Lives in Lisbon", memd.TierProfile, "m1")
	handEdit(t, a, "profile.md", func(s string) string { return s + "See the runbook.\n" })
	integrate(t, b, a)

	handEdit(t, b, "profile.md", func(s string) string {
		return strings.Replace(s, "See the runbook.\n", "See the travel runbook (notes/travel.md).\n", 1)
	})
	remember(t, a, "Has a cat called Miso", memd.TierProfile, "m2")

	in := integrate(t, a, b)
	profile := git(t, a.Dir(), "show", "HEAD:profile.md")
	if strings.Contains(profile, "See the runbook.\n") || !strings.Contains(profile, "See the travel runbook (notes/travel.md).\n") || !strings.Contains(profile, "Has a cat called Miso") || len(in.Conflicts) != 0 {
		t.Fatalf("want their wording alone, our fact, no conflict (%+v):\n%s", in, profile)
	}
}

// Our person removed a month's log (git rm); their person wrote a line in
// it and their agent remembered into it. The log comes back with their
// new fact; their line does not, and the log is named in Conflict.
func TestShard_IntegrateNamesALogRemovedHereThatTheyWroteIn(t *testing.T) {
	a := createShard(t, openStore(t), "agent/x")
	b := createShard(t, openStore(t), "agent/x")
	remember(t, a, "Shipped the importer", memd.TierLog, "m1")
	integrate(t, b, a)

	reword(t, a, "", "")
	git(t, a.Dir(), "rm", "-q", "log/2026-11.md")
	git(t, a.Dir(), "commit", "-q", "-m", "drop the log")
	handEdit(t, b, "log/2026-11.md", func(s string) string { return s + "Ask Ana before the next release.\n" })
	remember(t, b, "Met Ana about the budget", memd.TierLog, "m2")

	in := integrate(t, a, b)
	log := git(t, a.Dir(), "show", "HEAD:log/2026-11.md")
	if !strings.Contains(log, "Ask Ana") && len(in.Conflicts) == 0 {
		t.Fatalf("their line left main and no conflict is named (%+v):\n%s", in, log)
	}
}
