package gitstore

import (
	"bytes"
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
// tree is about to record (the index file git hands its hooks) against
// main, as a push is checked: every line it adds to a fact file a
// well-formed fact and no conflict marker, every note it changes within
// the API's rules, nothing under log/ or notes/ that memd would ignore,
// regular files of at most a push's size. Lines main holds in the file,
// or in a fact file the commit removes (a rename), are not named again.
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
	c := &stagedCommit{t: &trees{db: db}}
	main, err := readRef(gitDir, mainRef)
	if err != nil {
		return nil, err
	}
	if !main.IsZero() {
		mc, err := readCommitIn(db, main)
		if err != nil {
			return nil, err
		}
		c.root = mc.tree
	}
	if c.index, err = readIndexFile(indexFile); err != nil {
		return nil, err
	}
	var changed []stagedPath
	var ids bytes.Buffer
	for _, e := range c.index.Entries {
		// Stage 0 is a path merged (go-git's index.Merged is 1, the
		// base's stage); git refuses to commit the others. A path added
		// with --intent-to-add is not committed.
		if e.Stage != 0 || e.IntentToAdd {
			continue
		}
		p := stagedPath{path: e.Name, to: Hash(e.Hash), mode: fmt.Sprintf("%o", uint32(e.Mode))}
		was, onMain, err := c.t.lookup(c.root, p.path)
		if err != nil {
			return nil, err
		}
		if onMain {
			if p.from = was.hash; p.from == p.to && was.mode == p.mode {
				continue
			}
		}
		changed = append(changed, p)
		ids.WriteString(p.to.String() + "\n")
	}
	// The index records a file's size as git last saw it on disk (less
	// 4 GiB, or none): the sizes are the blobs' own.
	sizes, err := blobSizes(gitDir, &ids)
	if err != nil {
		return nil, fmt.Errorf("size staged files: %w", err)
	}
	for _, p := range changed {
		p.size = sizes[p.to.String()]
		if err := c.check(p); err != nil {
			return nil, fmt.Errorf("check %s: %w", p.path, err)
		}
		if len(c.problems) >= maxLineProblems {
			return c.problems[:maxLineProblems], nil
		}
	}
	return c.problems, nil
}

// stagedPath is a path whose file the index changes against main: from
// main's blob (zero for none) to the index's, of mode and size.
type stagedPath struct {
	path     string
	from, to Hash
	mode     string
	size     int64
}

// stagedCommit is what CheckStaged reads: main's tree, the index about
// to be committed, and the problems found so far.
type stagedCommit struct {
	t        *trees
	root     Hash
	index    *index.Index
	removed  []Hash // main's fact files the index lacks, once asked for
	problems []LineProblem
}

// check checks one path the index changes.
func (c *stagedCommit) check(p stagedPath) error {
	path, from, to := p.path, p.from, p.to
	whole := func(err error) {
		c.problems = append(c.problems, LineProblem{path, 0, err})
	}
	if what := unfitFile(path, p.mode); what != "" {
		whole(memd.Errorf(memd.EINVALID, "%s; memd shards hold regular files of facts and notes only", what))
		return nil
	}
	if p.size > maxPushedBlob {
		whole(memd.Errorf(memd.ETOOLARGE, "%d MiB; a file in a shard may be at most %d MiB", p.size>>20, maxPushedBlob>>20))
		return nil
	}
	db := c.t.db
	if IsFactFile(path) {
		added, err := addedLines(db, from, to)
		if err != nil {
			return err
		}
		if from.IsZero() {
			if added, err = c.notMoved(added); err != nil {
				return err
			}
		}
		c.problems = append(c.problems, badFactLines(path, added, maxLineProblems-len(c.problems))...)
		return nil
	}
	if !keepIgnoredPaths(path) {
		return nil
	}
	line, err := checkChangedFile(db, path, from, to)
	if err == nil {
		line, err = checkIgnoredFile(db, path, from, to)
	}
	switch code := memd.ErrorCode(err); {
	case err == nil:
	case code == memd.EINVALID || code == memd.ETOOLARGE:
		c.problems = append(c.problems, LineProblem{path, line, err})
	default:
		return err
	}
	return nil
}

// notMoved returns the lines of a new fact file that no fact file of
// main the commit removes holds: a file renamed or split is not checked
// again.
func (c *stagedCommit) notMoved(added []numberedLine) ([]numberedLine, error) {
	if c.removed == nil {
		c.removed = []Hash{}
		staged := make(map[string]bool, len(c.index.Entries))
		for _, e := range c.index.Entries {
			staged[e.Name] = true
		}
		err := c.t.walkFiles(c.root, "", keepFactPaths, func(path string, blob Hash) error {
			if IsFactFile(path) && !staged[path] {
				c.removed = append(c.removed, blob)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var err error
	for _, blob := range c.removed {
		if added, err = stillAdded(c.t.db, added, blob); err != nil {
			return nil, err
		}
	}
	return added, nil
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

// stillAdded returns the lines of added that blob does not hold.
func stillAdded(db *odb.DB, added []numberedLine, blob Hash) ([]numberedLine, error) {
	obj, err := db.Get(blob)
	if err != nil {
		return nil, err
	}
	had := make(map[string]bool)
	for line := range strings.SplitSeq(string(obj.Data), "\n") {
		had[strings.TrimSuffix(line, "\r")] = true
	}
	var out []numberedLine
	for _, l := range added {
		if !had[l.text] {
			out = append(out, l)
		}
	}
	return out, nil
}
