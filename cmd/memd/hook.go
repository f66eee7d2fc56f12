package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// runHook is what the hooks memd writes in each shard run: git starts it
// at the top of the shard's working tree, with GIT_DIR and GIT_INDEX_FILE
// naming what is about to be committed (`git commit -a` stages into an
// index file of its own). A merge is checked as a commit is.
func runHook(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "hook", "pre-commit|pre-merge-commit", "Check a commit made by hand in a shard before git records it, as memd checks a push: "+
		"every fact line it adds well formed (a real date, text memd takes), no conflict marker in a fact file, notes within memd's rules, "+
		"no note or fact memd would not find where it is, regular files of at most 64 MiB. Exits 1 when it refuses the commit. "+
		"List items added to a fact file that are not fact lines are named but let through: memd keeps them as prose. "+
		"memd serve writes the pre-commit and pre-merge-commit hooks running this in each shard (--no-commit-hook turns that off); --no-verify skips them.")
	pos, err := positional(fs, args, 1, "the hook's name: "+strings.Join(gitstore.Hooks, " or "))
	if err != nil {
		return err
	}
	if !slices.Contains(gitstore.Hooks, pos[0]) {
		return fs.mistake("memd has no %q hook; want %s", pos[0], strings.Join(gitstore.Hooks, " or "))
	}
	gitDir := e.getenv("GIT_DIR")
	if gitDir == "" {
		gitDir = ".git"
	}
	indexFile := e.getenv("GIT_INDEX_FILE")
	if indexFile == "" {
		indexFile = filepath.Join(gitDir, "index")
	}
	staged, err := gitstore.CheckStaged(gitDir, indexFile)
	if err != nil {
		// The hook is a help: what memd cannot read is git's to judge.
		fmt.Fprintf(e.stderr, "memd: the commit goes in unchecked: %v\n", err)
		return nil
	}
	if len(staged.Problems) > 0 || len(staged.TakenBack) > 0 {
		gitstore.UnmarkHandCommit(gitDir) // no commit follows: memd's writes need not wait
	}
	if len(staged.TakenBack) > 0 {
		fmt.Fprintln(e.stderr, "memd: not committed; main holds these facts and what you commit lacks them, from files or an index a version behind main")
		fmt.Fprintln(e.stderr, "(a checkout of main, or a git command, that ran as memd committed; memd brings the working files forward unless you staged them first):")
		listProblems(e, staged.TakenBack, staged.MoreTakenBack)
		if len(staged.Problems) == 0 {
			return memd.Errorf(memd.ECONFLICT, "stage them again (git add FILE, if the working file holds them; git diff --cached main -- FILE shows them) and commit again, or commit with --no-verify to remove them")
		}
	}
	if len(staged.Problems) > 0 {
		fmt.Fprintln(e.stderr, "memd: not committed; memd would not read these lines as you mean them:")
		listProblems(e, staged.Problems, staged.MoreProblems)
	}
	if len(staged.Prose) > 0 {
		// Prose is allowed in a fact file: said, not refused.
		fmt.Fprintln(e.stderr, `memd: a fact is "- (YYYY-MM-DD) text"; these lines are not facts:`)
		listProblems(e, staged.Prose, staged.MoreProse)
	}
	if len(staged.Problems) > 0 {
		return memd.Errorf(memd.EINVALID, "fix them and commit again, or commit with --no-verify to keep them as they are")
	}
	if len(staged.Prose) > 0 {
		fmt.Fprintln(e.stderr, "memd: they go in as prose; give them a date to make them facts")
	}
	if staged.Checked {
		gitstore.DropAwayBase(gitDir) // a commit on main taking nothing of memd's back
	}
	return nil
}

// listProblems prints the lines a check named; more says it named only
// the first of them.
func listProblems[L fmt.Stringer](e *env, problems []L, more bool) {
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "  %s\n", p)
	}
	if more {
		fmt.Fprintf(e.stderr, "  and more lines like these: memd names the first %d\n", len(problems))
	}
}
