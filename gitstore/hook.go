package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
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
		"# memd's writes wait while git makes this commit (see awaitHandCommit).\n" +
		"cp \"${GIT_DIR:-.git}/refs/heads/main\" \"${GIT_DIR:-.git}/" + handCommitName + "\" 2>/dev/null\n" +
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

// A commit made by hand reads main before its hooks run and is refused
// if main moved by the time it is made: memd's writes, many a second from
// busy agents, would refuse nearly every commit whose hook takes the tens
// of milliseconds memd takes to start. So the hook's first step is a mark
// naming main as it is (a copy of its loose ref: memd keeps it loose), and
// memd's writes wait while main is still there, for handCommitWait at
// most since the mark was made: the commit git makes once the hook passes
// moves main, and memd's write follows it.
const (
	handCommitName = "memd-hand-commit"
	handCommitWait = time.Second
)

// UnmarkHandCommit removes the mark the hook left (the commit was
// refused).
func UnmarkHandCommit(gitDir string) { os.Remove(filepath.Join(gitDir, handCommitName)) }

// handCommitWaited is told each time a write waits for a commit made by
// hand (tests).
var handCommitWaited = func() {}

// awaitHandCommit waits while a mark says a commit made by hand is being
// made on main as it still is, up to handCommitWait after the mark was
// made: a mark a refused or abandoned commit left is passed over. The
// caller holds sh.mu.
func (sh *Shard) awaitHandCommit() {
	path := filepath.Join(sh.gitDir, handCommitName)
	for {
		fi, err := os.Stat(path)
		if err != nil {
			return // the common case: one stat a write
		}
		mark, _ := os.ReadFile(path)
		main, _ := readRef(sh.gitDir, mainRef)
		if time.Since(fi.ModTime()) > handCommitWait || strings.TrimSpace(string(mark)) != main.String() {
			os.Remove(path)
			return
		}
		handCommitWaited()
		time.Sleep(2 * time.Millisecond)
	}
}
