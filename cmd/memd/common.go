package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

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
	addr     string
	token    string
	envToken string // MEMD_TOKEN, to tell the flag's value from it
	data     string
	json     bool
}

func (c *clientFlags) register(fs *flags, e *env) {
	addr := e.getenv("MEMD_ADDR")
	if addr == "" {
		addr = "http://" + daemon.DefaultListen
	}
	fs.StringVar(&c.addr, "addr", addr, "daemon URL (env MEMD_ADDR)")
	c.envToken = e.getenv("MEMD_TOKEN")
	fs.StringVar(&c.token, "token", c.envToken, "bearer token (env MEMD_TOKEN; default: the admin token in the data directory)")
	fs.StringVar(&c.data, "data", dataDir(e), "data directory, to find the admin token (env MEMD_DATA)")
	fs.BoolVar(&c.json, "json", false, "print JSON")
}

// client returns an API client with the token from the flags, the
// environment, or the data directory's admin token file.
func (c *clientFlags) client() (*client.Client, error) {
	token, from := c.token, "given with --token"
	switch {
	case token == "":
		file := filepath.Join(c.data, auth.AdminTokenFile)
		t, err := auth.ReadAdminToken(c.data)
		if err != nil {
			return nil, memd.Errorf(memd.EUNAUTHORIZED, "no token: pass --token or set MEMD_TOKEN, or run where the admin token is readable (%s; %s)", file, sameData)
		}
		token, from = t, "in "+file+"; "+sameData
	case token == c.envToken:
		from = "in MEMD_TOKEN"
	}
	addr := c.addr
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	cl := client.New(addr, token)
	cl.TokenFrom = from
	return cl, nil
}

// sameData tells where the admin token of a daemon serving another data
// directory is.
const sameData = "a daemon started with --data or MEMD_DATA keeps its admin token there: give the CLI the same"

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
// flags is a command's flag set, with where its help and its mistakes go.
type flags struct {
	*flag.FlagSet
	e           *env
	args, about string
}

func newFlags(e *env, name, args, about string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package's own messages are replaced by parse's: help on
	// stdout, a mistake in one line on stderr.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, e: e, args: args, about: about}
}

// help prints the command's usage and flags on stdout.
func (fs *flags) help() {
	fmt.Fprintf(fs.e.stdout, "Usage: memd %s %s\n\n%s\n\nFlags:\n", fs.Name(), fs.args, fs.about)
	fs.SetOutput(fs.e.stdout)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// subcommand runs the subcommand args name, of a command with several
// (memd agent add, memd notes list): a missing or unknown one is a
// mistake said in one line, -h prints usage on stdout.
func subcommand(ctx context.Context, e *env, command, usage string, subs map[string]func(context.Context, *env, []string) error, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(e.stdout, usage)
		return errHelp
	}
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "memd %s: want a subcommand\n%s\n", command, usage)
		return errUsage
	}
	run, ok := subs[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "memd %s: unknown subcommand %q\n%s\n", command, args[0], usage)
		return errUsage
	}
	return run(ctx, e, args[1:])
}

// errHelp is a command line that asked for help, which was printed.
var errHelp = errors.New("help")

// mistake says in one line what is wrong with a command line, and where
// to look.
func (fs *flags) mistake(format string, args ...any) error {
	fmt.Fprintf(fs.e.stderr, "memd %s: %s\nRun 'memd %s -h' for its flags and arguments.\n", fs.Name(), fmt.Sprintf(format, args...), fs.Name())
	return errUsage
}

// parse parses flags anywhere among the arguments and returns the
// positional ones.
func parse(fs *flags, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fs.help()
			return nil, errHelp
		} else if err != nil {
			return nil, fs.mistake("%v", err)
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
// shardFlags are the flags of the commands an agent runs on one shard: the
// client's, --shard (the agent's own when not given) and --chat-kind, and
// for commands that change memory, the source: --message and --chat.
type shardFlags struct {
	cf       clientFlags
	shard    *string
	kind     *string
	messages strList
	chat     *string
}

func (sf *shardFlags) register(fs *flags, e *env, writes bool) {
	sf.cf.register(fs, e)
	sf.shard = fs.String("shard", "", "shard: agent/<name>, user/<id> or project/<slug> (default: the calling agent's own)")
	sf.kind = fs.String("chat-kind", "", "chat kind: direct, group, routine or api (user memory needs direct)")
	if writes {
		fs.Var(&sf.messages, "message", "ID of a chat message this comes from (repeatable)")
		sf.chat = fs.String("chat", "", "ID of the chat this comes from")
	}
}

// client returns a client that declares the chat kind, and the shard.
func (sf *shardFlags) client(ctx context.Context) (*client.Client, memd.ShardID, error) {
	c, err := sf.cf.client()
	if err != nil {
		return nil, memd.ShardID{}, err
	}
	c.ChatKind = memd.ChatKind(*sf.kind)
	s, err := shardOrOwn(ctx, c, *sf.shard)
	return c, s, err
}

// source is what --message, --chat and --chat-kind say a change came from.
func (sf *shardFlags) source() memd.Source {
	src := memd.Source{Messages: sf.messages, ChatKind: memd.ChatKind(*sf.kind)}
	if sf.chat != nil {
		src.Chat = *sf.chat
	}
	return src
}

// connect parses args as positional does and returns the arguments and a
// client of the daemon the flags name.
func (c *clientFlags) connect(fs *flags, args []string, n int, what string) ([]string, *client.Client, error) {
	pos, err := positional(fs, args, n, what)
	if err != nil {
		return nil, nil, err
	}
	cl, err := c.client()
	return pos, cl, err
}

// connect parses args as positional does and returns the arguments, a
// client of the daemon the flags name and the shard they name.
func (sf *shardFlags) connect(ctx context.Context, fs *flags, args []string, n int, what string) ([]string, *client.Client, memd.ShardID, error) {
	pos, err := positional(fs, args, n, what)
	if err != nil {
		return nil, nil, memd.ShardID{}, err
	}
	c, s, err := sf.client(ctx)
	return pos, c, s, err
}

// positional parses args and returns the n arguments it must leave (what
// names them in the error).
func positional(fs *flags, args []string, n int, what string) ([]string, error) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	return pos, want(fs, pos, n, what)
}

func want(fs *flags, pos []string, n int, what string) error {
	if len(pos) != n {
		return fs.mistake("want %s", what)
	}
	return nil
}

// shardFlag parses a --shard value, which the commands that use it require.
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

// listing is how a command prints a list: under key as JSON (as the API
// names it), or as a table of a row an item under header (none when
// empty), or the empty line when there is nothing (an empty table when
// empty is "").
type listing[T any] struct {
	key, empty, header string
	row                func(T) string // tab-separated cells
}

func printList[T any](e *env, asJSON bool, items []T, l listing[T]) error {
	if asJSON {
		return printJSON(e, map[string]any{l.key: items})
	}
	if len(items) == 0 && l.empty != "" {
		fmt.Fprintln(e.stdout, l.empty)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	if l.header != "" {
		fmt.Fprintln(tw, l.header)
	}
	for _, it := range items {
		fmt.Fprintln(tw, l.row(it))
	}
	return tw.Flush()
}
