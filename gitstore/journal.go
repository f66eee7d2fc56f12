package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The working-tree journal.
//
// Before memd touches a working file or .git/index it writes down, in
// .git/memd-worktree, the commit it is bringing them to and, for each path
// it will touch, the version the working tree and index were in step with
// (the version memd last wrote there). A start after a crash reads it and
// finishes the move: every path listed is brought from that version to its
// version at HEAD, the way a write does it (a person's edits since are
// kept and merged, memd's half-done writes are completed), so the working
// tree never keeps a write memd did not finish nor stays behind HEAD. The
// journal goes once the tree and index are in step and main names the
// commit. It is not synced to disk: it guards against memd stopping, and a
// power cut takes unsynced working files with it as well.

const journalName = "memd-worktree"

const journalHeader = "memd worktree journal 1"

// journal is the move memd was making in the working tree.
type journal struct {
	commit plumbing.Hash              // the commit the tree was being brought to
	from   map[string]plumbing.Hash   // path -> blob the tree held (zero: no file)
	wrote  map[string][]plumbing.Hash // path -> versions memd may have written there since
	file   map[string]plumbing.Hash   // path -> version memd brought the working file to, ahead of the index
}

func (sh *Shard) journalPath() string { return filepath.Join(sh.gitDir, journalName) }

// writeJournal records the move to commit of the paths in from, each
// mapped to the version the working tree and index were in step with, the
// version memd is about to write there (to, nil if none), and the versions
// working files were brought to while their index entries wait
// (sh.worktreeAt).
func (sh *Shard) writeJournal(commit plumbing.Hash, from, to map[string]*factFile) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\ncommit %s\n", journalHeader, commit.String())
	for _, path := range slices.Sorted(mapKeys(from)) {
		var blob plumbing.Hash
		if ff := from[path]; ff != nil {
			blob = ff.blob
		}
		fmt.Fprintf(&b, "%s %s\n", blob.String(), path)
		if ff := to[path]; ff != nil {
			fmt.Fprintf(&b, "also %s %s\n", plumbing.Hash(ff.blob).String(), path)
		}
		if ff, ok := sh.worktreeAt[path]; ok {
			var blob plumbing.Hash
			if ff != nil {
				blob = ff.blob
			}
			fmt.Fprintf(&b, "file %s %s\n", blob.String(), path)
		}
	}
	b.WriteString("end\n")
	// Written aside and renamed, so that a crash leaves the old journal or
	// the new one, never a torn one.
	tmp := sh.journalPath() + ".new"
	err := os.WriteFile(tmp, b.Bytes(), 0o644)
	if err == nil {
		err = os.Rename(tmp, sh.journalPath())
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the working-tree journal: %w", err)
	}
	return nil
}

func (sh *Shard) dropJournal() {
	if err := os.Remove(sh.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		sh.store.log.Warn("removing the working-tree journal", "shard", sh.id, "err", err)
	}
}

// readJournal returns the journal memd left, or nil if there is none.
func (sh *Shard) readJournal() (*journal, error) {
	os.Remove(sh.journalPath() + ".new")
	b, err := os.ReadFile(sh.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the working-tree journal: %w", err)
	}
	return parseJournal(b)
}

func parseJournal(b []byte) (*journal, error) {
	bad := func(why string) error { return fmt.Errorf("working-tree journal: %s", why) }
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != journalHeader {
		return nil, bad("unknown header")
	}
	j := &journal{from: make(map[string]plumbing.Hash), wrote: make(map[string][]plumbing.Hash), file: make(map[string]plumbing.Hash)}
	if !sc.Scan() {
		return nil, bad("no commit")
	}
	c, ok := strings.CutPrefix(sc.Text(), "commit ")
	if !ok || !plumbing.IsHash(c) {
		return nil, bad("no commit")
	}
	j.commit = plumbing.NewHash(c)
	for sc.Scan() {
		line := sc.Text()
		if line == "end" {
			return j, nil
		}
		kind := ""
		for _, k := range []string{"also ", "file "} {
			if rest, ok := strings.CutPrefix(line, k); ok {
				line, kind = rest, k
			}
		}
		blob, path, ok := strings.Cut(line, " ")
		if !ok || !plumbing.IsHash(blob) || path == "" {
			return nil, bad(fmt.Sprintf("bad line %q", line))
		}
		h := plumbing.NewHash(blob)
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

// versionsAt returns the versions at st of the paths in touched (absent:
// not in st).
func (sh *Shard) versionsAt(st *state, touched map[string]*factFile) (map[string]*factFile, error) {
	next := make(map[string]*factFile, len(touched))
	t := &trees{db: sh.db}
	for path := range touched {
		if ff, ok := st.files[path]; ok {
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
