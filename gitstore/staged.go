package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// LineProblem is a line (or a whole file) a commit brings that memd
// would not read as its writer means it, and why.
type LineProblem struct {
	Path string
	Line int // 0 for the whole file
	Err  error
}

func (p LineProblem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", p.Path, p.Line, memd.ErrorMessage(p.Err))
	}
	return fmt.Sprintf("%s: %s", p.Path, memd.ErrorMessage(p.Err))
}

// maxLineProblems bounds what CheckStaged lists: enough to fix a file in
// one go, not a screen of a pasted log.
const maxLineProblems = 20

// CheckStaged checks what a `git commit` run by hand in a shard's working
// tree is about to record (the index file git hands its pre-commit hook)
// against main, as a push is checked: every line it adds to a fact file a
// well-formed fact and no conflict marker, every note it changes within
// the API's rules, nothing under log/ or notes/ that memd would ignore.
// It only reads: the daemon may be writing the shard meanwhile. A HEAD
// not on main (a person's own branch) is not checked; its merge into main
// is checked as it is made.
func CheckStaged(gitDir, indexFile string) ([]LineProblem, error) {
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return nil, fmt.Errorf("read HEAD: %w", err)
	}
	if strings.TrimSpace(string(head)) != "ref: "+mainRef {
		return nil, nil
	}
	db, err := odb.Open(filepath.Join(gitDir, "objects"), odb.NewCache(4<<20), false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var root Hash
	main, err := readRef(gitDir, mainRef)
	if err != nil {
		return nil, err
	}
	if !main.IsZero() {
		c, err := readCommitIn(db, main)
		if err != nil {
			return nil, err
		}
		root = c.tree
	}
	staged, err := readIndexFile(indexFile)
	if err != nil {
		return nil, err
	}
	var problems []LineProblem
	t := &trees{db: db}
	for _, e := range staged.Entries {
		path := e.Name
		// Stage 0 is a path merged (go-git's index.Merged is 1, the
		// base's stage); git refuses to commit the others. A path added
		// with --intent-to-add is not committed.
		if e.Stage != 0 || e.IntentToAdd || !keepIgnoredPaths(path) && !IsFactFile(path) {
			continue
		}
		var from Hash
		if was, ok, err := t.lookup(root, path); err != nil {
			return nil, err
		} else if ok {
			from = was.hash
		}
		to := Hash(e.Hash)
		if from == to {
			continue
		}
		found, err := stagedProblems(db, path, from, to, maxLineProblems-len(problems))
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", path, err)
		}
		if problems = append(problems, found...); len(problems) == maxLineProblems {
			break
		}
	}
	return problems, nil
}

// stagedProblems returns, up to most, what is wrong with one file a
// commit changes from blob from (zero for a new file) to blob to.
func stagedProblems(db *odb.DB, path string, from, to Hash, most int) ([]LineProblem, error) {
	var err error
	if IsFactFile(path) {
		added, err := addedLines(db, from, to)
		if err != nil {
			return nil, err
		}
		return badFactLines(path, added, most), nil
	}
	var line int
	if line, err = checkChangedFile(db, path, from, to); err == nil {
		line, err = checkIgnoredFile(db, path, from, to)
	}
	if err == nil {
		return nil, nil
	}
	if memd.ErrorCode(err) != memd.EINVALID {
		return nil, err
	}
	return []LineProblem{{path, line, err}}, nil
}

// readIndexFile decodes a git index file; none is an empty index.
func readIndexFile(path string) (*index.Index, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &index.Index{Version: 2}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer f.Close()
	return decodeIndex(f)
}

// decodeIndex reads an index file from its start.
func decodeIndex(f *os.File) (*index.Index, error) {
	idx := &index.Index{}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		return nil, fmt.Errorf("read index %s: %w", f.Name(), err)
	}
	return idx, nil
}
