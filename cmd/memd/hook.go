package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// runHook is what the pre-commit hook memd writes in each shard runs: git
// starts it at the top of the shard's working tree, with GIT_DIR and
// GIT_INDEX_FILE naming what is about to be committed (`git commit -a`
// stages into an index file of its own).
func runHook(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "hook", "pre-commit", "Check a commit made by hand in a shard before git records it, as memd checks a push: "+
		"every fact line it adds well formed (a real date, text memd takes), no conflict marker in a fact file, notes within memd's rules. "+
		"memd serve writes a pre-commit hook running this in each shard (--no-commit-hook turns that off); git commit --no-verify skips it.")
	pos, err := positional(fs, args, 1, "the hook's name: pre-commit")
	if err != nil {
		return err
	}
	if pos[0] != "pre-commit" {
		return fs.mistake("memd has no %q hook; want pre-commit", pos[0])
	}
	gitDir := e.getenv("GIT_DIR")
	if gitDir == "" {
		gitDir = ".git"
	}
	indexFile := e.getenv("GIT_INDEX_FILE")
	if indexFile == "" {
		indexFile = filepath.Join(gitDir, "index")
	}
	problems, err := gitstore.CheckStaged(gitDir, indexFile)
	if err != nil {
		// The hook is a help: what memd cannot read is git's to judge.
		fmt.Fprintf(e.stderr, "memd: the commit goes in unchecked: %v\n", err)
		return nil
	}
	if len(problems) == 0 {
		return nil
	}
	fmt.Fprintln(e.stderr, "memd: not committed; memd would not read these lines as you mean them:")
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "  %s\n", p)
	}
	return memd.Errorf(memd.EINVALID, "fix them and commit again, or commit with --no-verify to keep them as they are")
}
