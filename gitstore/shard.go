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
	"sync/atomic"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// Shard is one scope's memory: a git repository on branch main.
type Shard struct {
	id       memd.ShardID
	dir      string
	gitDir   string
	mainPath string // refs/heads/main's loose file
	store    *Store
	db       *odb.DB
	mainSeen atomic.Pointer[seenRef]
	used     atomic.Int64 // when the state was last used, Unix nanoseconds (see idle.go)

	// mu serialises writers and state reloads; cur is what readers see.
	mu  sync.Mutex
	cur atomic.Pointer[state]
	// seen is the commit of the last state memd held (or main when the
	// shard was opened): what a move of main made outside memd is checked
	// from, even after the state itself was given up. Guarded by mu.
	seen Hash
	// proposed is the files at the tip of the branch proposed, as memd
	// last made it, so that the next proposal on it does not read them
	// all again. Guarded by mu; given up with cur.
	proposed *state

	qmu      sync.Mutex
	queue    []*request
	draining bool
	arrived  chan struct{} // a change was queued (capacity one; a wake-up)

	// saveMu serialises saving where facts are (savedplaces.go), and
	// guards placesSaved, the commit saved last, and placesGone: no save
	// is on disk. saving, guarded by mu, is closed when the save of the
	// state given up last is done.
	saveMu      sync.Mutex
	placesSaved Hash
	placesGone  bool
	saving      chan struct{}

	repacking   atomic.Bool
	repackTimer *time.Timer // guarded by mu
	repackMu    sync.Mutex  // held while git repack runs

	// The working tree and index, guarded by mu: paths whose index entry
	// lags HEAD (with the version it holds), and the blobs memd recently
	// put in the index for each path.
	behind     map[string]*factFile
	behindNext map[string]*factFile
	// worktreeAt holds, for paths whose index entry waits, the version
	// memd brought the working file to (nil: removed): the base to merge
	// memd's next change into what the file holds.
	worktreeAt map[string]*factFile
	written    *writtenIndex // .git/index as memd last wrote it
	indexed    map[string][]Hash
	indexLate  bool
	indexTimer *time.Timer
	// indexMarkerOK says the file memd links as the index lock was
	// checked (see acquireIndexLock).
	indexMarkerOK bool
}

// state is a shard's facts at one commit: where each fact is, and the
// fact files it is in, which are read when a change or a lookup needs them.
// A published state is never modified, except where, which only the writer
// reads (under Shard.mu).
type state struct {
	head   Hash
	root   Hash
	files  map[string]fileAt    // every fact file, by path
	parsed map[string]*factFile // those memd's last write changed, held parsed
	where  *factPlaces          // fact ID → paths of the files holding it
}

// fileAt is a fact file's version in a state.
type fileAt struct {
	blob Hash
	size int
}

// facts is how many distinct fact IDs the state holds.
func (st *state) facts() int { return st.where.len() }

// file returns the fact file at path parsed, reading it unless the writer
// holds it so; nil when the state has no such file. What it reads is not
// kept: only the files the last write changed stay parsed.
func (sh *Shard) file(st *state, path string) (*factFile, error) {
	if ff := st.parsed[path]; ff != nil {
		return ff, nil
	}
	at, ok := st.files[path]
	if !ok {
		return nil, nil
	}
	return sh.readFactFile(path, at.blob)
}

func openShard(s *Store, id memd.ShardID, dir string) (*Shard, error) {
	gitDir := filepath.Join(dir, ".git")
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(head)) != "ref: "+mainRef {
		return nil, memd.Errorf(memd.ECONFLICT, "shard %s: HEAD is not on branch main (%s); check out main there", id, strings.TrimSpace(string(head)))
	}
	db, removed, err := odb.OpenRepaired(filepath.Join(gitDir, "objects"), s.cache, !s.opts.NoSync)
	if err != nil {
		return nil, err
	}
	if removed > 0 {
		s.log.Warn("removed pack files memd was writing when it stopped; their commits were not acknowledged", "shard", id, "files", removed)
	}
	sh := &Shard{id: id, dir: dir, gitDir: gitDir, mainPath: filepath.Join(gitDir, filepath.FromSlash(mainRef)), store: s, db: db, arrived: make(chan struct{}, 1)}
	sh.clearReviewLocks()
	if from, to := sh.clearStaleLocks(); !to.IsZero() {
		sh.finishMove(from, to)
	}
	// main's commit must be readable; the files at it are read when a
	// write or lookup first needs them.
	main, err := readRef(gitDir, mainRef)
	var root Hash
	sh.seen = main
	if err == nil && !main.IsZero() {
		var c *commitInfo
		if c, err = sh.readCommit(main); err == nil {
			root = c.tree
			if s.opts.Restore != nil {
				sh.seen = sh.lastJudged(main, c)
			}
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("shard %s: read HEAD: %w", id, err)
	}
	if err := sh.finishWorktree(main, root); err != nil {
		s.log.Warn("shard working tree not in step with HEAD", "shard", id, "err", err)
	}
	sh.used.Store(0) // read to open it, not used yet: idle
	return sh, nil
}

// lastJudged returns the newest commit on main's first-parent line that
// memd made or had already checked for what a stale index dropped (as
// .git/memd-judged records), main itself when there is none nearby. The
// commits after it were made by people while memd was stopped, or in the
// moment before it stopped: the first read checks them, as it would have
// had memd seen them, and no commit is judged twice.
func (sh *Shard) lastJudged(main Hash, c *commitInfo) Hash {
	if c.byMemd() {
		return main // the common case, without reading the marker
	}
	judged := sh.readJudged()
	h := main
	for range staleLookback {
		if h == judged || c.byMemd() {
			return h
		}
		if len(c.parents) == 0 {
			break
		}
		h = c.parents[0]
		var err error
		if c, err = sh.readCommit(h); err != nil {
			break
		}
	}
	return main
}

// laggingFiles adds to touched the fact files and notes whose index
// entries name their version in a recent ancestor of HEAD rather than
// HEAD's: memd's own, left behind. Any other difference is a person's
// staged change.
func (sh *Shard) laggingFiles(head, root Hash, touched map[string]*factFile) error {
	idx, err := sh.readIndex()
	if err != nil {
		return err
	}
	check := func(path string, blob Hash) error {
		if _, ok := touched[path]; ok {
			return nil
		}
		e, err := idx.Entry(path)
		if err != nil {
			touched[path] = nil
			return nil
		}
		if indexed := Hash(e.Hash); indexed != blob && sh.inRecentHistory(head, path, indexed) {
			old, err := sh.fileVersion(path, indexed)
			if err != nil {
				return err
			}
			touched[path] = old
		}
		return nil
	}
	if root.IsZero() {
		return nil
	}
	t := &trees{db: sh.db}
	if err := t.walkFiles(root, "", keepFactPaths, check); err != nil {
		return err
	}
	return t.walkFiles(root, "", keepNotePaths, check)
}

// inRecentHistory reports whether path held blob in one of the last commits
// up to head (as many as one group commit writes, and some).
func (sh *Shard) inRecentHistory(head Hash, path string, blob Hash) bool {
	return sh.hadBlob([]Hash{head}, path, blob, 2*maxGroup+1)
}

// commitTrees returns the trees of two commits (zero for the zero hash).
func (sh *Shard) commitTrees(a, b Hash) (ta, tb Hash, err error) {
	for i, h := range []Hash{a, b} {
		if h.IsZero() {
			continue
		}
		c, err := sh.readCommit(h)
		if err != nil {
			return ta, tb, err
		}
		if i == 0 {
			ta = c.tree
		} else {
			tb = c.tree
		}
	}
	return ta, tb, nil
}

func (sh *Shard) close() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.repackTimer != nil {
		sh.repackTimer.Stop()
	}
	if sh.indexTimer != nil {
		sh.indexTimer.Stop()
	}
	sh.behind, sh.behindNext, sh.worktreeAt, sh.written = nil, nil, nil, nil
	sh.savePlaces(sh.cur.Load())
	sh.db.Close()
}

// clearStaleLocks removes lock files a crashed memd left behind: the index
// lock it marks as its own, and a ref lock nobody has touched for a minute
// (git holds one for milliseconds). A lock on main that memd left naming a
// commit ahead of main is kept, and the move returned (from, to; zero if
// none), for finishMove: memd writes that lock only once the commit's
// objects are on disk, and may already have put the commit's files in the
// working tree. Only one memd opens a store at a time.
func (sh *Shard) clearStaleLocks() (from, to Hash) {
	sh.removeTempFiles()
	index := filepath.Join(sh.gitDir, "index")
	if ownIndexLock(sh.gitDir) {
		os.Remove(index + ".lock")
		sh.store.log.Warn("removed the index lock memd left when it stopped", "shard", sh.id)
	}
	os.Remove(filepath.Join(sh.gitDir, indexMarkerName+".tmp"))
	os.Remove(index + replaceSuffix)
	os.Remove(filepath.Join(sh.gitDir, placesFile+".tmp")) // a save a kill cut short
	for _, name := range []string{"index", mainRef} {
		os.Remove(stagedLockPath(sh.gitDir, name))
	}
	ref := filepath.Join(sh.gitDir, mainRef+".lock")
	defer os.Remove(filepath.Join(sh.gitDir, movingMarker))
	b, err := os.ReadFile(ref)
	if err != nil {
		return from, to
	}
	if h, ok := sh.ownLock(b); ok {
		head, err := readRef(sh.gitDir, mainRef)
		if _, reached, rerr := sh.Range(head, h, ancestryLimit); err == nil && rerr == nil && reached && h != head {
			return head, h
		}
		os.Remove(ref)
		sh.store.log.Warn("removed the lock on main memd left when it stopped; the commit it names is not ahead of main", "shard", sh.id, "commit", short(h))
		return from, to
	}
	if s := strings.TrimSpace(string(b)); IsHash(s) && !sh.db.Has(NewHash(s)) {
		// git names in its lock a commit it has written; a commit that is
		// not there was memd's, in a pack a crash cut short (removed above).
		os.Remove(ref)
		sh.store.log.Warn("removed the lock on main memd left when it stopped; the commit it was making never reached the disk", "shard", sh.id)
		return from, to
	}
	if st, err := os.Stat(ref); err == nil && time.Since(st.ModTime()) > time.Minute {
		os.Remove(ref)
		sh.store.log.Warn("removed a stale lock on main", "shard", sh.id, "age", time.Since(st.ModTime()).Round(time.Second))
	}
	return from, to
}

// finishMove moves main from one commit to another as memd was doing when
// it stopped: the files it changes go in the working-tree journal first,
// then the lock memd left is renamed over main.
func (sh *Shard) finishMove(from, to Hash) {
	lock := filepath.Join(sh.gitDir, mainRef+".lock")
	err := sh.journalMove(from, to)
	if err == nil {
		err = sh.rollForward(lock)
	}
	if err != nil {
		os.Remove(lock)
		sh.store.log.Error("could not finish the commit memd was making when it stopped; dropped it", "shard", sh.id, "commit", short(to), "err", err)
		return
	}
	sh.store.log.Warn("finished the commit memd was making when it stopped", "shard", sh.id, "commit", short(to))
}

// rollForward renames a leftover lock on main over main, durably.
func (sh *Shard) rollForward(lock string) error {
	main := strings.TrimSuffix(lock, ".lock")
	if err := os.Rename(lock, main); err != nil {
		return err
	}
	if sh.store.opts.NoSync {
		return nil
	}
	return syncDirOf(main)
}

// removeTempFiles removes the files memd writes a working file's next
// version to before renaming it (see replaceWorking): one left by a
// crash is nobody's, and a person's git add -A would commit it.
func (sh *Shard) removeTempFiles() {
	filepath.WalkDir(sh.dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && path == sh.gitDir:
			return filepath.SkipDir
		case !d.IsDir() && strings.HasPrefix(d.Name(), worktreeTempPrefix):
			if os.Remove(path) == nil {
				sh.store.log.Warn("removed a file memd was writing when it stopped", "shard", sh.id, "file", path)
			}
		}
		return nil
	})
}

// ownLock reports whether the lock on main, holding lock, is memd's: it
// names a commit memd made, or the commit memd marked as the one it was
// moving main to (a push's).
func (sh *Shard) ownLock(lock []byte) (Hash, bool) {
	s := strings.TrimSpace(string(lock))
	if !IsHash(s) {
		return Hash{}, false
	}
	h := NewHash(s)
	c, err := sh.readCommit(h)
	if err != nil {
		return Hash{}, false
	}
	if c.byMemd() {
		return h, true
	}
	marked, err := os.ReadFile(filepath.Join(sh.gitDir, movingMarker))
	return h, err == nil && strings.TrimSpace(string(marked)) == s
}

// ID returns the shard's ID.
func (sh *Shard) ID() memd.ShardID { return sh.id }

// Dir returns the shard's working tree.
func (sh *Shard) Dir() string { return sh.dir }

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
	head, err := sh.mainHead()
	if err != nil {
		return nil, err
	}
	if st := sh.cur.Load(); st != nil && st.head == head {
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
	if !need && sh.cur.Load() == nil && head == sh.seen {
		return nil, nil
	}
	return sh.catchUpSeeing(head, see)
}

// setState makes st the shard's state. The caller holds sh.mu.
func (sh *Shard) setState(st *state) {
	sh.cur.Store(st)
	sh.seen = st.head
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
	prev := sh.cur.Load()
	if prev != nil && prev.head == head {
		return prev, nil
	}
	base := sh.seen
	if prev != nil {
		base = prev.head
	}
	st, err := sh.loadSeeing(prev, head, see)
	if err != nil {
		sh.cur.Store(nil) // rebuild from scratch next time
		return nil, fmt.Errorf("shard %s: read HEAD %s: %w", sh.id, short(head), err)
	}
	sh.setState(st)
	if base.IsZero() || base == head {
		return st, nil
	}
	// Commits from outside memd may have come from a stale index.
	for attempt := 0; ; attempt++ {
		restored, err := sh.restoreDropped(base, st)
		if !errors.Is(err, errRefMoved) || attempt == 5 {
			if err != nil {
				sh.store.log.Warn("restoring facts a stale index dropped", "shard", sh.id, "err", err)
			} else if sh.store.opts.Restore != nil && restored != nil {
				sh.markJudged(restored.head)
			}
			return restored, nil
		}
		// Someone committed meanwhile: read on and look again.
		if head, err = readRef(sh.gitDir, mainRef); err != nil {
			return st, err
		}
		if st, err = sh.load(sh.cur.Load(), head); err != nil {
			sh.cur.Store(nil)
			return nil, err
		}
		sh.setState(st)
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

// Head returns the commit at the tip of main (zero for an empty shard).
func (sh *Shard) Head() (Hash, error) {
	// Only main's commit: the files at it are read when something needs
	// them, not by everyone who asks where main is.
	return sh.mainHead()
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
	// Room for them all at once: where is the writer's, read under its lock.
	sh.mu.Lock()
	n := st.where.len()
	sh.mu.Unlock()
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

// factIn finds a fact by ID among the files at paths, which file reads.
func factIn(file func(path string) (*factFile, error), paths []string, id string) (memd.Fact, bool, error) {
	for _, p := range paths {
		ff, err := file(p)
		if err != nil {
			return memd.Fact{}, false, err
		}
		if ff == nil {
			continue
		}
		if lines := ff.linesOf(id); len(lines) > 0 {
			return lines[0].Fact, true, nil
		}
	}
	return memd.Fact{}, false, nil
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
	sh.mu.Lock()
	st, err := sh.lockedState()
	var f memd.Fact
	ok := false
	if st != nil {
		f, ok, err = factIn(func(path string) (*factFile, error) { return sh.file(st, path) }, st.where.get(id), id)
	}
	sh.mu.Unlock()
	if err != nil {
		return memd.Fact{}, err
	}
	if !ok {
		return memd.Fact{}, memd.Errorf(memd.ENOTFOUND, "shard %s holds no fact %s", sh.id, id)
	}
	f.Shard = sh.id
	return f, nil
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
	var out []Line
	seen := make(map[string]int)
	for _, path := range slices.SortedFunc(mapKeys(files), comparePaths) {
		for _, lf := range files[path].facts {
			if i, dup := seen[lf.ID]; dup {
				if out[i].Date.Before(lf.Date) {
					out[i] = lineOf(sh.id, lf)
				}
				continue
			}
			seen[lf.ID] = len(out)
			out = append(out, lineOf(sh.id, lf))
		}
	}
	return out, st.head, nil
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
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st, err := sh.lockedState()
	if err != nil {
		return nil, Hash{}, err
	}
	// Scan each file that holds a wanted fact once, whatever the number
	// of facts wanted.
	paths := make(map[string]bool)
	for _, id := range ids {
		for _, p := range st.where.get(id) {
			paths[p] = true
		}
	}
	found := make(map[string]Line)
	for p := range paths {
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
