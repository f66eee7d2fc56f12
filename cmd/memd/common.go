package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
)

// strList is a flag that may be given several times.
type strList []string

func (l *strList) String() string     { return strings.Join(*l, ",") }
func (l *strList) Set(v string) error { *l = append(*l, v); return nil }

// clientFlags are the flags of every command that talks to the daemon.
type clientFlags struct {
	addr  string
	token string
	data  string
	json  bool
}

func (c *clientFlags) register(fs *flag.FlagSet, e *env) {
	addr := e.getenv("MEMD_ADDR")
	if addr == "" {
		addr = "http://" + daemon.DefaultListen
	}
	fs.StringVar(&c.addr, "addr", addr, "daemon URL (env MEMD_ADDR)")
	fs.StringVar(&c.token, "token", e.getenv("MEMD_TOKEN"), "bearer token (env MEMD_TOKEN; default: the admin token in the data directory)")
	fs.StringVar(&c.data, "data", dataDir(e), "data directory, to find the admin token (env MEMD_DATA)")
	fs.BoolVar(&c.json, "json", false, "print JSON")
}

// client returns an API client with the token from the flags, the
// environment, or the data directory's admin token file.
func (c *clientFlags) client() (*client.Client, error) {
	token := c.token
	if token == "" {
		t, err := auth.ReadAdminToken(c.data)
		if err != nil {
			return nil, fmt.Errorf("no token: pass --token or set MEMD_TOKEN, or run where the admin token is readable (%s)", filepath.Join(c.data, auth.AdminTokenFile))
		}
		token = t
	}
	addr := c.addr
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return client.New(addr, token), nil
}

// dataDir is the data directory: MEMD_DATA, else $XDG_DATA_HOME/memd, else
// ~/.local/share/memd.
func dataDir(e *env) string {
	if d := e.getenv("MEMD_DATA"); d != "" {
		return d
	}
	if x := e.getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "memd")
	}
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "memd")
}

// newFlags returns a flag set that prints its usage to stderr.
func newFlags(e *env, name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: memd %s %s\n\n%s\n\nFlags:\n", name, args, about)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags anywhere among the arguments and returns the
// positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, errUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// want checks the number of positional arguments.
func want(fs *flag.FlagSet, pos []string, n int, what string) error {
	if len(pos) != n {
		fmt.Fprintf(fs.Output(), "memd %s: want %s\n", fs.Name(), what)
		fs.Usage()
		return errUsage
	}
	return nil
}

// shardFlag parses a --shard value; an agent's own shard is the default
// when the caller is an agent and none is given.
func shardFlag(v string) (memd.ShardID, error) {
	if v == "" {
		return memd.ShardID{}, memd.Errorf(memd.EINVALID, "--shard is required (agent/<name>, user/<id> or project/<slug>)")
	}
	return memd.ParseShardID(v)
}

func printJSON(e *env, v any) error {
	return printJSONTo(e.stdout, v)
}

func printJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
