package gitstore

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"github.com/memd/memd/gitstore/internal/odb"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
)

// Commit is a commit as read from a shard's history.
type Commit struct {
	Hash       Hash
	Tree       Hash
	Parents    []Hash
	Author     Signature
	AuthorTime time.Time
	Committer  Signature
	Time       time.Time // committer time
	Message    string
}

// Subject returns the first line of the message.
func (c Commit) Subject() string {
	s, _, _ := strings.Cut(c.Message, "\n")
	return s
}

type commitInfo struct {
	tree      Hash
	parents   []Hash
	author    sigTime
	committer sigTime
	message   string
}

type sigTime struct {
	Signature
	When time.Time
}

// CommitTime returns when a commit of the shard was made, reading that
// commit alone.
func (sh *Shard) CommitTime(h Hash) (time.Time, error) {
	c, err := sh.readCommit(h)
	if err != nil {
		return time.Time{}, err
	}
	return c.committer.When, nil
}

func (sh *Shard) readCommit(h Hash) (*commitInfo, error) { return readCommitIn(sh.db, h) }

// readCommitIn reads commit h from db.
func readCommitIn(db *odb.DB, h Hash) (*commitInfo, error) {
	obj, err := db.Get(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", short(h), err)
	}
	if obj.Type != plumbing.CommitObject {
		return nil, memd.Errorf(memd.ENOTFOUND, "%s is a %s, not a commit", short(h), obj.Type)
	}
	c, err := parseCommit(obj.Data)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", short(h), err)
	}
	return c, nil
}

func parseCommit(data []byte) (*commitInfo, error) {
	c := &commitInfo{}
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, errors.New("malformed commit header")
		}
		line := string(data[:nl])
		data = data[nl+1:]
		if line == "" {
			c.message = string(data)
			break
		}
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "tree":
			c.tree = NewHash(val)
		case "parent":
			c.parents = append(c.parents, NewHash(val))
		case "author":
			c.author = parseSig(val)
		case "committer":
			c.committer = parseSig(val)
		}
	}
	if c.tree.IsZero() {
		return nil, errors.New("commit has no tree")
	}
	return c, nil
}

// parseSig parses "Name <email> 1700000000 +0100".
func parseSig(s string) sigTime {
	var st sigTime
	lt := strings.LastIndexByte(s, '<')
	gt := strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		st.Name = s
		return st
	}
	st.Name = strings.TrimSpace(s[:lt])
	st.Email = s[lt+1 : gt]
	fields := strings.Fields(s[gt+1:])
	if len(fields) >= 1 {
		sec, _ := strconv.ParseInt(fields[0], 10, 64)
		st.When = time.Unix(sec, 0)
		if len(fields) >= 2 && len(fields[1]) == 5 {
			if t, err := time.Parse("-0700", fields[1]); err == nil {
				st.When = st.When.In(t.Location())
			}
		}
	}
	return st
}

func (c *commitInfo) export(h Hash) Commit {
	return Commit{
		Hash: h, Tree: c.tree, Parents: c.parents,
		Author: c.author.Signature, AuthorTime: c.author.When,
		Committer: c.committer.Signature, Time: c.committer.When,
		Message: c.message,
	}
}

// ReadCommit reads one commit.
func (sh *Shard) ReadCommit(h Hash) (Commit, error) {
	c, err := sh.readCommit(h)
	if err != nil {
		return Commit{}, err
	}
	return c.export(h), nil
}

// ErrStop may be returned by a Walk callback to end the walk early.
var ErrStop = errors.New("stop walking")

// Walk calls fn for from and each of its ancestors, newest commit first
// (by committer time), each once.
func (sh *Shard) Walk(from Hash, fn func(Commit) error) error {
	if from.IsZero() {
		return nil
	}
	seen := map[Hash]bool{from: true}
	q := &commitQueue{}
	first, err := sh.ReadCommit(from)
	if err != nil {
		return err
	}
	heap.Push(q, queued{first, true})
	for q.Len() > 0 {
		c := heap.Pop(q).(queued).Commit
		if err := fn(c); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
		for _, p := range c.Parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := sh.ReadCommit(p)
			if err != nil {
				return err
			}
			heap.Push(q, queued{pc, true})
		}
	}
	return nil
}

// Diff is what one commit changed, against its first parent.
type Diff struct {
	Facts []memd.FactChange // fact lines removed ("-") and added ("+")
	Files []string          // every path the commit changed
}

// Diff returns the fact-level changes of a commit against its first parent
// (against nothing for a root commit).
func (sh *Shard) Diff(c Commit) (Diff, error) {
	if d, ok := sh.store.diffs.get(commitKey{sh.id, c.Hash}); ok {
		return d, nil
	}
	parentTree, err := sh.parentTree(c)
	if err != nil {
		return Diff{}, err
	}
	return sh.diffTrees(parentTree, c.Tree)
}

// Compare returns the fact-level changes from one commit to another (from
// zero: everything to holds, as added).
func (sh *Shard) Compare(from, to Hash) (Diff, error) {
	trees := [2]Hash{}
	for i, h := range []Hash{from, to} {
		if h.IsZero() {
			continue
		}
		c, err := sh.readCommit(h)
		if err != nil {
			return Diff{}, err
		}
		trees[i] = c.tree
	}
	return sh.diffTrees(trees[0], trees[1])
}

// parentTree returns the tree of a commit's first parent; zero for a root
// commit.
func (sh *Shard) parentTree(c Commit) (Hash, error) {
	if len(c.Parents) == 0 {
		return Hash{}, nil
	}
	p, err := sh.readCommit(c.Parents[0])
	if err != nil {
		return Hash{}, err
	}
	return p.tree, nil
}

func (sh *Shard) diffTrees(from, to Hash) (Diff, error) {
	var d Diff
	var before, after []lineFact
	t := &trees{db: sh.db}
	err := t.diffFiles(from, to, "", func(string) bool { return true }, func(path string, a, b Hash) error {
		d.Files = append(d.Files, path)
		if !IsFactFile(path) {
			return nil
		}
		old, cur, err := sh.versions(path, a, b)
		if err != nil {
			return err
		}
		before, after = appendChangedFacts(before, after, path, old, cur)
		return nil
	})
	if err != nil {
		return Diff{}, err
	}
	d.Facts = diffFacts(sh.id, before, after)
	return d, nil
}

// versions reads two versions of a file by their blobs; a zero blob is an
// empty file.
func (sh *Shard) versions(path string, a, b Hash) (old, cur []byte, err error) {
	for _, side := range []struct {
		blob Hash
		out  *[]byte
	}{{a, &old}, {b, &cur}} {
		if side.blob.IsZero() {
			continue
		}
		obj, err := sh.db.Get(side.blob)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", path, err)
		}
		*side.out = obj.Data
	}
	return old, cur, nil
}

// AddedFacts calls fn with each fact line a commit added against
// its first parent: the "+" of its Diff, read a file at a time, so that a
// commit adding a million facts (an import) is never held whole.
func (sh *Shard) AddedFacts(c Commit, fn func(memd.Fact) error) error {
	if d, ok := sh.store.diffs.get(commitKey{sh.id, c.Hash}); ok {
		for _, ch := range d.Facts {
			if ch.Op == "+" {
				if err := fn(ch.Fact); err != nil {
					return err
				}
			}
		}
		return nil
	}
	parentTree, err := sh.parentTree(c)
	if err != nil {
		return err
	}
	t := &trees{db: sh.db}
	// A fact line's key names its file, so the lines of one file are
	// compared with that file's alone, as Diff compares them.
	return t.diffFiles(parentTree, c.Tree, "", func(string) bool { return true }, func(path string, a, b Hash) error {
		if !IsFactFile(path) {
			return nil
		}
		old, cur, err := sh.versions(path, a, b)
		if err != nil {
			return err
		}
		before, after := appendChangedFacts(nil, nil, path, old, cur)
		for _, ch := range diffFacts(sh.id, before, after) {
			if ch.Op == "+" {
				if err := fn(ch.Fact); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// appendChangedFacts adds to before and after the fact lines of two
// versions of a file that may differ. Only the lines between the common
// head and tail can; for a fact appended to a large log that is one line.
func appendChangedFacts(before, after []lineFact, path string, old, cur []byte) ([]lineFact, []lineFact) {
	old, cur = changedLines(old, cur)
	return append(before, parseFactFile(path, old)...), append(after, parseFactFile(path, cur)...)
}

// changedLines trims the whole lines two versions of a file share at the
// start and at the end, and returns what remains of each.
func changedLines(a, b []byte) ([]byte, []byte) {
	p, endA, endB := changedRange(a, b)
	return a[p:endA], b[p:endB]
}

// changedRange returns where the lines that differ between a and b start
// (the same offset in both) and end in each.
func changedRange(a, b []byte) (p, endA, endB int) {
	n := min(len(a), len(b))
	p = commonPrefix(a[:n], b[:n])
	if p < len(a) || p < len(b) {
		p = bytes.LastIndexByte(a[:p], '\n') + 1 // back to a line start
	}
	s := wholeLinesOfTail(a, commonSuffix(a[p:], b[p:]))
	return p, len(a) - s, len(b) - s
}

// wholeLinesOfTail returns how much of the last n bytes of a, shared with
// another version, are whole lines: the tail from the line start after
// its first line end.
func wholeLinesOfTail(a []byte, n int) int {
	if i := bytes.IndexByte(a[len(a)-n:], '\n'); n > 0 && i >= 0 && i+1 <= n {
		return n - (i + 1)
	}
	return 0
}

// commonPrefix returns how many leading bytes a and b (of equal length)
// share, comparing a block at a time: monthly logs run to hundreds of KB
// and a commit changes a line or two.
func commonPrefix(a, b []byte) int {
	const block = 256
	p := 0
	for p+block <= len(a) && bytes.Equal(a[p:p+block], b[p:p+block]) {
		p += block
	}
	for p < len(a) && a[p] == b[p] {
		p++
	}
	return p
}

// commonSuffix returns how many trailing bytes a and b share, at most the
// shorter's length.
func commonSuffix(a, b []byte) int {
	const block = 256
	n := min(len(a), len(b))
	s := 0
	for s+block <= n && bytes.Equal(a[len(a)-s-block:len(a)-s], b[len(b)-s-block:len(b)-s]) {
		s += block
	}
	for s < n && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return s
}

// diffFacts compares fact lines as a multiset: a line present on one side
// only is a change. A fact whose line changed (date, tier, file) appears as
// removed and added.
func diffFacts(id memd.ShardID, before, after []lineFact) []memd.FactChange {
	key := func(f memd.Fact) string {
		return f.ID + "\x00" + f.File + "\x00" + f.Date.String() + "\x00" + string(f.Tier) + "\x00" + f.Text
	}
	var out []memd.FactChange
	changed := func(op string, from, other []lineFact) {
		count := make(map[string]int)
		for _, lf := range other {
			count[key(lf.Fact)]++
		}
		for _, lf := range from {
			if k := key(lf.Fact); count[k] > 0 {
				count[k]--
				continue
			}
			f := lf.Fact
			f.Shard = id
			out = append(out, memd.FactChange{Op: op, Fact: f})
		}
	}
	changed("-", before, after)
	changed("+", after, before)
	return out
}

// FactsAt returns the facts as they were at a commit.
func (sh *Shard) FactsAt(h Hash) ([]memd.Fact, error) {
	files, err := sh.filesAt(h)
	if err != nil {
		return nil, err
	}
	return collectFacts(sh.id, files), nil
}

// LinesAt returns the facts as they were at a commit, with their offsets:
// one line of each, as Lines gives them.
func (sh *Shard) LinesAt(h Hash) ([]Line, error) {
	files, err := sh.filesAt(h)
	if err != nil {
		return nil, err
	}
	return heldLines(sh.id, files), nil
}

func (sh *Shard) filesAt(h Hash) (map[string]*factFile, error) {
	if h.IsZero() {
		return nil, nil
	}
	c, err := sh.readCommit(h)
	if err != nil {
		return nil, err
	}
	files := make(map[string]*factFile)
	t := &trees{db: sh.db}
	err = t.walkFiles(c.tree, "", keepFactPaths, func(path string, blob Hash) error {
		ff, err := sh.readFactFile(path, blob)
		if err == nil {
			files[path] = ff
		}
		return err
	})
	return files, err
}

// ResolveTime returns the last commit on main made at or before t (zero if
// the shard had no commit yet).
func (sh *Shard) ResolveTime(t time.Time) (Hash, error) {
	head, err := sh.Head()
	if err != nil {
		return Hash{}, err
	}
	var found Hash
	err = sh.Walk(head, func(c Commit) error {
		if !c.Time.After(t) {
			found = c.Hash
			return ErrStop
		}
		return nil
	})
	return found, err
}

// Resolve names a commit on main: a full hash, a unique prefix of at least
// four hex digits, or a date (the last commit made on or before that day,
// UTC). ENOTFOUND when nothing matches; a date before the first commit
// resolves to the zero hash (the empty shard).
func (sh *Shard) Resolve(rev string) (Hash, error) {
	if d, err := memd.ParseDate(rev); err == nil {
		return sh.ResolveTime(d.Time().AddDate(0, 0, 1).Add(-time.Nanosecond))
	}
	if !isHex(rev) {
		return Hash{}, memd.Errorf(memd.EINVALID, "%q is neither a commit hash nor a date (YYYY-MM-DD)", rev)
	}
	return sh.ResolveCommit(rev)
}

// isHex says whether rev may be a commit hash or a prefix of one.
func isHex(rev string) bool {
	return len(rev) >= 4 && len(rev) <= 40 && strings.Trim(strings.ToLower(rev), "0123456789abcdef") == ""
}

// ResolveCommit names a commit on main by its full hash or a unique prefix
// of at least four hex digits, never by a date: what is done to the commit
// named (a revert) must be done to the one its caller meant.
func (sh *Shard) ResolveCommit(rev string) (Hash, error) {
	if !isHex(rev) {
		return Hash{}, memd.Errorf(memd.EINVALID, "%q is not a commit hash (4 to 40 hex digits)", rev)
	}
	rev = strings.ToLower(rev)
	head, err := sh.Head()
	if err != nil {
		return Hash{}, err
	}
	var matches []Hash
	err = sh.Walk(head, func(c Commit) error {
		if strings.HasPrefix(c.Hash.String(), rev) {
			matches = append(matches, c.Hash)
			if len(rev) == 40 {
				return ErrStop
			}
		}
		return nil
	})
	if err != nil {
		return Hash{}, err
	}
	switch len(matches) {
	case 0:
		return Hash{}, memd.Errorf(memd.ENOTFOUND, "shard %s has no commit %s on main", sh.id, rev)
	case 1:
		return matches[0], nil
	}
	slices.SortFunc(matches, func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
	return Hash{}, memd.Errorf(memd.EINVALID, "commit prefix %s is ambiguous in shard %s (%s, %s, …)", rev, sh.id, short(matches[0]), short(matches[1]))
}

// FileAt returns the content of a file as it was at a commit; ok is false
// when the commit had no such file.
func (sh *Shard) FileAt(commit Hash, path string) (data []byte, ok bool, err error) {
	if commit.IsZero() {
		return nil, false, nil
	}
	c, err := sh.readCommit(commit)
	if err != nil {
		return nil, false, err
	}
	t := &trees{db: sh.db}
	e, found, err := t.lookup(c.tree, path)
	if err != nil || !found || e.isDir() {
		return nil, false, err
	}
	obj, err := sh.db.Get(e.hash)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return obj.Data, true, nil
}

// FileHistory calls fn, newest first, for each commit on the line of
// first parents from from that changed the file at path against its first
// parent, with the file's content before and after (nil where it did not
// exist). A merge shows what it brought in; the commits of the branch it
// merged are not listed apart. It compares the file's blob in each pair of
// trees, reading contents only where it changed. fn may return ErrStop.
func (sh *Shard) FileHistory(from Hash, path string, fn func(c Commit, before, after []byte) error) error {
	t := &trees{db: sh.db}
	blobAt := func(tree Hash) (Hash, error) {
		if tree.IsZero() {
			return Hash{}, nil
		}
		e, found, err := t.lookup(tree, path)
		if err != nil || !found || e.isDir() {
			return Hash{}, err
		}
		return e.hash, nil
	}
	read := func(blob Hash) ([]byte, error) { return sh.fileBlob(path, blob) }
	for h := from; !h.IsZero(); {
		c, err := sh.ReadCommit(h)
		if err != nil {
			return err
		}
		h = Hash{}
		if len(c.Parents) > 0 {
			h = c.Parents[0]
		}
		parent, err := sh.parentTree(c)
		if err != nil {
			return err
		}
		a, err := blobAt(parent)
		if err != nil {
			return err
		}
		b, err := blobAt(c.Tree)
		if err != nil {
			return err
		}
		if a == b {
			continue
		}
		before, err := read(a)
		if err != nil {
			return err
		}
		after, err := read(b)
		if err != nil {
			return err
		}
		if err := fn(c, before, after); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// fileBlob reads the blob of the file at path; a zero hash (no such file)
// reads as nil.
func (sh *Shard) fileBlob(path string, blob Hash) ([]byte, error) {
	if blob.IsZero() {
		return nil, nil
	}
	obj, err := sh.db.Get(blob)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return obj.Data, nil
}
