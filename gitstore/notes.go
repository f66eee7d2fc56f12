package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// IsNoteFile reports whether a path of a shard is a note.
func IsNoteFile(path string) bool {
	p, ok := strings.CutPrefix(path, NotesDir+"/")
	return ok && memd.ValidateNotePath(p) == nil
}

// NoteUpdate computes a note's next text from its current one (exists is
// false when there is none). It runs on the shard's writer, against the
// note as the commit will change it, so a check it makes (a revision, an
// anchor) holds for the commit. It returns the new text, or remove to
// delete the note; returning the text unchanged makes no commit.
type NoteUpdate func(cur []byte, exists bool) (next []byte, remove bool, err error)

// NoteChange is a change to one note.
type NoteChange struct {
	Path   string // the file: notes/<path>
	Update NoteUpdate
}

// NoteState is a note after a change.
type NoteState struct {
	Data   []byte
	Exists bool
}

// NoteFile is a note of a shard at a commit.
type NoteFile struct {
	Path string // the file: notes/<path>
	Data []byte
}

// Notes returns the notes at a commit (the zero hash for HEAD), sorted by
// path, and the commit read.
func (sh *Shard) Notes(at Hash) ([]NoteFile, Hash, error) {
	root, at, err := sh.rootAt(at)
	if err != nil || root.IsZero() {
		return nil, at, err
	}
	t := &trees{db: sh.db}
	var out []NoteFile
	err = t.walkFiles(root, "", keepNotePaths, func(path string, blob Hash) error {
		obj, err := sh.db.Get(blob)
		if err != nil {
			return err
		}
		out = append(out, NoteFile{Path: path, Data: obj.Data})
		return nil
	})
	slices.SortFunc(out, func(a, b NoteFile) int { return strings.Compare(a.Path, b.Path) })
	return out, at, err
}

// Note returns one note at a commit (zero for HEAD); ok is false when the
// commit has no such note.
func (sh *Shard) Note(at Hash, path string) (data []byte, ok bool, commit Hash, err error) {
	if at.IsZero() {
		if at, err = sh.Head(); err != nil {
			return nil, false, at, err
		}
	}
	data, ok, err = sh.FileAt(at, path)
	return data, ok, at, err
}

// rootAt returns the tree of a commit, or of HEAD for the zero hash.
func (sh *Shard) rootAt(at Hash) (root, commit Hash, err error) {
	if at.IsZero() {
		st, err := sh.refresh()
		if err != nil {
			return Hash{}, Hash{}, err
		}
		return st.root, st.head, nil
	}
	c, err := sh.readCommit(at)
	if err != nil {
		return Hash{}, at, err
	}
	return c.tree, at, nil
}

// plannedNote is one new version of a note (next nil: removed).
type plannedNote struct {
	path string
	next *factFile
}

// addNote plans a note change.
func (g *group) addNote(c Change) (*Result, error) {
	path := c.Note.Path
	cur, exists := g.notes[path], false
	if _, touched := g.notes[path]; touched {
		exists = cur != nil
	} else {
		e, found, err := g.trees.lookup(g.base.root, path)
		if err != nil {
			return nil, err
		}
		if found && !e.isDir() {
			obj, err := g.sh.db.Get(e.hash)
			if err != nil {
				return nil, err
			}
			cur, exists = &factFile{path: path, blob: e.hash, data: obj.Data}, true
		}
	}
	var data []byte
	if exists {
		data = cur.data
	}
	next, remove, err := c.Note.Update(data, exists)
	if err != nil {
		return nil, err
	}
	if !remove && !exists {
		if err := g.noteFits(path); err != nil {
			return nil, err
		}
	}
	res := &Result{}
	switch {
	case remove && !exists:
		return nil, memd.Errorf(memd.ENOTFOUND, "there is no note %s", strings.TrimPrefix(path, NotesDir+"/"))
	case !remove && exists && string(next) == string(data):
		res.Note = NoteState{Data: data, Exists: true}
		return res, nil // nothing changes
	}
	// Checked before the path counts as touched: a change refused leaves
	// the group as it found it.
	base, seen := g.noteTouched[path]
	if !seen {
		base = cur
	}
	indexAt := base
	if at, ok := g.sh.behind[path]; ok {
		indexAt = at
	}
	bases := noteBases{head: base, file: g.sh.workingBase(path, base), index: indexAt, tracked: g.tracked}
	if err := g.sh.refuseOverPersonsEdit(path, bases, next, remove); err != nil {
		return nil, err
	}
	g.noteTouched[path] = base
	pn := plannedNote{path: path}
	if !remove {
		pn.next = &factFile{path: path, data: next}
		res.Note = NoteState{Data: next, Exists: true}
	}
	g.notes[path] = pn.next
	g.plans = append(g.plans, &plan{change: c, res: res, notes: []plannedNote{pn}})
	return res, nil
}

// UndoNote is the update that undoes a commit's change of a note, given
// the note before the commit and after it, on the note as it stands: the
// lines the commit added go, those it removed come back, and what changed
// elsewhere in the note since stays. A note the commit made goes when
// nothing else is left in it. Where a later change touched the same lines,
// or removed the note, it refuses with a conflict: an undo does not guess.
func UndoNote(path string, before, after NoteState) NoteUpdate {
	name := strings.TrimPrefix(path, NotesDir+"/")
	return func(cur []byte, exists bool) ([]byte, bool, error) {
		switch {
		case exists == after.Exists && string(cur) == string(after.Data):
			return before.Data, !before.Exists, nil // as the commit left it
		case !exists && after.Exists:
			return nil, false, memd.Errorf(memd.ECONFLICT, "note %s was removed since; nothing of it to undo", name)
		}
		merged, conflict, err := mergeLines(cur, after.Data, before.Data, "undo")
		switch {
		case errors.Is(err, errBinary):
			return nil, false, memd.Errorf(memd.ECONFLICT, "note %s holds a NUL byte, which makes it binary to git: the commit's change cannot be taken out of it line by line; edit it by hand", name)
		case err != nil:
			return nil, false, err
		case conflict:
			return nil, false, memd.Errorf(memd.ECONFLICT, "note %s changed since in the lines the commit changed; edit it by hand", name)
		}
		return merged, !before.Exists && len(bytes.TrimSpace(merged)) == 0, nil
	}
}

// noteFits refuses a new note at path where git cannot hold one: a folder
// of notes of that name, or a note named as one of its folders, as the
// commit before the change or the group's earlier changes leave them.
// Written, the note would take the folder's place and drop its notes.
func (g *group) noteFits(path string) error {
	isFile := func(p string) (bool, error) {
		if f, touched := g.notes[p]; touched {
			return f != nil, nil
		}
		e, found, err := g.trees.lookup(g.base.root, p)
		return found && !e.isDir(), err
	}
	name := strings.TrimPrefix(path, NotesDir+"/")
	for dir := path; ; {
		i := strings.LastIndexByte(dir, '/')
		if dir = dir[:max(i, 0)]; dir == NotesDir || i < 0 {
			break
		}
		if file, err := isFile(dir); err != nil {
			return err
		} else if file {
			return memd.Errorf(memd.ECONFLICT, "%s is a file, so it cannot also be a folder of notes (for %s)", strings.TrimPrefix(dir, NotesDir+"/"), name)
		}
	}
	// A file under path, in the commit before or added by the group, and
	// not removed by it.
	for p, f := range g.notes {
		if f != nil && strings.HasPrefix(p, path+"/") {
			return folderClash(name)
		}
	}
	found := errors.New("found")
	inside := func(p string) bool { return strings.HasPrefix(path+"/", p) || strings.HasPrefix(p, path+"/") }
	err := g.trees.walkFiles(g.base.root, "", inside, func(p string, _ Hash) error {
		if f, touched := g.notes[p]; strings.HasPrefix(p, path+"/") && (!touched || f != nil) {
			return found
		}
		return nil
	})
	if errors.Is(err, found) {
		return folderClash(name)
	}
	return err
}

func folderClash(name string) error {
	return memd.Errorf(memd.ECONFLICT, "%s is a folder of notes, so it cannot also be a note", name)
}

// keepNotePaths walks only the notes folder.
func keepNotePaths(p string) bool {
	return strings.HasPrefix(p, NotesDir+"/") && (strings.HasSuffix(p, "/") || IsNoteFile(p))
}

// ChangedNotes returns the notes a commit added, changed or removed against
// its first parent (their files, notes/<path>).
func (sh *Shard) ChangedNotes(c Commit) ([]string, error) {
	var parentTree Hash
	if len(c.Parents) > 0 {
		p, err := sh.readCommit(c.Parents[0])
		if err != nil {
			return nil, err
		}
		parentTree = p.tree
	}
	var out []string
	t := &trees{db: sh.db}
	err := t.diffFiles(parentTree, c.Tree, "", keepNotePaths, func(path string, _, _ Hash) error {
		out = append(out, path)
		return nil
	})
	return out, err
}

// tracked reports whether path held a file at the commit the group
// builds on.
func (g *group) tracked(path string) bool {
	e, found, err := g.trees.lookup(g.base.root, path)
	return err == nil && found && !e.isDir()
}

// noteBases are the versions of a note a person's are compared with: at
// the commit memd's change builds on (head), the one memd last brought
// the working file to (file), and the one the index is at (index); nil
// where there was none.
type noteBases struct {
	head, file, index *factFile
	// tracked, when known, says whether a path held a file at that
	// commit: a file or folder in the note's way is a person's unless it
	// was (the group may take it away).
	tracked func(path string) bool
}

// refuseOverPersonsEdit refuses memd's change of a note to next (remove:
// deleted) where a person has changed the note and not committed it (its
// working file, or a version they staged), or deleted it, and memd's
// change cannot be merged into theirs: their next commit would take
// memd's change away. So git refuses a merge over local changes. A change
// apart from theirs is merged into their versions when it is written
// (mergeWorking). The caller holds sh.mu.
func (sh *Shard) refuseOverPersonsEdit(path string, at noteBases, next []byte, remove bool) error {
	if !sh.headOnMain() {
		return nil // the working tree is another checkout's (see away.go)
	}
	name := strings.TrimPrefix(path, NotesDir+"/")
	takes := func(theirs []byte, against *factFile, where string) error {
		if remove {
			return memd.Errorf(memd.ECONFLICT, "note %s has changes a person has not committed (%s); not deleted under them", name, where)
		}
		_, ok, err := mergeNote(theirs, against, next)
		if errors.Is(err, errBinary) {
			return memd.Errorf(memd.ECONFLICT, "note %s has changes a person has not committed (%s), and a version of it holds a NUL byte, which makes it binary to git: memd's change cannot be merged into theirs; try again once they commit or discard their edit", name, where)
		}
		if err != nil {
			return fmt.Errorf("merge note %s: %w", name, err)
		}
		if !ok {
			return memd.Errorf(memd.ECONFLICT, "note %s: a person has changed the same lines and not committed them (%s); try again once they commit or discard their edit", name, where)
		}
		return nil
	}
	cur, err := os.ReadFile(filepath.Join(sh.dir, filepath.FromSlash(path)))
	switch {
	case errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR):
		if sh.personsInTheWay(path, at.tracked) {
			return memd.Errorf(memd.ECONFLICT, "a file or folder a person made stands in the way of note %s; try again once they move it", name)
		}
	case errors.Is(err, fs.ErrNotExist):
		if at.file != nil {
			return memd.Errorf(memd.ECONFLICT, "note %s was deleted by a person and the deletion not committed; try again once they commit or restore it", name)
		}
		if sh.personsInTheWay(path, at.tracked) {
			return memd.Errorf(memd.ECONFLICT, "a link a person made stands in the way of note %s; try again once they move it", name)
		}
	case err != nil:
		return fmt.Errorf("read note %s: %w", name, err)
	case at.file == nil || !bytes.Equal(cur, at.file.data) && !sh.lineEndsOnly(path, cur, at.file.data):
		// A copy saved over memd's last write is no edit of theirs there:
		// the write merges it again (see syncFile).
		if err := takes(sh.lastWriteAgain(path, cur, at.file), at.file, "in the working tree"); err != nil {
			return err
		}
	}
	// A version staged: one memd did not put there. (No index at all is
	// no person's removal: git reset makes it again, and so does a start.)
	if _, err := os.Stat(filepath.Join(sh.gitDir, "index")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	idx, err := sh.readIndex()
	if err != nil {
		return err
	}
	// One pass over the index's entries for both questions: it has no map,
	// and this runs twice for each note change.
	var entry *index.Entry
	for _, e := range idx.Entries {
		switch {
		case e.Name != path:
		case e.Stage != 0:
			return memd.Errorf(memd.ECONFLICT, "note %s is in conflict in a person's git merge; try again once they settle it", name)
		default:
			entry = e
		}
	}
	if entry == nil {
		if at.index != nil {
			return memd.Errorf(memd.ECONFLICT, "note %s was removed from git's index by a person (git rm) and the removal not committed; try again once they commit or restore it", name)
		}
		return nil
	}
	if h := Hash(entry.Hash); h == blobOf(at.head) || h == blobOf(at.index) || sh.wasIndexed(path, h) {
		return nil
	}
	staged, err := sh.db.Get(Hash(entry.Hash))
	if err != nil {
		return fmt.Errorf("read staged note %s: %w", name, err)
	}
	return takes(staged.Data, stagedFrom(staged.Data, at.index, at.file), "staged")
}

// lineEndsOnly reports whether a working file differs from text only by
// CRLF line ends that git writes there and takes away again (core.autocrlf,
// core.eol, text and eol attributes): no edit of a person's. git itself
// says, by the blob it would make of the file.
func (sh *Shard) lineEndsOnly(path string, file, text []byte) bool {
	if !bytes.Contains(file, []byte("\r\n")) || !bytes.Equal(bytes.ReplaceAll(file, []byte("\r\n"), []byte("\n")), text) {
		return false
	}
	out, err := exec.Command("git", "-C", sh.dir, "hash-object", "--", path).Output()
	return err == nil && string(bytes.TrimSpace(out)) == odb.HashObject(plumbing.BlobObject, text).String()
}

// personsInTheWay reports whether the working tree holds, where a note is
// to be written, a folder or a file (in place of a folder above it) with
// a file that tracked says was not at the base commit. Without tracked,
// nothing is taken for a person's.
func (sh *Shard) personsInTheWay(path string, tracked func(string) bool) bool {
	if tracked == nil {
		return false
	}
	full := filepath.Join(sh.dir, filepath.FromSlash(path))
	fi, err := os.Lstat(full)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return true // memd writes no file through a link
	case err == nil && fi.IsDir():
		untracked := false
		filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				// An empty folder is no tracked file's.
				entries, _ := os.ReadDir(p)
				untracked = len(entries) == 0
			} else {
				rel, _ := filepath.Rel(sh.dir, p)
				untracked = !tracked(filepath.ToSlash(rel))
			}
			if untracked {
				return fs.SkipAll // one is enough
			}
			return nil
		})
		return untracked
	}
	for p := filepath.Dir(full); len(p) > len(sh.dir); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return true // a link in place of a folder: memd's file would land elsewhere
		}
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(sh.dir, p)
			return !tracked(filepath.ToSlash(rel))
		}
	}
	return false
}

// workingBase is the version memd last brought path's working file to,
// given base, the path's version at the commit a change builds on: the
// version the file went ahead of the index at, unless a commit not
// memd's changed the path since memd wrote that (see syncIndex).
func (sh *Shard) workingBase(path string, base *factFile) *factFile {
	at, ahead := sh.worktreeAt[path]
	if last, ok := sh.behindNext[path]; !ahead || ok && blobOf(last) != blobOf(base) {
		return base
	}
	return at
}
