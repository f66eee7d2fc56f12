package index

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// Notes are indexed as passages, so recall can point at the part of a note
// that answers. A shard's snapshot keeps each note's text, the commit that
// last changed it, and that commit's day.

type noteRecord struct {
	Date   string `json:"d"`
	Commit string `json:"c,omitempty"`
	Text   string `json:"x"`
}

// maxPassage is the most bytes of one passage; longer paragraphs are split
// at line breaks, and a single longer line at a character boundary.
const maxPassage = 600

// Passages splits a note into the passages recall returns: paragraphs (a
// heading goes with the paragraph under it), at most maxPassage bytes each.
// date is the day the note last changed, commit the commit that changed it.
func Passages(shard memd.ShardID, path, text string, date memd.Date, commit string) []search.Doc {
	var out []search.Doc
	emit := func(start int, text string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		sum := sha256.Sum256([]byte(path + "\x00" + strconv.Itoa(start)))
		out = append(out, search.Doc{
			Fact:   memd.Fact{ID: "n" + hex.EncodeToString(sum[:])[:11], Shard: shard, Date: date, Text: text, File: memd.NoteFile(path)},
			Offset: start, Commit: commit, Note: path,
		})
	}
	start, heading := 0, false
	flush := func(end int) {
		for start < end {
			cut := end
			if cut-start > maxPassage {
				cut = start + maxPassage
				if nl := strings.LastIndexByte(text[start:cut], '\n'); nl > 0 {
					cut = start + nl + 1
				} else {
					for cut > start && !utf8Start(text[cut]) {
						cut--
					}
				}
			}
			emit(start, text[start:cut])
			start = cut
		}
	}
	at := 0
	for raw := range strings.Lines(text) {
		end := at + len(raw)
		line := strings.TrimSpace(raw)
		switch {
		case line == "" && !heading:
			flush(at)
			start = end
		case strings.HasPrefix(line, "#"):
			if !heading {
				flush(at)
			}
			heading = true
		case line != "":
			heading = false
		}
		at = end
	}
	flush(len(text))
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func notePassages(shard memd.ShardID, notes map[string]*noteRecord) map[string][]search.Doc {
	out := make(map[string][]search.Doc, len(notes))
	for path, r := range notes {
		var ps []search.Doc
		if r != nil {
			ps = r.passages(shard, path)
		}
		out[path] = ps
	}
	return out
}

func (r noteRecord) passages(shard memd.ShardID, path string) []search.Doc {
	date, _ := memd.ParseDate(r.Date)
	return Passages(shard, path, r.Text, date, r.Commit)
}

// notesAt reads every note of a shard at a commit.
func notesAt(sh *gitstore.Shard, head gitstore.Hash, when time.Time) (map[string]*noteRecord, error) {
	files, _, err := sh.Notes(head)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*noteRecord, len(files))
	for _, f := range files {
		out[strings.TrimPrefix(f.Path, gitstore.NotesDir+"/")] = &noteRecord{Date: memd.DateOf(when).String(), Text: string(f.Data)}
	}
	return out, nil
}
