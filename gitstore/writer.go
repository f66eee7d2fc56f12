package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// maxGroup bounds the commits written by one group commit, and so the length
// of a delta chain in one pack.
const maxGroup = 64

// Signature names who caused a change: the commit's author.
type Signature struct {
	Name  string
	Email string
}

// Committer is the committer of every commit memd makes.
var Committer = Signature{Name: "memd", Email: "memd@localhost"}

// EditOp is what an Edit does to a fact.
type EditOp int

const (
	// AddFact adds a fact unless the shard holds its text already.
	AddFact EditOp = iota + 1
	// RemoveFact removes every line of a fact ID, if there are any.
	RemoveFact
)

// Edit is one change to one fact. For AddFact, Fact carries the text, date
// and tier (and optionally the file, to restore a line where it was); for
// RemoveFact, only the ID.
type Edit struct {
	Op   EditOp
	Fact memd.Fact
}

// Change is one commit: who, the message (subject and trailers), and the
// fact edits. Edits that would change nothing are skipped; a change left
// with nothing to do makes no commit.
type Change struct {
	Author  Signature
	Message string
	Edits   []Edit
}

// Result says what a Change did.
type Result struct {
	Commit  plumbing.Hash // zero when nothing changed
	Time    time.Time
	Changes []memd.FactChange
	// Facts has one entry per edit: the fact as it stands after AddFact (the
	// existing one when the text was already there), or as it stood before
	// RemoveFact (zero when the shard did not hold it).
	Facts []memd.Fact
}

type request struct {
	change Change
	done   chan struct{}
	res    Result
	err    error
}

// Apply commits a change to the shard and returns once the branch points at
// the commit (and, unless the store has NoSync, the commit is on disk).
// Changes that arrive while a commit is being written are queued and written
// together: one pack with a chain of commits, one per change, and one ref
// update.
func (sh *Shard) Apply(c Change) (Result, error) {
	if err := validateChange(&c); err != nil {
		return Result{}, err
	}
	r := &request{change: c, done: make(chan struct{})}
	sh.qmu.Lock()
	sh.queue = append(sh.queue, r)
	start := !sh.draining
	sh.draining = true
	sh.qmu.Unlock()
	if start {
		go sh.drain()
	}
	<-r.done
	return r.res, r.err
}

func (sh *Shard) drain() {
	for {
		sh.qmu.Lock()
		n := min(len(sh.queue), maxGroup)
		if n == 0 {
			sh.draining = false
			sh.qmu.Unlock()
			return
		}
		batch := slices.Clone(sh.queue[:n])
		sh.queue = slices.Delete(sh.queue, 0, n)
		sh.qmu.Unlock()
		sh.commitGroup(batch)
	}
}

func validateChange(c *Change) error {
	if len(c.Edits) == 0 {
		return memd.Errorf(memd.EINVALID, "a change needs at least one edit")
	}
	if strings.TrimSpace(c.Message) == "" || !utf8.ValidString(c.Message) || strings.ContainsRune(c.Message, 0) {
		return memd.Errorf(memd.EINVALID, "commit message must be non-empty UTF-8 text")
	}
	if !strings.HasSuffix(c.Message, "\n") {
		c.Message += "\n"
	}
	for _, s := range []string{c.Author.Name, c.Author.Email} {
		if s == "" || strings.ContainsAny(s, "<>\n\x00") {
			return memd.Errorf(memd.EINVALID, "author %q <%s> is not a valid git identity", c.Author.Name, c.Author.Email)
		}
	}
	for i := range c.Edits {
		e := &c.Edits[i]
		switch e.Op {
		case AddFact:
			text, err := memd.CleanFactText(e.Fact.Text)
			if err != nil {
				return err
			}
			e.Fact.Text, e.Fact.ID = text, memd.FactID(text)
			if e.Fact.Date.IsZero() {
				return memd.Errorf(memd.EINVALID, "a fact needs a date")
			}
			tier, err := memd.ParseTier(string(e.Fact.Tier))
			if err != nil {
				return err
			}
			e.Fact.Tier = tier
			if e.Fact.File == "" {
				e.Fact.File = FileFor(tier, e.Fact.Date)
			} else if !IsFactFile(e.Fact.File) {
				return memd.Errorf(memd.EINVALID, "%q is not a fact file", e.Fact.File)
			}
		case RemoveFact:
			if !memd.ValidFactID(e.Fact.ID) {
				return memd.Errorf(memd.EINVALID, "fact ID %q: want 12 lowercase hex digits", e.Fact.ID)
			}
		default:
			return memd.Errorf(memd.EINVALID, "unknown edit")
		}
	}
	return nil
}

// commitGroup writes a batch of changes, retrying on a fresh HEAD when
// someone else moved the branch while the pack was being written.
func (sh *Shard) commitGroup(batch []*request) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		if err = sh.tryGroup(batch); !errors.Is(err, errRefMoved) {
			break
		}
	}
	for _, r := range batch {
		if err != nil {
			r.res, r.err = Result{}, fmt.Errorf("shard %s: %w", sh.id, err)
		}
		close(r.done)
	}
	if err == nil {
		sh.maybeRepack()
	}
}

func (sh *Shard) tryGroup(batch []*request) error {
	if sh.db == nil {
		return memd.Errorf(memd.EUNAVAILABLE, "store is closed")
	}
	head, err := readRef(sh.gitDir, mainRef)
	if err != nil {
		return err
	}
	st, err := sh.catchUp(head)
	if err != nil {
		return err
	}
	g := newGroup(sh, st)
	for _, r := range batch {
		r.res, r.err = g.apply(r.change)
	}
	if g.b.Len() == 0 {
		return nil // nothing changed
	}
	name, err := sh.db.WritePack(g.b)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if err := sh.publish(st, g); err != nil {
		if errors.Is(err, errRefMoved) {
			sh.db.RemovePack(name)
		}
		return err
	}
	return nil
}

// publish moves main to the group's last commit and brings the working tree
// and index in step. The index lock is taken first and held across the ref
// update, so a person's `git commit -a` never builds on an index that lacks
// what memd just committed.
func (sh *Shard) publish(st *state, g *group) error {
	ilock, err := acquireLock(filepath.Join(sh.gitDir, "index"))
	if err != nil {
		return err
	}
	if err := updateRef(sh.gitDir, mainRef, st.head, g.head, !sh.store.opts.NoSync); err != nil {
		ilock.release()
		return err
	}
	sh.cur.Store(g.commitState())
	if err := sh.syncWorktree(ilock, g.touched, g.files); err != nil {
		sh.store.log.Warn("commit made, but the working tree could not be updated; it will be repaired at the next open",
			"shard", sh.id, "err", err)
	}
	return nil
}

// group builds a chain of commits on top of a state.
type group struct {
	sh      *Shard
	base    *state
	b       *odb.Builder
	trees   trees
	head    plumbing.Hash
	root    plumbing.Hash
	when    time.Time
	files   map[string]*factFile
	over    map[string][]string // fact ID -> paths, overriding base.where
	facts   int
	touched map[string]*factFile // path -> its version in base (nil if new)
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
		over:    make(map[string][]string),
		facts:   st.facts,
		touched: make(map[string]*factFile),
	}
}

func (g *group) where(id string) []string {
	if paths, ok := g.over[id]; ok {
		return paths
	}
	return g.base.where[id]
}

// commitState is the state after the group, with base.where updated.
func (g *group) commitState() *state {
	for id, paths := range g.over {
		if len(paths) == 0 {
			delete(g.base.where, id)
		} else {
			g.base.where[id] = paths
		}
	}
	return &state{head: g.head, root: g.root, time: g.when, files: g.files, facts: g.facts, where: g.base.where}
}

// pendingFile collects one change's edits to one file.
type pendingFile struct {
	removes [][2]int // line ranges, in file order
	added   []memd.Fact
}

func (g *group) apply(c Change) (Result, error) {
	res := Result{Facts: make([]memd.Fact, len(c.Edits))}
	pending := make(map[string]*pendingFile)
	pend := func(path string) *pendingFile {
		if p := pending[path]; p != nil {
			return p
		}
		p := &pendingFile{}
		pending[path] = p
		return p
	}
	for i, e := range c.Edits {
		switch e.Op {
		case AddFact:
			if f, ok := g.find(e.Fact.ID, pending); ok {
				res.Facts[i] = f
				continue
			}
			f := e.Fact
			f.Shard = g.sh.id
			p := pend(f.File)
			p.added = append(p.added, f)
			g.over[f.ID] = []string{f.File}
			g.facts++
			res.Facts[i] = f
			res.Changes = append(res.Changes, memd.FactChange{Op: "+", Fact: f})
		case RemoveFact:
			f, ok := g.find(e.Fact.ID, pending)
			if !ok {
				continue
			}
			res.Facts[i] = f
			for _, path := range g.where(f.ID) {
				p := pend(path)
				if j := slices.IndexFunc(p.added, func(a memd.Fact) bool { return a.ID == f.ID }); j >= 0 {
					p.added = slices.Delete(p.added, j, j+1)
				}
				if ff := g.files[path]; ff != nil {
					for _, lf := range ff.facts {
						if lf.ID == f.ID {
							p.removes = append(p.removes, [2]int{lf.start, lf.end})
							removed := lf.Fact
							removed.Shard = g.sh.id
							res.Changes = append(res.Changes, memd.FactChange{Op: "-", Fact: removed})
						}
					}
				}
			}
			g.over[f.ID] = nil
			g.facts--
		}
	}
	if len(res.Changes) == 0 {
		return res, nil
	}
	paths := slices.Sorted(maps.Keys(pending))
	root := g.root
	for _, path := range paths {
		blob, err := g.writeFile(path, pending[path])
		if err != nil {
			return Result{}, err
		}
		if root, err = g.trees.set(g.b, root, path, blob); err != nil {
			return Result{}, err
		}
	}
	g.root = root
	g.head = g.b.Add(plumbing.CommitObject, g.commitBody(c))
	res.Commit, res.Time = g.head, g.when
	return res, nil
}

// find returns the fact with an ID as the group currently has it.
func (g *group) find(id string, pending map[string]*pendingFile) (memd.Fact, bool) {
	for _, p := range pending {
		for _, f := range p.added {
			if f.ID == id {
				return f, true
			}
		}
	}
	f, ok := factIn(g.files, g.where(id), id)
	f.Shard = g.sh.id
	return f, ok
}

// writeFile applies a change's edits to one file and adds the new blob to
// the pack, as a delta against the previous version when that is in the
// pack already.
func (g *group) writeFile(path string, p *pendingFile) (plumbing.Hash, error) {
	old := g.files[path]
	if _, seen := g.touched[path]; !seen {
		g.touched[path] = old
	}
	var base []byte
	if old != nil {
		base = old.data
	} else {
		base = []byte(header(path))
	}
	var edits []odb.Edit
	slices.SortFunc(p.removes, func(a, b [2]int) int { return a[0] - b[0] })
	for i, r := range p.removes {
		if i > 0 && r[0] < p.removes[i-1][1] {
			continue // the same line named twice
		}
		edits = append(edits, odb.Edit{Pos: r[0], Del: r[1] - r[0]})
	}
	var ins []byte
	if len(p.added) > 0 {
		if len(base) > 0 && base[len(base)-1] != '\n' {
			ins = append(ins, '\n')
		}
		for _, f := range p.added {
			ins = append(ins, FormatLine(f)...)
		}
		edits = append(edits, odb.Edit{Pos: len(base), Ins: ins})
	}
	data := odb.Apply(base, edits)

	var blob plumbing.Hash
	if old != nil {
		blob = g.b.AddDelta(plumbing.BlobObject, old.blob, odb.Delta(len(base), edits), data)
	} else {
		blob = g.b.Add(plumbing.BlobObject, data)
	}
	next := &factFile{path: path, blob: blob, data: data}
	if old != nil && len(p.removes) == 0 {
		// Appends only: earlier lines keep their offsets. Appending in place
		// is safe because only the newest version is ever appended to.
		next.facts = old.facts
		at := len(base)
		if len(ins) > 0 && ins[0] == '\n' {
			at++
		}
		for _, f := range p.added {
			line := FormatLine(f)
			next.facts = append(next.facts, lineFact{Fact: f, start: at, end: at + len(line)})
			at += len(line)
		}
	} else {
		next.facts = parseFactFile(path, data)
	}
	g.files[path] = next
	return blob, nil
}

func (g *group) commitBody(c Change) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", g.root)
	if !g.head.IsZero() {
		fmt.Fprintf(&b, "parent %s\n", g.head)
	}
	stamp := fmt.Sprintf("%d %s", g.when.Unix(), g.when.Format("-0700"))
	fmt.Fprintf(&b, "author %s <%s> %s\n", c.Author.Name, c.Author.Email, stamp)
	fmt.Fprintf(&b, "committer %s <%s> %s\n\n", Committer.Name, Committer.Email, stamp)
	b.WriteString(c.Message)
	return b.Bytes()
}
