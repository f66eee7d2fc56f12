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
// no longer there (memd moved or removed), or failing otherwise than by
// refusing, lets the commit through: the hook is a help, not a gate
// memd's absence or failure should shut.
func hookScript(name, binary string) []byte {
	return []byte("#!/bin/sh\n" +
		hookMark + "\n" +
		"# memd writes this file again at its next start while the line above is in it;\n" +
		"# remove that line to keep a hook of your own. --no-verify skips it.\n" +
		"memd=" + shellQuote(binary) + "\n" +
		"[ -x \"$memd\" ] || exit 0\n" +
		"# 1 is memd refusing the commit; any other failure (a memd without this\n" +
		"# command, a crash) is memd's, not the commit's. Tested after ||, so that\n" +
		"# a shell exiting on errors (set -e) does not take the one for the other.\n" +
		"\"$memd\" hook " + name + " || { [ $? -ne 1 ] || exit 1; }\n" +
		"exit 0\n")
}

// shellQuote quotes s for sh: in single quotes, each one of its own
// closed, escaped and opened again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// installHooks writes the shard's hooks (Hooks) for the store's
// PreCommit binary, but a hook memd did not write and one that already
// runs that binary; with RemoveHooks it removes those memd wrote.
func (sh *Shard) installHooks() error {
	binary, remove := sh.store.opts.PreCommit, sh.store.opts.RemoveHooks
	if binary == "" && !remove {
		return nil
	}
	dir := filepath.Join(sh.gitDir, "hooks")
	for _, name := range Hooks {
		path := filepath.Join(dir, name)
		have, exists, ours, err := readHook(path)
		switch {
		case err != nil:
			return fmt.Errorf("read %s hook: %w", name, err)
		case exists && !ours:
			continue // a person's own
		case remove:
			if ours {
				if err := os.Remove(path); err != nil {
					return fmt.Errorf("remove %s hook: %w", name, err)
				}
			}
			continue
		}
		want := hookScript(name, binary)
		if bytes.Equal(have, want) {
			continue
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

// readHook returns the hook at path, whether there is one, and whether
// memd wrote it. A link (even one leading nowhere) or anything else
// without memd's mark is a person's.
func readHook(path string) (have []byte, exists, ours bool, err error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, false, nil
	case err != nil:
		return nil, false, false, err
	case !fi.Mode().IsRegular():
		return nil, true, false, nil
	}
	if have, err = os.ReadFile(path); err != nil {
		return nil, false, false, err
	}
	return have, true, bytes.Contains(have, []byte(hookMark)), nil
}
