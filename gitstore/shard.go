package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
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
	// places guards the where of a state once it is cur: a writer, which
	// holds mu for a whole commit, changes it in place only under places,
	// and sets cur in the same hold, so that readers take places to read
	// it and never wait for a commit's writes and syncs.
	places sync.RWMutex
	// moving is the commit a writer is moving main to, from just before
	// main names it until cur is in step (nil otherwise): readers take
	// main for the commit before it meanwhile (see visibleHead).
	moving atomic.Pointer[Hash]
	// closed is set when the store closes (under mu): a change queued
	// meanwhile, and any other write, is refused rather than made after
	// the store let go of its data directory.
	closed atomic.Bool
	// seen is the commit of the last state memd held (or main when the
	// shard was opened): what a move of main made outside memd is checked
	// from, even after the state itself was given up. Guarded by mu.
	seen Hash
	// owed is where a restore of what a stale index dropped began, while
	// it failed (a full disk): the next catch-up tries it again, even if
	// main has not moved, and a start after a stop reads it from
	// owedName. Nil when none is owed.
	owed atomic.Pointer[Hash]
	// owedRetry is when an owed restore is tried again if main has not
	// moved (Unix nanoseconds), so that a failure that lasts does not
	// cost every read and write a walk of the history; owedWait is the
	// wait before it, owedSaved tells that owed is in owedName (both
	// guarded by mu).
	owedRetry atomic.Int64
	owedWait  time.Duration
	owedSaved bool
	// proposed is the files at the tip of the branch proposed, as memd
	// last made it, so that the next proposal on it does not read them
	// all again. Guarded by mu; given up with cur.
	proposed *state
	// bases are the packed bases of the files memd writes (packbase.go);
	// baseUses counts their uses, for which to give up. Guarded by mu.
	bases    map[string]*packedBase
	baseUses uint64

	qmu      sync.Mutex
	queue    []*request
	draining bool
	arrived  chan struct{} // a change was queued (capacity one; a wake-up)
	// answered is when each author's last change was answered, for
	// telling writers who come straight back (see nextGroup). Guarded by
	// qmu.
	answered map[Signature]time.Time

	// saveMu serialises saving where facts are (savedplaces.go), and
	// guards placesSaved, the commit saved last, and placesGone: no save
	// is on disk. saving, guarded by mu, is closed when the save of the
	// state given up last is done.
	saveMu      sync.Mutex
	placesSaved Hash
	placesGone  bool
	saving      chan struct{}

	// leftWorktree says memd moved main while HEAD was away from it and
	// the working tree was left to the checkout (see catchUpCheckout).
	leftWorktree atomic.Bool

	repacking   atomic.Bool
	repackTimer *time.Timer // guarded by mu
	repackMu    sync.Mutex  // held while git repack runs
	// repackAfter is when a background repack may run again after one
	// failed (unix nanoseconds; 0: at once).
	repackAfter atomic.Int64

	// The working tree and index, guarded by mu: paths whose index entry
	// lags HEAD (with the version it holds), and the blobs memd recently
	// put in the index for each path.
	behind     map[string]*factFile
	behindNext map[string]*factFile
	// worktreeAt holds, for paths whose index entry waits, the version
	// memd brought the working file to (nil: removed): the base to merge
	// memd's next change into what the file holds.
	worktreeAt map[string]*factFile
	// steps holds, for each path, what memd's last write found and left
	// (see lastStep), then that write run back through each run of the
	// writes before it that found the file as the one before left it (see
	// following, settleRacedCheckout).
	steps map[string][]stepRecord
	// ownNotes holds, while memd's own commits move main, the notes they
	// change, and ownTracked the files of the commit they build on (see
	// noteSavedOver).
	ownNotes   map[string]*factFile
	ownTracked func(path string) bool
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
// A published state is never modified, except where, which the writer
// changes in place under Shard.places (see replaceState).
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
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		return nil, err
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
				if owed := sh.readOwed(); !owed.IsZero() {
					sh.seen = owed
					sh.owed.Store(&owed)
					sh.owedSaved = true
				}
			}
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("shard %s: read HEAD: %w", id, err)
	}
	if !sh.headOnMain() {
		// A person's checkout of another commit or branch (see away.go):
		// its working tree is left alone, and what memd was bringing into
		// main's is git's to bring when main is checked out again.
		sh.dropJournal()
		s.log.Info("HEAD is not on main in this shard: memd commits to main and leaves the working tree to the checkout", "shard", id)
	} else if err := sh.finishWorktree(main, root); err != nil {
		s.log.Warn("shard working tree not in step with HEAD", "shard", id, "err", err)
	}
	if readAwayBase(sh.gitDir) != (Hash{}) {
		sh.leftWorktree.Store(true) // see catchUpCheckout
	}
	if err := sh.installHooks(); err != nil {
		s.log.Warn("a person's commits in the shard go unchecked", "shard", id, "err", err)
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

// errIfClosed refuses a write once the store has closed. A write that
// holds sh.mu asks under it, so close cannot come between.
func (sh *Shard) errIfClosed() error {
	if sh.closed.Load() {
		return memd.Errorf(memd.EUNAVAILABLE, "store is closed")
	}
	return nil
}

func (sh *Shard) close() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.closed.Store(true)
	if sh.repackTimer != nil {
		sh.repackTimer.Stop()
	}
	if sh.indexTimer != nil {
		sh.indexTimer.Stop()
	}
	sh.behind, sh.behindNext, sh.worktreeAt, sh.written, sh.steps = nil, nil, nil, nil, nil
	sh.savePlaces(sh.cur.Load())
	sh.db.Close()
}

// ID returns the shard's ID.
func (sh *Shard) ID() memd.ShardID { return sh.id }

// Dir returns the shard's working tree.
func (sh *Shard) Dir() string { return sh.dir }
