package gitstore

import (
	"strings"

	"github.com/memd/memd/gitstore/internal/odb"
)

// mainLines tells whether main holds a line a hand commit or a push would
// be refused for, in any of its fact files: such a line is not refused
// again when main has it already (kept as prose with --no-verify, there
// before memd named such lines, or brought in by a merge of main or a
// rename). main's fact files are read when first asked, once: a commit or
// push with nothing to refuse reads none, and one with thousands of lines
// to refuse reads them once.
type mainLines struct {
	db   *odb.DB
	tree Hash            // main's tree; zero for no main
	bad  map[string]bool // the lines of main's fact files CheckFactLine names; nil until read
}

// newMainLines returns main's lines at commit head (zero: no main).
func newMainLines(db *odb.DB, head Hash) (*mainLines, error) {
	m := &mainLines{db: db}
	if head.IsZero() {
		return m, nil
	}
	c, err := readCommitIn(db, head)
	if err != nil {
		return nil, err
	}
	m.tree = c.tree
	return m, nil
}

// holds tells whether main holds line (without its line end).
func (m *mainLines) holds(line string) (bool, error) {
	if m.tree.IsZero() {
		return false, nil
	}
	if m.bad == nil {
		bad := make(map[string]bool)
		err := (&trees{db: m.db}).walkFiles(m.tree, "", keepFactPaths, func(path string, blob Hash) error {
			if !IsFactFile(path) {
				return nil
			}
			obj, err := m.db.Get(blob)
			if err != nil {
				return err
			}
			for l := range strings.SplitSeq(string(obj.Data), "\n") {
				l = strings.TrimSuffix(l, "\r")
				if _, _, _, fact := splitLine(l); !fact && CheckFactLine(l, false) != nil {
					bad[l] = true
				}
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		m.bad = bad
	}
	return m.bad[line], nil
}
