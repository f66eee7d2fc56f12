package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/memd/memd"
)

// ShardArg is the shard argument of the tools that take one.
type ShardArg struct {
	Shard string `json:"shard,omitempty" jsonschema:"the shard: agent/<name>, user/<id> or project/<slug>; default: your own agent shard"`
}

func (a ShardArg) shardArg() string { return a.Shard }

// ChatArg is the chat kind argument of the tools that read one shard.
type ChatArg struct {
	ChatKind string `json:"chat_kind,omitempty" jsonschema:"the kind of chat you are in (user memory needs direct)"`
}

func (a ChatArg) chatKind() string { return a.ChatKind }

const rememberDesc = "Remember one fact: a single line of at most 500 characters, written so it stands on its own " +
	"(\"Pat moved to Lisbon in October 2026\", not \"he moved\"). It becomes one git commit that names the messages it " +
	"came from. Remembering the same text again changes nothing. Tiers: profile (lasting facts about someone or " +
	"something, the default), log (what happened, dated), note (a minor detail), episode (a summary of recent work). " +
	"To correct a fact, forget the old one and remember the new one."

// RememberInput is the input of remember.
type RememberInput struct {
	ShardArg
	Text string `json:"text" jsonschema:"the fact, one line, at most 500 characters"`
	Tier string `json:"tier,omitempty" jsonschema:"profile (default), log, note or episode"`
	Date string `json:"date,omitempty" jsonschema:"the day the fact is about, YYYY-MM-DD; default: today"`
	Source
	SourceExcerpt string `json:"source_excerpt,omitempty" jsonschema:"what was said in the source messages, quoted (at most 2,000 characters), so people reviewing the fact can read it"`
}

func (t *tools) remember(ctx context.Context, s memd.ShardID, in RememberInput) (_ string, out memd.RememberResult, err error) {
	req := memd.RememberRequest{Shard: s, Text: in.Text, Tier: memd.Tier(in.Tier), Source: in.source(ctx)}
	req.Source.Excerpt = in.SourceExcerpt
	if in.Date != "" {
		if req.Date, err = memd.ParseDate(in.Date); err != nil {
			return "", out, err
		}
	}
	res, err := t.svc.Remember(ctx, req)
	if err != nil {
		return "", out, err
	}
	if res.Existing {
		return fmt.Sprintf("already remembered as %s in %s (no change)", res.Fact.ID, res.Fact.Shard), res, nil
	}
	return fmt.Sprintf("remembered %s in %s (commit %s): %s", res.Fact.ID, res.Fact.Shard, short(res.Commit), res.Fact.Text), res, nil
}

const forgetDesc = "Forget a fact by its ID (as recall, memory_context or trace show it), as one git commit. " +
	"Use it for facts that are wrong or no longer true, and name the message that says so."

// ForgetInput is the input of forget.
type ForgetInput struct {
	ShardArg
	ID string `json:"id" jsonschema:"the fact's ID: 12 hex digits"`
	Source
}

func (t *tools) forget(ctx context.Context, s memd.ShardID, in ForgetInput) (_ string, out memd.ForgetResult, err error) {
	res, err := t.svc.Forget(ctx, memd.ForgetRequest{Shard: s, ID: in.ID, Source: in.source(ctx)})
	if err != nil {
		return "", out, err
	}
	return fmt.Sprintf("forgot %s in %s (commit %s): %s", res.Fact.ID, res.Fact.Shard, short(res.Commit), res.Fact.Text), res, nil
}

const recallDesc = "Search memory: your own, the user's (in a direct chat) and your projects'. Ask in plain words; " +
	"names, short tokens (SQL, NYC) and dates (March 14, 2026-03-14) work. Returns facts and passages of notes, " +
	"best first, each with its ID, shard, date and the commit and messages it came from."

// RecallInput is the input of recall.
type RecallInput struct {
	Query           string   `json:"query" jsonschema:"what to look for, in plain words"`
	K               *int     `json:"k,omitempty" jsonschema:"at most this many hits, 1 to 50; default 20"`
	User            string   `json:"user,omitempty" jsonschema:"the person you are talking to; their memory is searched in a direct chat"`
	Projects        []string `json:"projects,omitempty" jsonschema:"only these projects; default: every project you are a member of"`
	At              string   `json:"at,omitempty" jsonschema:"search memory as it was at a commit, a date (YYYY-MM-DD) or the stamp of an earlier answer"`
	Explain         bool     `json:"explain,omitempty" jsonschema:"say why each hit ranked: the parts of its score"`
	IncludeProposed bool     `json:"include_proposed,omitempty" jsonschema:"search the changes waiting for a person's review too (agents in review mode)"`
	Agent           string   `json:"agent,omitempty" jsonschema:"admins only: whose view to search"`
	ChatKind        string   `json:"chat_kind,omitempty" jsonschema:"the kind of chat you are in: direct, group, routine or api"`
}

func (t *tools) recall(ctx context.Context, in RecallInput) (_ string, out memd.RecallResult, err error) {
	ctx, err = t.declare(ctx, in.ChatKind)
	if err != nil {
		return "", out, err
	}
	k := 0
	if in.K != nil {
		if k = *in.K; k < 1 || k > memd.MaxRecallK {
			return "", out, memd.Errorf(memd.EINVALID, "k must be between 1 and %d, or left out for %d", memd.MaxRecallK, memd.DefaultRecallK)
		}
	}
	res, err := t.svc.Recall(ctx, memd.RecallQuery{Q: in.Query, K: k, User: in.User, Projects: in.Projects, At: in.At, Agent: in.Agent, Explain: in.Explain, IncludeProposed: in.IncludeProposed})
	if err != nil {
		return "", out, err
	}
	var b strings.Builder
	if len(res.Hits) == 0 {
		b.WriteString(res.NothingFound() + "\n")
	}
	for _, h := range res.Hits {
		if h.Note != "" {
			fmt.Fprintf(&b, "- [%s, note %s, %s; open it with read_note] %s\n", h.Shard, h.Note, h.Date, oneLine(h.Text))
			continue
		}
		fmt.Fprintf(&b, "- [%s, %s, %s, id %s] %s", h.Shard, h.Date, h.Tier, h.ID, h.Text)
		if len(h.SourceMessages) > 0 {
			fmt.Fprintf(&b, " (from %s)", strings.Join(h.SourceMessages, ", "))
		}
		if h.Explain != nil {
			fmt.Fprintf(&b, " (score %.3f = %s)", h.Score, h.Explain)
		}
		b.WriteString("\n")
	}
	writeSkipped(&b, res.Skipped)
	if res.Stamp != "" {
		fmt.Fprintf(&b, "read at %s\n", res.Stamp)
	}
	return b.String(), res, nil
}

// writeSkipped tells the model which shards it asked for were left out.
func writeSkipped(b *strings.Builder, skipped []memd.Skipped) {
	for _, s := range skipped {
		fmt.Fprintf(b, "left out %s (rule %s): %s\n", s.Shard, s.Rule, s.Reason)
	}
}

const contextDesc = "The memory section for your prompt: the user's memory (direct chats only), up to three projects " +
	"and your own, as Markdown, with lasting facts and the most relevant dated ones. Call it when a conversation starts."

// ContextInput is the input of memory_context.
type ContextInput struct {
	User            string   `json:"user,omitempty" jsonschema:"the person you are talking to (their memory is included in a direct chat)"`
	Projects        []string `json:"projects,omitempty" jsonschema:"up to three projects to include"`
	At              string   `json:"at,omitempty" jsonschema:"memory as it was at a commit, a date (YYYY-MM-DD) or the stamp of an earlier answer"`
	Since           string   `json:"since,omitempty" jsonschema:"the stamp of an earlier answer: only the facts added (+) and removed (\u2212) since then, to append mid-conversation"`
	Agent           string   `json:"agent,omitempty" jsonschema:"admins only: whose memory section to build"`
	ChatKind        string   `json:"chat_kind,omitempty" jsonschema:"the kind of chat you are in: direct, group, routine or api"`
	IncludeProposed bool     `json:"include_proposed,omitempty" jsonschema:"put the changes waiting for a person's review in the section too"`
}

func (t *tools) memoryContext(ctx context.Context, in ContextInput) (_ string, out memd.MemoryContext, err error) {
	ctx, err = t.declare(ctx, in.ChatKind)
	if err != nil {
		return "", out, err
	}
	mc, err := t.svc.Context(ctx, memd.ContextQuery{Agent: in.Agent, User: in.User, Projects: in.Projects, At: in.At, Since: in.Since, IncludeProposed: in.IncludeProposed})
	if err != nil {
		return "", out, err
	}
	text := mc.Markdown
	if in.Since != "" && text == "" {
		text = "nothing changed\n"
	}
	var skipped strings.Builder
	writeSkipped(&skipped, mc.Skipped)
	text += skipped.String()
	return text + "\nread at " + mc.Stamp + "\n", mc, nil
}

const traceDesc = "Where a fact came from: the commit that introduced it, who wrote it and when, how it was learned, " +
	"the messages and chat it came from, and every later commit that touched it."

// TraceInput is the input of trace.
type TraceInput struct {
	ShardArg
	ID string `json:"id" jsonschema:"the fact's ID: 12 hex digits"`
	ChatArg
}

func (t *tools) trace(ctx context.Context, s memd.ShardID, in TraceInput) (_ string, out memd.Trace, err error) {
	tr, err := t.svc.Trace(ctx, s, in.ID)
	if err != nil {
		return "", out, err
	}
	var b strings.Builder
	state := "present"
	if !tr.Present {
		state = "no longer in memory"
	}
	fmt.Fprintf(&b, "%s (%s): %s\n", tr.Fact.ID, state, tr.Fact.Text)
	if c := tr.Introduced; c != nil {
		fmt.Fprintf(&b, "introduced by commit %s by %s on %s, %s", short(c.Hash), c.Author.Name, c.Time.Format("2006-01-02 15:04"), learned(c.Provenance))
		if len(c.Provenance.SourceMessages) > 0 {
			fmt.Fprintf(&b, ", from message(s) %s", strings.Join(c.Provenance.SourceMessages, ", "))
		}
		if c.Provenance.SourceChat != "" {
			fmt.Fprintf(&b, " in chat %s", c.Provenance.SourceChat)
		}
		b.WriteString("\n")
	}
	if len(tr.Chain) > 1 {
		first := tr.Chain[len(tr.Chain)-1]
		fmt.Fprintf(&b, "edited %d time(s); first learned by commit %s by %s on %s, %s: %s\n", len(tr.Chain)-1, short(first.Hash),
			first.Author.Name, first.Time.Format("2006-01-02 15:04"), learned(first.Provenance), first.Subject)
	}
	for _, q := range tr.Messages {
		fmt.Fprintf(&b, "said in message %s by %s: %s\n", q.ID, q.Speaker(), oneLine(q.Text))
	}
	for _, c := range tr.History {
		fmt.Fprintf(&b, "- %s %s %s: %s\n", short(c.Hash), c.Time.Format("2006-01-02 15:04"), c.Author.Name, c.Subject)
	}
	return b.String(), tr, nil
}

func learned(p memd.Provenance) string {
	if p.LearnedBy == "" {
		return "learned by a person's edit"
	}
	s := "learned by " + p.LearnedBy
	if p.Model != "" {
		s += " (" + p.Model + ")"
	}
	return s
}

const historyDesc = "A shard's commits, newest first, with who made them, how they were learned, the messages they " +
	"came from and the facts they added (+) and removed (-). Filter by a message ID, an author or an operation."

// HistoryInput is the input of history.
type HistoryInput struct {
	ShardArg
	Message string `json:"message,omitempty" jsonschema:"only commits citing this source message ID"`
	Author  string `json:"author,omitempty" jsonschema:"only commits by this agent or person"`
	Op      string `json:"op,omitempty" jsonschema:"only this operation: remember, forget, edit, note-edit, revert, import, merge or reject"`
	Limit   int    `json:"limit,omitempty" jsonschema:"at most this many commits; default 50"`
	ChatArg
}

// HistoryOutput is the structured answer of history.
type HistoryOutput struct {
	Commits []memd.Commit `json:"commits"`
}

func (t *tools) history(ctx context.Context, s memd.ShardID, in HistoryInput) (_ string, out HistoryOutput, err error) {
	commits, err := t.svc.Log(ctx, memd.LogQuery{Shard: s, Message: in.Message, Agent: in.Author, Op: in.Op, Limit: in.Limit})
	if err != nil {
		return "", out, err
	}
	var b strings.Builder
	if len(commits) == 0 {
		b.WriteString("no commits match")
	}
	for _, c := range commits {
		fmt.Fprintf(&b, "%s %s %s: %s\n", short(c.Hash), c.Time.Format("2006-01-02 15:04"), c.Author.Name, c.Subject)
		for _, ch := range c.Changes {
			fmt.Fprintf(&b, "  %s %s %s\n", ch.Op, ch.Fact.ID, ch.Fact.Text)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  ~ %s\n", n)
		}
	}
	return b.String(), HistoryOutput{commits}, nil
}

const listNotesDesc = "List a shard's notes (Markdown documents under notes/) with their revisions and titles."

// ListNotesInput is the input of list_notes.
type ListNotesInput struct {
	ShardArg
	ChatArg
}

// ListNotesOutput is the structured answer of list_notes.
type ListNotesOutput struct {
	Notes []memd.NoteInfo `json:"notes"`
}

func (t *tools) listNotes(ctx context.Context, s memd.ShardID, in ListNotesInput) (_ string, out ListNotesOutput, err error) {
	notes, err := t.svc.ListNotes(ctx, s)
	if err != nil {
		return "", out, err
	}
	var b strings.Builder
	if len(notes) == 0 {
		fmt.Fprintf(&b, "%s has no notes", s)
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "- %s (%d bytes, revision %s) %s\n", n.Path, n.Size, n.Revision, n.Title)
	}
	return b.String(), ListNotesOutput{notes}, nil
}

const readNoteDesc = "Read a note's text and its revision. Quote the text exactly in edit_note anchors, and pass the " +
	"revision as expectedRevision so an edit never overwrites a change you have not seen."

// ReadNoteInput is the input of read_note.
type ReadNoteInput struct {
	ShardArg
	Path string `json:"path" jsonschema:"the note's path under notes/, such as runbooks/deploy.md"`
	At   string `json:"at,omitempty" jsonschema:"the note as it was at a commit or a date (YYYY-MM-DD)"`
	ChatArg
}

func (t *tools) readNote(ctx context.Context, s memd.ShardID, in ReadNoteInput) (_ string, out memd.Note, err error) {
	n, err := t.svc.ReadNote(ctx, s, in.Path, in.At)
	if err != nil {
		return "", out, err
	}
	return fmt.Sprintf("revision: %s\n\n%s", n.Revision, n.Text), n, nil
}

const createNoteDesc = "Create a note: a Markdown document under notes/ that people can open and fix. Fails with " +
	"conflict if the note exists; then read it and use edit_note."

// CreateNoteInput is the input of create_note.
type CreateNoteInput struct {
	ShardArg
	Path string `json:"path" jsonschema:"the note's path under notes/: lowercase names separated by /, ending in .md"`
	Text string `json:"text" jsonschema:"the note's Markdown text"`
	Source
}

func (t *tools) createNote(ctx context.Context, s memd.ShardID, in CreateNoteInput) (_ string, out memd.NoteResult, err error) {
	res, err := t.svc.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: in.Path, Text: in.Text, Source: in.source(ctx)})
	if err != nil {
		return "", out, err
	}
	return fmt.Sprintf("created %s in %s (commit %s), revision %s", in.Path, s, short(res.Commit), res.Note.Revision), res, nil
}

const editNoteDesc = "Change a note with anchored edits, all or none, as one commit. Each edit quotes text of the note " +
	"exactly as read_note showed it, and that text must occur exactly once (add surrounding words until it does, or " +
	"set all for replace and delete). Ops: replace {find, replace}, insert_after {anchor, text}, insert_before " +
	"{anchor, text}, delete {find}. Edits apply in order. Errors: anchor_not_found, anchor_ambiguous (the error " +
	"names the edit), revision_mismatch (someone changed the note: read it again)."

// EditNoteInput is the input of edit_note.
type EditNoteInput struct {
	ShardArg
	Path             string     `json:"path" jsonschema:"the note's path under notes/"`
	ExpectedRevision string     `json:"expectedRevision,omitempty" jsonschema:"the revision read_note returned; the edit fails if the note changed since"`
	Edits            []NoteEdit `json:"edits" jsonschema:"the edits, applied in order"`
	Source
}

// NoteEdit is one anchored edit.
type NoteEdit struct {
	Op      string `json:"op" jsonschema:"replace, insert_after, insert_before or delete"`
	Find    string `json:"find,omitempty" jsonschema:"replace and delete: the exact text to change"`
	Replace string `json:"replace,omitempty" jsonschema:"replace: the new text"`
	Anchor  string `json:"anchor,omitempty" jsonschema:"insert_after and insert_before: the exact text to insert next to"`
	Text    string `json:"text,omitempty" jsonschema:"insert_after and insert_before: the text to insert"`
	All     bool   `json:"all,omitempty" jsonschema:"replace and delete: every occurrence rather than exactly one"`
	Exact   bool   `json:"exact,omitempty" jsonschema:"match find or anchor only as given, byte for byte: by default, when the text as given is absent, a match forgiving other spaces, quotes, dashes and accents is tried"`
}

func (t *tools) editNote(ctx context.Context, s memd.ShardID, in EditNoteInput) (_ string, out memd.NoteResult, err error) {
	edits := make([]memd.NoteEdit, len(in.Edits))
	for i, e := range in.Edits {
		edits[i] = memd.NoteEdit{Op: e.Op, Find: e.Find, Replace: e.Replace, Anchor: e.Anchor, Text: e.Text, All: e.All, Exact: e.Exact}
	}
	res, err := t.svc.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: in.Path, ExpectedRevision: in.ExpectedRevision, Edits: edits, Source: in.source(ctx)})
	if err != nil {
		return "", out, err
	}
	if res.Commit == "" {
		return fmt.Sprintf("the edits leave %s as it was (no commit); revision %s", in.Path, res.Note.Revision), res, nil
	}
	return fmt.Sprintf("edited %s in %s (commit %s), revision %s", in.Path, s, short(res.Commit), res.Note.Revision), res, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

const editFactDesc = "Rewrite a fact's text where it stands, keeping its date, tier and the messages it was learned from, " +
	"as one git commit (the old text stays in history). Use it to correct a fact; name the message that corrects it."

// EditFactInput is the input of edit_fact.
type EditFactInput struct {
	ShardArg
	ID   string `json:"id" jsonschema:"the fact's ID: 12 hex digits"`
	Text string `json:"text" jsonschema:"the new text, one line, at most 500 characters"`
	Source
	SourceExcerpt string `json:"source_excerpt,omitempty" jsonschema:"what was said in the source messages, quoted (at most 2,000 characters), so people reviewing the edit can read it"`
}

func (t *tools) editFact(ctx context.Context, s memd.ShardID, in EditFactInput) (_ string, out memd.EditFactResult, err error) {
	req := memd.EditFactRequest{Shard: s, ID: in.ID, Text: in.Text, Source: in.source(ctx)}
	req.Source.Excerpt = in.SourceExcerpt
	res, err := t.svc.EditFact(ctx, req)
	if err != nil {
		return "", out, err
	}
	if res.Commit == "" {
		return fmt.Sprintf("%s in %s already says that (no change)", res.Fact.ID, res.Fact.Shard), res, nil
	}
	return fmt.Sprintf("rewrote %s as %s in %s (commit %s): %s", res.Replaced.ID, res.Fact.ID, res.Fact.Shard, short(res.Commit), res.Fact.Text), res, nil
}

const listShardsDesc = "List the shards you may read in this chat (your own, your projects', and in a direct chat the " +
	"person's you name), with how many facts each holds and its last change."

// ListShardsInput is the input of list_shards.
type ListShardsInput struct {
	User     string `json:"user,omitempty" jsonschema:"the person you are talking to; their shard is listed in a direct chat"`
	ChatKind string `json:"chat_kind,omitempty" jsonschema:"the kind of chat you are in: direct, group, routine or api"`
}

// ListShardsOutput is the structured answer of list_shards.
type ListShardsOutput struct {
	Shards []memd.ShardInfo `json:"shards"`
}

func (t *tools) listShards(ctx context.Context, in ListShardsInput) (_ string, out ListShardsOutput, err error) {
	ctx, err = t.declare(ctx, in.ChatKind)
	if err != nil {
		return "", out, err
	}
	all, err := t.svc.Shards(ctx)
	if err != nil {
		return "", out, err
	}
	// Not the list of every person memd knows: only the one named.
	shards := make([]memd.ShardInfo, 0, len(all))
	for _, s := range all {
		if s.Shard.Kind != memd.KindUser || s.Shard.Name == in.User {
			shards = append(shards, s)
		}
	}
	var b strings.Builder
	if len(shards) == 0 {
		b.WriteString("no shards you may read yet\n")
	}
	for _, s := range shards {
		fmt.Fprintf(&b, "- %s: %d facts", s.Shard, s.Facts)
		if !s.LastChange.IsZero() {
			fmt.Fprintf(&b, ", last changed %s", s.LastChange.Format("2006-01-02 15:04"))
		}
		b.WriteString("\n")
	}
	return b.String(), ListShardsOutput{shards}, nil
}

const deleteNoteDesc = "Delete a note, as one git commit (its text stays in history). Give the revision read_note returned, " +
	"so that a note someone changed since is not deleted unread."

// DeleteNoteInput is the input of delete_note.
type DeleteNoteInput struct {
	ShardArg
	Path             string `json:"path" jsonschema:"the note's path under notes/, e.g. deploy.md"`
	ExpectedRevision string `json:"expectedRevision,omitempty" jsonschema:"the revision read_note returned; the delete fails if the note changed since"`
	// The name this field had before it took edit_note's, still taken
	// from callers written against it.
	ExpectedRevisionOld string `json:"expected_revision,omitempty" jsonschema:"the older name of expectedRevision"`
	Source
}

func (t *tools) deleteNote(ctx context.Context, s memd.ShardID, in DeleteNoteInput) (_ string, out memd.NoteResult, err error) {
	rev := in.ExpectedRevision
	switch {
	case rev == "":
		rev = in.ExpectedRevisionOld
	case in.ExpectedRevisionOld != "" && in.ExpectedRevisionOld != rev:
		return "", out, memd.Errorf(memd.EINVALID, "expectedRevision and expected_revision name different revisions; give one")
	}
	res, err := t.svc.DeleteNote(ctx, memd.DeleteNoteRequest{Shard: s, Path: in.Path, ExpectedRevision: rev, Source: in.source(ctx)})
	if err != nil {
		return "", out, err
	}
	return fmt.Sprintf("deleted %s from %s (commit %s)", in.Path, s, short(res.Commit)), res, nil
}
