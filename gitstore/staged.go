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
	for _, e := range c.index.Entries {
		// Stage 0 is a path merged (go-git's index.Merged is 1, the
		// base's stage); git refuses to commit the others. A path added
		// with --intent-to-add is not committed.
		if e.Stage != 0 || e.IntentToAdd {
			continue
		}
		if err := c.check(e); err != nil {
			return nil, fmt.Errorf("check %s: %w", e.Name, err)
		}
		if len(c.problems) >= maxLineProblems {
			return c.problems[:maxLineProblems], nil
		}
	}
	return c.problems, nil
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

// check checks one path of the index against main.
func (c *stagedCommit) check(e *index.Entry) error {
	path, to, mode := e.Name, Hash(e.Hash), fmt.Sprintf("%o", uint32(e.Mode))
	was, onMain, err := c.t.lookup(c.root, path)
	if err != nil {
		return err
	}
	var from Hash
	if onMain {
		if from = was.hash; from == to && was.mode == mode {
			return nil
		}
	}
	whole := func(err error) {
		c.problems = append(c.problems, LineProblem{path, 0, err})
	}
	if what := unfitFile(path, mode); what != "" {
		whole(memd.Errorf(memd.EINVALID, "%s; memd shards hold regular files of facts and notes only", what))
		return nil
	}
	if e.Size > maxPushedBlob {
		whole(memd.Errorf(memd.ETOOLARGE, "%d MiB; a file in a shard may be at most %d MiB", e.Size>>20, maxPushedBlob>>20))
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

// warnUnreadLines logs the lines commit c, made outside memd, added to
// fact files that memd does not read as facts: what the hooks would have
// refused, committed with --no-verify, by a fast-forward, or without
// them. A merge's lines are those no parent holds, its branches' own
// commits are read on their own.
func (sh *Shard) warnUnreadLines(c Commit) {
	problems, err := sh.unreadLines(c)
	if err != nil {
		return // only a warning; the stale-index check reads the same and says
	}
	for _, p := range problems {
		sh.store.log.Warn("a commit made outside memd added a line memd does not read as a fact", "shard", sh.id, "commit", short(c.Hash), "line", p.String())
	}
}

func (sh *Shard) unreadLines(c Commit) ([]LineProblem, error) {
	t := &trees{db: sh.db}
	parents := make([]Hash, len(c.Parents))
	for k, h := range c.Parents {
		pc, err := sh.readCommit(h)
		if err != nil {
			return nil, err
		}
		parents[k] = pc.tree
	}
	var first Hash
	if len(parents) > 0 {
		first = parents[0]
	}
	var problems []LineProblem
	err := t.diffFiles(first, c.Tree, "", keepFactPaths, func(path string, from, to Hash) error {
		if to.IsZero() || !IsFactFile(path) || len(problems) == maxLineProblems {
			return nil
		}
		added, err := addedLines(sh.db, from, to)
		if err != nil {
			return err
		}
		for _, other := range parents[min(1, len(parents)):] {
			if e, ok, err := t.lookup(other, path); err != nil {
				return err
			} else if ok {
				if added, err = stillAdded(sh.db, added, e.hash); err != nil {
					return err
				}
			}
		}
		problems = append(problems, badFactLines(path, added, maxLineProblems-len(problems))...)
		return nil
	})
	return problems, err
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
