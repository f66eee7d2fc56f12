// Package daemontest runs memd's daemon inside a test, as memd serve runs
// it: on a free loopback port, without fsync, stopped when the test ends.
package daemontest

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
)

// Start opens and serves a daemon on cfg, in a fresh data directory
// unless cfg names one, and returns it with a client holding the admin
// token. Its log shows warnings unless cfg names a logger. A serve that
// ends in an error fails the test.
func Start(tb testing.TB, cfg daemon.Config) (*daemon.Daemon, *client.Client) {
	tb.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = tb.TempDir()
	}
	cfg.Listen, cfg.NoSync = "127.0.0.1:0", true
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	d, err := daemon.Open(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve() }()
	tb.Cleanup(func() {
		d.Shutdown(context.Background())
		if err := <-done; err != nil {
			tb.Errorf("serve: %v", err)
		}
	})
	token, err := auth.ReadAdminToken(cfg.DataDir)
	if err != nil {
		tb.Fatal(err)
	}
	return d, client.New(d.URL(), token)
}
