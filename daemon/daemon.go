package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/access"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/feed"
	"github.com/memd/memd/daemon/githttp"
	"github.com/memd/memd/daemon/httpapi"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/metrics"
	"github.com/memd/memd/daemon/remote"
	"github.com/memd/memd/daemon/transcript"
	"github.com/memd/memd/daemon/vectors"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/learn"
	"github.com/memd/memd/learn/chatmodel"
	"github.com/memd/memd/provenance"
	"github.com/memd/memd/web"
)

// IndexFile is the index's file in the data directory; deleting it loses
// nothing.
const IndexFile = "index.db"

// LearnerFile is the learner's queue in the data directory: exchanges not
// yet learned, failures, and the turns awaiting an episode.
const LearnerFile = "learner.db"

// MessagesFile keeps the text of the chat messages facts cite.
const MessagesFile = "messages.db"

// DefaultListen is where the daemon listens unless told otherwise: loopback.
const DefaultListen = "127.0.0.1:7420"

// Config configures a Daemon.
type Config struct {
	DataDir string
	Listen  string // host:port; DefaultListen when empty, port 0 picks one
	Logger  *slog.Logger
	Now     func() time.Time
	NoSync  bool // skip fsync (tests and benchmarks)
	// Embeddings, when set, is the endpoint recall by meaning embeds
	// facts and queries with.
	Embeddings *vectors.Config
	// PollInterval is how often every shard is checked for commits made
	// outside memd, for the feed, beside the watch on their refs that sees
	// such commits at once; 30s when zero.
	PollInterval time.Duration
	// Model, when set, turns learning on: exchanges are learned from with
	// this OpenAI-compatible chat model.
	Model *learn.ModelConfig
	// Listener, when set, is listened on instead of Listen: the caller
	// opened it before anything was created, so a busy port leaves no
	// trace.
	Listener net.Listener
	// Synthesis, when set with Model, runs synthesis passes over agents'
	// own shards.
	Synthesis *SynthesisConfig
	// ModelCalls bounds the model calls made at once: the agents learned
	// from at once, each job making one call at a time (4 when zero).
	ModelCalls int
	// LearnRetryBase is the learner's first backoff (2s when zero).
	LearnRetryBase time.Duration
	// Remote configures pushing to and fetching from git remotes; shards
	// without a remote (no Template, none in their git config) stay local.
	Remote remote.Config
	// KeepMessages, when set, drops the text of chat messages older than
	// this even while a fact cites them; zero keeps a text while a fact
	// cites its message.
	KeepMessages time.Duration
	// PreCommit, when set, is the memd binary the hooks written in each
	// shard run, checking commits made there by hand; RemoveHooks, set
	// instead, removes the hooks memd wrote.
	PreCommit   string
	RemoveHooks bool
	// FeedPing is how often an open feed connection is pinged; one
	// silent for three times that is dropped (20s when zero).
	FeedPing time.Duration
}

// SynthesisConfig configures synthesis passes.
type SynthesisConfig struct {
	// Every starts a pass over an agent's shard once this many of its
	// learned exchanges are queued as evidence; 0 runs passes only when
	// asked (memd synthesize).
	Every int
	// Approver is the model of the approving call; the learner's model
	// when nil.
	Approver *learn.ModelConfig
}

// Daemon is a running memd: the store, the service and its HTTP server.
type Daemon struct {
	Store    *gitstore.Store
	Index    *index.Index
	Feed     *feed.Hub
	Registry *auth.Registry
	Service  *Service
	// AdminTokenCreated is true when this start created the admin token.
	AdminTokenCreated bool
	// Sessions are the web UI's signed-in browsers.
	Sessions *web.Sessions

	log    *slog.Logger
	ln     net.Listener
	server *http.Server
	stop   context.CancelFunc // stops background work
	bg     sync.WaitGroup
}

// openFeed makes the feed, counting what it publishes and drops in m, and
// telling the service, once there is one, of a shard's main moved.
func openFeed(cfg Config, store *gitstore.Store, m *metrics.Metrics, service *atomic.Pointer[Service]) (*feed.Hub, error) {
	return feed.New(store, cfg.Logger, feed.Hooks{
		Published: func(op string) { m.Commits.WithLabelValues(op).Inc(); m.FeedDelivered.Inc() },
		Dropped:   func() { m.FeedDrops.Inc() },
		Described: func() { m.FeedReplayed.Inc() },
		// Proposals stay on top of main, whoever moves it.
		Moved: func(id memd.ShardID) {
			if s := service.Load(); s != nil {
				s.rebuildSoon(id)
			}
		},
	})
}

// Open opens the store in cfg.DataDir (creating it), and listens. It
// builds the daemon in dependency order (storage, metrics, the feed, the
// remotes, the service, the listener), and closes what it opened, in
// reverse, if a step fails.
func Open(cfg Config) (*Daemon, error) {
	if err := CheckConfig(cfg); err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	// The index, the feed, the remotes and the service hear of memd's own
	// commits at once; they are made after the store that tells them, so
	// the store reaches them through pointers.
	var hub atomic.Pointer[feed.Hub]
	var syncer atomic.Pointer[remote.Syncer]
	var service atomic.Pointer[Service]
	var indexer atomic.Pointer[index.Index]
	st, opened, err := openStorage(cfg, func(id memd.ShardID) {
		if x := indexer.Load(); x != nil {
			x.Committed(id)
		}
		notifyCommit(hub.Load(), syncer.Load(), id)
		if s := service.Load(); s != nil && s.meaning != nil {
			s.meaning.wake() // a new fact wants its vector
		}
	}, notifyCreated(&hub))
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Daemon, error) {
		for i := len(opened) - 1; i >= 0; i-- {
			opened[i].Close()
		}
		return nil, err
	}
	store, reg, idx := st.store, st.registry, st.index

	m := metrics.New(func() int {
		if h := hub.Load(); h != nil {
			return h.Subscribers()
		}
		return 0
	}, memd.Version, runtime.Version())
	idx.OnCatchUp = func(_ memd.ShardID, took time.Duration, _ bool) { m.CatchUpSeconds.Observe(took.Seconds()) }
	indexer.Store(idx) // told of commits from here on, its hook set
	h, err := openFeed(cfg, store, m, &service)
	if err != nil {
		return fail(err)
	}
	hub.Store(h)
	syncr, err := remote.New(store, remoteConfig(cfg, m))
	if err != nil {
		return fail(err)
	}
	syncer.Store(syncr)

	svc, err := newService(cfg, st, h, syncr, m)
	if err != nil {
		return fail(err)
	}
	if svc.meaning != nil {
		opened = append(opened, svc.meaning)
	}
	if svc.Learner != nil {
		opened = append(opened, svc.Learner)
	}
	service.Store(svc)

	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return fail(fmt.Errorf("listen on %s: %w", cfg.Listen, err))
		}
	}
	d := &Daemon{
		Store: store, Index: idx, Feed: h, Registry: reg, Service: svc, AdminTokenCreated: st.adminCreated,
		Sessions: web.NewSessions(), log: cfg.Logger, ln: ln,
	}
	d.server = d.httpServer(cfg, m)
	d.start(cfg.PollInterval)
	return d, nil
}

// notifyCreated tells the feed, once it exists, of a shard memd created,
// which it watches from then on.
func notifyCreated(hub *atomic.Pointer[feed.Hub]) func(memd.ShardID) {
	return func(id memd.ShardID) {
		if h := hub.Load(); h != nil {
			h.Notify(id)
		}
	}
}

// notifyCommit tells the feed and the remotes, once they exist, of a
// commit memd made in shard id.
func notifyCommit(h *feed.Hub, s *remote.Syncer, id memd.ShardID) {
	if h != nil {
		h.Notify(id)
	}
	if s != nil {
		s.Notify(id)
	}
}

// storage is what the daemon keeps in its data directory.
type storage struct {
	store        *gitstore.Store
	registry     *auth.Registry
	adminCreated bool // this start created the admin token
	index        *index.Index
	messages     *transcript.Store
}

// openStorage opens the data directory's parts, returning those to close
// (in reverse) when the start fails later; on an error of its own it has
// closed them already.
func openStorage(cfg Config, onCommit, onCreate func(memd.ShardID)) (st storage, opened []io.Closer, err error) {
	defer func() {
		if err != nil {
			for i := len(opened) - 1; i >= 0; i-- {
				opened[i].Close()
			}
			opened = nil
		}
	}()
	st.store, err = gitstore.Open(cfg.DataDir, gitstore.Options{Now: cfg.Now, NoSync: cfg.NoSync, Logger: cfg.Logger,
		OnCommit: onCommit, OnCreate: onCreate, Restore: provenance.RestoreMessage, Merge: provenance.MergeMessage,
		PreCommit: cfg.PreCommit, RemoveHooks: cfg.RemoveHooks})
	if err != nil {
		return st, nil, err
	}
	opened = append(opened, st.store)
	if st.registry, st.adminCreated, err = auth.Open(cfg.DataDir, cfg.Now); err != nil {
		return st, opened, err
	}
	if st.index, err = index.Open(filepath.Join(cfg.DataDir, IndexFile), st.store, cfg.Logger); err != nil {
		return st, opened, err
	}
	opened = append(opened, st.index)
	if st.messages, err = transcript.Open(filepath.Join(cfg.DataDir, MessagesFile), cfg.Now); err != nil {
		return st, opened, err
	}
	opened = append(opened, st.messages)
	st.messages.Errors = func(err error) { cfg.Logger.Warn("the quotes of recent commits are lost", "err", err) }
	return st, opened, nil
}

// withDefaults fills in what cfg leaves unset.
func withDefaults(cfg Config) Config {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 30 * time.Second
	}
	return cfg
}

// remoteConfig is cfg's remote configuration, reporting to m.
func remoteConfig(cfg Config, m *metrics.Metrics) remote.Config {
	rcfg := cfg.Remote
	// The syncer's clock stays the real one: it schedules pushes on timers.
	rcfg.Logger = cfg.Logger
	rcfg.Hooks = remote.Hooks{
		Pushed:  func(result string) { m.RemotePushes.WithLabelValues(result).Inc() },
		Fetched: func(ok bool) { m.RemoteFetches.WithLabelValues(okOrError(ok)).Inc() },
		Integrated: func(kind string, conflicts int) {
			m.RemoteIntegrations.WithLabelValues(kind).Inc()
			m.RemoteConflicts.Add(float64(conflicts))
		},
	}
	return rcfg
}

// newService is the service over st, with the learner and the recall by
// meaning cfg asks for.
func newService(cfg Config, st storage, h *feed.Hub, syncr *remote.Syncer, m *metrics.Metrics) (svc *Service, err error) {
	svc = &Service{Syncer: syncr, Store: st.store, Index: st.index, Feed: h, Registry: st.registry, Messages: st.messages,
		KeepMessages: cfg.KeepMessages, Metrics: m, Now: cfg.Now, Logger: cfg.Logger, Started: cfg.Now()}
	// The vectors before the learner: the vectors' file is closed by
	// Open's cleanup, which the learner is not handed yet.
	if cfg.Embeddings != nil {
		svc.meaning = openMeaning(cfg, st.index, func(f *vectors.Filler) {
			f.OnRequest = func(n int, err error) {
				m.EmbeddedFacts.WithLabelValues(okOrError(err == nil)).Add(float64(n))
			}
		})
		m.WatchVectors(func() (held, pending float64) {
			st := svc.meaning.status()
			return float64(st.Vectors), float64(st.Pending)
		})
	}
	if cfg.Model != nil {
		if svc.Learner, err = openLearner(cfg, svc, st.messages, h, m); err != nil {
			if svc.meaning != nil {
				svc.meaning.Close()
			}
			return nil, err
		}
	}
	return svc, nil
}

// openLearner opens the learner of cfg.Model (and synthesis, when set)
// over svc, announcing what it learns on h.
func openLearner(cfg Config, svc *Service, kept *transcript.Store, h *feed.Hub, m *metrics.Metrics) (*learn.Learner, error) {
	var syn *learn.Synthesis
	if cfg.Synthesis != nil {
		syn = &learn.Synthesis{Memory: learnerMemory{svc}, Every: cfg.Synthesis.Every}
		if cfg.Synthesis.Approver != nil {
			syn.Approver = timed(chatmodel.New(*cfg.Synthesis.Approver), m)
		}
	}
	return learn.Open(filepath.Join(cfg.DataDir, LearnerFile), learn.Config{
		Synthesis: syn,
		Model:     timed(chatmodel.New(*cfg.Model), m), Memory: learnerMemory{svc}, RetryBase: cfg.LearnRetryBase, Workers: cmp.Or(cfg.ModelCalls, 4),
		Now: cfg.Now, Logger: cfg.Logger, Keep: kept.Keep,
		Registered: func(agent string) bool { _, ok := svc.Registry.Agent(agent); return ok },
		Hooks: learn.Hooks{
			Queue: func(n int) { m.LearnerQueue.Set(float64(n)) },
			Done: func(st memd.ExchangeStatus) {
				if o := st.Synthesis; o != nil {
					m.Synthesis.WithLabelValues("applied").Add(float64(o.Applied))
					m.Synthesis.WithLabelValues("refused").Add(float64(o.Refused))
					m.Synthesis.WithLabelValues("rejected").Add(float64(o.Rejected))
				}
				h.Announce(memd.FeedEvent{Type: memd.EventLearned, Shard: memd.AgentShard(st.Agent),
					Exchange: st.ID, Learned: st.Commits, Time: cfg.Now()})
			},
			Failed: func(st memd.ExchangeStatus) {
				m.LearnerFailures.Inc()
				h.Announce(memd.FeedEvent{Type: memd.EventLearnerFailed, Shard: memd.AgentShard(st.Agent),
					Exchange: st.ID, Error: st.Error, Time: cfg.Now()})
			},
		},
	})
}

// httpServer is the daemon's HTTP server: the API, MCP, git and the web
// UI, each through the rules of access and the metrics.
func (d *Daemon) httpServer(cfg Config, m *metrics.Metrics) *http.Server {
	svc, reg := d.Service, d.Registry
	guarded := m.Instrument(access.Guard(svc, access.Rules{Member: reg.IsMember, Projects: reg.Projects}))
	api := httpapi.New(guarded, reg, cfg.Logger, m.Handler())
	api.Ready = svc.ready
	api.FeedPing = cfg.FeedPing
	api.Observe = func(route string, status int, took time.Duration) {
		m.Requests.WithLabelValues(route, strconv.Itoa(status)).Observe(took.Seconds())
	}
	api.Mount("/mcp", mcpHandler(guarded, cfg.Logger))
	api.MountGit(githttp.Prefix, githttp.Handler(guarded, httpapi.WriteGitError))
	api.Sessions = d.Sessions
	api.Open("/", web.New(d.Sessions, reg))
	return &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
}

// start starts the background work: reading every shard's index (a start
// answers at once; each shard is read when a call first needs it), the
// feed's polling, the remotes, the learner and the sweep of kept messages.
func (d *Daemon) start(poll time.Duration) {
	var ctx context.Context
	ctx, d.stop = context.WithCancel(context.Background())
	d.Index.ReadAll()
	svc := d.Service
	jobs := []func(context.Context){
		func(ctx context.Context) { d.Feed.Run(ctx, poll) },
		svc.Syncer.Run,
		svc.sweepMessages,
	}
	if svc.Learner != nil {
		jobs = append(jobs, svc.Learner.Run)
	}
	if svc.meaning != nil {
		jobs = append(jobs, svc.meaning.runFiller)
	}
	for _, job := range jobs {
		d.bg.Add(1)
		go func() {
			defer d.bg.Done()
			job(ctx)
		}()
	}
}

// URL is the base URL of the API.
func (d *Daemon) URL() string { return "http://" + d.ln.Addr().String() }

// Serve serves the API until Shutdown.
func (d *Daemon) Serve() error {
	err := d.server.Serve(d.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests, waits for those in flight (until ctx
// ends), and closes the store.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.Feed.Close()
	err := d.server.Shutdown(ctx)
	d.stop()
	d.bg.Wait()
	if d.Service.Learner != nil {
		if cerr := d.Service.Learner.Close(); err == nil {
			err = cerr
		}
	}
	d.Service.stopBackground()
	if d.Service.meaning != nil {
		if cerr := d.Service.meaning.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := d.Service.Messages.Close(); err == nil {
		err = cerr
	}
	if cerr := d.Index.Close(); err == nil {
		err = cerr
	}
	if cerr := d.Store.Close(); err == nil {
		err = cerr
	}
	return err
}

func okOrError(ok bool) string {
	if ok {
		return "ok"
	}
	return "error"
}

// CheckConfig reports a setting Open refuses, so that a caller can refuse
// it before creating anything: a model name that cannot stand as the value
// of a Model or Approved-By trailer (a line break in it would write
// trailers of its own into every learned commit).
func CheckConfig(cfg Config) error {
	models := []*learn.ModelConfig{cfg.Model}
	if cfg.Synthesis != nil {
		models = append(models, cfg.Synthesis.Approver)
	}
	for _, mc := range models {
		if mc == nil {
			continue
		}
		if err := provenance.CheckModel(mc.Model); err != nil {
			return fmt.Errorf("model: %w", err)
		}
	}
	if e := cfg.Embeddings; e != nil {
		if strings.TrimSpace(e.Model) == "" {
			return fmt.Errorf("embeddings: name the model (--embed-model)")
		}
		if e.Weight < 0 || e.Weight > 1 || math.IsNaN(e.Weight) {
			return fmt.Errorf("embeddings: the weight of meaning must be between 0 and 1, not %g", e.Weight)
		}
	}
	return nil
}
