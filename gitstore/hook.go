package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// hookMark is a line of every hook memd writes: a hook without it is a
// person's own, and memd leaves it as it is.
const hookMark = "# Written by memd: it checks a commit made by hand, as a push is checked."

// Hooks are the git hooks memd writes in each shard: pre-commit for a
// commit, pre-merge-commit for a merge git makes without stopping (one
// that stops on a conflict is committed through pre-commit).
var Hooks = []string{"pre-commit", "pre-merge-commit"}

// hookScript is the hook that runs binary's `memd hook NAME`. A binary
// no longer there (memd moved or removed) lets the commit through: the
// hook is a help, not a gate memd's absence should shut.
func hookScript(name, binary string) []byte {
	return []byte("#!/bin/sh\n" +
		hookMark + "\n" +
		"# memd writes this file again at its next start while the line above is in it;\n" +
		"# remove that line to keep a hook of your own. --no-verify skips it.\n" +
		"memd=" + shellQuote(binary) + "\n" +
		"[ -x \"$memd\" ] || exit 0\n" +
		"exec \"$memd\" hook " + name + "\n")
}

// shellQuote quotes s for sh: in single quotes, each one of its own
// closed, escaped and opened again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// installHooks writes the shard's hooks (Hooks) for the store's
// PreCommit binary, but a hook memd did not write and one that already
// runs that binary.
func (sh *Shard) installHooks() error {
	binary := sh.store.opts.PreCommit
	if binary == "" {
		return nil
	}
	dir := filepath.Join(sh.gitDir, "hooks")
	for _, name := range Hooks {
		path := filepath.Join(dir, name)
		want := hookScript(name, binary)
		have, err := os.ReadFile(path)
		switch {
		case err == nil && (bytes.Equal(have, want) || !bytes.Contains(have, []byte(hookMark))):
			continue // up to date, or a person's own
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("read %s hook: %w", name, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s hook: %w", name, err)
		}
		if err := replaceFile(path, want, 0o755, false); err != nil {
			return fmt.Errorf("write %s hook: %w", name, err)
		}
	}
	return nil
}
