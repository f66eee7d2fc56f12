package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/remote"
	"github.com/memd/memd/daemon/vectors"
	"github.com/memd/memd/learn"
)

// servingGC is the garbage collector's percentage while memd serves, unless
// GOGC says otherwise. memd's heap is mostly its index, alive for good;
// Go's default lets the heap double past what is alive before collecting,
// which would double memd's footprint. A quarter leaves room enough for
// what requests allocate, and a collection marks a heap that requests
// change little.
const servingGC = 25

// runServe is long for its flags, declared one per line, and the start's
// steps in order.
func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[flags]", "Run the memd daemon: the HTTP API on loopback, over the shards in the data directory.")
	data := fs.String("data", dataDir(e), "data directory, created if missing (env MEMD_DATA)")
	listenDefault := e.getenv("MEMD_LISTEN")
	if listenDefault == "" {
		listenDefault = daemon.DefaultListen
	}
	listen := fs.String("listen", listenDefault, "address to listen on (env MEMD_LISTEN)")
	level := fs.String("log-level", envOr(e, "MEMD_LOG_LEVEL", "info"), "log level: debug (adds an access log: route, status, caller, time; never a token), info, warn or error (env MEMD_LOG_LEVEL)")
	logFormat := fs.String("log-format", envOr(e, "MEMD_LOG_FORMAT", "text"), "log format: text (key=value lines) or json (one object a line) (env MEMD_LOG_FORMAT)")
	noSync := fs.Bool("no-fsync", false, "do not fsync commits (faster; a machine crash may lose acknowledged writes)")
	noHook := fs.Bool("no-commit-hook", false, "do not write the hooks that check commits and merges made by hand in each shard (memd hook), and remove those written before")
	embedURL := fs.String("embed-url", e.getenv("MEMD_EMBED_URL"), "OpenAI-compatible API base URL for embeddings; recall finds facts by meaning too when set (env MEMD_EMBED_URL)")
	embedModel := fs.String("embed-model", envOr(e, "MEMD_EMBED_MODEL", "text-embedding-3-small"), "embedding model (env MEMD_EMBED_MODEL)")
	embedKey := fs.String("embed-key", e.getenv("MEMD_EMBED_KEY"), "API key for the embeddings endpoint (env MEMD_EMBED_KEY)")
	embedWeight := fs.Float64("embed-weight", 0.3, "share of a hit's score meaning decides, above 0 and at most 1; a stronger model may deserve more (env MEMD_EMBED_WEIGHT)")
	modelURL := fs.String("model-url", e.getenv("MEMD_MODEL_URL"), "OpenAI-compatible API base URL of the model that learns from exchanges; learning is off without it (env MEMD_MODEL_URL)")
	model := fs.String("model", envOr(e, "MEMD_MODEL", "gpt-4o-mini"), "model name (env MEMD_MODEL)")
	modelKey := fs.String("model-key", e.getenv("MEMD_MODEL_KEY"), "API key of the model endpoint (env MEMD_MODEL_KEY)")
	modelCalls := fs.Int("model-calls", envInt(e, "MEMD_MODEL_CALLS", 4), "at most this many model calls at once (env MEMD_MODEL_CALLS)")
	modelTimeout := fs.Duration("model-timeout", envDuration(e, "MEMD_MODEL_TIMEOUT", 60*time.Second), "time limit of one model call (env MEMD_MODEL_TIMEOUT)")
	modelMaxTokens := fs.Int("model-max-tokens", envInt(e, "MEMD_MODEL_MAX_TOKENS", learn.DefaultMaxTokens), "the longest answer asked of the model, in tokens; an answer cut off there fails, its last line could be half a fact (env MEMD_MODEL_MAX_TOKENS)")
	remoteURL := fs.String("remote", e.getenv("MEMD_REMOTE"), "git remote of every shard, with {shard} or {kind} and {name} in it, e.g. /srv/memory/{shard}.git or git://host/{shard}.git; a remote named memd in a shard's own git config wins (env MEMD_REMOTE)")
	fetchEvery := fs.Duration("fetch-every", envDuration(e, "MEMD_FETCH_EVERY", time.Minute), "how often shards with a remote are fetched and merged; 0 fetches only on command (memd remote sync) and before a rejected push is retried (env MEMD_FETCH_EVERY)")
	pushDelay := fs.Duration("push-delay", envDuration(e, "MEMD_PUSH_DELAY", time.Second), "how long a commit waits for others to share its push (env MEMD_PUSH_DELAY)")
	synthesis := fs.Bool("synthesis", envBool(e, "MEMD_SYNTHESIS"), "run synthesis passes: merge, rewrite and remove learned facts, each change citing evidence and approved by a second model call; needs --model-url (env MEMD_SYNTHESIS=1)")
	synthesisEvery := fs.Int("synthesis-every", envInt(e, "MEMD_SYNTHESIS_EVERY", 20), "with --synthesis: run a pass over an agent's memory once this many of its exchanges are learned; 0 runs passes only by hand (memd synthesize) (env MEMD_SYNTHESIS_EVERY)")
	approverModel := fs.String("approver-model", e.getenv("MEMD_APPROVER_MODEL"), "with --synthesis: the model of the approving call; default the --model (env MEMD_APPROVER_MODEL)")
	approverURL := fs.String("approver-url", e.getenv("MEMD_APPROVER_URL"), "with --synthesis: the OpenAI-compatible API base URL of the approving model; default --model-url (env MEMD_APPROVER_URL)")
	approverKey := fs.String("approver-key", e.getenv("MEMD_APPROVER_KEY"), "API key of the approving model's endpoint; default --model-key when the URL is the same (env MEMD_APPROVER_KEY)")
	keepMessages := days(envOr(e, "MEMD_KEEP_MESSAGES", "0"))
	fs.Var(&keepMessages, "keep-messages", "drop the kept text of chat messages older than this (e.g. 90d or 720h) even while a fact cites them; 0 keeps a text while a fact cites it (env MEMD_KEEP_MESSAGES)")
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	keep, err := keepMessages.duration()
	if err != nil {
		return err
	}
	if *fetchEvery < 0 || *pushDelay <= 0 {
		return memd.Errorf(memd.EINVALID, "--fetch-every must be 0 or more and --push-delay more than 0")
	}
	if err := remote.ValidateTemplate(*remoteURL); err != nil {
		return err
	}
	if e.getenv("GOGC") == "" {
		debug.SetGCPercent(servingGC)
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return memd.Errorf(memd.EINVALID, "--log-level %q: want debug, info, warn or error", *level)
	}
	var logger *slog.Logger
	switch *logFormat {
	case "text":
		logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: lv}))
	case "json":
		logger = slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: lv}))
	default:
		return memd.Errorf(memd.EINVALID, "--log-format %q: want text or json", *logFormat)
	}
	dir, err := filepath.Abs(*data)
	if err != nil {
		return err
	}
	cfg := daemon.Config{DataDir: dir, Listen: *listen, Logger: logger, NoSync: *noSync, KeepMessages: keep,
		Remote: remote.Config{Template: *remoteURL, FetchEvery: *fetchEvery, PushDelay: *pushDelay}}
	if *fetchEvery == 0 {
		cfg.Remote.FetchEvery = -1
	}
	if *noHook {
		cfg.RemoveHooks = true
	} else {
		cfg.PreCommit = hookBinary(logger)
	}
	if v := e.getenv("MEMD_EMBED_WEIGHT"); v != "" && !isSet(fs.FlagSet, "embed-weight") {
		if *embedWeight, err = strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("MEMD_EMBED_WEIGHT: %q is not a number", v)
		}
	}
	if *embedWeight <= 0 || *embedWeight > 1 {
		return fmt.Errorf("--embed-weight: %g is not above 0 and at most 1", *embedWeight)
	}
	if *embedURL != "" {
		cfg.Embeddings = &vectors.Config{BaseURL: *embedURL, Model: *embedModel, APIKey: *embedKey, Weight: *embedWeight}
	}
	if *modelURL != "" {
		cfg.Model = &learn.ModelConfig{BaseURL: *modelURL, Model: *model, APIKey: *modelKey, Timeout: *modelTimeout, MaxTokens: *modelMaxTokens}
	}
	if *modelMaxTokens < 64 {
		return memd.Errorf(memd.EINVALID, "--model-max-tokens must be 64 or more: the answer holds lines of facts")
	}
	if *modelCalls < 1 {
		return memd.Errorf(memd.EINVALID, "--model-calls must be 1 or more")
	}
	cfg.ModelCalls = *modelCalls
	if *synthesis {
		if cfg.Model == nil {
			return memd.Errorf(memd.EINVALID, "--synthesis needs a model: set --model-url too")
		}
		if *synthesisEvery < 0 {
			return memd.Errorf(memd.EINVALID, "--synthesis-every must be 0 or more")
		}
		cfg.Synthesis = &daemon.SynthesisConfig{Every: *synthesisEvery}
		if *approverModel != "" || *approverURL != "" {
			approver := *cfg.Model
			if *approverModel != "" {
				approver.Model = *approverModel
			}
			if *approverURL != "" && *approverURL != *modelURL {
				approver.BaseURL, approver.APIKey = *approverURL, *approverKey
			} else if *approverKey != "" {
				approver.APIKey = *approverKey
			}
			cfg.Synthesis.Approver = &approver
		}
	}
	if err := daemon.CheckConfig(cfg); err != nil {
		return err
	}
	// Every setting is checked now. Then the port: memd that cannot serve
	// creates nothing.
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another memd serving there? --listen picks another address)", *listen, err)
	}
	defer func() {
		if ln != nil {
			ln.Close()
		}
	}()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}

	cfg.Listener = ln
	d, err := daemon.Open(cfg)
	if err != nil {
		return err
	}
	ln = nil // the daemon's now
	tokenNote := ""
	if d.AdminTokenCreated {
		tokenNote = " (created now; it is the key to all memory, keep it private)"
	}
	fmt.Fprintf(e.stdout, "memd %s serving %s\n", memd.Version, d.URL())
	fmt.Fprintf(e.stdout, "  data:        %s\n", dir)
	fmt.Fprintf(e.stdout, "  admin token: %s%s\n", filepath.Join(dir, auth.AdminTokenFile), tokenNote)
	if cfg.Model != nil {
		fmt.Fprintf(e.stdout, "  learning:    on, %s at %s\n", cfg.Model.Model, cfg.Model.BaseURL)
		if s := cfg.Synthesis; s != nil {
			approver := cfg.Model.Model
			if s.Approver != nil {
				approver = s.Approver.Model + " at " + s.Approver.BaseURL
			}
			every := fmt.Sprintf("every %d learned exchanges and ", s.Every)
			if s.Every == 0 {
				every = ""
			}
			fmt.Fprintf(e.stdout, "  synthesis:   on, %sby memd synthesize; approved by %s\n", every, approver)
		}
	} else {
		fmt.Fprintf(e.stdout, "  learning:    off (--model-url turns it on)\n")
	}
	if *remoteURL != "" {
		fetched := "fetched every " + fetchEvery.String()
		if *fetchEvery == 0 {
			fetched = "fetched by memd remote sync"
		}
		fmt.Fprintf(e.stdout, "  remotes:     %s (pushed after commits, %s)\n", remote.Redact(*remoteURL), fetched)
	}
	// A sign-in link is the admin's for 15 minutes: shown to a person at a
	// terminal, never written where a service's output goes (a journal).
	if f, ok := e.stdout.(*os.File); ok && isTerminal(f) {
		fmt.Fprintf(e.stdout, "  web UI:      %s/login?code=%s   (one-time sign-in link, 15 minutes)\n", d.URL(), d.Sessions.LoginLink())
	} else {
		fmt.Fprintf(e.stdout, "  web UI:      %s/login   (sign in with the admin token)\n", d.URL())
	}
	fmt.Fprintf(e.stdout, "  try:         memd agent add alice   (Ctrl-C stops)\n")

	errc := make(chan error, 1)
	go func() { errc <- d.Serve() }()
	select {
	case err := <-errc:
		d.Shutdown(context.Background())
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := d.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return <-errc
}

// envDuration reads a duration from the environment, or returns def.
func envDuration(e *env, key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(e.getenv(key)); err == nil {
		return d
	}
	return def
}

// days is a duration flag that also takes whole days ("90d").
type days string

func (d *days) String() string     { return string(*d) }
func (d *days) Set(v string) error { *d = days(v); _, err := d.duration(); return err }

func (d *days) duration() (time.Duration, error) {
	v := string(*d)
	if n, ok := strings.CutSuffix(v, "d"); ok {
		if k, err := strconv.Atoi(n); err == nil && k >= 0 {
			return time.Duration(k) * 24 * time.Hour, nil
		}
	}
	if v == "0" {
		return 0, nil
	}
	t, err := time.ParseDuration(v)
	if err != nil || t < 0 {
		return 0, memd.Errorf(memd.EINVALID, "--keep-messages %q: want 0, a number of days (90d) or a duration (720h)", v)
	}
	return t, nil
}

// isSet reports whether a flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// envOr returns an environment variable, or def when it is unset.
func envOr(e *env, key, def string) string {
	if v := e.getenv(key); v != "" {
		return v
	}
	return def
}

// envBool reads a yes/no setting from the environment: 1, true or yes.
func envBool(e *env, key string) bool {
	v, err := strconv.ParseBool(e.getenv(key))
	return err == nil && v || strings.EqualFold(e.getenv(key), "yes")
}

// envInt reads a number from the environment, or returns def.
func envInt(e *env, key string, def int) int {
	if n, err := strconv.Atoi(e.getenv(key)); err == nil {
		return n
	}
	return def
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// hookBinary is the memd binary the shards' hooks run: this one, by the
// path it was started by when that names it (a link a package manager
// moves to each new version keeps doing so), else by its own path.
func hookBinary(log *slog.Logger) string {
	self, err := os.Executable()
	if err != nil {
		log.Warn("no hooks checking commits made by hand: memd cannot name its own binary", "err", err)
		return ""
	}
	return startedAs(os.Args[0], self, os.Getenv("PATH"))
}

// startedAs returns the absolute path arg0 names (looked up in PATH if
// a bare name) when it is the file self, else self.
func startedAs(arg0, self, path string) string {
	b, err := os.Stat(self)
	if err != nil {
		return self
	}
	candidates := []string{arg0}
	if !strings.Contains(arg0, "/") {
		candidates = nil
		for _, dir := range filepath.SplitList(path) {
			candidates = append(candidates, filepath.Join(dir, arg0))
		}
	}
	for _, c := range candidates {
		abs, err := filepath.Abs(c)
		if a, errA := os.Stat(abs); err == nil && errA == nil && os.SameFile(a, b) {
			return abs
		}
	}
	return self
}
