package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/memd/memd"
)

const notesUsage = "Usage: memd notes list | read PATH | create PATH [FILE] | edit PATH [EDITS.json] | delete PATH  (each with -h for flags)"

func runNotes(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "notes", notesUsage, map[string]func(context.Context, *env, []string) error{
		"list": runNotesList, "read": runNotesRead, "create": runNotesCreate, "edit": runNotesEdit, "delete": runNotesDelete}, args)
}

func runNotesList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "notes list", "[flags]", "List a shard's notes with their revisions.")
	var nf shardFlags
	nf.register(fs, e, false)
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	c, s, err := nf.client(ctx)
	if err != nil {
		return err
	}
	notes, err := c.ListNotes(ctx, s)
	if err != nil {
		return err
	}
	return printList(e, nf.cf.json, notes, listing[memd.NoteInfo]{
		key: "notes", empty: fmt.Sprintf("%s has no notes", s),
		row: func(n memd.NoteInfo) string {
			return fmt.Sprintf("%s\t%s\t%d bytes\t%s", n.Path, n.Revision[:12], n.Size, n.Title)
		},
	})
}

func runNotesRead(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "notes read", "[flags] PATH", "Print a note (its revision goes to stderr, for edit --revision).")
	var nf shardFlags
	nf.register(fs, e, false)
	at := fs.String("at", "", "as of a commit or a date (YYYY-MM-DD)")
	pos, c, s, err := nf.connect(ctx, fs, args, 1, "the note's path, such as runbooks/deploy.md")
	if err != nil {
		return err
	}
	note, err := c.ReadNote(ctx, s, pos[0], *at)
	if err != nil {
		return err
	}
	if nf.cf.json {
		return printJSON(e, note)
	}
	fmt.Fprintf(e.stderr, "revision %s\n", note.Revision)
	_, err = io.WriteString(e.stdout, note.Text)
	return err
}

// readInput reads a file, or standard input for "-" or no name.
func readInput(e *env, name string) ([]byte, error) {
	if name == "" || name == "-" {
		return io.ReadAll(e.stdin)
	}
	return os.ReadFile(name)
}

func runNotesCreate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "notes create", "[flags] PATH [FILE]", "Create a note from FILE (or standard input).")
	var nf shardFlags
	nf.register(fs, e, true)
	create := fs.Bool("create", false, "create the agent shard named though no agent of that name is registered")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 && len(pos) != 2 {
		return want(fs, pos, 1, "the note's path and optionally a file")
	}
	file := ""
	if len(pos) == 2 {
		file = pos[1]
	}
	text, err := readInput(e, file)
	if err != nil {
		return err
	}
	c, s, err := nf.client(ctx)
	if err != nil {
		return err
	}
	res, err := c.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: pos[0], Text: string(text), Source: nf.source(), Create: *create})
	if err != nil {
		return err
	}
	return printNoteResult(e, nf.cf.json, "created", res)
}

func runNotesEdit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "notes edit", "[flags] PATH [EDITS.json]",
		"Apply anchored edits to a note, all or none, as one commit. Give one edit with the flags below, or a JSON list of\n"+
			`edits in a file or on standard input: [{"op": "replace", "find": "...", "replace": "..."}, {"op": "insert_after",`+"\n"+
			`"anchor": "...", "text": "..."}, {"op": "insert_before", ...}, {"op": "delete", "find": "...", "all": true}].`)
	var nf shardFlags
	nf.register(fs, e, true)
	revision := fs.String("revision", "", "fail unless the note is at this revision (from notes read)")
	find := fs.String("find", "", "text to replace (with --replace) or delete (with --delete)")
	replace := fs.String("replace", "", "replacement for --find")
	del := fs.Bool("delete", false, "delete --find")
	after := fs.String("after", "", "insert --text after this anchor")
	before := fs.String("before", "", "insert --text before this anchor")
	text := fs.String("text", "", "text to insert")
	all := fs.Bool("all", false, "replace or delete every occurrence of --find")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	var edits []memd.NoteEdit
	switch {
	case *find != "" && *del:
		edits = []memd.NoteEdit{{Op: memd.NoteDelete, Find: *find, All: *all}}
	case *find != "":
		edits = []memd.NoteEdit{{Op: memd.NoteReplace, Find: *find, Replace: *replace, All: *all}}
	case *after != "":
		edits = []memd.NoteEdit{{Op: memd.NoteInsertAfter, Anchor: *after, Text: *text}}
	case *before != "":
		edits = []memd.NoteEdit{{Op: memd.NoteInsertBefore, Anchor: *before, Text: *text}}
	}
	switch {
	case len(pos) == 1 && edits == nil, len(pos) == 2 && edits == nil:
		file := ""
		if len(pos) == 2 {
			file = pos[1]
		}
		data, err := readInput(e, file)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &edits); err != nil {
			return memd.Errorf(memd.EINVALID, "edits: want a JSON list of edits: %v", err)
		}
	case len(pos) != 1:
		return want(fs, pos, 1, "the note's path (and a file of edits unless given by flags)")
	}
	c, s, err := nf.client(ctx)
	if err != nil {
		return err
	}
	res, err := c.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: pos[0], ExpectedRevision: *revision, Edits: edits, Source: nf.source()})
	if err != nil {
		return err
	}
	if res.Commit == "" && !nf.cf.json {
		fmt.Fprintf(e.stdout, "%s: the edits change nothing (no commit)\n", pos[0])
		return nil
	}
	return printNoteResult(e, nf.cf.json, "edited", res)
}

func runNotesDelete(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "notes delete", "[flags] PATH", "Delete a note as one commit.")
	var nf shardFlags
	nf.register(fs, e, true)
	revision := fs.String("revision", "", "fail unless the note is at this revision")
	pos, c, s, err := nf.connect(ctx, fs, args, 1, "the note's path")
	if err != nil {
		return err
	}
	res, err := c.DeleteNote(ctx, memd.DeleteNoteRequest{Shard: s, Path: pos[0], ExpectedRevision: *revision, Source: nf.source()})
	if err != nil {
		return err
	}
	return printNoteResult(e, nf.cf.json, "deleted", res)
}

func printNoteResult(e *env, asJSON bool, did string, res memd.NoteResult) error {
	if asJSON {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "%s %s in %s\n  commit %s", did, res.Note.Path, res.Note.Shard, shortHash(res.Commit))
	if res.Note.Revision != "" {
		fmt.Fprintf(e.stdout, "  revision %s", res.Note.Revision)
	}
	fmt.Fprintln(e.stdout)
	return nil
}
