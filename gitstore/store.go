// Package gitstore keeps memd's shards as git repositories. It is the only
// package that touches git: it owns the fact-line format, writes one commit
// per change with its own pack writer and git's lock-file protocol, keeps
// each shard's working tree and index in step with HEAD, and reads history
// and fact-level diffs back.
package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// Now is the clock used for commit times; time.Now when nil.
	Now func() time.Time
	// NoSync skips fsync of packs and refs. Acknowledged writes then survive
	// a crash of memd but not of the machine. For tests and benchmarks.
	NoSync bool
	// CacheBytes bounds the object cache shared by all shards (default 16
	// MiB: a busy month's log goes on in files a day, so that is dozens of
	// the largest files memd writes).
	CacheBytes int
	// RepackAt is the number of packs in a shard from which memd compacts
	// them in the background with git repack (default 32; -1 disables).
	RepackAt int
	// Logger receives warnings and background errors; slog.Default when nil.
	Logger *slog.Logger
	// OnCommit, when set, is told each time memd moves a shard's branch. It
	// runs on the writer's goroutine and must not block.
	OnCommit func(memd.ShardID)
	// OnCreate, when set, is told of each shard memd creates (no commit
	// yet), so that what watches the shards' branches watches it before a
	// person's first commit in it. It must not block.
	OnCreate func(memd.ShardID)
	// Restore, when set, turns on restoring facts that a git commit made
	// from a stale index dropped, with commits whose messages it formats.
	Restore RestoreMessage
	// Merge formats the messages of the merge commits memd makes when it
	// integrates a remote's or a push's commits; a subject alone when nil.
	Merge MergeMessage
	// PreCommit, when set, is the memd binary each shard's hooks (Hooks)
	// run (`memd hook`, see CheckStaged), so that a person's commit made
	// by hand in a shard is checked as a push is. A shard with a hook memd
	// did not write keeps it.
	PreCommit string
	// RemoveHooks, when set and PreCommit is not, removes the hooks memd
	// wrote (memd serve --no-commit-hook). A store given neither leaves
	// the hooks as they are (memd reindex and import open it so).
	RemoveHooks bool
}

// Store is one data directory's shards. One process at a time may open a
// store; a lock file in the data directory enforces it.
type Store struct {
	dir   string
	opts  Options
	cache *odb.Cache
	diffs *diffCache
	lock  *os.File
	log   *slog.Logger

	// baseBytes is the memory the shards' packed bases take.
	baseBytes atomic.Int64

	mu     sync.Mutex
	shards map[memd.ShardID]*Shard
	closed bool
	bg     sync.WaitGroup // background repacks
	done   chan struct{}  // closed when the store closes

	configMu sync.Mutex
	configs  map[memd.ShardID]remoteConfig // see RemoteURL
}

// ErrLocked is returned by Open when another process holds the store.
var ErrLocked = errors.New("store is locked by another process")

// Open opens (creating if needed) the store in dir and locks it.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = 16 << 20
	}
	if opts.RepackAt == 0 {
		opts.RepackAt = 32
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Merge == nil {
		opts.Merge = plainMergeMessage
	}
	if err := os.MkdirAll(filepath.Join(dir, "shards"), 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	lock, err := lockStore(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{
		dir:    dir,
		opts:   opts,
		cache:  odb.NewCache(opts.CacheBytes),
		diffs:  newDiffCache(),
		lock:   lock,
		log:    opts.Logger,
		shards: make(map[memd.ShardID]*Shard),
		done:   make(chan struct{}),
	}
	removeOldMergeDirs(os.TempDir(), opts.Now())
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.dropIdleStates()
	}()
	return s, nil
}

// lockStore takes an exclusive flock on dir/memd.lock and records our pid.
func lockStore(dir string) (*os.File, error) {
	path := filepath.Join(dir, "memd.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("%w (pid %s holds %s)", ErrLocked, pid, path)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// background runs fn in a goroutine Close waits for, unless the store is
// closing, and reports whether it did.
func (s *Store) background(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		fn()
	}()
	return true
}

// Dir returns the data directory.
func (s *Store) Dir() string { return s.dir }

// Close waits for background work, closes every shard and releases the lock.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	shards := s.shards
	s.mu.Unlock()
	close(s.done)
	s.bg.Wait()
	for _, sh := range shards {
		sh.close()
	}
	s.lock.Truncate(0)
	return s.lock.Close()
}

// ShardDir returns the working tree of a shard.
func (s *Store) ShardDir(id memd.ShardID) string {
	return filepath.Join(s.dir, "shards", string(id.Kind), id.Name)
}

// Shard opens an existing shard; ENOTFOUND when there is none.
func (s *Store) Shard(id memd.ShardID) (*Shard, error) {
	sh, _, err := s.open(id, false)
	return sh, err
}

// CreateShard opens a shard, creating its repository if needed (and
// telling OnCreate).
func (s *Store) CreateShard(id memd.ShardID) (*Shard, error) {
	sh, created, err := s.open(id, true)
	if created && s.opts.OnCreate != nil {
		s.opts.OnCreate(id)
	}
	return sh, err
}

func (s *Store) open(id memd.ShardID, create bool) (sh *Shard, created bool, err error) {
	if _, err := memd.ParseShardID(id.String()); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, memd.Errorf(memd.EUNAVAILABLE, "store is closed")
	}
	if sh, ok := s.shards[id]; ok {
		return sh, false, nil
	}
	dir := s.ShardDir(id)
	if st, err := os.Stat(filepath.Join(dir, ".git")); err == nil && !st.IsDir() {
		// A linked worktree a person made beside a shard (see Shards).
		return nil, false, memd.Errorf(memd.ENOTFOUND, "no shard %s: its folder holds a git worktree of another repository", id)
	} else if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, false, memd.Errorf(memd.ENOTFOUND, "no shard %s", id)
		}
		if err := initRepo(dir); err != nil {
			return nil, false, fmt.Errorf("create shard %s: %w", id, err)
		}
		created = true
	} else if err != nil {
		return nil, false, fmt.Errorf("open shard %s: %w", id, err)
	} else if !isRepo(dir) {
		if !create {
			return nil, false, memd.Errorf(memd.ENOTFOUND, "no shard %s: its folder's .git has no HEAD, so holds no repository", id)
		}
		return nil, false, memd.Errorf(memd.ECONFLICT, "shard %s: its folder's .git has no HEAD, so holds no repository (a removal of the folder left half done?); move %s away and memd makes the shard again", id, dir)
	}
	sh, err = openShard(s, id, dir)
	if err != nil {
		return nil, created, fmt.Errorf("open shard %s: %w", id, err)
	}
	s.shards[id] = sh
	return sh, created, nil
}

// checkedOut is told by the ref watcher that HEAD changed in a shard: an
// open shard takes out of a checkout away from main what memd wrote into
// it as it was made (see undoUnlockedWrites), or brings its working tree
// to main if a checkout of main raced memd's move of it (catchUpCheckout),
// before the person's next git command if it can, and puts back what an
// aborted rebase took off main (restoreAbortedRebase).
func (s *Store) checkedOut(id memd.ShardID) {
	s.mu.Lock()
	sh := s.shards[id]
	closed := s.closed
	s.mu.Unlock()
	if sh != nil && !closed {
		sh.SyncWorktree(indexWait)
		sh.catchUpCheckout()
		sh.restoreAbortedRebaseNow()
	}
}

// Shards lists the shards in the store, sorted by kind and name.
func (s *Store) Shards() ([]memd.ShardID, error) {
	var ids []memd.ShardID
	for _, kind := range []memd.Kind{memd.KindAgent, memd.KindProject, memd.KindUser} {
		entries, err := os.ReadDir(filepath.Join(s.dir, "shards", string(kind)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list shards: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() || memd.ValidateName(e.Name()) != nil {
				continue
			}
			// A repository's own .git is a folder; a linked worktree's
			// (git worktree add beside the shard) is a file naming it. A
			// .git without HEAD is no repository (git says so too): what a
			// removal of the folder left half done, say. It is not listed,
			// so that the shards beside it are served (see open).
			if isRepo(filepath.Join(s.dir, "shards", string(kind), e.Name())) {
				ids = append(ids, memd.ShardID{Kind: kind, Name: e.Name()})
			}
		}
	}
	return ids, nil
}

// isRepo reports whether dir holds a repository of its own: a .git folder
// with a HEAD.
func isRepo(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, ".git"))
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, ".git", "HEAD"))
	return err == nil
}

// initRepo creates a non-bare repository on branch main. It is built in a
// temporary directory and renamed into place, so a crash never leaves half a
// repository where a shard should be.
func initRepo(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".init-"+filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	git := filepath.Join(tmp, ".git")
	for _, d := range []string{"objects/pack", "objects/info", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(git, d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"HEAD":        "ref: refs/heads/main\n",
		"config":      "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
		"description": "memd shard " + filepath.Base(parent) + "/" + filepath.Base(dir) + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(git, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // created by someone else meanwhile
		}
		return err
	}
	return nil
}
