// Package anchor applies anchored edits to a note's text (README,
// "Notes"): each edit names a piece of the text that must occur exactly once
// (unless the edit says all), and the call succeeds only if every edit does.
//
// Matching is exact first. Only when an anchor does not occur exactly is a
// folded match tried, which forgives what models do when they copy text:
// non-breaking and other wide spaces, zero-width characters, curly quotes,
// en and em dashes, doubled spaces, spaces before a line break, and Unicode
// composed versus decomposed forms. A folded match is mapped back to the
// exact bytes of the note it covers, and only those bytes change.
package anchor

import (
	"strings"
	"unicode/utf8"

	"github.com/memd/memd"
)

// Range is a byte range [Start, End) of a text.
type Range struct{ Start, End int }

// Find returns where anchor occurs in text, in order (overlapping
// occurrences included): its exact occurrences, or if there are none, its
// folded ones, and then folded is true.
func Find(text, anchor string) (ranges []Range, folded bool) {
	if anchor == "" {
		return nil, false
	}
	for at := 0; ; {
		i := strings.Index(text[at:], anchor)
		if i < 0 {
			break
		}
		ranges = append(ranges, Range{at + i, at + i + len(anchor)})
		_, size := utf8.DecodeRuneInString(text[at+i:])
		at += i + size
	}
	if len(ranges) > 0 {
		return ranges, false
	}
	want := Fold(anchor)
	if want == "" {
		return nil, false
	}
	f := fold(text)
	for at := 0; ; {
		i := strings.Index(f.s[at:], want)
		if i < 0 {
			break
		}
		start, end := at+i, at+i+len(want)
		if f.canStart[start] && f.canEnd[end-1] {
			ranges = append(ranges, Range{f.from[start], f.to[end-1]})
		}
		_, size := utf8.DecodeRuneInString(f.s[start:])
		at = start + size
	}
	return ranges, len(ranges) > 0
}

// Apply applies edits to text in order, each to the result of the ones
// before it, and returns the new text; on any failure it returns an error
// naming the edit (codes EINVALID, EANCHORNOTFOUND, EANCHORAMBIGUOUS,
// ETOOLARGE) and no text. No edit may make the text longer than limit
// bytes: that is checked before the edit is made, so a replace of every
// "a" by a thousand of them fails without asking for the memory.
func Apply(text string, edits []memd.NoteEdit, limit int) (string, error) {
	if len(edits) == 0 {
		return "", memd.Errorf(memd.EINVALID, "no edits given")
	}
	for i, e := range edits {
		var err error
		if text, err = apply(text, e, limit); err != nil {
			return "", memd.Errorf(memd.ErrorCode(err), "edit %d (%s): %s", i+1, e.Op, memd.ErrorMessage(err))
		}
	}
	return text, nil
}

func apply(text string, e memd.NoteEdit, limit int) (string, error) {
	var anchor, insert string
	switch e.Op {
	case memd.NoteReplace, memd.NoteDelete:
		if e.Find == "" {
			return "", memd.Errorf(memd.EINVALID, "find is empty: quote the text to %s", e.Op)
		}
		if e.Anchor != "" || e.Text != "" {
			return "", memd.Errorf(memd.EINVALID, "%s takes find (and replace), not anchor or text", e.Op)
		}
		if e.Op == memd.NoteDelete && e.Replace != "" {
			return "", memd.Errorf(memd.EINVALID, "delete takes no replace; use replace")
		}
		anchor, insert = e.Find, e.Replace
	case memd.NoteInsertAfter, memd.NoteInsertBefore:
		if e.Anchor == "" {
			return "", memd.Errorf(memd.EINVALID, "anchor is empty: quote the text to insert %s", strings.TrimPrefix(e.Op, "insert_"))
		}
		if e.Text == "" {
			return "", memd.Errorf(memd.EINVALID, "text is empty: nothing to insert")
		}
		if e.Find != "" || e.Replace != "" || e.All {
			return "", memd.Errorf(memd.EINVALID, "%s takes anchor and text (all applies to replace and delete)", e.Op)
		}
		anchor, insert = e.Anchor, e.Text
	default:
		return "", memd.Errorf(memd.EINVALID, "unknown op %q: want replace, insert_after, insert_before or delete", memd.Shorten(e.Op, 40))
	}
	ranges, folded := Find(text, anchor)
	if folded && e.Exact {
		ranges = nil
	}
	switch {
	case len(ranges) == 0:
		return "", memd.Errorf(memd.EANCHORNOTFOUND, "%q does not occur in the note; read it again and quote its text exactly", memd.Shorten(anchor, 80))
	case len(ranges) > 1 && !e.All:
		hint := "quote more of the text around it so that it occurs once"
		if e.Op == memd.NoteReplace || e.Op == memd.NoteDelete {
			hint += ", or set all"
		}
		return "", memd.Errorf(memd.EANCHORAMBIGUOUS, "%q occurs %d times in the note; %s", memd.Shorten(anchor, 80), len(ranges), hint)
	}
	if size := editedSize(len(text), ranges, e.Op, len(insert)); size > limit {
		return "", memd.Errorf(memd.ETOOLARGE, "it would make the note %d KiB; a note holds at most %d KiB", (size+1023)>>10, limit>>10)
	}
	var b strings.Builder
	at := 0
	for _, r := range ranges {
		if r.Start < at {
			continue // overlaps the occurrence just edited
		}
		switch e.Op {
		case memd.NoteInsertAfter:
			b.WriteString(text[at:r.End])
			b.WriteString(insert)
			at = r.End
		case memd.NoteInsertBefore:
			b.WriteString(text[at:r.Start])
			b.WriteString(insert)
			at = r.Start
		default:
			b.WriteString(text[at:r.Start])
			b.WriteString(insert)
			at = r.End
		}
	}
	b.WriteString(text[at:])
	return b.String(), nil
}

// editedSize is the length text of length n would have after an edit that
// inserts insert bytes at each range (replacing it, for replace and delete).
func editedSize(n int, ranges []Range, op string, insert int) int {
	at := 0
	for _, r := range ranges {
		if r.Start < at {
			continue
		}
		n += insert
		if op == memd.NoteReplace || op == memd.NoteDelete {
			n -= r.End - r.Start
			at = r.End
		} else if op == memd.NoteInsertAfter {
			at = r.End
		} else {
			at = r.Start
		}
	}
	return n
}
