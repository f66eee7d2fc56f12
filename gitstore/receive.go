package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// Received is a pack of pushed objects stored in a shard while the push is
// checked. Its objects are inert until main comes to point at them; a
// rejected push discards them.
type Received struct {
	sh  *Shard
	dir string // memd's folder for the push, removed at Close
	// pack names the pack's files in the pack folder (their path but the
	// extension), "" where the pack was there before: not the push's to
	// discard. keep is the .keep memd made for it, "" if none.
	pack, keep string
}

// receivePrefix names the folder in .git a push's pack is written to
// before it joins the pack folder; adoptingName, the file in it naming
// the pack being moved in.
const (
	receivePrefix = "memd-receive-"
	adoptingName  = "adopting"
)

// packExts are a pack's files as memd moves them in: the .keep first, so
// that no repack, memd's or a person's, takes the objects before main
// points at them (as git receive-pack keeps its own), the index last, as
// git reads a pack once its index is there.
var packExts = []string{".keep", ".pack", ".rev", ".idx"}

// Receive stores the pack a git client pushed (git index-pack --strict,
// which checks every object is well formed) and holds off memd's repacks
// until Close. The pack must not be thin.
//
// index-pack writes the pack in a folder of memd's own, and only a pack it
// accepted moves to the pack folder: a pack that fails leaves a temporary
// file under a name git does not say, and a person's git fetch writes its
// own there at the same moment, which must be left alone.
func (sh *Shard) Receive(pack io.Reader) (*Received, error) {
	if err := sh.errIfClosed(); err != nil {
		return nil, err
	}
	sh.repackMu.Lock()
	r, err := sh.receive(pack)
	if err != nil {
		sh.repackMu.Unlock()
		return nil, err
	}
	return r, nil
}

func (sh *Shard) receive(pack io.Reader) (r *Received, err error) {
	tmp, err := os.MkdirTemp(sh.gitDir, receivePrefix)
	if err != nil {
		return nil, fmt.Errorf("receive a push into %s: %w", sh.id, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	incoming := filepath.Join(tmp, "incoming.pack")
	cmd := exec.Command("git", "-C", sh.dir, "-c", "core.fsync=objects", "index-pack", "--stdin", "--strict", incoming)
	in := &countingReader{r: pack}
	cmd.Stdin = in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// A pack needs at least its own size on disk: with less room left
		// than was pushed, the push failed for want of room, not for its
		// pack.
		if roomLeft(tmp) < in.n {
			return nil, memd.Errorf(memd.EUNAVAILABLE, "the disk holding memd's data is full: there was no room for the %d bytes pushed; free room, then push again", in.n)
		}
		return nil, memd.Errorf(memd.EINVALID, "the pushed pack is not valid: %s", firstLine(stderr.String(), err))
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(stdout.String()), "pack\t")
	if !ok || !IsHash(name) {
		return nil, fmt.Errorf("receive a push into %s: git index-pack printed %q", sh.id, stdout.String())
	}
	r = &Received{sh: sh, dir: tmp}
	to := filepath.Join(sh.gitDir, "objects", "pack", "pack-"+name)
	if _, err := os.Stat(to + ".idx"); err == nil {
		// There before (the same push again, say, after a kill): not the
		// push's to discard, but kept all the same until it is settled,
		// and named in memd's folder first, so that a start after a kill
		// takes the .keep away again.
		if noteAdopting(tmp, to) != nil {
			return r, nil
		}
		if f, err := os.OpenFile(to+".keep", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444); err == nil {
			f.WriteString(keepText)
			f.Close()
			r.keep = to + ".keep"
		} else {
			os.Remove(filepath.Join(tmp, adoptingName)) // someone else's .keep
		}
		return r, nil
	}
	if err := adoptPack(tmp, to); err != nil {
		return nil, fmt.Errorf("receive a push into %s: %w", sh.id, err)
	}
	r.pack, r.keep = to, to+".keep"
	return r, nil
}

// keepText is what memd writes in a pack's .keep while a push is checked.
const keepText = "memd: a push being checked\n"

// adoptPack moves the pack index-pack wrote in dir (incoming.*) to its
// names in the pack folder (to+…), in packExts' order, having first noted
// in dir which pack it moves: a start after a kill half way takes back
// what was moved (removeLeftPush).
func adoptPack(dir, to string) error {
	if err := noteAdopting(dir, to); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "incoming.keep"), []byte(keepText), 0o444); err != nil {
		return err
	}
	for _, ext := range packExts {
		from := filepath.Join(dir, "incoming"+ext)
		if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) && ext == ".rev" {
			continue // written only where git is set to
		}
		if err := os.Rename(from, to+ext); err != nil {
			removePack(to)
			return err
		}
	}
	if err := syncDirOf(to); err != nil {
		removePack(to)
		return err
	}
	return nil
}

// noteAdopting notes in memd's folder for a push (dir) the pack whose
// files memd is about to put in the pack folder (to+…), for
// removeLeftPush.
func noteAdopting(dir, to string) error {
	return os.WriteFile(filepath.Join(dir, adoptingName), []byte(filepath.Base(to)), 0o600)
}

// removePack removes a pack's files, its index first: git must not find an
// index whose pack is gone.
func removePack(path string) {
	for _, ext := range slices.Backward(packExts) {
		os.Remove(path + ext)
	}
}

// removeLeftPush removes the folder of a push a kill cut short (a folder
// of receivePrefix), and the pack it names if its index never followed.
// A pack whose index is there may be what main points at: only the .keep
// memd made for it goes.
func (sh *Shard) removeLeftPush(dir string) {
	if b, err := os.ReadFile(filepath.Join(dir, adoptingName)); err == nil {
		name := string(b)
		if strings.HasPrefix(name, "pack-") && IsHash(strings.TrimPrefix(name, "pack-")) {
			path := filepath.Join(sh.gitDir, "objects", "pack", name)
			if _, err := os.Stat(path + ".idx"); errors.Is(err, fs.ErrNotExist) {
				removePack(path)
			}
			os.Remove(path + ".keep")
		}
	}
	os.RemoveAll(dir)
}

// Discard removes the pack, unless it was there before.
func (r *Received) Discard() {
	if r.pack != "" {
		removePack(r.pack) // its .keep too
		r.pack, r.keep = "", ""
	}
}

// Close lets the objects go with the next repack once nothing points at
// them, and memd's repacks run again.
func (r *Received) Close() {
	if r.keep != "" {
		os.Remove(r.keep)
	}
	os.RemoveAll(r.dir)
	r.sh.repackMu.Unlock()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return err.Error()
	}
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "fatal: ")
}

// CheckPushed checks the commits theirs has and main lacks, as a push must
// pass before memd integrates it: every note they change passes the API's
// rules and every fact line they add to a fact file is well formed, commit
// by commit. A line that starts like a fact ("- (") but is not one, or one
// whose text memd would refuse, is an error naming the file, the line and
// why, and the commit. What theirs holds that memd would silently ignore
// where it looks for its own is refused too (see checkIgnored).
func (sh *Shard) CheckPushed(theirs Hash) error {
	head, err := sh.Head()
	if err != nil || theirs == head {
		return err
	}
	// Sizes first, from the objects' headers: a blob is read whole below,
	// and a pack of a few MB can hold a blob of gigabytes.
	if err := sh.checkPushedSizes(head, theirs); err != nil {
		return err
	}
	commits, _, err := sh.Range(head, theirs, maxIntegrate)
	if err != nil {
		return err
	}
	t := &trees{db: sh.db}
	main, err := newMainLines(sh.db, head)
	if err != nil {
		return err
	}
	for _, c := range commits {
		parentTree, err := sh.parentTree(c)
		if err != nil {
			return err
		}
		err = t.diffFiles(parentTree, c.Tree, "", keepPushedPaths, func(path string, from, to Hash) error {
			if to.IsZero() {
				return nil
			}
			line, err := checkChangedFile(sh.db, path, from, to, main)
			switch {
			case err == nil:
				return nil
			case line > 0:
				return memd.Errorf(memd.ErrorCode(err), "%s line %d in commit %s: %s", path, line, short(c.Hash), memd.ErrorMessage(err))
			}
			return memd.Errorf(memd.ErrorCode(err), "%s in commit %s: %s", path, short(c.Hash), memd.ErrorMessage(err))
		})
		if err != nil {
			return err
		}
	}
	return sh.checkIgnored(head, theirs)
}

// keepPushedPaths selects what a push's commits are checked for: fact
// files and notes.
func keepPushedPaths(path string) bool {
	return keepFactPaths(path) || keepNotePaths(path)
}

// checkChangedFile checks one file a pushed commit adds (from is zero) or
// changes: a note must pass the API's rules, and every line it adds to a
// fact file must be a well-formed fact (badFactLines), but for lines main
// holds (a merge of main into a clone's work brings main's lines in). The
// line refused is returned with the error (0 for the whole file).
func checkChangedFile(db *odb.DB, path string, from, to Hash, main *mainLines) (line int, err error) {
	switch {
	case IsNoteFile(path):
		obj, err := db.Get(to)
		if err != nil {
			return 0, err
		}
		return 0, memd.CheckNoteText(string(obj.Data))
	case IsFactFile(path):
		added, err := addedLines(db, from, to)
		if err != nil {
			return 0, err
		}
		bad, err := badFactLines(path, added, 1, main)
		if err != nil {
			return 0, err
		}
		if len(bad) > 0 {
			return bad[0].Line, bad[0].Err
		}
	}
	return 0, nil
}

// badFactLines returns, up to most, the lines added to a fact file that
// start like a fact but are not one, or are conflict markers (a line of
// them would be prose, and both sides' lines facts), with why; a line
// main holds (but a marker, the same few lines in every conflict) is
// not named.
func badFactLines(path string, added []numberedLine, most int, main *mainLines) ([]LineProblem, error) {
	var bad []LineProblem
	for _, l := range added {
		err := CheckFactLine(l.text, l.code)
		if err != nil {
			held, herr := main.holds(l.text)
			if herr != nil {
				return nil, herr
			}
			if held {
				continue
			}
			err = memd.Errorf(memd.EINVALID, "%v", err)
		} else if isConflictMarker(l.text) {
			err = memd.Errorf(memd.EINVALID, "%q is a conflict marker: keep the lines you mean and remove the markers", memd.Shorten(l.text, 20))
		}
		if err == nil {
			continue
		}
		if bad = append(bad, LineProblem{path, l.number, err}); len(bad) == most {
			break
		}
	}
	return bad, nil
}

// isConflictMarker tells whether a line opens, divides or closes git's
// conflict (<<<<<<<, |||||||, =======, >>>>>>>, as git writes them by
// default). A line of seven "=" alone is a heading's underline as often,
// and git writes it only between the other two, which are looked for.
func isConflictMarker(line string) bool {
	line = strings.TrimSuffix(line, "\r")
	for _, m := range []string{"<<<<<<<", "|||||||", ">>>>>>>"} {
		if rest, ok := strings.CutPrefix(line, m); ok && (rest == "" || rest[0] == ' ') {
			return true
		}
	}
	return false
}

// checkIgnored refuses what theirs adds, against head, that memd would
// silently ignore where it looks for its own: a Markdown file under notes/
// not named as a note, and fact lines in a file under log/ not named as a
// fact file. Their final state alone counts, so that a commit renaming
// the file is what the refusal asks for; a file main holds already is
// not refused again.
func (sh *Shard) checkIgnored(head, theirs Hash) error {
	var headTree Hash
	if !head.IsZero() {
		c, err := sh.readCommit(head)
		if err != nil {
			return err
		}
		headTree = c.tree
	}
	tc, err := sh.readCommit(theirs)
	if err != nil {
		return err
	}
	return (&trees{db: sh.db}).diffFiles(headTree, tc.tree, "", keepIgnoredPaths, func(path string, from, to Hash) error {
		if line, err := checkIgnoredFile(sh.db, path, from, to); err != nil {
			return memd.Errorf(memd.ErrorCode(err), "%s", LineProblem{path, line, err})
		}
		return nil
	})
}

// keepIgnoredPaths selects the paths checkIgnored reads: those under
// notes/ or log/, or named profile.md, in any case of letters.
func keepIgnoredPaths(path string) bool {
	lower := strings.ToLower(path)
	return strings.HasPrefix(lower, LogDir+"/") || lower == ProfileFile || strings.HasPrefix(lower, NotesDir+"/")
}

// checkIgnoredFile refuses a file keepIgnoredPaths selects that a change
// adds (from is zero) or changes, to, when memd would silently ignore it:
// a new Markdown file under notes/ (in any letters) not named as a note, fact lines added
// to a file under log/ not named as a fact file or to a fact file's name
// in other letters (Profile.md). The line refused is returned with the
// error (0 for the whole file).
func checkIgnoredFile(db *odb.DB, path string, from, to Hash) (line int, err error) {
	switch {
	case to.IsZero() || IsNoteFile(path) || IsFactFile(path):
		return 0, nil
	case strings.HasPrefix(strings.ToLower(path), NotesDir+"/"):
		if !from.IsZero() || !strings.HasSuffix(strings.ToLower(path), ".md") {
			return 0, nil // not a note, and not meant as a new one
		}
		name, inNotes := strings.CutPrefix(path, NotesDir+"/")
		why := "memd reads notes only under notes/, in lower case"
		if inNotes {
			why = memd.ErrorMessage(memd.ValidateNotePath(name))
		}
		return 0, memd.Errorf(memd.EINVALID, "memd would not read it as a note (%s); rename it", why)
	}
	added, err := addedLines(db, from, to)
	if err != nil {
		return 0, err
	}
	for _, l := range added {
		if _, ok := ParseLine(l.text); ok {
			return l.number, memd.Errorf(memd.EINVALID, "a fact, but memd reads facts only from %s, %s/YYYY-MM.md and %s/YYYY-MM/DD.md, named so in lower case; move it to one of them", ProfileFile, LogDir, LogDir)
		}
	}
	return 0, nil
}

// numberedLine is a line of a file and its number, from 1.
type numberedLine struct {
	number int
	text   string
	code   bool // within a fenced code block or an HTML comment (see InBlock)
}

// addedLines returns the lines of blob to that blob from (zero for none)
// lacks, line ends aside: a file saved again with CRLF adds no line.
func addedLines(db *odb.DB, from, to Hash) ([]numberedLine, error) {
	obj, err := db.Get(to)
	if err != nil {
		return nil, err
	}
	var all []numberedLine
	var fence string
	for i, line := range strings.Split(string(obj.Data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		var code bool
		code, fence = InBlock(line, fence)
		all = append(all, numberedLine{i + 1, line, code})
	}
	if from.IsZero() {
		return all, nil
	}
	return stillAdded(db, all, from)
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

// maxPushedBlob is the largest file a push may bring. A month's log of a
// busy agent is a few MB; nothing memd keeps comes near this.
const maxPushedBlob = 64 << 20

// checkPushedSizes refuses a push bringing a note over memd's limit or any
// file over maxPushedBlob, reading only the objects' sizes.
func (sh *Shard) checkPushedSizes(head, theirs Hash) error {
	args := []string{"-C", sh.dir, "rev-list", "--objects", theirs.String()}
	if !head.IsZero() {
		args = append(args, "^"+head.String())
	}
	list, err := exec.Command("git", args...).Output()
	if err != nil {
		return fmt.Errorf("list pushed objects: %w", err)
	}
	type named struct{ id, path string }
	var objects []named
	var ids bytes.Buffer
	for line := range strings.SplitSeq(strings.TrimSpace(string(list)), "\n") {
		if id, path, ok := strings.Cut(line, " "); ok {
			objects = append(objects, named{id, path})
			ids.WriteString(id + "\n")
		}
	}
	sizes, err := blobSizes(sh.gitDir, &ids)
	if err != nil {
		return fmt.Errorf("size pushed objects: %w", err)
	}
	for _, o := range objects { // in git's order, the same refusal at every try
		size, path := sizes[o.id], o.path
		switch {
		case IsNoteFile(path) && size > memd.MaxNoteBytes:
			return memd.Errorf(memd.ETOOLARGE, "%s is %d KiB; a note holds at most %d KiB", path, (size+1023)>>10, memd.MaxNoteBytes>>10)
		case size > maxPushedBlob:
			return memd.Errorf(memd.ETOOLARGE, "%s is %d MiB; a pushed file may be at most %d MiB", path, size>>20, maxPushedBlob>>20)
		}
	}
	return nil
}

// blobSizes returns the sizes of the blobs among the objects ids names
// (one a line), read from their headers by git cat-file: a blob of
// gigabytes is not read to be refused.
func blobSizes(gitDir string, ids *bytes.Buffer) (map[string]int64, error) {
	sizes := make(map[string]int64)
	if ids.Len() == 0 {
		return sizes, nil
	}
	cmd := exec.Command("git", "--git-dir", gitDir, "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
	cmd.Stdin = ids
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[1] != "blob" {
			continue
		}
		var size int64
		fmt.Sscan(f[2], &size)
		sizes[f[0]] = size
	}
	return sizes, nil
}

// dateLike matches the start of what follows "- (" when a date was meant:
// three numbers, in any of the ways dates are written (2026-11-4,
// 04/11/2026, 4.11.2026).
var dateLike = regexp.MustCompile(`^[0-9]{1,4}[-/.][0-9]{1,2}[-/.][0-9]{1,4}`)

// CheckFactLine explains why a line that starts like a fact, or as a
// person might start one, is not one (nil for a fact, and for a line that
// does not start like one). In a code block (code) only a line memd would
// read as a fact there too, "- (" at its start, is looked at.
func CheckFactLine(line string, code bool) error {
	line = strings.TrimSuffix(line, "\r")
	if after, bom := strings.CutPrefix(line, "\ufeff"); bom && strings.HasPrefix(after, "- (") {
		// An editor's byte-order mark would hide the fact: read as prose.
		return memd.Errorf(memd.EINVALID, "the line starts with a byte-order mark (U+FEFF) and would not be read as a fact; save the file as UTF-8 without one")
	}
	rest, ok := strings.CutPrefix(line, "- (")
	if !ok {
		if code {
			return nil
		}
		return misplacedFact(line) // nil for a heading, prose, a blank line
	}
	if !dateLike.MatchString(rest[:min(len(rest), 16)]) {
		return nil // "- (optional) bring an umbrella", "- (10:30) standup": no date meant
	}
	date, text, ok := strings.Cut(rest, ")")
	if !ok {
		return memd.Errorf(memd.EINVALID, "a fact line is \"- (YYYY-MM-DD) text\"; %q has no \")\" after its date", shortLine(line))
	}
	if _, err := memd.ParseDate(date); err != nil {
		return err
	}
	if !strings.HasPrefix(text, " ") {
		return memd.Errorf(memd.EINVALID, "a fact line has a space after its date: %q", shortLine(line))
	}
	text = strings.TrimSpace(text)
	for _, tag := range []string{"[note] ", "[episode] "} {
		text = strings.TrimPrefix(text, tag)
	}
	if _, err := memd.CleanFactText(text); err != nil {
		return err
	}
	return nil
}
