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

// hookMark is a line of every pre-commit hook memd writes: a hook without
// it is a person's own, and memd leaves it as it is.
const hookMark = "# Written by memd: it checks a commit made by hand, as a push is checked."

// preCommitHook is the hook that runs binary's `memd hook pre-commit`. A
// binary no longer there (memd moved or removed) lets the commit through:
// the hook is a help, not a gate memd's absence should shut.
func preCommitHook(binary string) []byte {
	return []byte("#!/bin/sh\n" +
		hookMark + "\n" +
		"# memd writes this file again at its next start while the line above is in it;\n" +
		"# remove that line to keep a hook of your own. git commit --no-verify skips it.\n" +
		"memd=" + shellQuote(binary) + "\n" +
		"[ -x \"$memd\" ] || exit 0\n" +
		"exec \"$memd\" hook pre-commit\n")
}

// shellQuote quotes s for sh: in single quotes, each one of its own
// closed, escaped and opened again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// installHook writes the shard's pre-commit hook for the store's
// PreCommit binary, unless the shard has a hook memd did not write or
// the one it wrote already runs that binary.
func (sh *Shard) installHook() error {
	binary := sh.store.opts.PreCommit
	if binary == "" {
		return nil
	}
	dir := filepath.Join(sh.gitDir, "hooks")
	path := filepath.Join(dir, "pre-commit")
	want := preCommitHook(binary)
	have, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(have, want):
		return nil
	case err == nil && !bytes.Contains(have, []byte(hookMark)):
		return nil // a person's own
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read pre-commit hook: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write pre-commit hook: %w", err)
	}
	if err := replaceFile(path, want, 0o755, false); err != nil {
		return fmt.Errorf("write pre-commit hook: %w", err)
	}
	return nil
}
