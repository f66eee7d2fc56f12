// Command memd is the memd memory daemon and its command-line client.
// `memd serve` runs the daemon; every other command talks to it over its
// HTTP API, as agents and the web UI do.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/memd/memd"
)

func main() {
	memd.Version = buildVersion()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"serve":      {"run the daemon", runServe},
		"remember":   {"remember a fact", runRemember},
		"forget":     {"forget a fact by ID", runForget},
		"edit":       {"rewrite a fact's text, keeping its source", runEdit},
		"facts":      {"list a shard's facts", runFacts},
		"trace":      {"show where a fact came from", runTrace},
		"log":        {"show a shard's commits with provenance and fact diffs", runLog},
		"revert":     {"undo a commit, or everything learned from a message", runRevert},
		"shards":     {"list the shards you may read", runShards},
		"notes":      {"list, read, create, edit or delete notes", runNotes},
		"mcp":        {"serve memd's tools to an MCP client over stdio", runMCP},
		"recall":     {"search memory", runRecall},
		"context":    {"print the memory section of an agent's prompt", runContext},
		"reindex":    {"rebuild the index from the shards (daemon stopped)", runReindex},
		"import":     {"import an OpenTeam-style memory folder (daemon stopped)", runImport},
		"watch":      {"print memory changes as they happen", runWatch},
		"learn":      {"hand exchanges to the learner; list or retry failed ones", runLearn},
		"stats":      {"show which models' and prompts' learned facts people undo", runStats},
		"synthesize": {"run a synthesis pass over an agent's memory now", runSynthesize},
		"review":     {"list, accept or reject what models proposed for agents in review mode", runReview},
		"agent":      {"add, list or remove agents", runAgent},
		"status":     {"show the daemon's status", runStatus},
		"remote":     {"show shards' git remotes, or sync them now", runRemote},
		"bench":      {"measure the write path against the git CLI", runBench},
		"version":    {"print the version", runVersion},
		"hook":       {"check a commit made by hand in a shard (git's pre-commit hook runs it)", runHook},
	}
}

// env is what a command may touch: its streams and environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// flagFirst says that flags follow the command, for a command line that
// starts with one: named by its name alone, never its value (a token).
func flagFirst(args []string) string {
	flag, _, _ := strings.Cut(args[0], "=")
	command := "COMMAND"
	for _, a := range args[1:] {
		if _, ok := commands()[a]; ok {
			command = a
			break
		}
	}
	return fmt.Sprintf("memd: %s is a flag: flags follow the command (memd %s %s …)", flag, command, flag)
}

// errUsage marks a command line that could not be parsed; the message has
// been printed already.
var errUsage = errors.New("usage")

// Run runs memd with args and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		if strings.HasPrefix(args[0], "-") && args[0] != "-" {
			fmt.Fprintln(stderr, flagFirst(args))
			return 2
		}
		fmt.Fprintf(stderr, "memd: unknown command %q\nRun 'memd help' for the commands.\n", args[0])
		return 2
	}
	err := cmd.run(ctx, e, args[1:])
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	msg := err.Error()
	var me *memd.Error
	if errors.As(err, &me) {
		msg = me.Message
	}
	// With --json the error is JSON too, on stdout, as the API writes it.
	if wantsJSON(args) {
		obj := map[string]string{"code": memd.ErrorCode(err), "message": msg}
		if me != nil && me.Rule != "" {
			obj["rule"] = me.Rule
		}
		b, _ := json.Marshal(map[string]any{"error": obj})
		fmt.Fprintln(stdout, string(b))
		return 1
	}
	if me != nil && me.Rule != "" {
		msg += " (rule: " + me.Rule + ")"
	}
	fmt.Fprintf(stderr, "memd: %s\n", msg)
	return 1
}

// wantsJSON reports whether a command line asked for JSON: --json or
// -json (=true), before any "--".
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "memd keeps AI agents' memory as dated Markdown facts in git repositories.")
	fmt.Fprintln(w, "\nUsage: memd <command> [flags] [args]\n\nCommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun `memd <command> -h` for a command's flags.")
}

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "", "Print memd's version: the module version, the commit it was built from and when, and the Go version.")
	if _, err := positional(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "memd", memd.Version, runtime.Version())
	return nil
}

// buildVersion says what this binary is, from what the Go toolchain
// recorded in it: the module version (go install …@v1.2.0), else the
// commit it was built from, with its time and whether the tree had
// changes. A version set with -ldflags wins.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return memd.Version
	}
	v := memd.Version
	if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	var rev, at string
	changed := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			changed = s.Value == "true"
		}
	}
	// A pseudo-version names the commit already.
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += " (" + rev[:min(12, len(rev))]
		if changed {
			v += " with changes"
		}
		if at != "" {
			v += ", " + at
		}
		v += ")"
	}
	return v
}
