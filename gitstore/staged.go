package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

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
	path := p.Path
	if strings.ContainsFunc(path, unicode.IsControl) {
		path = strconv.Quote(path) // a newline or a terminal's escape, shown for what it is
	}
	if p.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", path, p.Line, memd.ErrorMessage(p.Err))
	}
	return fmt.Sprintf("%s: %s", path, memd.ErrorMessage(p.Err))
}

// maxLineProblems bounds what CheckStaged lists: enough to fix a file in
// one go, not a screen of a pasted log.
const maxLineProblems = 20

// CheckStaged checks what a `git commit` run by hand in a shard's working
// tree is about to record (the index file git hands its hooks) against
// main, as a push is checked: every line it adds to a fact file a
// well-formed fact and no conflict marker, every note it changes within
// the API's rules, nothing memd would ignore where it looks for facts and
// notes, regular files of at most a push's size. Lines main holds in any
// fact file are not named again (nor said as prose when main holds them
// in the file or in a fact file the commit removes: a rename). git reads
// the index (any of its formats) and compares it with main; memd reads
// only the blobs. A HEAD not on main (a person's own branch) is not
// checked; its merge into main is checked as it is made.
//
// Staged.Problems refuse the commit; Staged.Prose are the list items it
// adds to fact files that are not fact lines, which memd keeps as prose,
// said in case they were meant as facts.
func CheckStaged(gitDir, indexFile string) (Staged, error) {
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return Staged{}, fmt.Errorf("read HEAD: %w", err)
	}
	if !namesMain(head) {
		return Staged{}, nil
	}
	common := commonDir(gitDir)
	main, err := readRef(common, mainRef)
	if err != nil {
		return Staged{}, err
	}
	changed, removed, err := stagedChanges(gitDir, indexFile, main)
	if err != nil {
		return Staged{}, err
	}
	db, err := odb.Open(filepath.Join(common, "objects"), odb.NewCache(4<<20), false)
	if err != nil {
		return Staged{}, err
	}
	defer db.Close()
	held, err := newMainLines(db, main)
	if err != nil {
		return Staged{}, err
	}
	c := &stagedCommit{db: db, removed: removed, main: held}
	var ids bytes.Buffer
	for _, p := range changed {
		ids.WriteString(p.to.String() + "\n")
	}
	// The index records a file's size as git last saw it on disk (less
	// 4 GiB, or none): the sizes are the blobs' own.
	sizes, err := blobSizes(gitDir, &ids)
	if err != nil {
		return Staged{}, fmt.Errorf("size staged files: %w", err)
	}
	for _, p := range changed {
		p.size = sizes[p.to.String()]
		if err := c.check(p); err != nil {
			return Staged{}, fmt.Errorf("check %s: %w", p.path, err)
		}
		if len(c.problems) > maxLineProblems {
			break
		}
	}
	// One past the most is looked for, to say that more were left out.
	st := Staged{Checked: true, Problems: c.problems, Prose: c.prose}
	if st.TakenBack, err = stagedTakesBack(db, commitsBehind(common, gitDir), workTreeOf(gitDir), main, changed, removed); err != nil {
		return Staged{}, fmt.Errorf("check what the commit takes from main: %w", err)
	}
	if len(st.TakenBack) > maxLineProblems {
		st.TakenBack, st.MoreTakenBack = st.TakenBack[:maxLineProblems], true
	}
	if len(st.Problems) > maxLineProblems {
		st.Problems, st.MoreProblems = st.Problems[:maxLineProblems], true
	}
	if len(st.Prose) > maxLineProblems {
		st.Prose, st.MoreProse = st.Prose[:maxLineProblems], true
	}
	return st, nil
}

// stagedTakesBack returns the facts main holds that the commit would take
// back from a checkout or index behind main (see takenBack), behind being
// the commit since which the checkout may lack what main gained.
func stagedTakesBack(db *odb.DB, behind Hash, workTree string, main Hash, changed, removed []stagedPath) ([]TakenLine, error) {
	versions := make(map[string]Hash)
	for _, p := range changed {
		versions[p.path] = p.to
	}
	for _, p := range removed {
		versions[p.path] = Hash{}
	}
	return takenBack(db, behind, main, versions, workTree)
}

// commitsBehind returns the commit since which what main gained may be
// missing from what a person's checkout holds unbeknown to them: where
// main was when memd first moved it with HEAD away (see markAwayBase), or
// else, while a git merge is under way, where main was when it began
// (ORIG_HEAD): a commit of memd's between git reading HEAD and marking the
// merge under way is in neither side, and the merge commit, made on main
// as it is, would take it back. Zero for none. common is the repository's
// git directory, gitDir the worktree's.
func commitsBehind(common, gitDir string) Hash {
	if base := readAwayBase(common); !base.IsZero() {
		return base
	}
	if _, err := os.Stat(filepath.Join(gitDir, "MERGE_HEAD")); err != nil {
		return Hash{}
	}
	began, err := os.ReadFile(filepath.Join(gitDir, "ORIG_HEAD"))
	if err != nil {
		return Hash{}
	}
	return NewHash(strings.TrimSpace(string(began)))
}

// commonDir returns the git directory holding main and the objects for
// gitDir: itself, or for a linked worktree's (which holds its HEAD and
// index) the one its commondir file names.
func commonDir(gitDir string) string {
	named, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	common := strings.TrimSpace(string(named))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	return common
}

// workTreeOf returns the working tree of git directory gitDir: the folder
// holding it, or, for a linked worktree's, the one its gitdir file names.
func workTreeOf(gitDir string) string {
	if named, err := os.ReadFile(filepath.Join(gitDir, "gitdir")); err == nil {
		return filepath.Dir(strings.TrimSpace(string(named)))
	}
	abs, err := filepath.Abs(gitDir)
	if err != nil {
		return filepath.Dir(gitDir)
	}
	return filepath.Dir(abs)
}

// Staged is what CheckStaged found.
type Staged struct {
	Checked  bool          // HEAD names main: the commit was checked
	Problems []LineProblem // what memd would not read as meant: the commit is refused
	Prose    []LineProblem // list items that are not fact lines, kept as prose
	// TakenBack are facts main holds that the commit lacks from files or
	// an index behind main (an index a git command wrote back as it read
	// it before memd's update, a checkout of main that raced memd's move
	// of it, a merge settled with the person's side while memd committed
	// as it began): the commit is refused (see takenback.go).
	TakenBack []TakenLine
	// MoreProblems, MoreProse and MoreTakenBack say that there were more
	// than the lists hold (they hold maxLineProblems each).
	MoreProblems, MoreProse, MoreTakenBack bool
}

// stagedPath is a path whose file the index changes against main: from
// main's blob (zero for none) to the index's, of mode and size.
type stagedPath struct {
	path     string
	from, to Hash
	mode     string
	size     int64
}

// stagedChanges asks git what the index file changes against commit main
// (none: the empty tree): the paths it adds or changes, and the fact files
// it removes (their blobs as from). Paths in conflict are left to git, which
// refuses to commit them.
func stagedChanges(gitDir, indexFile string, main Hash) (changed, removed []stagedPath, err error) {
	base := emptyTree
	if !main.IsZero() {
		base = main
	}
	// A path added with --intent-to-add is not committed; a submodule is
	// named whatever a .gitmodules in the working tree says to ignore.
	cmd := exec.Command("git", "--git-dir", gitDir, "diff-index", "--cached", "--no-renames", "--full-index", "-z",
		"--ita-invisible-in-index", "--ignore-submodules=none", base.String())
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+indexFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("git diff-index: %s", firstLine(stderr.String(), err))
	}
	// Each record: ":<mode> <mode> <hash> <hash> <status>" NUL <path> NUL.
	fields := strings.Split(string(out), "\x00")
	for k := 0; k+1 < len(fields); k += 2 {
		meta, path := strings.Fields(strings.TrimPrefix(fields[k], ":")), fields[k+1]
		if len(meta) != 5 {
			return nil, nil, fmt.Errorf("git diff-index: unexpected %q", fields[k])
		}
		from, to := NewHash(meta[2]), NewHash(meta[3])
		switch meta[4] {
		case "D":
			if IsFactFile(path) {
				removed = append(removed, stagedPath{path: path, from: from})
			}
		case "U":
		default:
			changed = append(changed, stagedPath{path: path, from: from, to: to, mode: meta[1]})
		}
	}
	return changed, removed, nil
}

// stagedCommit is what CheckStaged reads: the blobs, the fact files the
// commit removes, and the problems found so far.
type stagedCommit struct {
	db       *odb.DB
	removed  []stagedPath
	main     *mainLines
	problems []LineProblem
	prose    []LineProblem
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
	db := c.db
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
		bad, err := badFactLines(path, added, maxLineProblems+1-len(c.problems), c.main)
		if err != nil {
			return err
		}
		c.problems = append(c.problems, bad...)
		for _, l := range added {
			if len(c.prose) > maxLineProblems {
				break // one past the most, to say more were left out
			}
			if l.code {
				continue
			}
			if err := undatedItem(l.text); err != nil {
				c.prose = append(c.prose, LineProblem{path, l.number, err})
			}
		}
		return nil
	}
	if !keepIgnoredPaths(path) {
		return nil
	}
	line, err := checkChangedFile(db, path, from, to, c.main)
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
	var err error
	for _, p := range c.removed {
		if added, err = stillAdded(c.db, added, p.from); err != nil {
			return nil, err
		}
	}
	return added, nil
}
