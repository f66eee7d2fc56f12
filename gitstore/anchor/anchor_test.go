package anchor_test

import (
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/anchor"
)

// Each way a model garbles text it copies: the anchor as the model wrote
// it, the note as it is, and what replacing the anchor must leave.
var foldCases = []struct {
	name   string
	note   string
	anchor string
	want   string // the note with the anchor replaced by "X"
}{
	{"non-breaking space", "Deploy\u00a0on Friday.\n", "Deploy on Friday", "X.\n"},
	{"ideographic space", "Deploy\u3000on Friday.\n", "Deploy on Friday", "X.\n"},
	{"anchor has the wide space", "Deploy on Friday.\n", "Deploy\u00a0on Friday", "X.\n"},
	{"zero-width space", "Deploy on Fri\u200bday.\n", "Deploy on Friday", "X.\n"},
	{"zero-width joiner in anchor", "Deploy on Friday.\n", "Deploy on Fri\u200dday", "X.\n"},
	{"byte order mark", "\ufeffDeploy on Friday.\n", "Deploy on Friday", "\ufeffX.\n"},
	{"curly single quotes", "Use the \u2018main\u2019 branch.\n", "Use the 'main' branch", "X.\n"},
	{"curly double quotes", "Say \u201cdone\u201d twice.\n", `Say "done" twice`, "X.\n"},
	{"straight quotes in note", `Say "done" twice.` + "\n", "Say \u201cdone\u201d twice", "X.\n"},
	{"en dash", "Open 9\u201317 daily.\n", "Open 9-17 daily", "X.\n"},
	{"em dash", "Fast \u2014 and safe.\n", "Fast - and safe", "X.\n"},
	{"doubled spaces in note", "Run  the   tests.\n", "Run the tests", "X.\n"},
	{"doubled spaces in anchor", "Run the tests.\n", "Run  the tests", "X.\n"},
	{"trailing spaces before a newline", "Step one.   \nStep two.\n", "Step one.\nStep two.", "X\n"},
	{"anchor keeps trailing spaces", "Step one.\nStep two.\n", "Step one.  \nStep two.", "X\n"},
	{"decomposed note, composed anchor", "Caf\u0065\u0301 opens at 8.\n", "Caf\u00e9 opens", "X at 8.\n"},
	{"composed note, decomposed anchor", "Caf\u00e9 opens at 8.\n", "Caf\u0065\u0301 opens", "X at 8.\n"},
}

func TestFoldedMatches(t *testing.T) {
	for _, c := range foldCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := anchor.Apply(c.note, []memd.NoteEdit{{Op: memd.NoteReplace, Find: c.anchor, Replace: "X"}}, memd.MaxNoteBytes)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
		// The same garbling, where the note holds the text twice: the
		// folded match is as ambiguous as an exact one would be.
		t.Run(c.name+"/ambiguous", func(t *testing.T) {
			twice := c.note + c.note
			_, err := anchor.Apply(twice, []memd.NoteEdit{{Op: memd.NoteReplace, Find: c.anchor, Replace: "X"}}, memd.MaxNoteBytes)
			if memd.ErrorCode(err) != memd.EANCHORAMBIGUOUS {
				t.Fatalf("err %v, want %s", err, memd.EANCHORAMBIGUOUS)
			}
			all, err := anchor.Apply(twice, []memd.NoteEdit{{Op: memd.NoteReplace, Find: c.anchor, Replace: "X", All: true}}, memd.MaxNoteBytes)
			if err != nil || all != c.want+c.want {
				t.Errorf("with all: %q, %v; want %q", all, err, c.want+c.want)
			}
		})
	}
}

func TestExactBeatsFolded(t *testing.T) {
	// The exact text occurs once; a folded variant elsewhere does not make
	// it ambiguous.
	note := "Use \u201cmain\u201d.\nUse \"main\".\n"
	got, err := anchor.Apply(note, []memd.NoteEdit{{Op: memd.NoteReplace, Find: `Use "main"`, Replace: "X"}}, memd.MaxNoteBytes)
	if err != nil || got != "Use \u201cmain\u201d.\nX.\n" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestFoldNeverSplitsACharacter(t *testing.T) {
	// "e" is not "é", composed or not.
	for _, note := range []string{"Caf\u00e9\n", "Caf\u0065\u0301\n"} {
		if _, err := anchor.Apply(note, []memd.NoteEdit{{Op: memd.NoteReplace, Find: "Cafe\u200b", Replace: "X"}}, memd.MaxNoteBytes); memd.ErrorCode(err) != memd.EANCHORNOTFOUND {
			t.Errorf("%q: err %v, want %s", note, err, memd.EANCHORNOTFOUND)
		}
	}
}

func TestOperations(t *testing.T) {
	note := "# Deploy\n\n1. Build.\n2. Ship.\n"
	cases := []struct {
		name  string
		edits []memd.NoteEdit
		want  string
		code  string
	}{
		{"replace", []memd.NoteEdit{{Op: "replace", Find: "Ship.", Replace: "Ship on Tuesday."}}, "# Deploy\n\n1. Build.\n2. Ship on Tuesday.\n", ""},
		{"insert after", []memd.NoteEdit{{Op: "insert_after", Anchor: "1. Build.\n", Text: "1b. Test.\n"}}, "# Deploy\n\n1. Build.\n1b. Test.\n2. Ship.\n", ""},
		{"insert before", []memd.NoteEdit{{Op: "insert_before", Anchor: "# Deploy", Text: "<!-- owner: ops -->\n"}}, "<!-- owner: ops -->\n# Deploy\n\n1. Build.\n2. Ship.\n", ""},
		{"delete", []memd.NoteEdit{{Op: "delete", Find: "2. Ship.\n"}}, "# Deploy\n\n1. Build.\n", ""},
		{"delete all", []memd.NoteEdit{{Op: "delete", Find: ".", All: true}}, "# Deploy\n\n1 Build\n2 Ship\n", ""},
		{"edits apply in order", []memd.NoteEdit{
			{Op: "replace", Find: "Ship.", Replace: "Ship it."},
			{Op: "insert_after", Anchor: "Ship it.", Text: " Then rest."},
		}, "# Deploy\n\n1. Build.\n2. Ship it. Then rest.\n", ""},
		{"missing anchor", []memd.NoteEdit{{Op: "replace", Find: "3. Rest.", Replace: "x"}}, "", memd.EANCHORNOTFOUND},
		{"ambiguous anchor", []memd.NoteEdit{{Op: "insert_after", Anchor: ". ", Text: "x"}}, "", memd.EANCHORAMBIGUOUS},
		{"second edit fails, nothing applies", []memd.NoteEdit{
			{Op: "replace", Find: "Build.", Replace: "Compile."},
			{Op: "delete", Find: "Build."},
		}, "", memd.EANCHORNOTFOUND},
		{"unknown op", []memd.NoteEdit{{Op: "append", Text: "x"}}, "", memd.EINVALID},
		{"all on insert", []memd.NoteEdit{{Op: "insert_after", Anchor: "Build", Text: "x", All: true}}, "", memd.EINVALID},
		{"empty find", []memd.NoteEdit{{Op: "delete"}}, "", memd.EINVALID},
		{"no edits", nil, "", memd.EINVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := anchor.Apply(note, c.edits, memd.MaxNoteBytes)
			if memd.ErrorCode(err) != c.code {
				t.Fatalf("err %v, want code %q", err, c.code)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	if _, err := anchor.Apply("aaa", []memd.NoteEdit{{Op: "replace", Find: "aa", Replace: "b"}}, memd.MaxNoteBytes); memd.ErrorCode(err) != memd.EANCHORAMBIGUOUS {
		t.Errorf("overlapping occurrences: %v", err)
	}
}

func TestErrorsNameTheEdit(t *testing.T) {
	_, err := anchor.Apply("one two", []memd.NoteEdit{
		{Op: "replace", Find: "one", Replace: "1"},
		{Op: "insert_after", Anchor: "three", Text: "3"},
	}, memd.MaxNoteBytes)
	if msg := memd.ErrorMessage(err); !strings.HasPrefix(msg, "edit 2 (insert_after): ") || !strings.Contains(msg, `"three"`) {
		t.Errorf("message %q", msg)
	}
}

// Each edit's growth is checked before it is made: edits that would each
// multiply the note fail at once, whatever they would have asked for.
func TestGrowthCheckedBeforeTheEdit(t *testing.T) {
	note := strings.Repeat("a", 1000)
	blowUp := memd.NoteEdit{Op: memd.NoteReplace, Find: "a", Replace: strings.Repeat("a", 1000), All: true}
	_, err := anchor.Apply(note, []memd.NoteEdit{blowUp, blowUp, blowUp}, memd.MaxNoteBytes)
	if memd.ErrorCode(err) != memd.ETOOLARGE || !strings.HasPrefix(memd.ErrorMessage(err), "edit 1 (replace): it would make the note 977 KiB") {
		t.Errorf("err %v", err)
	}
	for _, c := range []struct {
		edit memd.NoteEdit
		size int
	}{
		{memd.NoteEdit{Op: memd.NoteReplace, Find: "b", Replace: "ccc", All: true}, 16},
		{memd.NoteEdit{Op: memd.NoteDelete, Find: "b", All: true}, 7},
		{memd.NoteEdit{Op: memd.NoteInsertAfter, Anchor: "x", Text: "yy"}, 12},
		{memd.NoteEdit{Op: memd.NoteInsertBefore, Anchor: "x", Text: "yy"}, 12},
	} {
		// A limit of exactly the result passes; one byte less fails.
		got, err := anchor.Apply("ab ab x ab", []memd.NoteEdit{c.edit}, c.size)
		if err != nil || len(got) != c.size {
			t.Errorf("%s: %q, %v; want %d bytes", c.edit.Op, got, err, c.size)
		}
		if _, err := anchor.Apply("ab ab x ab", []memd.NoteEdit{c.edit}, c.size-1); memd.ErrorCode(err) != memd.ETOOLARGE {
			t.Errorf("%s over the limit: %v", c.edit.Op, err)
		}
	}
}

// FuzzFind checks, for any note and anchor, that a match never panics, that
// each range covers text that folds to what the anchor folds to, and that
// replacing it changes nothing outside it.
func FuzzFind(f *testing.F) {
	for _, c := range foldCases {
		f.Add(c.note, c.anchor)
	}
	f.Add("a  b\u00a0 c", "b c")
	f.Add("x\u0301\u0302y", "x")
	f.Fuzz(func(t *testing.T, note, anchorText string) {
		ranges, folded := anchor.Find(note, anchorText)
		for _, r := range ranges {
			if r.Start < 0 || r.End > len(note) || r.Start > r.End {
				t.Fatalf("range %v outside %d bytes", r, len(note))
			}
			piece := note[r.Start:r.End]
			if folded && anchor.Fold(piece) != anchor.Fold(anchorText) {
				t.Fatalf("folded match %q folds to %q, the anchor %q to %q", piece, anchor.Fold(piece), anchorText, anchor.Fold(anchorText))
			}
			if !folded && piece != anchorText {
				t.Fatalf("exact match %q is not the anchor %q", piece, anchorText)
			}
		}
		if len(ranges) == 1 {
			got, err := anchor.Apply(note, []memd.NoteEdit{{Op: memd.NoteReplace, Find: anchorText, Replace: "\x00"}}, memd.MaxNoteBytes)
			r := ranges[0]
			if err != nil || got != note[:r.Start]+"\x00"+note[r.End:] {
				t.Fatalf("replace: %q, %v", got, err)
			}
		}
	})
}

// An exact edit refuses a text that matches only folded: a person's edit
// never lands on text someone changed meanwhile, even only its quotes.
func TestExactRefusesAFoldedMatch(t *testing.T) {
	text := "Run \u201cmake ship\u201d on the main branch.\n"
	e := memd.NoteEdit{Op: memd.NoteReplace, Find: "Run \"make ship\" on  the main branch.\n", Replace: "Run make ship.\n"}
	if _, err := anchor.Apply(text, []memd.NoteEdit{e}, 1<<20); err != nil {
		t.Fatalf("folded: %v", err)
	}
	e.Exact = true
	if _, err := anchor.Apply(text, []memd.NoteEdit{e}, 1<<20); memd.ErrorCode(err) != memd.EANCHORNOTFOUND {
		t.Errorf("exact: %v", err)
	}
}
