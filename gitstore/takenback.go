package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memd/memd/gitstore/internal/odb"
)

// A person's commit can take back facts main holds without their meaning
// to, from files or an index a version behind main that a race with memd
// left them: an index a git command wrote back as it read it before
// memd's update (git status, git add), with the working file holding the
// facts; a checkout of main that raced memd's move of it (see
// catchUpCheckout), which memd brings forward in milliseconds unless the
// person edits and stages first; a git merge whose conflict is settled
// with their side while memd committed as it began. The commit hook
// refuses such a commit, naming the facts (TakenBack). For the checkout,
// the first time memd moves main with HEAD away it notes where main was
// (awayBaseName); memd drops the note once the index holds all main gained
// since when the checkout of main is brought forward, and the hook once it
// passes a commit on main.

// awayBaseName is the file in a shard's git directory naming the commit
// main was at when memd first moved it while HEAD was away.
const awayBaseName = "memd-away-base"

// markAwayBase notes main's commit before a move made with HEAD away,
// unless an earlier such move noted one. Not synced: a note lost to a
// power cut only leaves the hook unknowing, as it was before notes.
func (sh *Shard) markAwayBase(main Hash) {
	path := filepath.Join(sh.gitDir, awayBaseName)
	if _, err := os.Stat(path); err == nil || main.IsZero() {
		return
	}
	if err := os.WriteFile(path, []byte(main.String()+"\n"), 0o644); err != nil {
		sh.store.log.Warn("noting where main was when memd moved it with HEAD away", "shard", sh.id, "err", err)
	}
}

// DropAwayBase removes the note of where main was when memd first moved it
// with HEAD away, from the git directory (or linked worktree's) gitDir:
// the commit hook passed a commit that lacks none of the facts since.
func DropAwayBase(gitDir string) {
	os.Remove(filepath.Join(commonDir(gitDir), awayBaseName))
}

// readAwayBase returns the commit markAwayBase noted in gitDir, or zero.
func readAwayBase(gitDir string) Hash {
	b, err := os.ReadFile(filepath.Join(gitDir, awayBaseName))
	if err != nil {
		return Hash{}
	}
	return NewHash(strings.TrimSpace(string(b)))
}

// dropAwayBaseIfInStep removes the note of where main was once the index
// lacks no fact line main gained since: the checkout is in step, or the
// person committed what they meant. The caller holds sh.mu.
func (sh *Shard) dropAwayBaseIfInStep(head Hash) error {
	base := readAwayBase(sh.gitDir)
	if base.IsZero() {
		return nil
	}
	idx, err := sh.readIndex()
	if err != nil {
		return err
	}
	versions := make(map[string]Hash)
	c, err := readCommitIn(sh.db, head)
	if err != nil {
		return err
	}
	err = (&trees{db: sh.db}).walkFiles(c.tree, "", keepFactPaths, func(path string, blob Hash) error {
		if !IsFactFile(path) {
			return nil
		}
		if indexed := entryBlob(idx, path); indexed != blob {
			versions[path] = indexed
		}
		return nil
	})
	if err != nil {
		return err
	}
	taken, err := takenBack(sh.db, base, head, versions, sh.dir)
	if err != nil || len(taken) > 0 {
		return err
	}
	if err := os.Remove(filepath.Join(sh.gitDir, awayBaseName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// TakenLine is a fact line main holds that a commit made by hand would
// take back from files or an index behind main.
type TakenLine struct {
	Path string
	Line string
}

func (l TakenLine) String() string { return l.Path + ": " + l.Line }

// takenBack returns the fact lines main holds that versions of its fact
// files (path to blob, zero for none: the files whose version is not
// main's) would take away, where a version is behind rather than a
// person's edit: lines main gained since commit base (zero: none noted),
// and, in a version that is exactly what main held at one of its last
// staleLookback commits (an index a git command wrote back as it read it
// before memd's update), every line main gained since that the working
// file under workTree still holds (a person deleting memd's newest fact
// from the file stages exactly the version before it). A line some version
// holds in any file is kept, a fact moved between files being no fact
// taken. A base no longer readable (a reset and a gc since) counts as
// none.
func takenBack(db *odb.DB, base, main Hash, versions map[string]Hash, workTree string) ([]TakenLine, error) {
	if len(versions) == 0 || main.IsZero() {
		return nil, nil
	}
	t := &trees{db: db}
	var baseTree Hash
	if c, err := readCommitIn(db, base); err == nil {
		baseTree = c.tree
	}
	mainCommit, err := readCommitIn(db, main)
	if err != nil {
		return nil, err
	}
	kept, err := factFileLines(db, versions)
	if err != nil {
		return nil, err
	}
	var taken []TakenLine
	for _, path := range slices.Sorted(mapKeys(versions)) {
		if !IsFactFile(path) {
			continue
		}
		now, found, err := t.lookup(mainCommit.tree, path)
		if err != nil {
			return nil, err
		}
		if !found {
			continue // the commit adds the file
		}
		// Lines the working file holds, when the version is one main held
		// (gone from the working tree too, the file is the person's to
		// remove), and lines main held at base.
		var working, atBase map[string]bool
		if heldRecently(db, mainCommit.parents, path, versions[path], staleLookback) {
			if data, err := os.ReadFile(filepath.Join(workTree, filepath.FromSlash(path))); err == nil {
				working = lineSet(splitLines(data))
			}
		}
		if !baseTree.IsZero() {
			atBase = make(map[string]bool)
			if then, found, err := t.lookup(baseTree, path); err != nil {
				return nil, err
			} else if found {
				old, err := blobLines(db, then.hash)
				if err != nil {
					return nil, err
				}
				atBase = lineSet(old)
			}
		}
		if working == nil && atBase == nil {
			continue
		}
		lines, err := blobLines(db, now.hash)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if _, _, _, fact := splitLine(l); fact && !kept[l] && (working[l] || atBase != nil && !atBase[l]) {
				taken = append(taken, TakenLine{path, l})
			}
		}
	}
	return taken, nil
}

// splitLines returns the lines of data, whatever their ends.
func splitLines(data []byte) []string {
	return strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
}

func lineSet(lines []string) map[string]bool {
	set := make(map[string]bool, len(lines))
	for _, l := range lines {
		set[l] = true
	}
	return set
}

// heldRecently reports whether path held blob (or, for the zero hash, was
// absent) in one of the first limit first-parent ancestors starting at
// parents.
func heldRecently(db *odb.DB, parents []Hash, path string, blob Hash, limit int) bool {
	t := &trees{db: db}
	for i := 0; i < limit && len(parents) > 0; i++ {
		c, err := readCommitIn(db, parents[0])
		if err != nil {
			return false
		}
		if e, ok, err := t.lookup(c.tree, path); err == nil && (ok && e.hash == blob || !ok && blob.IsZero()) {
			return true
		}
		parents = c.parents
	}
	return false
}

// blobLines returns a blob's lines; the zero blob has none.
func blobLines(db *odb.DB, blob Hash) ([]string, error) {
	if blob.IsZero() {
		return nil, nil
	}
	obj, err := db.Get(blob)
	if err != nil {
		return nil, err
	}
	return splitLines(obj.Data), nil
}

// factFileLines returns every line the fact files of versions (path to
// blob) hold.
func factFileLines(db *odb.DB, versions map[string]Hash) (map[string]bool, error) {
	kept := make(map[string]bool)
	for path, blob := range versions {
		if !IsFactFile(path) {
			continue // no fact line is kept elsewhere (nor is each a blob: a submodule)
		}
		lines, err := blobLines(db, blob)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			kept[l] = true
		}
	}
	return kept, nil
}
