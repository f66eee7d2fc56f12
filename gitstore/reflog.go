package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// memd records each move of main in its reflog, as git does for a branch
// of a working repository (core.logAllRefUpdates), and in HEAD's while HEAD
// names main: `git reflog` lists memd's commits beside a person's, and
// `git reset main@{1}` finds one an aborted rebase or a hand reset moved
// main away from.

// logMove appends old → next to main's reflog, and HEAD's when onMain,
// with why as the entry's message. Written while memd holds the lock on
// main, as git writes them, and not synced (git does not sync reflogs
// either): the ref is what a crash must not lose, and a reflog entry lost
// with it names a commit main never reached.
func (sh *Shard) logMove(old, next Hash, why string, onMain bool) error {
	line := reflogLine(old, next, Committer(), time.Now(), why)
	logs := []string{filepath.Join(sh.gitDir, "logs", filepath.FromSlash(mainRef))}
	if onMain {
		logs = append(logs, filepath.Join(sh.gitDir, "logs", "HEAD"))
	}
	for _, path := range logs {
		if err := appendLine(path, line); err != nil {
			return fmt.Errorf("append to the reflog: %w", err)
		}
	}
	return nil
}

// reflogLine is a reflog entry: the old and new values, who moved the ref
// and when, a tab and the message, on one line.
func reflogLine(old, next Hash, who Signature, when time.Time, why string) string {
	why = strings.Join(strings.Fields(why), " ")
	return fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", old, next, who.Name, who.Email, when.Unix(), when.Format("-0700"), why)
}

// appendLine appends line to the file at path, creating it and its folder.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// groupReflog is the reflog message of a group's move of main: the newest
// commit's subject, and how many came with it.
func groupReflog(g *group) string {
	last := g.plans[len(g.plans)-1].change.Message
	subject, _, _ := strings.Cut(last, "\n")
	if n := len(g.plans) - 1; n > 0 {
		return fmt.Sprintf("memd: %s (and %d more commits)", subject, n)
	}
	return "memd: " + subject
}
