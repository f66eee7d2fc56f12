package gitstore

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// refresh returns the state at the current HEAD, catching up with commits
// made outside memd (a person's git commit, a pull) since the last call.
func (sh *Shard) refresh() (*state, error) {
	sh.touch()
	return sh.follow(true, nil)
}

// seenFiles is what a shard's files were when a read built its state
// afresh: each file parsed, at the head it was read at; with want, only
// the files holding a fact it wants.
type seenFiles struct {
	head  Hash
	files map[string]*factFile
	want  map[string]bool
}

// see records a file read to build the state at head.
func (s *seenFiles) see(head Hash, ff *factFile) {
	if s.files == nil || s.head != head {
		s.head, s.files = head, make(map[string]*factFile)
	}
	if s.want == nil || slices.ContainsFunc(ff.facts, func(lf lineFact) bool { return s.want[lf.ID] }) {
		s.files[ff.path] = ff
	}
}

// refreshSeeing is refresh for a caller about to read many of the shard's
// files: when the state is built afresh, reading every file, the files are
// handed to seen as they are read, and not read twice.
func (sh *Shard) refreshSeeing(seen *seenFiles) (*state, error) {
	sh.touch()
	return sh.follow(true, seen.see)
}

// at returns a file as seen holds it, if it was read at st's head.
func (s *seenFiles) at(st *state, path string) (*factFile, bool) {
	ff, ok := s.files[path]
	return ff, ok && s.head == st.head
}

// fileSeen returns a fact file of st parsed, as seen holds it when it was
// read at st's head, and read otherwise.
func (sh *Shard) fileSeen(st *state, seen *seenFiles, path string) (*factFile, error) {
	if ff, ok := seen.at(st, path); ok {
		return ff, nil
	}
	return sh.file(st, path)
}

// follow catches the shard up with main. Without need, a shard whose
// files were given up and whose main has not moved since memd last looked
// stays without them (and the state returned is nil).
func (sh *Shard) follow(need bool, see func(Hash, *factFile)) (*state, error) {
	head, err := sh.visibleHead()
	if err != nil {
		return nil, err
	}
	if st := sh.cur.Load(); st != nil && st.head == head && !sh.owedDue() {
		return st, nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	// Read main again under the lock: a writer may have moved it, and
	// stored its state, while this call waited; the head read before
	// would take the state back to an older commit.
	if head, err = readRef(sh.gitDir, mainRef); err != nil {
		return nil, err
	}
	if !need && sh.cur.Load() == nil && head == sh.seen && !sh.owedDue() {
		return nil, nil
	}
	return sh.catchUpSeeing(head, see)
}

// setState makes st the shard's state. The caller holds sh.mu.
func (sh *Shard) setState(st *state) {
	sh.cur.Store(st)
	sh.seen = st.head
}

// replaceState makes what next returns the shard's state, or gives the
// state up when next fails. next may change the current state's where in
// place (a state made from it shares it): it runs under sh.places, so a
// reader sees the old state with its where, or the new one with its. The
// caller holds sh.mu.
func (sh *Shard) replaceState(next func() (*state, error)) (*state, error) {
	sh.places.Lock()
	defer sh.places.Unlock()
	st, err := next()
	if err != nil {
		sh.cur.Store(nil) // rebuilt from scratch next time
		return nil, err
	}
	sh.setState(st)
	return st, nil
}

// withPlaces calls fn with the shard's state, read again if it was given
// up. fn may read the state's where: it runs under sh.places, not sh.mu,
// and so does not wait for a commit under way. It must not read files
// (a commit's end would wait for it) nor take sh.mu.
func (sh *Shard) withPlaces(fn func(st *state)) error {
	sh.places.RLock()
	if st := sh.cur.Load(); st != nil {
		defer sh.places.RUnlock()
		sh.touch()
		fn(st)
		return nil
	}
	sh.places.RUnlock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st, err := sh.lockedState()
	if err != nil || st == nil {
		return err
	}
	fn(st)
	return nil
}

// pathsOf returns the shard's state and the paths of the files holding
// fact id in it (see withPlaces); a nil state when there is none.
func (sh *Shard) pathsOf(id string) (st *state, paths []string, err error) {
	err = sh.withPlaces(func(at *state) { st, paths = at, at.where.get(id) })
	return st, paths, err
}

// Refresh reads a move of main made outside memd — a person's commit, a
// pull — as the next read would: it checks the commits since for facts a
// stale git index dropped, and commits them back. Unlike a read, it reads
// the shard's files only if main moved since memd last looked.
func (sh *Shard) Refresh() error {
	_, err := sh.follow(false, nil)
	return err
}

// catchUp moves the state to head. The caller holds sh.mu.
func (sh *Shard) catchUp(head Hash) (*state, error) { return sh.catchUpSeeing(head, nil) }

// catchUpSeeing is catchUp, handing see each file read if the state is
// built afresh.
func (sh *Shard) catchUpSeeing(head Hash, see func(Hash, *factFile)) (*state, error) {
	if err := sh.errIfClosed(); err != nil {
		return nil, err // a catch-up may commit a restore
	}
	prev := sh.cur.Load()
	owed := sh.owed.Load()
	if prev != nil && prev.head == head && !sh.owedDue() {
		sh.saveOwed() // before memd's own next commit, if it could not be saved
		return prev, nil
	}
	base := sh.seen
	if prev != nil {
		base = prev.head
	}
	if owed != nil {
		base = *owed // a restore that failed is tried again from where it began
	}
	st := prev
	if prev == nil || prev.head != head {
		var err error
		if st, err = sh.replaceState(func() (*state, error) { return sh.loadSeeing(prev, head, see) }); err != nil {
			return nil, fmt.Errorf("shard %s: read HEAD %s: %w", sh.id, short(head), err)
		}
	}
	if base.IsZero() || base == head {
		sh.settleOwed()
		return st, nil
	}
	// Commits from outside memd may have come from a stale index.
	for attempt := 0; ; attempt++ {
		restored, err := sh.restoreDropped(base, st)
		if !errors.Is(err, errRefMoved) || attempt == 5 {
			if err != nil {
				sh.store.log.Warn("restoring facts a stale index dropped; tried again at the next write or read", "shard", sh.id, "err", err)
				sh.oweRestore(base)
			} else if sh.store.opts.Restore != nil && restored != nil {
				sh.settleOwed()
				sh.markJudged(restored.head)
			}
			return restored, nil
		}
		// Someone committed meanwhile: read on and look again.
		if head, err = readRef(sh.gitDir, mainRef); err != nil {
			return st, err
		}
		if st, err = sh.replaceState(func() (*state, error) { return sh.load(sh.cur.Load(), head) }); err != nil {
			return nil, err
		}
	}
}

// load builds the state at head, re-reading only the files that differ
// from prev when prev is given. A shard's files are read a few at a time, and
// only where their facts are is kept.
func (sh *Shard) load(prev *state, head Hash) (*state, error) { return sh.loadSeeing(prev, head, nil) }

// loadSeeing is load, handing see each file it reads, parsed, when it
// reads them all.
func (sh *Shard) loadSeeing(prev *state, head Hash, see func(Hash, *factFile)) (*state, error) {
	st := &state{head: head, files: make(map[string]fileAt), parsed: make(map[string]*factFile), where: newFactPlaces()}
	if head.IsZero() {
		return st, nil
	}
	if prev == nil && see == nil {
		// Where facts were when memd last let them go, and what changed
		// since, cost far less than every file; a save that does not
		// lead here (a tree since pruned) is passed over. One under way
		// is waited for.
		if sh.saving != nil {
			<-sh.saving
			sh.saving = nil
		}
		if saved := sh.savedState(); saved != nil {
			st, err := sh.loadSeeing(saved, head, nil)
			if err == nil {
				return st, nil
			}
			sh.store.log.Warn("the saved places do not lead to HEAD; reading every file", "shard", sh.id, "saved", short(saved.head), "err", err)
		}
	}
	c, err := sh.readCommit(head)
	if err != nil {
		return nil, err
	}
	st.root = c.tree
	t := &trees{db: sh.db}
	if prev == nil || prev.root.IsZero() {
		if err := sh.placeAll(st, see); err != nil {
			return nil, err
		}
		return st, nil
	}

	// Incremental: the writer owns prev.where, and prev is being replaced.
	st.where = prev.where
	maps.Copy(st.files, prev.files)
	maps.Copy(st.parsed, prev.parsed)
	err = t.diffFiles(prev.root, st.root, "", keepFactPaths, func(path string, from, to Hash) error {
		old := prev.parsed[path]
		if old == nil && !from.IsZero() {
			var err error
			if old, err = sh.readFactFile(path, from); err != nil {
				return err
			}
		}
		if to.IsZero() {
			delete(st.files, path)
			delete(st.parsed, path)
			if old != nil {
				st.reindex(path, old.facts, nil, nil)
			}
			return nil
		}
		obj, err := sh.db.Get(to)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		next, gone, came := reparse(path, old, obj.Data)
		next.blob = to
		st.files[path] = fileAt{blob: to, size: len(obj.Data)}
		if prev.parsed[path] != nil {
			st.parsed[path] = next // still the writer's
		} else {
			delete(st.parsed, path)
		}
		st.reindex(path, gone, came, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// placeAll records every fact file at st's root, and where each fact is:
// the files are read a few at a time, over the processors, and let go, or
// parsed whole and handed to see.
func (sh *Shard) placeAll(st *state, see func(Hash, *factFile)) error {
	placingAll()
	var files []pathBlob
	t := &trees{db: sh.db}
	err := t.walkFiles(st.root, "", keepFactPaths, func(path string, blob Hash) error {
		files = append(files, pathBlob{path, blob})
		return nil
	})
	if err != nil {
		return err
	}
	type placed struct {
		keys []uint64
		file *factFile // parsed, for see
		size int
	}
	// Without see, every file's keys are taken before any is placed, so
	// that where is made once at its size.
	var keyed []placed
	facts := 0
	err = readFiles(sh, files, func(f pathBlob, data []byte) placed {
		if see == nil {
			return placed{keys: factLineKeys(data), size: len(data)}
		}
		return placed{file: &factFile{path: f.path, blob: f.blob, data: data, facts: parseFactFile(f.path, data)}, size: len(data)}
	}, func(f pathBlob, p placed) { // in the tree's order, as one reader would
		st.files[f.path] = fileAt{blob: f.blob, size: p.size}
		if ff := p.file; ff != nil {
			for _, lf := range ff.facts {
				st.where.add(lf.ID, f.path)
			}
			see(st.head, ff)
			return
		}
		keyed = append(keyed, p)
		facts += len(p.keys)
	})
	if err != nil || see != nil {
		return err
	}
	st.where.reserve(facts)
	for i, p := range keyed {
		for _, k := range p.keys {
			st.where.addKey(k, files[i].path)
		}
	}
	return nil
}

// readFiles reads files a few at a time over the processors, makes each
// into a T with read, in parallel, and hands them to done in their order:
// at most a few files' worth is held at once beyond what done keeps.
func readFiles[T any](sh *Shard, files []pathBlob, read func(pathBlob, []byte) T, done func(pathBlob, T)) error {
	workers := runtime.GOMAXPROCS(0)
	for len(files) > 0 {
		batch := files[:min(len(files), 4*workers)]
		files = files[len(batch):]
		out := make([]T, len(batch))
		errs := make([]error, len(batch))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, len(batch)) {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(batch); i = int(next.Add(1) - 1) {
					obj, err := sh.db.Get(batch[i].blob)
					if err != nil {
						errs[i] = fmt.Errorf("read %s: %w", batch[i].path, err)
						continue
					}
					out[i] = read(batch[i], obj.Data)
				}
			})
		}
		wg.Wait()
		for i, f := range batch {
			if errs[i] != nil {
				return errs[i]
			}
			done(f, out[i])
		}
	}
	return nil
}

// reindex updates where for a file whose lines gone were replaced by the
// lines came, giving now (nil: the file went). A fact whose line went
// stays in the file if a person wrote it there twice.
func (st *state) reindex(path string, gone, came []lineFact, now *factFile) {
	var left map[string]bool
	for _, f := range gone {
		if left == nil && now != nil {
			left = make(map[string]bool, len(now.facts))
			for _, lf := range now.facts {
				left[lf.ID] = true
			}
		}
		if !left[f.ID] {
			st.where.drop(f.ID, path)
		}
	}
	for _, f := range came {
		st.where.add(f.ID, path)
	}
}

func appendUnique(paths []string, p string) []string {
	if slices.Contains(paths, p) {
		return paths
	}
	return append(paths, p)
}

// reparse reads a new version of a fact file, parsing only the lines
// between what it shares with the old version at the start and at the end
// (one line, when a fact was appended to a large log). It returns the new
// file, and the fact lines that went and came.
func reparse(path string, old *factFile, data []byte) (next *factFile, gone, came []lineFact) {
	next = &factFile{path: path, data: data}
	if old == nil {
		next.facts = parseFactFile(path, data)
		return next, nil, next.facts
	}
	p, endOld, endNew := changedRange(old.data, data)
	shift := endNew - endOld
	came = parseFactFile(path, data[p:endNew])
	facts := make([]lineFact, 0, len(old.facts)+len(came))
	for _, lf := range old.facts {
		switch {
		case lf.end <= p:
			facts = append(facts, lf) // in the shared head
		case lf.start >= endOld:
		default:
			gone = append(gone, lf)
		}
	}
	for i := range came {
		came[i].start += p
		came[i].end += p
	}
	facts = append(facts, came...)
	for _, lf := range old.facts {
		if lf.start >= endOld {
			lf.start += shift
			lf.end += shift
			facts = append(facts, lf) // in the shared tail, moved
		}
	}
	next.facts = facts
	return next, gone, came
}

// keepFactPaths selects profile.md, log/YYYY-MM.md and log/YYYY-MM/DD.md
// while walking a tree.
func keepFactPaths(p string) bool {
	return p == LogDir+"/" || isLogMonthDir(p) || IsFactFile(p)
}

func (sh *Shard) readFactFile(path string, blob Hash) (*factFile, error) {
	obj, err := sh.db.Get(blob)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &factFile{path: path, blob: blob, data: obj.Data, facts: parseFactFile(path, obj.Data)}, nil
}
