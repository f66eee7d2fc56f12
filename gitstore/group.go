package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// group builds a chain of commits on top of a state, in three passes: plan
// each change (which files it rewrites, and how), hash every new file
// version in parallel (SHA-1 of whole monthly logs is most of the work),
// then emit blobs, trees and commits into one pack.
type group struct {
	sh      *Shard
	base    *state
	b       *odb.Builder
	trees   trees
	head    Hash
	root    Hash
	when    time.Time
	files   map[string]fileAt
	parsed  map[string]*factFile  // the files changed, in their latest versions, and those base held parsed
	read    map[string]*factFile  // the files read to find a fact and left as they were
	over    map[string][]string   // fact ID -> paths, overriding base.where
	before  map[string]overBefore // what the change being planned changed in over
	touched map[string]*factFile  // path -> its version in base (nil if new)
	plans   []*plan
	// conflicted holds the paths in conflict in a person's git merge,
	// read once a group (see conflicts).
	conflicted map[string]bool

	// Notes the group changes: their latest versions (nil: removed) and
	// their versions in base (nil if new).
	notes       map[string]*factFile
	noteTouched map[string]*factFile

	// rebase holds the latest versions of the large files the group wrote
	// whole, to be the bases of the commits after it (see packbase.go).
	rebase []*factFile
}

// plan is one change's commit before it is written.
type plan struct {
	change Change
	res    *Result
	files  []plannedFile // sorted by path
	notes  []plannedNote
	diff   Diff // what the commit changes, for the diff cache once published
}

// plannedFile is one new version of a file.
type plannedFile struct {
	old   *factFile // nil for a new file
	next  *factFile // blob filled in by the hashing pass
	edits []odb.Edit
	base  int // length of the version the edits apply to
}

func newGroup(sh *Shard, st *state) *group {
	return &group{
		sh:      sh,
		base:    st,
		b:       odb.NewBuilder(),
		trees:   trees{db: sh.db},
		head:    st.head,
		root:    st.root,
		when:    sh.store.opts.Now(),
		files:   maps.Clone(st.files),
		parsed:  maps.Clone(st.parsed),
		read:    make(map[string]*factFile),
		over:    make(map[string][]string),
		before:  make(map[string]overBefore),
		touched: make(map[string]*factFile),

		notes:       make(map[string]*factFile),
		noteTouched: make(map[string]*factFile),
	}
}

// setOver records where the fact id is after the change being planned,
// keeping where it was before, in case the change is refused.
func (g *group) setOver(id string, paths []string) {
	if _, kept := g.before[id]; !kept {
		was, had := g.over[id]
		g.before[id] = overBefore{was, had}
	}
	g.over[id] = paths
}

// overBefore is where a fact was before the change being planned: paths,
// or unset.
type overBefore struct {
	paths []string
	set   bool
}

// undoOver puts back where facts were before the change being planned.
func (g *group) undoOver() {
	for id, b := range g.before {
		if b.set {
			g.over[id] = b.paths
		} else {
			delete(g.over, id)
		}
	}
	clear(g.before)
}

func (g *group) where(id string) []string {
	if paths, ok := g.over[id]; ok {
		return paths
	}
	return g.base.where.get(id)
}

// file returns the fact file at path as the group has it, parsed; nil when
// there is none.
func (g *group) file(path string) (*factFile, error) {
	if ff := g.parsed[path]; ff != nil {
		return ff, nil
	}
	if ff := g.read[path]; ff != nil {
		return ff, nil
	}
	at, ok := g.files[path]
	if !ok {
		return nil, nil
	}
	ff, err := g.sh.readFactFile(path, at.blob)
	if err != nil {
		return nil, err
	}
	g.read[path] = ff
	return ff, nil
}

// worktreeChanges returns the paths the group changed with their versions
// in base (nil if new) and after the group (nil if removed), for the
// working tree and index.
func (g *group) worktreeChanges() (touched, next map[string]*factFile) {
	touched = maps.Clone(g.touched)
	next = make(map[string]*factFile, len(touched)+len(g.noteTouched))
	for path := range g.touched {
		next[path] = g.parsed[path]
	}
	for path, old := range g.noteTouched {
		touched[path] = old
		next[path] = g.notes[path]
	}
	return touched, next
}

// commitState is the state after the group, with base.where updated.
func (g *group) commitState() *state {
	for id, paths := range g.over {
		g.base.where.set(id, paths)
	}
	// The files this group changed stay parsed for the next (most writes
	// append to today's log); those earlier groups changed are let go.
	parsed := make(map[string]*factFile, len(g.touched))
	for path := range g.touched {
		if ff := g.parsed[path]; ff != nil {
			parsed[path] = ff
		}
	}
	return &state{head: g.head, root: g.root, files: g.files, parsed: parsed, where: g.base.where}
}

// pendingFile collects one change's edits to one file.
type pendingFile struct {
	removes  [][2]int // line ranges, in file order
	replaces []lineReplace
	added    []memd.Fact
	// edited holds the starts of the lines this change rewrites or
	// removes: what such a line held before the change is gone, and only
	// what a rewrite makes it hold counts.
	edited map[int]bool
}

// lineReplace rewrites the line at [start, end) to hold fact.
type lineReplace struct {
	start, end int
	line       []byte
	fact       memd.Fact
}

// remove removes the line at [start, end).
func (p *pendingFile) remove(start, end int) {
	p.removes = append(p.removes, [2]int{start, end})
	p.markEdited(start)
}

// replace rewrites a line.
func (p *pendingFile) replace(r lineReplace) {
	p.replaces = append(p.replaces, r)
	p.markEdited(r.start)
}

func (p *pendingFile) markEdited(start int) {
	if p.edited == nil {
		p.edited = make(map[int]bool)
	}
	p.edited[start] = true
}

// conflict returns an error if two of the edits name one line and differ:
// keeping one would lose what the other writes while the change says it
// is done (planFile keeps one of those naming the same line).
func (p *pendingFile) conflict() error {
	at := make(map[int]lineReplace, len(p.removes)+len(p.replaces))
	for _, r := range p.removes {
		at[r[0]] = lineReplace{start: r[0], end: r[1]}
	}
	for _, r := range p.replaces {
		if o, ok := at[r.start]; ok && (o.end != r.end || !bytes.Equal(o.line, r.line)) {
			return fmt.Errorf("two different edits of the line at byte %d", r.start)
		}
		at[r.start] = r
	}
	return nil
}

// takeReplaced takes back the rewrites of this change that make a line
// hold the fact id.
func (p *pendingFile) takeReplaced(id string) []lineReplace {
	var taken []lineReplace
	kept := p.replaces[:0]
	for _, r := range p.replaces {
		if r.fact.ID == id {
			taken = append(taken, r)
		} else {
			kept = append(kept, r)
		}
	}
	p.replaces = kept
	return taken
}

// add plans one change. The result's Commit is set when the group is built.
// A change that fails (a note update refusing) is left out of the group.
//
// It is long for its switch over the kinds of edit, each a few lines
// against the group's shared state.
func (g *group) add(c Change) (*Result, error) {
	if c.Note != nil {
		return g.addNote(c)
	}
	res := &Result{Facts: make([]memd.Fact, len(c.Edits))}
	clear(g.before)
	pending := make(map[string]*pendingFile)
	pend := func(path string) *pendingFile {
		if p := pending[path]; p != nil {
			return p
		}
		p := &pendingFile{}
		pending[path] = p
		return p
	}
	added := make(map[string]memd.Fact) // facts this change adds, by ID
	// Facts an edit of this change made, by ID: their lines are not in
	// the files read yet, and adding one again would write it twice.
	edited := make(map[string]memd.Fact)
	for i, e := range c.Edits {
		switch e.Op {
		case AddFact:
			f, ok, err := g.held(e.Fact.ID, added, edited)
			if err != nil {
				return nil, err
			}
			if ok {
				res.Facts[i] = f
				continue
			}
			f = e.Fact
			f.Shard = g.sh.id
			if f.File == "" {
				f.File = g.fileFor(f.Tier, f.Date)
			}
			p := pend(f.File)
			p.added = append(p.added, f)
			added[f.ID] = f
			g.setOver(f.ID, []string{f.File})
			res.Facts[i] = f
			res.Changes = append(res.Changes, memd.FactChange{Op: "+", Fact: f})
		case RemoveFact:
			f, ok, err := g.held(e.Fact.ID, added, edited)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			delete(added, f.ID)
			delete(edited, f.ID)
			res.Facts[i] = f
			for _, path := range g.where(f.ID) {
				p := pend(path)
				// Every line of it this change adds to the file goes too.
				p.added = slices.DeleteFunc(p.added, func(a memd.Fact) bool {
					if a.ID != f.ID {
						return false
					}
					res.Changes = append(res.Changes, memd.FactChange{Op: "-", Fact: a})
					return true
				})
				ff, err := g.file(path)
				if err != nil {
					return nil, err
				}
				if ff != nil {
					for _, lf := range ff.linesOf(f.ID) {
						if !p.edited[lf.start] {
							p.remove(lf.start, lf.end)
							removed := lf.Fact
							removed.Shard = g.sh.id
							res.Changes = append(res.Changes, memd.FactChange{Op: "-", Fact: removed})
						}
					}
				}
				// A line an edit of this change rewrote to hold it goes too.
				for _, r := range p.takeReplaced(f.ID) {
					p.remove(r.start, r.end)
					res.Changes = append(res.Changes, memd.FactChange{Op: "-", Fact: r.fact})
				}
			}
			g.setOver(f.ID, nil)
		case RemoveLine:
			if err := g.removeLine(e.Fact, pend, res, i, added, edited); err != nil {
				return nil, err
			}
		case RestoreLine:
			f := e.Fact
			f.Shard = g.sh.id
			res.Facts[i] = f
			holds, err := g.holdsLine(f, pend(f.File))
			if err != nil {
				return nil, err
			}
			if holds {
				continue
			}
			p := pend(f.File)
			p.added = append(p.added, f)
			if _, held := added[f.ID]; !held {
				added[f.ID] = f
			}
			where := g.where(f.ID)
			if !slices.Contains(where, f.File) {
				g.setOver(f.ID, append(slices.Clone(where), f.File))
			}
			res.Changes = append(res.Changes, memd.FactChange{Op: "+", Fact: f})
		case ReplaceFact:
			old, ok, err := g.held(e.Fact.ID, added, edited)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue // nothing to replace
			}
			next := old
			next.Text, next.ID = e.With.Text, e.With.ID
			if next.Text == old.Text {
				res.Facts[i] = old
				continue
			}
			var at string
			var gone []memd.FactChange // each line's fact, as it held it
			// The newest line, whose day and file the fact has (factIn),
			// takes the new text: its file is read first.
			paths := g.where(old.ID)
			if i := slices.Index(paths, old.File); i > 0 {
				paths = append([]string{old.File}, slices.Delete(slices.Clone(paths), i, i+1)...)
			}
			for _, path := range paths {
				p := pend(path)
				// A fact this change adds is rewritten before it is written.
				kept := p.added[:0]
				for _, a := range p.added {
					if a.ID == old.ID {
						gone = append(gone, memd.FactChange{Op: "-", Fact: a})
						if at != "" {
							continue // one line holds next
						}
						at, next.File = path, path
						a = next
					}
					kept = append(kept, a)
				}
				p.added = kept
				ff, err := g.file(path)
				if err != nil {
					return nil, err
				}
				if ff == nil {
					continue
				}
				// The lines holding it, and those an edit of this change
				// rewrote to hold it: the first holds next, the others go.
				lines := p.takeReplaced(old.ID)
				for _, lf := range ff.linesOf(old.ID) {
					if !p.edited[lf.start] && !slices.ContainsFunc(lines, func(l lineReplace) bool { return l.start == lf.start }) {
						lines = append(lines, lineReplace{start: lf.start, end: lf.end, fact: lf.Fact})
					}
				}
				takes := -1 // the line that takes the new text: this file's newest
				if at == "" {
					for k, l := range lines {
						if takes < 0 || lines[takes].fact.Date.Before(l.fact.Date) {
							takes = k
						}
					}
				}
				for k, l := range lines {
					was := l.fact
					was.Shard = g.sh.id
					gone = append(gone, memd.FactChange{Op: "-", Fact: was})
					if k == takes {
						at = path
						next.File = path
						p.replace(lineReplace{l.start, l.end, []byte(FormatLine(next)), next})
					} else {
						p.remove(l.start, l.end)
					}
				}
			}
			if at == "" {
				continue // no line holds it after all
			}
			g.setOver(old.ID, nil)
			// The new text may be a fact another file holds already.
			g.setOver(next.ID, appendUnique(slices.Clone(g.where(next.ID)), at))
			delete(edited, old.ID)
			edited[next.ID] = next
			if _, ok := added[old.ID]; ok {
				delete(added, old.ID)
				added[next.ID] = next
			}
			res.Facts[i] = next
			res.Changes = append(append(res.Changes, gone...), memd.FactChange{Op: "+", Fact: next})
		}
	}
	// A change whose edits undo each other (a fact added, then removed)
	// changes no file, and makes no commit.
	maps.DeleteFunc(pending, func(_ string, p *pendingFile) bool {
		return len(p.removes) == 0 && len(p.replaces) == 0 && len(p.added) == 0
	})
	if len(pending) == 0 {
		g.undoOver()
		res.Changes = nil
		return res, nil
	}
	// Checked before any file is planned: a change refused leaves the
	// group as it was, and the others in it go on.
	for path, p := range pending {
		if err := p.conflict(); err != nil {
			g.undoOver()
			return nil, memd.Errorf(memd.ECONFLICT, "%s: %v", path, err)
		}
		if err := g.refuseOverDeletion(path); err != nil {
			g.undoOver()
			return nil, err
		}
		if err := g.refuseInConflict(path); err != nil {
			g.undoOver()
			return nil, err
		}
	}
	pl := &plan{change: c, res: res}
	for _, path := range slices.Sorted(maps.Keys(pending)) {
		f, err := g.planFile(path, pending[path])
		if err != nil {
			return nil, err
		}
		pl.files = append(pl.files, f)
	}
	g.plans = append(g.plans, pl)
	return res, nil
}

// holdsLine says whether f's file holds a line of it of f's date, one the
// change has not rewritten or removed, or is to (p is the file's pending
// change).
func (g *group) holdsLine(f memd.Fact, p *pendingFile) (bool, error) {
	if slices.ContainsFunc(p.added, func(a memd.Fact) bool { return a.ID == f.ID && a.Date == f.Date }) {
		return true, nil
	}
	if !slices.Contains(g.where(f.ID), f.File) {
		return false, nil
	}
	ff, err := g.file(f.File)
	if err != nil || ff == nil {
		return false, err
	}
	return slices.ContainsFunc(ff.linesOf(f.ID), func(lf lineFact) bool { return !p.edited[lf.start] && lf.Date == f.Date }), nil
}

// removeLine plans the removal of one line of fact f.ID: the last of its
// file's lines dated f.Date that no edit of the change rewrote. The fact
// is gone once no line holds it.
func (g *group) removeLine(f memd.Fact, pend func(string) *pendingFile, res *Result, i int, added, edited map[string]memd.Fact) error {
	ff, err := g.file(f.File)
	if err != nil || ff == nil || !slices.Contains(g.where(f.ID), f.File) {
		return err
	}
	p := pend(f.File)
	var left []lineFact // its lines in the file, but those the change rewrote or removed
	for _, lf := range ff.linesOf(f.ID) {
		if !p.edited[lf.start] {
			left = append(left, lf)
		}
	}
	at := -1
	for j, lf := range left {
		if lf.Date == f.Date {
			at = j
		}
	}
	if at < 0 {
		return nil
	}
	lf := left[at]
	p.remove(lf.start, lf.end)
	removed := lf.Fact
	removed.Shard = g.sh.id
	res.Facts[i] = removed
	res.Changes = append(res.Changes, memd.FactChange{Op: "-", Fact: removed})
	if len(left) > 1 || slices.ContainsFunc(p.added, func(a memd.Fact) bool { return a.ID == f.ID }) {
		return nil // the file still holds it, or a line of it this change adds
	}
	paths := slices.DeleteFunc(slices.Clone(g.where(f.ID)), func(path string) bool { return path == f.File })
	if len(paths) == 0 {
		delete(added, f.ID)
		delete(edited, f.ID)
		paths = nil
	}
	g.setOver(f.ID, paths)
	return nil
}

// fileFor picks the file a new fact goes in; a split month's facts stay in
// its log when a person's file has the name its folder of days would take.
func (g *group) fileFor(t memd.Tier, d memd.Date) string {
	path := logFileFor(t, d, g.files)
	if dir, _, ok := strings.Cut(strings.TrimPrefix(path, LogDir+"/"), "/"); ok {
		if e, found, err := g.trees.lookup(g.root, LogDir+"/"+dir); err == nil && found && !e.isDir() {
			return MonthLog(d)
		}
	}
	return path
}

// find returns the fact with an ID as the group currently has it, counting
// the facts the change being planned adds.
func (g *group) find(id string, added map[string]memd.Fact) (memd.Fact, bool, error) {
	if f, ok := added[id]; ok {
		return f, true, nil
	}
	f, ok, err := factIn(g.file, g.where(id), id)
	f.Shard = g.sh.id
	return f, ok, err
}

// held returns fact id as the change being planned has it so far: as
// one of its rewrites made it (edited), as it adds it (added), or as the
// files hold it.
func (g *group) held(id string, added, edited map[string]memd.Fact) (memd.Fact, bool, error) {
	if f, ok := edited[id]; ok {
		return f, true, nil
	}
	return g.find(id, added)
}

// refuseOverDeletion refuses a change of a fact file a person removed from
// the working tree (rm, git rm, git mv) without committing that: memd
// would write it back whole, undoing the removal, and their next commit
// would keep it. So a note's change is refused (refuseOverPersonsEdit).
// Only a file memd left in the working tree counts, and only while HEAD
// is on main (see away.go).
func (g *group) refuseOverDeletion(path string) error {
	there := false // whether memd left the file in the working tree
	if at, ahead := g.sh.worktreeAt[path]; ahead {
		there = at != nil
	} else if at, behind := g.sh.behind[path]; behind {
		there = at != nil // a move memd has yet to bring the file to
	} else if old, touched := g.touched[path]; touched {
		there = old != nil
	} else {
		_, there = g.base.files[path]
	}
	if !there {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(g.sh.dir, filepath.FromSlash(path))); !errors.Is(err, fs.ErrNotExist) || !g.sh.headOnMain() {
		return nil
	}
	if _, err := os.Stat(filepath.Join(g.sh.gitDir, "info", "sparse-checkout")); err == nil {
		return nil // a sparse checkout leaves files out on purpose
	}
	return memd.Errorf(memd.ECONFLICT, "%s was removed by a person (rm, git rm or git mv) and the removal not committed; nothing was committed, try again once they commit or restore it", path)
}

// refuseInConflict refuses a change of a fact file in conflict in a
// person's git merge (or cherry-pick, or revert) under way: git kept their
// side as it was when the merge began, and a resolution taking it (git
// checkout --ours) would drop what memd wrote into the file since. A note
// in conflict is refused the same way (refuseOverPersonsEdit).
func (g *group) refuseInConflict(path string) error {
	if !g.conflicts()[path] {
		return nil
	}
	return memd.Errorf(memd.ECONFLICT, "%s is in conflict in a person's git merge (git status shows it); nothing was committed, try again once they settle it", path)
}

// conflicts returns the paths in conflict in the index while a git merge,
// cherry-pick or revert is under way (the index is read only then), once a
// group. An index memd cannot read holds none for it.
func (g *group) conflicts() map[string]bool {
	if g.conflicted != nil {
		return g.conflicted
	}
	g.conflicted = make(map[string]bool)
	merging := false
	for _, name := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"} {
		if _, err := os.Stat(filepath.Join(g.sh.gitDir, name)); err == nil {
			merging = true
		}
	}
	if !merging || !g.sh.headOnMain() {
		return g.conflicted
	}
	if idx, err := g.sh.readIndex(); err == nil {
		for _, e := range idx.Entries {
			if e.Stage != 0 {
				g.conflicted[e.Name] = true
			}
		}
	}
	return g.conflicted
}

// planFile applies a change's edits to one file, giving its next version.
func (g *group) planFile(path string, p *pendingFile) (plannedFile, error) {
	old, err := g.file(path)
	if err != nil {
		return plannedFile{}, err
	}
	if _, seen := g.touched[path]; !seen {
		g.touched[path] = old
	}
	var base []byte
	if old != nil {
		base = old.data
	} else {
		base = []byte(header(path))
	}
	// Lines memd writes end as the file's do: a person's editor that saved
	// it with CRLF line ends finds them all alike.
	end := lineEnd(base)
	var edits []odb.Edit
	for _, r := range p.removes {
		edits = append(edits, odb.Edit{Pos: r[0], Del: r[1] - r[0]})
	}
	for _, r := range p.replaces {
		edits = append(edits, odb.Edit{Pos: r.start, Del: r.end - r.start, Ins: endedWith(r.line, end)})
	}
	slices.SortStableFunc(edits, func(a, b odb.Edit) int { return a.Pos - b.Pos })
	edits = slices.CompactFunc(edits, func(a, b odb.Edit) bool { return a.Pos == b.Pos }) // the same line named twice
	var ins []byte
	if len(p.added) > 0 {
		if len(base) > 0 && base[len(base)-1] != '\n' {
			ins = append(ins, end...)
		}
		for _, f := range p.added {
			ins = append(ins, endedWith([]byte(FormatLine(f)), end)...)
		}
		edits = append(edits, odb.Edit{Pos: len(base), Ins: ins})
	}
	var data []byte
	if old != nil && len(p.removes) == 0 && len(p.replaces) == 0 {
		// Appending in place: old's bytes keep their length, and only the
		// newest version of a file is ever appended to.
		data = append(old.data, ins...)
	} else {
		data = odb.Apply(base, edits)
	}
	next := &factFile{path: path, data: data}
	if old != nil && len(p.removes) == 0 && len(p.replaces) == 0 {
		// Appends only: earlier lines keep their offsets.
		next.facts = old.facts
		at := len(base)
		if len(base) > 0 && base[len(base)-1] != '\n' {
			at += len(end)
			if n := len(old.facts); n > 0 && old.facts[n-1].end == len(base) {
				// The last line gains the line end put after it (a
				// copy: old's lines are read by others).
				next.facts = slices.Clone(old.facts)
				next.facts[n-1].end += len(end)
			}
		}
		for _, f := range p.added {
			n := len(FormatLine(f)) - 1 + len(end)
			next.facts = append(next.facts, lineFact{Fact: f, start: at, end: at + n})
			at += n
		}
	} else {
		next.facts = parseFactFile(path, data)
	}
	g.parsed[path] = next
	delete(g.read, path)
	g.files[path] = fileAt{size: len(data)} // its blob once hashed (build)
	return plannedFile{old: old, next: next, edits: edits, base: len(base)}, nil
}

// lineEnd returns how a file's lines end: "\r\n" when its first line ends
// so, else "\n".
func lineEnd(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// endedWith returns a line (ending in "\n") ending with end instead.
func endedWith(line []byte, end string) []byte {
	if end == "\n" {
		return line
	}
	return append(slices.Clone(line[:len(line)-1]), end...)
}

// build hashes the planned file versions in parallel, then writes blobs,
// trees and commits into the pack and fills in each result's commit.
func (g *group) build() error {
	var versions []*factFile
	for _, pl := range g.plans {
		for _, f := range pl.files {
			versions = append(versions, f.next)
		}
		for _, n := range pl.notes {
			if n.next != nil {
				versions = append(versions, n.next)
			}
		}
	}
	hashAll(versions)
	for _, pl := range g.plans {
		for _, f := range pl.files {
			g.files[f.next.path] = fileAt{blob: f.next.blob, size: len(f.next.data)}
		}
	}
	whole := make(map[string]bool) // large files written whole: their next bases
	for _, pl := range g.plans {
		root := g.root
		for _, f := range pl.files {
			blob, ok := g.addDelta(f)
			if !ok {
				blob = g.b.AddHashed(plumbing.BlobObject, f.next.blob, f.next.data)
				whole[f.next.path] = len(f.next.data) >= minPackedBase
			}
			var err error
			if root, err = g.trees.set(g.b, root, f.next.path, blob); err != nil {
				return err
			}
		}
		for _, n := range pl.notes {
			var blob Hash // zero removes the note
			if n.next != nil {
				blob = g.b.AddHashed(plumbing.BlobObject, n.next.blob, n.next.data)
			}
			var err error
			if root, err = g.trees.set(g.b, root, n.path, blob); err != nil {
				return err
			}
		}
		if root.IsZero() {
			root = g.b.Add(plumbing.TreeObject, nil) // the last file went
		}
		g.root = root
		g.head = g.b.Add(plumbing.CommitObject, g.commitBody(pl.change))
		pl.res.Commit, pl.res.Time = g.head, g.when
		pl.diff = g.planDiff(pl)
	}
	for path, large := range whole {
		if f := g.parsed[path]; large && f != nil {
			g.rebase = append(g.rebase, f) // its latest version
		}
	}
	return nil
}

// addDelta adds a file's new version as a delta, against the version
// before it when the pack holds that (an earlier commit of the group), else
// against the shard's base of the file, which it adds; ok is false when
// there is neither.
func (g *group) addDelta(f plannedFile) (blob Hash, ok bool) {
	if f.old != nil {
		if _, ok := g.b.Offset(f.old.blob); ok {
			return g.b.AddDeltaHashed(plumbing.BlobObject, f.old.blob, odb.Delta(f.base, f.edits), f.next.blob, f.next.data), true
		}
	}
	pb, delta := g.sh.deltaFromBase(f.next.path, f.next.data)
	if pb == nil {
		return Hash{}, false
	}
	g.b.AddEntry(pb.entry)
	return g.b.AddDeltaHashed(plumbing.BlobObject, pb.entry.ID, delta, f.next.blob, f.next.data), true
}

// hashAll computes the blob ID of each version, spreading the work over the
// processors.
func hashAll(versions []*factFile) {
	workers := min(runtime.GOMAXPROCS(0), len(versions))
	if workers <= 1 {
		for _, v := range versions {
			v.blob = odb.HashObject(plumbing.BlobObject, v.data)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan *factFile)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range next {
				v.blob = odb.HashObject(plumbing.BlobObject, v.data)
			}
		}()
	}
	for _, v := range versions {
		next <- v
	}
	close(next)
	wg.Wait()
}

func (g *group) commitBody(c Change) []byte {
	var parents []Hash
	if !g.head.IsZero() {
		parents = []Hash{g.head}
	}
	authored := g.when
	if !c.AuthorTime.IsZero() {
		authored = c.AuthorTime
	}
	return encodeCommit(g.root, parents, c.Author, authored, Committer(), g.when, c.Message)
}

// encodeCommit returns a commit object's content.
func encodeCommit(tree Hash, parents []Hash, author Signature, authored time.Time, committer Signature, when time.Time, message string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	stamp := func(t time.Time) string { return fmt.Sprintf("%d %s", t.Unix(), t.Format("-0700")) }
	fmt.Fprintf(&b, "author %s <%s> %s\n", author.Name, author.Email, stamp(authored))
	fmt.Fprintf(&b, "committer %s <%s> %s\n\n", committer.Name, committer.Email, stamp(when))
	b.WriteString(message)
	return b.Bytes()
}
