// Package remote keeps shards in step with git remotes: it pushes a shard's
// commits soon after they are made (several commits, one push), fetches on
// a schedule and on command, and integrates what it fetched through
// gitstore (a fast-forward, or a merge that keeps every fact).
//
// gitstore runs the git CLI for the transport, so a remote is anything git
// reaches: a bare repository's path, git://, http(s):// or ssh. A shard's remote is
// remote.memd.url in its own .git/config (set with `git remote add memd
// URL` in the shard), else the store's URL template with the shard filled in.
package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// Name is the remote's name in a shard's git config, and of the
// remote-tracking branch a fetch writes (refs/remotes/memd/main).
const Name = "memd"

const trackingRef = "refs/remotes/" + Name + "/main"

// Config configures a Syncer.
type Config struct {
	// Template is the remote of every shard without one of its own, with
	// {shard} (agent/alice), {kind} (agent) and {name} (alice) filled in;
	// empty: only shards with their own remote sync.
	Template string
	// FetchEvery is how often every shard with a remote is fetched (one
	// minute when zero; negative: only on command and before pushes).
	FetchEvery time.Duration
	// PushDelay is how long a commit waits for others to share its push
	// (one second when zero).
	PushDelay time.Duration
	Logger    *slog.Logger
	Hooks     Hooks
	// Now is the clock (time.Now when nil). Pushes wait on real timers
	// until the times it gives, so it must keep pace with them.
	Now func() time.Time
}

// Hooks report what the syncer does, for metrics.
type Hooks struct {
	Pushed     func(result string) // ok, rejected (then fetched and merged) or error
	Fetched    func(ok bool)
	Integrated func(kind string, conflicts int)
}

// ValidateTemplate checks a URL template names the shard.
func ValidateTemplate(t string) error {
	if t == "" || strings.Contains(t, "{shard}") || strings.Contains(t, "{kind}") && strings.Contains(t, "{name}") {
		return nil
	}
	return memd.Errorf(memd.EINVALID, "remote URL template %q must name the shard with {shard}, or with {kind} and {name}", t)
}

// Syncer pushes and fetches the shards of a store.
type Syncer struct {
	store *gitstore.Store
	cfg   Config
	log   *slog.Logger

	mu       sync.Mutex
	shards   map[memd.ShardID]*shardSync
	wake     chan struct{}
	bg       sync.WaitGroup
	fetching atomic.Bool // a scheduled fetch is running
}

// shardSync is one shard's remote state.
type shardSync struct {
	op sync.Mutex // one fetch or push of the shard at a time

	// Guarded by Syncer.mu.
	status   memd.RemoteStatus
	due      time.Time // push due; zero when nothing waits
	inflight bool
	failures int
	notified uint64 // commits notified so far
}

// New returns a syncer; Run starts its background work.
func New(store *gitstore.Store, cfg Config) (*Syncer, error) {
	if err := ValidateTemplate(cfg.Template); err != nil {
		return nil, err
	}
	if cfg.FetchEvery == 0 {
		cfg.FetchEvery = time.Minute
	}
	if cfg.PushDelay == 0 {
		cfg.PushDelay = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Hooks.Pushed == nil {
		cfg.Hooks.Pushed = func(string) {}
	}
	if cfg.Hooks.Fetched == nil {
		cfg.Hooks.Fetched = func(bool) {}
	}
	if cfg.Hooks.Integrated == nil {
		cfg.Hooks.Integrated = func(string, int) {}
	}
	return &Syncer{store: store, cfg: cfg, log: cfg.Logger, shards: make(map[memd.ShardID]*shardSync), wake: make(chan struct{}, 1)}, nil
}

func (s *Syncer) shard(id memd.ShardID) *shardSync {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.shards[id]
	if ss == nil {
		ss = &shardSync{status: memd.RemoteStatus{Shard: id}}
		s.shards[id] = ss
	}
	return ss
}

// URL returns a shard's remote, and false when it has none.
func (s *Syncer) URL(id memd.ShardID) (string, bool) {
	if u := s.ownURL(id); u != "" {
		return u, true
	}
	if s.cfg.Template == "" {
		return "", false
	}
	r := strings.NewReplacer("{shard}", id.String(), "{kind}", string(id.Kind), "{name}", id.Name)
	return r.Replace(s.cfg.Template), true
}

// ownURL returns remote.memd.url from the shard's git config.
func (s *Syncer) ownURL(id memd.ShardID) string {
	u, err := s.store.RemoteURL(id, Name)
	if err != nil {
		s.log.Warn("unreadable git config in shard", "shard", id, "err", err)
	}
	return u
}

// Notify tells the syncer a shard has a new commit: it is pushed once
// PushDelay has passed, with whatever else was committed meanwhile. It runs
// on the shard's writer.
func (s *Syncer) Notify(id memd.ShardID) {
	if s.cfg.Template == "" && s.ownURL(id) == "" {
		return
	}
	ss := s.shard(id)
	s.mu.Lock()
	if ss.due.IsZero() {
		ss.due = s.cfg.Now().Add(s.cfg.PushDelay)
	}
	ss.notified++
	ss.status.Pending = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run fetches every shard with a remote at once and then on schedule, and
// pushes shards as their commits come due, until ctx ends.
func (s *Syncer) Run(ctx context.Context) {
	defer s.bg.Wait()
	s.fetchAll(ctx)
	var fetch <-chan time.Time
	if s.cfg.FetchEvery > 0 {
		t := time.NewTicker(s.cfg.FetchEvery)
		defer t.Stop()
		fetch = t.C
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(s.startDue(ctx))
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		case <-fetch:
			s.fetchAll(ctx)
		}
	}
}

// fetchAll syncs every shard with a remote in the background, unless the
// last round is still going.
func (s *Syncer) fetchAll(ctx context.Context) {
	if !s.fetching.CompareAndSwap(false, true) {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.fetching.Store(false)
		if _, err := s.Sync(ctx, nil); err != nil && ctx.Err() == nil {
			s.log.Debug("scheduled fetch", "err", err)
		}
	}()
}

// startDue starts the pushes that are due and returns how long until the
// next one is.
func (s *Syncer) startDue(ctx context.Context) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	wait := time.Hour
	for id, ss := range s.shards {
		if ss.due.IsZero() || ss.inflight {
			continue
		}
		if d := ss.due.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		ss.due, ss.inflight = time.Time{}, true
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			err := s.push(ctx, id)
			s.mu.Lock()
			ss.inflight = false
			if err != nil && ctx.Err() == nil {
				// Try again later, backing off to a minute.
				ss.failures++
				if ss.due.IsZero() {
					ss.due = s.cfg.Now().Add(min(time.Minute, s.cfg.PushDelay<<min(ss.failures, 6)))
				}
			} else {
				ss.failures = 0
			}
			s.mu.Unlock()
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}()
	}
	return wait
}

// Status returns the state of every shard with a remote.
func (s *Syncer) Status() ([]memd.RemoteStatus, error) {
	ids, err := s.store.Shards()
	if err != nil {
		return nil, err
	}
	out := []memd.RemoteStatus{}
	for _, id := range ids {
		u, ok := s.URL(id)
		if !ok {
			continue
		}
		out = append(out, s.statusOf(id, u))
	}
	return out, nil
}

// Summary counts the shards with a remote and those whose last fetch or
// push failed, without reading each shard's head as Status does.
func (s *Syncer) Summary() (remotes, failing int, err error) {
	ids, err := s.store.Shards()
	if err != nil {
		return 0, 0, err
	}
	for _, id := range ids {
		if _, ok := s.URL(id); !ok {
			continue
		}
		remotes++
		ss := s.shard(id)
		s.mu.Lock()
		if ss.status.Error != "" {
			failing++
		}
		s.mu.Unlock()
	}
	return remotes, failing, nil
}

func (s *Syncer) statusOf(id memd.ShardID, u string) memd.RemoteStatus {
	ss := s.shard(id)
	s.mu.Lock()
	st := ss.status
	s.mu.Unlock()
	st.Conflicts = slices.Clone(st.Conflicts)
	st.URL = Redact(u)
	if sh, err := s.store.Shard(id); err == nil {
		if h, err := sh.Head(); err == nil && !h.IsZero() {
			st.Head = h.String()
		}
	}
	return st
}

// Sync fetches, integrates and pushes the shards named (when none is: every
// shard with a remote, and every shard a remote in a shared directory
// holds), one after the other, and returns their state, with any fetch or
// push that failed in its Error. A shard that does not exist here is
// created from its remote.
func (s *Syncer) Sync(ctx context.Context, ids []memd.ShardID) ([]memd.RemoteStatus, error) {
	all := len(ids) == 0
	found := make(map[memd.ShardID]bool) // shards only the remotes have
	if all {
		var err error
		if ids, err = s.store.Shards(); err != nil {
			return nil, err
		}
		for _, id := range s.remoteOnly() {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
				found[id] = true
			}
		}
	}
	var out []memd.RemoteStatus
	var errs []error
	for _, id := range ids {
		u, ok := s.URL(id)
		if !ok {
			if !all {
				errs = append(errs, memd.Errorf(memd.EINVALID, "shard %s has no remote: start memd serve with --remote, or run git remote add %s URL in the shard", id, Name))
			}
			continue
		}
		err := s.syncOne(ctx, id, u)
		if found[id] && memd.ErrorCode(err) == memd.ENOTFOUND {
			continue // an empty repository there
		}
		if err != nil && memd.ErrorCode(err) != memd.EINTERNAL {
			errs = append(errs, err) // a fetch or push that failed is in the status
		}
		out = append(out, s.statusOf(id, u))
	}
	return out, errors.Join(errs...)
}

func (s *Syncer) syncOne(ctx context.Context, id memd.ShardID, u string) error {
	ss := s.shard(id)
	ss.op.Lock()
	defer ss.op.Unlock()
	sh, err := s.store.Shard(id)
	if memd.ErrorCode(err) == memd.ENOTFOUND {
		// Brought here from the remote, if the remote has it.
		if has, lerr := gitstore.RemoteHasMain(ctx, os.TempDir(), u); lerr != nil || !has {
			return memd.Errorf(memd.ENOTFOUND, "shard %s is neither here nor on its remote %s", id, Redact(u))
		}
		sh, err = s.store.CreateShard(id)
	}
	if err != nil {
		return err
	}
	if err := s.fetch(ctx, sh, ss, u); err != nil {
		return err
	}
	return s.pushLocked(ctx, sh, ss, u)
}

// remoteOnly lists the shards the template's remotes hold when they are
// repositories on this machine (a shared directory), so that every shard
// there comes here; a remote reached over the network cannot be listed.
func (s *Syncer) remoteOnly() []memd.ShardID {
	t := s.cfg.Template
	if !filepath.IsAbs(t) {
		return nil
	}
	glob := strings.NewReplacer("{shard}", "*/*", "{kind}", "*", "{name}", "*").Replace(t)
	re, err := regexp.Compile("^" + strings.NewReplacer(`\{shard\}`, `(?P<kind>[^/]+)/(?P<name>[^/]+)`,
		`\{kind\}`, `(?P<kind>[^/]+)`, `\{name\}`, `(?P<name>[^/]+)`).Replace(regexp.QuoteMeta(t)) + "$")
	if err != nil {
		return nil
	}
	paths, _ := filepath.Glob(glob)
	var ids []memd.ShardID
	for _, p := range paths {
		m := re.FindStringSubmatch(p)
		if m == nil {
			continue
		}
		id, err := memd.ParseShardID(m[re.SubexpIndex("kind")] + "/" + m[re.SubexpIndex("name")])
		if err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// push pushes a shard's main to its remote.
func (s *Syncer) push(ctx context.Context, id memd.ShardID) error {
	u, ok := s.URL(id)
	if !ok {
		return nil
	}
	ss := s.shard(id)
	ss.op.Lock()
	defer ss.op.Unlock()
	sh, err := s.store.Shard(id)
	if err != nil {
		return err
	}
	return s.pushLocked(ctx, sh, ss, u)
}

// pushLocked pushes main; when the remote has moved on, it fetches,
// integrates and tries again. The caller holds ss.op.
func (s *Syncer) pushLocked(ctx context.Context, sh *gitstore.Shard, ss *shardSync, u string) error {
	// settled records that main as read is on the remote: a push scheduled
	// by a commit it holds is not needed, unless a commit was notified
	// after main was read. (Reading main under s.mu could deadlock with a
	// writer notifying a commit.)
	settled := func(seen uint64) {
		s.mu.Lock()
		if ss.notified == seen {
			ss.due = time.Time{}
		}
		ss.status.Pending = !ss.due.IsZero()
		s.mu.Unlock()
	}
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		seen, remote := ss.notified, ss.status.Remote
		s.mu.Unlock()
		head, err := sh.Head()
		if err != nil {
			return s.failed(ss, "push", err)
		}
		if head.IsZero() || head.String() == remote {
			settled(seen)
			return nil
		}
		err = sh.Push(ctx, u, head)
		if err == nil {
			s.mu.Lock()
			ss.status.Remote, ss.status.PushedAt = head.String(), s.cfg.Now()
			ss.status.Error, ss.status.ErrorAt = "", time.Time{}
			s.mu.Unlock()
			settled(seen)
			s.cfg.Hooks.Pushed("ok") // once the status says so
			return nil
		}
		if !errors.Is(err, gitstore.ErrPushRejected) || attempt == 3 {
			err = s.failed(ss, "push", err)
			s.cfg.Hooks.Pushed("error") // once the status says so
			return err
		}
		// Someone else pushed first: bring their commits in, then push the
		// merge.
		s.cfg.Hooks.Pushed("rejected")
		if err := s.fetch(ctx, sh, ss, u); err != nil {
			return err
		}
	}
}

// fetch fetches the remote's main and integrates it. The caller holds ss.op.
func (s *Syncer) fetch(ctx context.Context, sh *gitstore.Shard, ss *shardSync, u string) error {
	theirs, err := sh.Fetch(ctx, u, trackingRef)
	if errors.Is(err, gitstore.ErrRemoteEmpty) {
		// An empty remote: nothing to bring in; the push creates main.
		s.cfg.Hooks.Fetched(true)
		s.mu.Lock()
		ss.status.FetchedAt, ss.status.Remote = s.cfg.Now(), ""
		s.mu.Unlock()
		return nil
	}
	if err != nil {
		s.cfg.Hooks.Fetched(false)
		return s.failed(ss, "fetch", err)
	}
	s.cfg.Hooks.Fetched(true)
	in, err := sh.Integrate(theirs, gitstore.IntegrateOptions{From: Redact(u)})
	if err != nil {
		return s.failed(ss, "integrate", err)
	}
	s.cfg.Hooks.Integrated(in.Kind, len(in.Conflicts))
	if in.Kind == gitstore.IntegrateMerge {
		s.log.Info("merged commits from the remote", "shard", sh.ID(), "commits", in.Commits, "merge", in.Head.String()[:12], "conflicts", in.Conflicts)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.status.FetchedAt, ss.status.Remote = s.cfg.Now(), theirs.String()
	ss.status.Integrated = in.Kind
	if in.Kind != gitstore.IntegrateNone {
		ss.status.Conflicts = in.Conflicts
	}
	ss.status.Error, ss.status.ErrorAt = "", time.Time{}
	return nil
}

func (s *Syncer) failed(ss *shardSync, what string, err error) error {
	err = fmt.Errorf("%s %s: %w", what, ss.status.Shard, err)
	s.mu.Lock()
	first := ss.status.Error == ""
	ss.status.Error, ss.status.ErrorAt = strings.Join(strings.Fields(err.Error()), " "), s.cfg.Now() // git's output, on one line
	s.mu.Unlock()
	if first {
		s.log.Warn("remote", "shard", ss.status.Shard, "err", err)
	}
	return err
}

// Redact removes a password or token from a remote URL.
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	return p.Redacted()
}
