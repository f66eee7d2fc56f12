package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The working-tree journal.
//
// Before memd touches a working file or .git/index it writes down, in
// .git/memd-worktree-log, the commit it is bringing them to and, for each
// path it will touch, the version the working tree and index were in step
// with (the version memd last wrote there). A start after a crash reads it
// and finishes the move: every path listed is brought from that version to
// its version at HEAD, the way a write does it (a person's edits since are
// kept and merged, memd's half-done writes are completed), so the working
// tree never keeps a write memd did not finish nor stays behind HEAD. The
// journal is cleared once the tree and index are in step and main names
// the commit. It is not synced to disk: it guards against memd stopping,
// and a power cut takes unsynced working files with it as well.
//
// The file is only ever appended to. Each record is a whole journal, from
// a blank line and the header to "end"; the last complete record holds,
// and a record with nothing in it clears the journal. (The blank line
// keeps a record apart from one cut short before it.) A new file and a
// rename over the old one, as a rewrite takes, cost more than anything
// else in a commit on ext4; an append costs a write. A record cut short by
// a crash is passed over: memd writes a record before it touches what the
// record lists. The file is removed, rather than appended to, when it is
// cleared past journalLimit.

const journalName = "memd-worktree-log"

// legacyJournalName is the journal of memd before it was appended to: one
// record, rewritten whole. A start still reads one a crash left.
const legacyJournalName = "memd-worktree"

const journalHeader = "memd worktree journal 1"

// journalLimit is the size past which clearing the journal removes it.
const journalLimit = 64 << 10

// journal is the move memd was making in the working tree.
type journal struct {
	commit Hash              // the commit the tree was being brought to
	from   map[string]Hash   // path -> blob the tree held (zero: no file)
	wrote  map[string][]Hash // path -> versions memd may have written there since
	file   map[string]Hash   // path -> version memd brought the working file to, ahead of the index
}

func (sh *Shard) journalPath() string { return filepath.Join(sh.gitDir, journalName) }

// writeJournal records the move to commit of the paths in from, each
// mapped to the version the working tree and index were in step with, the
// version memd is about to write there (to, nil if none), and the versions
// working files were brought to while their index entries wait
// (sh.worktreeAt).
func (sh *Shard) writeJournal(commit Hash, from, to map[string]*factFile) error {
	j := &journal{commit: commit, from: make(map[string]Hash), wrote: make(map[string][]Hash), file: make(map[string]Hash)}
	for path, ff := range from {
		j.from[path] = blobOf(ff)
		if ff := to[path]; ff != nil {
			j.wrote[path] = []Hash{ff.blob}
		}
		if ff, ok := sh.worktreeAt[path]; ok {
			j.file[path] = blobOf(ff)
		}
	}
	return sh.saveJournal(j)
}

func blobOf(ff *factFile) Hash {
	if ff == nil {
		return Hash{}
	}
	return ff.blob
}

// saveJournal appends j to the journal as its latest record.
func (sh *Shard) saveJournal(j *journal) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\n%s\ncommit %s\n", journalHeader, j.commit.String())
	// Paths are quoted: git allows any byte but NUL in a file name.
	for _, path := range slices.Sorted(mapKeys(j.from)) {
		q := strconv.Quote(path)
		fmt.Fprintf(&b, "%s %s\n", j.from[path].String(), q)
		for _, h := range j.wrote[path] {
			fmt.Fprintf(&b, "also %s %s\n", h.String(), q)
		}
		if h, ok := j.file[path]; ok {
			fmt.Fprintf(&b, "file %s %s\n", h.String(), q)
		}
	}
	b.WriteString("end\n")
	if err := sh.appendJournal(b.Bytes(), true); err != nil {
		return fmt.Errorf("write the working-tree journal: %w", err)
	}
	return nil
}

// clearRecord is a record that clears the journal.
const clearRecord = "\n" + journalHeader + "\nend\n"

// appendJournal appends a record to the journal in one write, creating the
// file if create is set (clearing a journal that is not there is nothing
// to do). The file is opened anew each time: an open shard holds no file
// but its index's. Past journalLimit the file is not appended to: a record
// clearing it removes it, and any other (git held the index lock through
// many writes) replaces it, written aside and renamed into place.
func (sh *Shard) appendJournal(record []byte, create bool) error {
	flags := os.O_WRONLY | os.O_APPEND
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(sh.journalPath(), flags, 0o644)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > journalLimit {
		f.Close()
		if string(record) == clearRecord {
			return os.Remove(sh.journalPath())
		}
		tmp := sh.journalPath() + ".new"
		err := os.WriteFile(tmp, record, 0o644)
		if err == nil {
			err = os.Rename(tmp, sh.journalPath())
		}
		return err
	}
	_, err = f.Write(record)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// dropJournal clears the journal (see appendJournal).
func (sh *Shard) dropJournal() {
	if err := sh.appendJournal([]byte(clearRecord), false); err != nil && !errors.Is(err, fs.ErrNotExist) {
		sh.store.log.Warn("clearing the working-tree journal", "shard", sh.id, "err", err)
	}
}

// readJournal returns the journal memd left, or nil if there is none. A
// journal left by an older memd is taken into the current one first.
func (sh *Shard) readJournal() (*journal, error) {
	os.Remove(sh.journalPath() + ".new") // a replacement cut short
	if err := sh.takeLegacyJournal(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(sh.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the working-tree journal: %w", err)
	}
	return lastRecord(b)
}

// takeLegacyJournal appends the journal an older memd left, if any, to the
// current one as its latest record, and removes it.
func (sh *Shard) takeLegacyJournal() error {
	legacy := filepath.Join(sh.gitDir, legacyJournalName)
	os.Remove(legacy + ".new") // a rewrite cut short; the old one held
	b, err := os.ReadFile(legacy)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the working-tree journal: %w", err)
	}
	if j, perr := lastRecord(b); perr == nil && j != nil {
		if err := sh.saveJournal(j); err != nil {
			return err
		}
	}
	return os.Remove(legacy)
}

// lastRecord returns the journal of the last complete record in b: nil if
// it clears the journal.
func lastRecord(b []byte) (*journal, error) {
	text := string(b)
	var last error
	for text != "" {
		end := len(text)
		if i := strings.LastIndex(text, "\n"+journalHeader+"\n"); i >= 0 {
			end = i + 1
		}
		record := text[end:]
		if end == len(text) { // the first record
			record, end = text, 0
		}
		text = text[:end]
		j, err := parseJournal([]byte(record))
		if err == nil {
			return j, nil
		}
		if last == nil {
			last = err
		}
	}
	return nil, last
}

// parseJournal reads one record of the journal: nil if it clears it.
func parseJournal(b []byte) (*journal, error) {
	bad := func(why string) error { return fmt.Errorf("working-tree journal: %s", why) }
	lines := strings.Split(string(b), "\n")
	if len(lines) < 2 || lines[0] != journalHeader {
		return nil, bad("unknown header")
	}
	if lines[1] == "end" {
		return nil, nil // a record clearing the journal
	}
	c, ok := strings.CutPrefix(lines[1], "commit ")
	if !ok || !IsHash(c) {
		return nil, bad("no commit")
	}
	j := &journal{commit: NewHash(c), from: make(map[string]Hash), wrote: make(map[string][]Hash), file: make(map[string]Hash)}
	for _, line := range lines[2:] {
		if line == "end" {
			return j, nil
		}
		kind := ""
		for _, k := range []string{"also ", "file "} {
			if rest, ok := strings.CutPrefix(line, k); ok {
				line, kind = rest, k
			}
		}
		blob, quoted, ok := strings.Cut(line, " ")
		path, err := strconv.Unquote(quoted)
		if !ok || !IsHash(blob) || err != nil || path == "" {
			return nil, bad(fmt.Sprintf("bad line %q", line))
		}
		h := NewHash(blob)
		switch kind {
		case "also ":
			j.wrote[path] = append(j.wrote[path], h)
		case "file ":
			j.file[path] = h
		default:
			j.from[path] = h
		}
	}
	return nil, bad("cut short")
}

// journalMove adds to the journal, before memd moves main from one commit
// to another at start (see rollForward), the files the move changes, so
// that a crash before the working tree follows leaves a record of it.
func (sh *Shard) journalMove(from, to Hash) error {
	j, err := sh.readJournal()
	if err != nil || j == nil {
		j = &journal{from: make(map[string]Hash), wrote: make(map[string][]Hash), file: make(map[string]Hash)}
	}
	j.commit = to
	a, b, err := sh.commitTrees(from, to)
	if err != nil {
		return err
	}
	changed, _, err := sh.fileChanges(a, b)
	if err != nil {
		return err
	}
	for path, ff := range changed {
		if _, ok := j.from[path]; !ok {
			j.from[path] = blobOf(ff)
		}
	}
	return sh.saveJournal(j)
}

// finishWorktree completes the working-tree move memd was making when it
// stopped, as its journal records it, and brings forward files whose index
// entries lag behind HEAD (as a power cut can leave them, taking the
// journal and the working files' last writes but not main's).
func (sh *Shard) finishWorktree(head, root Hash) error {
	if head.IsZero() {
		sh.dropJournal()
		os.Remove(filepath.Join(sh.gitDir, legacyJournalName))
		return nil
	}
	j, err := sh.readJournal()
	if err != nil {
		sh.store.log.Warn("ignoring an unreadable working-tree journal", "shard", sh.id, "err", err)
	}
	touched := make(map[string]*factFile) // path -> the version the tree holds
	if j == nil {
		// The common case, checked without reading the shard's files.
		if err := sh.laggingFiles(head, root, touched); err != nil || len(touched) == 0 {
			return err
		}
	}
	st, err := sh.refresh()
	if err != nil {
		return err
	}
	if j != nil {
		sh.takeJournal(st, j, touched)
		if err := sh.laggingFiles(st.head, st.root, touched); err != nil {
			return err
		}
	}
	next, err := sh.versionsAt(st, touched)
	if err != nil {
		return err
	}
	// As a write does it: at once, or, while a git command holds the
	// index, a moment later.
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err := sh.syncIndex(st.head, touched, next, indexWait, false); err != nil {
		return err
	}
	if len(sh.behind) == 0 {
		sh.dropJournal()
	}
	return nil
}

// takeJournal adds the paths a journal lists to touched, with the versions
// the working tree and index held, and tells the writer which versions of
// them memd itself wrote. Where the journal's commit never reached main,
// its files are memd's unfinished write: the versions it wrote are the base
// to merge HEAD's into, which takes them back out.
func (sh *Shard) takeJournal(st *state, j *journal, touched map[string]*factFile) {
	version := func(path string, blob Hash) *factFile {
		if blob.IsZero() {
			return nil
		}
		ff, err := sh.fileVersion(path, blob)
		if err != nil {
			// Without the version, the file is taken as the person's:
			// kept, and merged into.
			return &factFile{path: path, blob: blob}
		}
		return ff
	}
	_, landed, err := sh.Range(j.commit, st.head, ancestryLimit)
	landed = landed && err == nil
	if sh.worktreeAt == nil {
		sh.worktreeAt = make(map[string]*factFile)
	}
	for path, blob := range j.from {
		touched[path] = version(path, blob)
		for _, b := range j.wrote[path] {
			sh.noteIndexed(path, b)
		}
		if b, ok := j.file[path]; ok {
			sh.worktreeAt[path] = version(path, b)
		}
		if wrote := j.wrote[path]; !landed && len(wrote) > 0 {
			sh.worktreeAt[path] = version(path, wrote[len(wrote)-1])
		}
	}
}

// ancestryLimit bounds the commits walked to tell whether one commit is an
// ancestor of another at start.
const ancestryLimit = 100000

// versionsAt returns the versions at st of the paths in touched (absent:
// not in st).
func (sh *Shard) versionsAt(st *state, touched map[string]*factFile) (map[string]*factFile, error) {
	next := make(map[string]*factFile, len(touched))
	t := &trees{db: sh.db}
	for path := range touched {
		if _, ok := st.files[path]; ok {
			ff, err := sh.file(st, path)
			if err != nil {
				return nil, err
			}
			next[path] = ff
			continue
		}
		if st.root.IsZero() {
			continue
		}
		e, ok, err := t.lookup(st.root, path)
		if err != nil {
			return nil, err
		}
		if ok {
			if next[path], err = sh.fileVersion(path, e.hash); err != nil {
				return nil, err
			}
		}
	}
	return next, nil
}
