package gitstore

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memd/memd"
)

// Head returns the commit at the tip of main (zero for an empty shard).
func (sh *Shard) Head() (Hash, error) {
	// Only main's commit: the files at it are read when something needs
	// them, not by everyone who asks where main is.
	return sh.visibleHead()
}

// Facts returns the facts at HEAD and the commit they were read from, one
// per fact ID (the newest line wins where a person duplicated one), in file
// order: profile first, then the logs by month.
//
// The files are read a few at a time and let go as their facts are taken:
// a list of a shard holds its facts, not its files parsed as well.
func (sh *Shard) Facts() ([]memd.Fact, Hash, error) {
	st, err := sh.refresh()
	if err != nil {
		return nil, Hash{}, err
	}
	files := make([]pathBlob, 0, len(st.files))
	for path, at := range st.files {
		files = append(files, pathBlob{path, at.blob})
	}
	slices.SortFunc(files, func(a, b pathBlob) int { return comparePaths(a.path, b.path) })
	// Room for them all at once.
	sh.places.RLock()
	n := st.where.len()
	sh.places.RUnlock()
	c := factCollector{id: sh.id, out: make([]memd.Fact, 0, n), seen: make(map[string]int, n)}
	err = readFiles(sh, files, func(f pathBlob, data []byte) []lineFact {
		return parseFactFile(f.path, data)
	}, func(_ pathBlob, facts []lineFact) { c.add(facts) })
	if err != nil {
		return nil, Hash{}, err
	}
	return c.out, st.head, nil
}

// allFiles returns every fact file at HEAD parsed, and the state they are
// of, for a caller that reads them all once.
func (sh *Shard) allFiles() (map[string]*factFile, *state, error) {
	var seen seenFiles
	st, err := sh.refreshSeeing(&seen)
	if err != nil {
		return nil, nil, err
	}
	files := make(map[string]*factFile, len(st.files))
	var unread []pathBlob
	for path, at := range st.files {
		if ff, ok := seen.at(st, path); ok {
			files[path] = ff
		} else if ff := st.parsed[path]; ff != nil {
			files[path] = ff
		} else {
			unread = append(unread, pathBlob{path, at.blob})
		}
	}
	err = readFiles(sh, unread, func(f pathBlob, data []byte) *factFile {
		return &factFile{path: f.path, blob: f.blob, data: data, facts: parseFactFile(f.path, data)}
	}, func(f pathBlob, ff *factFile) { files[f.path] = ff })
	return files, st, err
}

func collectFacts(id memd.ShardID, files map[string]*factFile) []memd.Fact {
	paths := slices.SortedFunc(maps.Keys(files), comparePaths)
	c := factCollector{id: id}
	for _, p := range paths {
		c.add(files[p].facts)
	}
	return c.out
}

// factCollector gathers a shard's facts file by file, in file order, one
// per fact ID: the newest line wins where a person wrote a fact twice.
type factCollector struct {
	id   memd.ShardID
	out  []memd.Fact
	seen map[string]int
}

func (c *factCollector) add(facts []lineFact) {
	if c.seen == nil {
		c.seen = make(map[string]int)
	}
	for _, lf := range facts {
		f := lf.Fact
		f.Shard = c.id
		if i, dup := c.seen[f.ID]; dup {
			if c.out[i].Date.Before(f.Date) {
				c.out[i] = f
			}
			continue
		}
		c.seen[f.ID] = len(c.out)
		c.out = append(c.out, f)
	}
}

// comparePaths orders profile.md before the logs, and logs by date (a
// month's file before its days').
func comparePaths(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == ProfileFile:
		return -1
	case b == ProfileFile:
		return 1
	}
	return strings.Compare(a, b)
}

// factIn finds a fact by ID among the files at paths, which file reads, as
// its newest line holds it (the first of those of that day): as Lines, and
// so the facts list and recall, give it.
func factIn(file func(path string) (*factFile, error), paths []string, id string) (memd.Fact, bool, error) {
	var newest memd.Fact
	found := false
	for _, p := range paths {
		ff, err := file(p)
		if err != nil {
			return memd.Fact{}, false, err
		}
		if ff == nil {
			continue
		}
		for _, lf := range ff.linesOf(id) {
			if !found || newest.Date.Before(lf.Date) {
				newest, found = lf.Fact, true
			}
		}
	}
	return newest, found, nil
}

// FileFor returns the file a new fact of tier t and date d would go in at
// HEAD: the profile, the month's log, or the day's once the month's log has
// reached SplitLogAt.
func (sh *Shard) FileFor(t memd.Tier, d memd.Date) (string, error) {
	st, err := sh.refresh()
	if err != nil {
		return "", err
	}
	return logFileFor(t, d, st.files), nil
}

// Fact returns the fact with an ID at HEAD; ENOTFOUND when absent.
func (sh *Shard) Fact(id string) (memd.Fact, error) {
	if _, err := sh.refresh(); err != nil {
		return memd.Fact{}, err
	}
	st, paths, err := sh.pathsOf(id)
	var f memd.Fact
	ok := false
	if err == nil && st != nil {
		f, ok, err = factIn(func(path string) (*factFile, error) { return sh.file(st, path) }, paths, id)
	}
	if err != nil {
		return memd.Fact{}, err
	}
	if !ok {
		return memd.Fact{}, memd.Errorf(memd.ENOTFOUND, "shard %s holds no fact %s", sh.id, id)
	}
	f.Shard = sh.id
	return f, nil
}

// FactLines returns every line of a fact at HEAD, in the order of its
// files: more than one when a person or a merge wrote it again.
func (sh *Shard) FactLines(id string) ([]memd.Fact, error) {
	if _, err := sh.refresh(); err != nil {
		return nil, err
	}
	st, paths, err := sh.pathsOf(id)
	if err != nil || st == nil {
		return nil, err
	}
	var out []memd.Fact
	for _, path := range slices.SortedFunc(slices.Values(paths), comparePaths) {
		ff, err := sh.file(st, path)
		if err != nil {
			return nil, err
		}
		if ff == nil {
			continue
		}
		for _, lf := range ff.linesOf(id) {
			f := lf.Fact
			f.Shard = sh.id
			out = append(out, f)
		}
	}
	return out, nil
}

// Line is a fact at HEAD with the byte offset of its line in its file.
type Line struct {
	memd.Fact
	Offset int
}

func lineOf(id memd.ShardID, lf lineFact) Line {
	f := lf.Fact
	f.Shard = id
	return Line{Fact: f, Offset: lf.start}
}

// Lines returns every fact at HEAD with its offset (one per ID, as Facts),
// and the commit they were read from.
func (sh *Shard) Lines() ([]Line, Hash, error) {
	files, st, err := sh.allFiles()
	if err != nil {
		return nil, Hash{}, err
	}
	return heldLines(sh.id, files), st.head, nil
}

// heldLines returns the line of each fact of files the index holds: the
// newest, the first of those at one date in path order.
func heldLines(id memd.ShardID, files map[string]*factFile) []Line {
	var out []Line
	seen := make(map[string]int)
	for _, path := range slices.SortedFunc(mapKeys(files), comparePaths) {
		for _, lf := range files[path].facts {
			if i, dup := seen[lf.ID]; dup {
				if out[i].Date.Before(lf.Date) {
					out[i] = lineOf(id, lf)
				}
				continue
			}
			seen[lf.ID] = len(out)
			out = append(out, lineOf(id, lf))
		}
	}
	return out
}

// MoreFactLines tells whether the fact files at commit h hold more than n
// lines that look like facts, reading them only until they do and parsing
// none: how large a shard is, cheaply.
func (sh *Shard) MoreFactLines(h Hash, n int) (bool, error) {
	files, err := sh.factBlobs(h)
	if err != nil {
		return false, err
	}
	lines := 0
	for _, f := range files {
		obj, err := sh.db.Get(f.blob)
		if err != nil {
			return false, fmt.Errorf("read %s: %w", f.path, err)
		}
		if bytes.HasPrefix(obj.Data, []byte("-")) {
			lines++
		}
		if lines += bytes.Count(obj.Data, []byte("\n-")); lines > n {
			return true, nil
		}
	}
	return false, nil
}

// EachFactFile calls fn with the facts of each fact file at commit h, with
// their offsets, in file order (profile first, then the logs by month),
// parsing one file at a time: a large shard's facts are never all held
// at once. A fact a person wrote twice comes twice. fn may not keep lines,
// which the next file's reuse.
func (sh *Shard) EachFactFile(h Hash, fn func(lines []Line) error) error {
	files, err := sh.factBlobs(h)
	if err != nil {
		return err
	}
	var facts []lineFact
	var lines []Line
	for _, f := range files {
		obj, err := sh.db.Get(f.blob)
		if err != nil {
			return fmt.Errorf("read %s: %w", f.path, err)
		}
		// Reused, and emptied first: a longer file's lines would keep its
		// text alive to the end.
		clear(facts)
		clear(lines)
		facts = appendFactLines(facts[:0], f.path, obj.Data)
		lines = lines[:0]
		for _, lf := range facts {
			lines = append(lines, lineOf(sh.id, lf))
		}
		if err := fn(lines); err != nil {
			return err
		}
	}
	return nil
}

type pathBlob struct {
	path string
	blob Hash
}

// factBlobs lists the fact files at commit h in file order.
func (sh *Shard) factBlobs(h Hash) ([]pathBlob, error) {
	if h.IsZero() {
		return nil, nil
	}
	c, err := sh.readCommit(h)
	if err != nil {
		return nil, err
	}
	var files []pathBlob
	t := &trees{db: sh.db}
	err = t.walkFiles(c.tree, "", keepFactPaths, func(path string, blob Hash) error {
		if IsFactFile(path) {
			files = append(files, pathBlob{path, blob})
		}
		return nil
	})
	slices.SortFunc(files, func(a, b pathBlob) int { return comparePaths(a.path, b.path) })
	return files, err
}

// Lookup returns the facts among ids that HEAD holds, by ID, and the commit
// they were read from.
func (sh *Shard) Lookup(ids []string) (map[string]Line, Hash, error) {
	// Many facts wanted (the index reading a shard's history) are likely
	// in most files: were the state built afresh, the files holding them
	// are kept as read for the lookup. A few are read again from the
	// files holding them.
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	seen := seenFiles{want: want}
	var err error
	if len(ids) >= lookupMany {
		_, err = sh.refreshSeeing(&seen)
	} else {
		_, err = sh.refresh()
	}
	if err != nil {
		return nil, Hash{}, err
	}
	// Scan each file that holds a wanted fact once, whatever the number
	// of facts wanted.
	var st *state
	paths := make(map[string]bool)
	err = sh.withPlaces(func(at *state) {
		st = at
		for _, id := range ids {
			for _, p := range at.where.get(id) {
				paths[p] = true
			}
		}
	})
	if err != nil {
		return nil, Hash{}, err
	}
	if st == nil {
		return nil, Hash{}, fmt.Errorf("shard %s: no state to read", sh.id)
	}
	found := make(map[string]Line)
	// In the order of the paths, so that of two lines at one date the
	// first, as Lines gives them, is the one found.
	for _, p := range slices.SortedFunc(maps.Keys(paths), comparePaths) {
		ff, err := sh.fileSeen(st, &seen, p)
		if err != nil {
			return nil, Hash{}, err
		}
		if ff == nil {
			continue
		}
		for _, lf := range ff.facts {
			if want[lf.ID] && (found[lf.ID].ID == "" || found[lf.ID].Date.Before(lf.Date)) {
				found[lf.ID] = lineOf(sh.id, lf)
			}
		}
	}
	return found, st.head, nil
}

// lookupMany is how many facts a Lookup wants from which it keeps the
// files it reads to build the shard's state, if it builds it.
const lookupMany = 4096

// FileLines returns the facts of one file at HEAD with their offsets.
func (sh *Shard) FileLines(path string) ([]Line, Hash, error) {
	st, err := sh.refresh()
	if err != nil {
		return nil, Hash{}, err
	}
	ff, err := sh.file(st, path)
	if err != nil {
		return nil, Hash{}, err
	}
	var out []Line
	if ff != nil {
		for _, lf := range ff.facts {
			out = append(out, lineOf(sh.id, lf))
		}
	}
	return out, st.head, nil
}
