package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

const runbook = "# Deploy runbook\n\n1. Build the image.\n2. Run the migrations.\n3. Ship it.\n\n## Rollback\n\nRevert the release tag and redeploy the previous image.\n"

func head(t *testing.T, e *env, s string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", e.d.Store.ShardDir(shard(t, s)), "rev-parse", "HEAD").CombinedOutput()
	if err != nil {
		t.Fatalf("git rev-parse: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestNotes_CreateReadEditDelete(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	src := memd.Source{Messages: []string{"msg_1"}, Chat: "chat_9", ChatKind: memd.ChatDirect}
	created, err := alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "runbooks/deploy.md", Text: runbook, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if created.Commit == "" || created.Note.Revision != memd.NoteRevision(runbook) || created.Note.Title != "Deploy runbook" {
		t.Errorf("created: %+v", created)
	}
	_, err = alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "runbooks/deploy.md", Text: "again"})
	wantCode(t, err, memd.ECONFLICT)

	note, err := alice.ReadNote(ctx, s, "runbooks/deploy.md", "")
	if err != nil || note.Text != runbook || note.Revision != memd.NoteRevision(runbook) || note.Commit != created.Commit {
		t.Fatalf("read: %+v, %v", note, err)
	}
	edited, err := alice.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "runbooks/deploy.md", ExpectedRevision: note.Revision, Source: src,
		Edits: []memd.NoteEdit{
			// Copied the way a model copies: curly quotes are not in the
			// note, doubled spaces are not either.
			{Op: memd.NoteInsertAfter, Anchor: "2. Run the  migrations.\n", Text: "2b. Warm the cache.\n"},
			{Op: memd.NoteReplace, Find: "Ship it.", Replace: "Ship it to \u201cproduction\u201d."},
		}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(runbook, "2. Run the migrations.\n", "2. Run the migrations.\n2b. Warm the cache.\n", 1), "Ship it.", "Ship it to \u201cproduction\u201d.", 1)
	if edited.Note.Text != want || edited.Note.Revision != memd.NoteRevision(want) {
		t.Errorf("edited:\n%s", edited.Note.Text)
	}
	list, err := alice.ListNotes(ctx, s)
	if err != nil || len(list) != 1 || list[0].Path != "runbooks/deploy.md" || list[0].Revision != edited.Note.Revision {
		t.Errorf("list: %+v, %v", list, err)
	}
	old, err := alice.ReadNote(ctx, s, "runbooks/deploy.md", created.Commit)
	if err != nil || old.Text != runbook {
		t.Errorf("the note at its first commit: %q, %v", old.Text, err)
	}

	// Each call is one commit with the source in its trailers.
	commits, err := alice.Log(ctx, memd.LogQuery{Shard: s, Op: memd.OpNoteEdit})
	if err != nil || len(commits) != 2 {
		t.Fatalf("log: %d commits, %v", len(commits), err)
	}
	if p := commits[0].Provenance; p.SourceChat != "chat_9" || p.SourceMessages[0] != "msg_1" || p.LearnedBy != memd.LearnedExplicit ||
		!strings.HasPrefix(commits[0].Subject, "note-edit: runbooks/deploy.md (insert_after, replace)") {
		t.Errorf("commit: %+v", commits[0])
	}

	_, err = alice.DeleteNote(ctx, memd.DeleteNoteRequest{Shard: s, Path: "runbooks/deploy.md", ExpectedRevision: note.Revision})
	wantCode(t, err, memd.EREVISION)
	if _, err := alice.DeleteNote(ctx, memd.DeleteNoteRequest{Shard: s, Path: "runbooks/deploy.md"}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.ReadNote(ctx, s, "runbooks/deploy.md", "")
	wantCode(t, err, memd.ENOTFOUND)
	if st, _ := exec.Command("git", "-C", e.d.Store.ShardDir(s), "status", "--porcelain").CombinedOutput(); len(st) != 0 {
		t.Errorf("git status: %s", st)
	}
}

// Two agents edit one note from the same revision: one wins, the other is
// told the note changed, and the winner's change stands.
func TestNotes_SameRevisionOneWins(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	a := e.agent(t, "alice", "apollo")
	b := e.agent(t, "bob", "apollo")
	s := shard(t, "project/apollo")
	created, err := a.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "plan.md", Text: runbook})
	if err != nil {
		t.Fatal(err)
	}
	rev := created.Note.Revision
	var wg sync.WaitGroup
	res := make([]memd.NoteResult, 2)
	errs := make([]error, 2)
	for i, c := range []interface {
		EditNote(context.Context, memd.EditNoteRequest) (memd.NoteResult, error)
	}{a, b} {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res[i], errs[i] = c.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "plan.md", ExpectedRevision: rev,
				Edits: []memd.NoteEdit{{Op: memd.NoteReplace, Find: "Ship it.", Replace: []string{"Ship it on Monday.", "Ship it on Friday."}[i]}}})
		}(i)
	}
	wg.Wait()
	win := -1
	for i, err := range errs {
		switch memd.ErrorCode(err) {
		case "":
			win = i
		case memd.EREVISION:
		default:
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	if win < 0 || errs[1-win] == nil {
		t.Fatalf("want one success and one revision_mismatch, got %v", errs)
	}
	note, err := a.ReadNote(ctx, s, "plan.md", "")
	if err != nil || note.Text != res[win].Note.Text || !strings.Contains(note.Text, []string{"Monday", "Friday"}[win]) {
		t.Errorf("the note: %q, %v", note.Text, err)
	}
}

// An anchor that matches twice fails the whole call: the note and HEAD stay
// as they were, and the error names the edit.
func TestNotes_AmbiguousAnchorChangesNothing(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	if _, err := alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "deploy.md", Text: runbook}); err != nil {
		t.Fatal(err)
	}
	before := head(t, e, "agent/alice")
	_, err := alice.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "deploy.md", Edits: []memd.NoteEdit{
		{Op: memd.NoteReplace, Find: "Build the image.", Replace: "Build the container image."},
		{Op: memd.NoteInsertAfter, Anchor: "image", Text: " (signed)"},
	}})
	wantCode(t, err, memd.EANCHORAMBIGUOUS)
	if !strings.HasPrefix(memd.ErrorMessage(err), "edit 2 (insert_after)") {
		t.Errorf("message: %s", memd.ErrorMessage(err))
	}
	_, err = alice.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "deploy.md", Edits: []memd.NoteEdit{{Op: memd.NoteDelete, Find: "Run the migrations twice."}}})
	wantCode(t, err, memd.EANCHORNOTFOUND)
	if after := head(t, e, "agent/alice"); after != before {
		t.Errorf("HEAD moved from %s to %s", before, after)
	}
	note, _ := alice.ReadNote(ctx, s, "deploy.md", "")
	if note.Text != runbook {
		t.Errorf("the note changed:\n%s", note.Text)
	}
}

// Notes answer recall beside facts, with the passage that matched; a note
// edited with git is found as edited, and a deleted one no longer.
func TestNotes_FoundByRecall(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	if _, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "The release train leaves on Tuesdays"}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "runbooks/deploy.md", Text: runbook}); err != nil {
		t.Fatal(err)
	}
	res, err := alice.Recall(ctx, memd.RecallQuery{Q: "how do I roll back a release?"})
	if err != nil {
		t.Fatal(err)
	}
	var passage *memd.Hit
	fact := false
	for i, h := range res.Hits {
		if h.Note == "runbooks/deploy.md" && passage == nil {
			passage = &res.Hits[i]
		}
		fact = fact || h.Note == "" && strings.Contains(h.Text, "release train")
	}
	// The hit is the passage that answers, not the whole note.
	if passage == nil || !strings.Contains(passage.Text, "Revert the release tag") || strings.Contains(passage.Text, "Build the image") || passage.Commit == "" {
		t.Fatalf("no passage of the runbook answers: %+v", res.Hits)
	}
	if !fact {
		t.Errorf("the fact about releases is not among the hits: %+v", res.Hits)
	}

	dir := e.d.Store.ShardDir(s)
	gitIn(t, dir, "rm", "-q", "notes/runbooks/deploy.md")
	gitIn(t, dir, "commit", "-qm", "runbook moved to the wiki")
	res, err = alice.Recall(ctx, memd.RecallQuery{Q: "roll back the release tag"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Note != "" {
			t.Errorf("a deleted note still answers: %+v", h)
		}
	}
}

// Editing a fact rewrites its line where it stands, as one commit that a
// revert undoes; a revert can be previewed without committing.
func TestFacts_EditInPlaceAndPreviewARevert(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	var ids []string
	for _, text := range []string{"Lives in Austin", "Works at Acme", "Has a cat"} {
		r, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Fact.ID)
	}
	res, err := e.admin.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: ids[1], Text: "Works at Globex"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit == "" || res.Fact.Text != "Works at Globex" || res.Replaced.ID != ids[1] {
		t.Fatalf("edit: %+v", res)
	}
	dir := e.d.Store.ShardDir(s)
	profile, _ := exec.Command("git", "-C", dir, "show", "HEAD:profile.md").CombinedOutput()
	if !strings.Contains(string(profile), "Lives in Austin\n- (") || strings.Index(string(profile), "Globex") > strings.Index(string(profile), "Has a cat") {
		t.Errorf("the line did not stay in place:\n%s", profile)
	}
	_, err = e.admin.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: res.Fact.ID, Text: "Has a cat"})
	wantCode(t, err, memd.ECONFLICT)

	preview, err := e.admin.Revert(ctx, memd.RevertRequest{Shard: s, Commit: res.Commit, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if h := head(t, e, "agent/alice"); h != res.Commit {
		t.Errorf("a dry run moved HEAD to %s", h)
	}
	ch := preview.Reverts[0].Changes
	if len(ch) != 2 || ch[0].Op != "-" || ch[0].Fact.Text != "Works at Globex" || ch[1].Op != "+" || ch[1].Fact.Text != "Works at Acme" {
		t.Errorf("preview: %+v", ch)
	}
	done, err := e.admin.Revert(ctx, memd.RevertRequest{Shard: s, Commit: res.Commit})
	if err != nil || done.Reverts[0].Commit == "" {
		t.Fatalf("revert: %+v, %v", done, err)
	}
	list, _ := alice.Facts(ctx, memd.FactsQuery{Shard: s})
	var texts []string
	for _, f := range list.Facts {
		texts = append(texts, f.Text)
	}
	if strings.Join(texts, "|") != "Lives in Austin|Has a cat|Works at Acme" && strings.Join(texts, "|") != "Lives in Austin|Works at Acme|Has a cat" {
		t.Errorf("after the revert: %v", texts)
	}
}

// A note's history lists the commits that changed it, newest first, each
// with a diff as small as the change, a person's git commit among them.
func TestNotes_History(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("# Runbook\n\n")
	for i := range 500 {
		fmt.Fprintf(&b, "- step %d: check the dashboard\n", i)
	}
	if _, err := alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "runbook.md", Text: b.String()}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Unrelated fact"}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "runbook.md",
		Edits: []memd.NoteEdit{{Op: memd.NoteReplace, Find: "- step 250: check the dashboard\n", Replace: "- step 250: page the on-call\n"}}}); err != nil {
		t.Fatal(err)
	}
	dir := e.d.Store.ShardDir(s)
	f := filepath.Join(dir, "notes", "runbook.md")
	data, _ := os.ReadFile(f)
	os.WriteFile(f, append(data, "- done\n"...), 0o644)
	gitIn(t, dir, "commit", "-qam", "a person adds a step")

	versions, err := alice.NoteHistory(ctx, memd.NoteHistoryQuery{Shard: s, Path: "runbook.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 3 || versions[0].Author.Name != "pat" || versions[1].Provenance.Op != memd.OpNoteEdit {
		t.Fatalf("history: %d versions: %+v", len(versions), versions)
	}
	if d := versions[1].Diff; strings.Count(d, "\n") > 12 || !strings.Contains(d, "-- step 250: check the dashboard\n+- step 250: page the on-call\n") {
		t.Errorf("the edit's diff:\n%s", d)
	}
	page, err := alice.NoteHistory(ctx, memd.NoteHistoryQuery{Shard: s, Path: "runbook.md", Offset: 2, Limit: 5})
	if err != nil || len(page) != 1 || !strings.HasPrefix(page[0].Diff, "--- /dev/null\n") {
		t.Errorf("the last page: %+v, %v", page, err)
	}
	_, err = alice.NoteHistory(ctx, memd.NoteHistoryQuery{Shard: s, Path: "nothing.md"})
	wantCode(t, err, memd.ENOTFOUND)
}

// An edit names the editor's messages and every one the fact cited before,
// so it can be undone by any of them; and it keeps the old version's chat with that
// chat's kind, not the editor's kind beside another chat's name.
func TestFacts_AnEditKeepsItsOwnSourceAndOneChat(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	var many []string
	for i := range provenance.MaxMessages {
		many = append(many, fmt.Sprintf("mm%d", i))
	}
	r, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Lives in Austin",
		Source: memd.Source{Messages: many, Chat: "chatA", ChatKind: memd.ChatGroup}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := alice.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: r.Fact.ID, Text: "Lives in Lisbon",
		Source: memd.Source{Messages: []string{"editor_msg"}, Chat: "chatB", ChatKind: memd.ChatRoutine}})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := exec.Command("git", "-C", e.d.Store.ShardDir(s), "log", "-1", "--format=%B", res.Commit).CombinedOutput()
	p := provenance.Parse(string(msg))
	// Every message of the old version too, past the 100 a caller may give:
	// reverting by any of them undoes the edit.
	if !slices.Contains(p.SourceMessages, "editor_msg") || len(p.SourceMessages) != provenance.MaxMessages+1 {
		t.Errorf("the edit's Source-Message trailers: %d, editor_msg among them: %v; want all %d",
			len(p.SourceMessages), slices.Contains(p.SourceMessages, "editor_msg"), provenance.MaxMessages+1)
	}
	if p.SourceChat != "chatA" || p.ChatKind != memd.ChatGroup {
		t.Errorf("the edit's chat: %s (%s), want chatA (group)", p.SourceChat, p.ChatKind)
	}
	undone, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "editor_msg"})
	if err != nil || len(undone.Reverts) != 1 {
		t.Fatalf("undoing editor_msg: %+v, %v", undone, err)
	}
	list, _ := alice.Facts(ctx, memd.FactsQuery{Shard: s})
	if len(list.Facts) != 1 || list.Facts[0].Text != "Lives in Austin" {
		t.Errorf("after undoing the edit: %+v", list.Facts)
	}
}

// Everything learned from a message is undone, a note's edit among it:
// the lines that edit changed go back, what others changed in the note
// stays, and the dry run names the note first.
func TestNotes_RevertByMessageUndoesANoteEdit(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	_, edit := rvNote(t, alice, s, "nm1")
	edit("nm2", memd.NoteEdit{Op: memd.NoteInsertAfter, Anchor: "2. Run the migrations.\n", Text: "2b. Wire the refund to ACME-OFFSHORE.\n"})
	edit("nm3", memd.NoteEdit{Op: memd.NoteReplace, Find: "redeploy the previous image", Replace: "redeploy the last good image"})

	dry, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "nm2", DryRun: true})
	if err != nil || len(dry.Reverts) != 1 || !slices.Equal(dry.Reverts[0].Notes, []string{"rv.md"}) {
		t.Fatalf("dry run of undoing nm2: %+v, %v", dry, err)
	}
	done, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "nm2"})
	if err != nil || len(done.Reverts) != 1 || done.Reverts[0].Commit == "" {
		t.Fatalf("undoing nm2: %+v, %v", done, err)
	}
	note, err := alice.ReadNote(ctx, s, "rv.md", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(runbook, "redeploy the previous image", "redeploy the last good image", 1); note.Text != want {
		t.Errorf("the note after undoing nm2:\n%s\nwant:\n%s", note.Text, want)
	}
	if again, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "nm2"}); err != nil || len(again.Reverts) != 0 {
		t.Errorf("undoing nm2 again: %+v, %v; want nothing left to undo", again, err)
	}
	dir := e.d.Store.ShardDir(s)
	if st, _ := exec.Command("git", "-C", dir, "status", "--porcelain").CombinedOutput(); len(st) != 0 {
		t.Errorf("git status: %s", st)
	}
	msg, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%B").CombinedOutput()
	if p := provenance.Parse(string(msg)); p.Op != memd.OpRevert || p.Reverts == "" {
		t.Errorf("the revert commit's trailers: %+v", p)
	}
}

// A revert by message undoes what it can: a note edit whose lines changed
// since is left, said so, and the message's other commits are undone.
// Undoing again finds nothing left, the note's undo included; a dry run
// of two edits of one note reckons the second on the first.
func TestNotes_RevertByMessageAroundANoteThatChanged(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	src, edit := rvNote(t, alice, s, "seed")
	if _, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Refunds go to ACME-OFFSHORE", Source: src("bad")}); err != nil {
		t.Fatal(err)
	}
	edit("bad", memd.NoteEdit{Op: memd.NoteReplace, Find: "3. Ship it.", Replace: "3. Ship it to ACME."})
	edit("bad", memd.NoteEdit{Op: memd.NoteReplace, Find: "3. Ship it to ACME.", Replace: "3. Ship it to ACME now."})

	dry, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "bad", DryRun: true})
	if err != nil || len(dry.Reverts) != 3 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	for _, rv := range dry.Reverts {
		if rv.Refused != "" {
			t.Errorf("the dry run refuses %s: %s", rv.Reverted, rv.Refused)
		}
	}

	// Someone changes the line the edits made.
	edit("later", memd.NoteEdit{Op: memd.NoteReplace, Find: "3. Ship it to ACME now.", Replace: "3. Ship it on Friday."})
	done, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "bad"})
	if err != nil {
		t.Fatal(err)
	}
	var undone, refused int
	for _, rv := range done.Reverts {
		switch {
		case rv.Refused != "":
			refused++
		case rv.Commit != "":
			undone++
		}
	}
	if undone != 1 || refused != 2 {
		t.Errorf("undone %d, refused %d: %+v", undone, refused, done.Reverts)
	}
	list, _ := alice.Facts(ctx, memd.FactsQuery{Shard: s})
	if len(list.Facts) != 0 {
		t.Errorf("facts after the revert: %+v", list.Facts)
	}
	note, _ := alice.ReadNote(ctx, s, "rv.md", "")
	if !strings.Contains(note.Text, "Ship it on Friday") {
		t.Errorf("the note after the revert:\n%s", note.Text)
	}
	again, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "bad"})
	if err != nil || len(again.Reverts) != 2 || again.Reverts[0].Refused == "" || again.Reverts[1].Refused == "" {
		t.Errorf("undoing bad again: %+v, %v; want only the refused edits again", again, err)
	}

	// A note made by a message and undone: undoing again finds nothing.
	if _, err := alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "made.md", Text: "made\n", Source: src("m1")}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		res, err := e.admin.Revert(ctx, memd.RevertRequest{Message: "m1"})
		if want := 1 - i; err != nil || len(res.Reverts) != want {
			t.Errorf("undoing m1, time %d: %+v, %v; want %d reverts", i+1, res, err, want)
		}
	}
}

// rvNote returns a source of a message in chat c1, and an edit of the note
// rv.md made from a message, for the tests of reverting notes.
func rvNote(t *testing.T, c memd.Service, s memd.ShardID, seed string) (src func(m string) memd.Source, edit func(m string, ed memd.NoteEdit)) {
	t.Helper()
	src = func(m string) memd.Source { return memd.Source{Messages: []string{m}, Chat: "c1"} }
	if _, err := c.CreateNote(context.Background(), memd.CreateNoteRequest{Shard: s, Path: "rv.md", Text: runbook, Source: src(seed)}); err != nil {
		t.Fatal(err)
	}
	edit = func(m string, ed memd.NoteEdit) {
		t.Helper()
		if _, err := c.EditNote(context.Background(), memd.EditNoteRequest{Shard: s, Path: "rv.md", Edits: []memd.NoteEdit{ed}, Source: src(m)}); err != nil {
			t.Fatal(err)
		}
	}
	return src, edit
}

// A note a remote's person pasted a NUL into, and alice's agent edited
// here, is merged by a fetch as both versions between markers, the NUL
// written as U+FFFD: a note memd's rules allow, so the agent resolves the
// conflict through the API, quoting the note as it reads it, and edits on.
// With the NUL kept, no edit could quote it and every other edit was
// refused for it.
func TestNotes_AnAgentResolvesAConflictOfANoteGitTakesForBinary(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	if _, err := alice.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "plan.md", Text: "# Plan\n\nv1\n"}); err != nil {
		t.Fatal(err)
	}
	dir := e.d.Store.ShardDir(s)
	remote := t.TempDir()
	gitIn(t, remote, "clone", "-q", dir, ".")
	if err := os.WriteFile(filepath.Join(remote, "notes", "plan.md"), []byte("# Plan\n\nv1\npasted\x00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, remote, "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-q", "-a", "-m", "the remote's person")
	if _, err := alice.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "plan.md", Edits: []memd.NoteEdit{{Op: memd.NoteInsertAfter, Anchor: "v1\n", Text: "v2 here\n"}}}); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "fetch", "-q", remote, "+refs/heads/main:refs/remotes/peer/main")
	sh, err := e.d.Store.Shard(s)
	if err != nil {
		t.Fatal(err)
	}
	theirs, _ := sh.Ref("refs/remotes/peer/main")
	if in, err := sh.Integrate(theirs, gitstore.IntegrateOptions{From: "peer"}); err != nil || len(in.Conflicts) != 1 {
		t.Fatalf("the fetch's merge: %+v, %v; want one conflict", in, err)
	}
	note, err := alice.ReadNote(ctx, s, "plan.md", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "<<<<<<< memd\n# Plan\n\nv1\nv2 here\n=======\n# Plan\n\nv1\npasted\uFFFD\n>>>>>>> peer\n"; note.Text != want {
		t.Fatalf("the note after the merge: %q, want %q", note.Text, want)
	}
	_, err = alice.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "plan.md", ExpectedRevision: note.Revision, Edits: []memd.NoteEdit{
		{Op: memd.NoteDelete, Find: "<<<<<<< memd\n"},
		{Op: memd.NoteDelete, Find: "=======\n# Plan\n\nv1\npasted\uFFFD\n>>>>>>> peer\n"},
	}})
	if err != nil {
		t.Fatalf("the agent's resolution, quoting the note as it read it: %v", err)
	}
	if _, err := alice.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "plan.md", Edits: []memd.NoteEdit{{Op: memd.NoteInsertAfter, Anchor: "v2 here\n", Text: "v3\n"}}}); err != nil {
		t.Errorf("an edit after the resolution: %v", err)
	}
	if got, _ := alice.ReadNote(ctx, s, "plan.md", ""); got.Text != "# Plan\n\nv1\nv2 here\nv3\n" {
		t.Errorf("the note: %q", got.Text)
	}
}
