package gitstore

import (
	"bytes"

	"github.com/memd/memd/gitstore/internal/odb"
)

// mainLines tells whether main holds a line in any of its fact files: a
// line a hand commit or a push would be refused for is not, when main
// has it already (kept as prose with --no-verify, there before memd named
// such lines, or brought in by a merge of main or a rename). The files
// are read when first asked: a commit or push with nothing to refuse
// reads none.
type mainLines struct {
	db    *odb.DB
	tree  Hash // main's tree; zero for no main
	read  bool
	blobs [][]byte
}

// holds tells whether main holds line (without its line end).
func (m *mainLines) holds(line string) (bool, error) {
	if m.tree.IsZero() {
		return false, nil
	}
	if !m.read {
		err := (&trees{db: m.db}).walkFiles(m.tree, "", keepFactPaths, func(path string, blob Hash) error {
			if !IsFactFile(path) {
				return nil
			}
			obj, err := m.db.Get(blob)
			if err != nil {
				return err
			}
			m.blobs = append(m.blobs, obj.Data)
			return nil
		})
		if err != nil {
			return false, err
		}
		m.read = true
	}
	for _, data := range m.blobs {
		if holdsWholeLine(data, line) {
			return true, nil
		}
	}
	return false, nil
}

// holdsWholeLine tells whether data has line as a whole line, ended by LF,
// CRLF or the end of data.
func holdsWholeLine(data []byte, line string) bool {
	for off := 0; off <= len(data); {
		i := bytes.Index(data[off:], []byte(line))
		if i < 0 {
			return false
		}
		i += off
		end := i + len(line)
		starts := i == 0 || data[i-1] == '\n'
		rest := data[end:]
		ends := len(rest) == 0 || rest[0] == '\n' || bytes.HasPrefix(rest, []byte("\r\n")) || string(rest) == "\r"
		if starts && ends {
			return true
		}
		off = i + 1
	}
	return false
}

// notHeld returns the problems whose lines main holds taken out; text
// gives a problem's line.
func (m *mainLines) notHeld(problems []LineProblem, text func(LineProblem) string) ([]LineProblem, error) {
	out := problems[:0]
	for _, p := range problems {
		if isConflictMarker(text(p)) {
			out = append(out, p) // the same few lines in every conflict
			continue
		}
		held, err := m.holds(text(p))
		if err != nil {
			return nil, err
		}
		if !held {
			out = append(out, p)
		}
	}
	return out, nil
}
