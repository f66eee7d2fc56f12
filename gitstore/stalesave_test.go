package gitstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// A person's tool that reads a working file, then writes its copy back
// after memd wrote the file in between (sed -i, a script, an editor saving
// a buffer read a moment before), takes memd's write out of the working
// tree; the person's next git commit -a would commit that as their
// removal. Within moments of memd's write, memd's next write to the file
// brings its lines back, and what the person changed elsewhere stays.
func TestShard_ACopyReadBeforeMemdsWriteIsMergedAgain(t *testing.T) {
	t.Run("a note, a line of theirs under another heading", func(t *testing.T) {
		sh, _ := shardOfTwo(t, "erin")
		file := createPlan(t, sh, "# Plan\n\nagent step 1\nagent-end\n\n## Person\n\nperson-end\n")
		copied := read(t, file) // sed -i reads the note
		insertBefore(t, sh, "agent-end", "agent step 2\n")
		saveCopy(t, file, strings.Replace(copied, "person-end\n", "person line 1\nperson-end\n", 1))
		insertBefore(t, sh, "agent-end", "agent step 3\n")
		wantLines(t, file, "agent step 1", "agent step 2", "agent step 3", "person line 1")
	})
	for _, c := range []struct{ name, plan, anchor, line, before, after, next string }{
		{"a note, memd's line beside its last, a line of theirs after it", "# Plan\n\n- a\n- b\n", "- b", "- memd line", "", "- person line\n", "# Plan"},
		{"a note, memd's line beside its first, a line of theirs before it", "# Plan\n\nstep one\nagent-end\n\n## Person\n\nperson-end\n", "step one", "step zero", "<!-- person -->\n", "", "agent-end"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh, _ := shardOfTwo(t, "erin")
			file := createPlan(t, sh, c.plan)
			copied := read(t, file)
			insertBefore(t, sh, c.anchor, c.line+"\n")
			saveCopy(t, file, c.before+copied+c.after)
			insertBefore(t, sh, c.next, "memd's next line\n")
			wantLines(t, file, c.line, strings.TrimSuffix(c.before+c.after, "\n"), "memd's next line")
		})
	}
	t.Run("a note, memd's lines repeating lines the note holds", func(t *testing.T) {
		sh, _ := shardOfTwo(t, "erin")
		file := createPlan(t, sh, "# Plan\n\n```\nold code\n```\nagent-end\n\n## Person\n\nperson-end\n")
		copied := read(t, file)
		insertBefore(t, sh, "agent-end", "```\nnew code\n```\n")
		saveCopy(t, file, strings.Replace(copied, "person-end\n", "person line 1\nperson-end\n", 1))
		insertBefore(t, sh, "# Plan", "top\n")
		wantLines(t, file, "new code", "person line 1")
	})
	t.Run("a fact file, a line of theirs at the top", func(t *testing.T) {
		sh, dir := shardOfTwo(t, "erin")
		file := filepath.Join(dir, "profile.md")
		copied := read(t, file)
		remember(t, sh, "Erin three", memd.TierProfile, "m3")
		saveCopy(t, file, strings.Replace(copied, "# Profile\n", "# Profile\n\nErin's own notes follow.\n", 1))
		remember(t, sh, "Erin four", memd.TierProfile, "m4")
		wantLines(t, file, "Erin's own notes follow.", "- (2026-11-03) Erin one", "- (2026-11-03) Erin two", "- (2026-11-03) Erin three", "- (2026-11-03) Erin four")
	})
	t.Run("a fact file, a fact memd forgot", func(t *testing.T) {
		sh, dir := shardOfTwo(t, "erin")
		file := filepath.Join(dir, "profile.md")
		copied := read(t, file)
		forget(t, sh, "Erin two")
		saveCopy(t, file, strings.Replace(copied, "# Profile\n", "# Profile\n\nErin's own notes follow.\n", 1))
		remember(t, sh, "Erin four", memd.TierProfile, "m4")
		wantLacking(t, file, "Erin two", "the fact memd forgot is back")
		wantLines(t, file, "Erin's own notes follow.", "- (2026-11-03) Erin four")
	})
	t.Run("a fact file, unchanged, holding an earlier line of theirs", func(t *testing.T) {
		sh, dir := shardOfTwo(t, "erin")
		file := filepath.Join(dir, "profile.md")
		appendTo(t, file, "- (2026-12-01) Erin by hand, kept uncommitted\n")
		copied := read(t, file)
		remember(t, sh, "Erin three", memd.TierProfile, "m3")
		saveCopy(t, file, copied)
		remember(t, sh, "Erin four", memd.TierProfile, "m4")
		wantLines(t, file, "- (2026-12-01) Erin by hand, kept uncommitted", "- (2026-11-03) Erin three", "- (2026-11-03) Erin four")
	})
}

// A line of memd's that a person's tool changed moments after memd wrote
// it (reworded, redacted, its trailing spaces trimmed) stays as they left
// it: memd's next write does not bring the old line back beside it.
func TestShard_AnEditOfMemdsNewLineIsKept(t *testing.T) {
	for _, c := range []struct{ name, wrote, edited string }{
		{"reworded", "Erin is 30", "Erin is 31"},
		{"redacted", "Erin token sk-12345", "Erin token [REDACTED]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			file := filepath.Join(dir, "profile.md")
			remember(t, sh, c.wrote, memd.TierProfile, "m3")
			saveCopy(t, file, strings.ReplaceAll(read(t, file), c.wrote, c.edited))
			remember(t, sh, "Erin four", memd.TierProfile, "m4")
			if got := read(t, file); strings.Contains(got, c.wrote) || !strings.Contains(got, c.edited) {
				t.Errorf("the person's edit of %q is undone:\n%s", c.wrote, got)
			}
		})
	}
	for _, c := range []struct{ name, plan, entry string }{
		{"redacted, an entry ending in a blank line", "# Plan\n\nentry one\n\n", "token sk-12345\n\n"},
		{"redacted, an entry ending in the file's closing line", "# Plan\n\nentry one\n---\n", "token sk-12345\n---\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh, _ := shardOfTwo(t, "erin")
			file := createPlan(t, sh, c.plan)
			insertBefore(t, sh, "", c.entry)
			saveCopy(t, file, strings.ReplaceAll(read(t, file), "sk-12345", "[REDACTED]"))
			insertBefore(t, sh, "entry one", "entry zero\n")
			if got := read(t, file); strings.Contains(got, "sk-12345") {
				t.Errorf("the redaction is undone:\n%s", got)
			}
		})
	}
	t.Run("trimmed, in a note", func(t *testing.T) {
		sh, _ := shardOfTwo(t, "erin")
		file := createPlan(t, sh, "# Plan\n\nstep one\n")
		insertBefore(t, sh, "", "step two  \n")
		saveCopy(t, file, strings.ReplaceAll(read(t, file), "step two  \n", "step two\n"))
		insertBefore(t, sh, "step one", "step zero\n")
		if got := read(t, file); strings.Count(got, "step two") != 1 {
			t.Errorf("step two is not there once:\n%q", got)
		}
	})
}

// insertBefore has memd insert text into notes/plan.md before the line
// anchor ("": at the end).
func insertBefore(t *testing.T, sh *gitstore.Shard, anchor, text string) {
	t.Helper()
	update := func(cur []byte, exists bool) ([]byte, bool, error) {
		if anchor == "" {
			return append(append([]byte{}, cur...), text...), false, nil
		}
		return []byte(strings.Replace(string(cur), anchor+"\n", text+anchor+"\n", 1)), false, nil
	}
	if _, err := sh.Apply(noteChange("notes/plan.md", "note-edit: plan", update)); err != nil {
		t.Fatal(err)
	}
}

// saveCopy writes text over file as sed -i and editors' safe writes do: a
// file of its own renamed over it.
func saveCopy(t *testing.T, file, text string) {
	t.Helper()
	if err := os.WriteFile(file+".new", []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".new", file); err != nil {
		t.Fatal(err)
	}
}

// wantLines checks that file holds each of lines.
func wantLines(t *testing.T, file string, lines ...string) {
	t.Helper()
	got := read(t, file)
	for _, l := range lines {
		if !strings.Contains(got, l+"\n") {
			t.Errorf("%q is not in the working file:\n%s", l, got)
		}
	}
}

// A person's buffer holding their deletion, saved again after memd merged
// its write into the file they had saved: the deletion stays.
func TestShard_ADeletionSavedAgainOverMemdsWriteIsKept(t *testing.T) {
	t.Run("a fact file", func(t *testing.T) {
		sh, dir := shardOfTwo(t, "erin")
		file := filepath.Join(dir, "profile.md")
		buffer := strings.Replace(read(t, file), "- (2026-11-03) Erin one\n", "", 1)
		saveCopy(t, file, buffer)
		remember(t, sh, "Erin three", memd.TierProfile, "m3")
		saveCopy(t, file, buffer)
		remember(t, sh, "Erin four", memd.TierProfile, "m4")
		wantLacking(t, file, "Erin one", "the person's deletion is undone")
		wantLines(t, file, "- (2026-11-03) Erin three", "- (2026-11-03) Erin four")
	})
	t.Run("a note", func(t *testing.T) {
		sh, _ := shardOfTwo(t, "erin")
		file := createPlan(t, sh, "# Plan\n\nsecret line\nstep one\nagent-end\n\n## Person\n\nperson-end\n")
		buffer := strings.Replace(read(t, file), "secret line\n", "", 1)
		saveCopy(t, file, buffer)
		insertBefore(t, sh, "person-end", "agent person x\n")
		saveCopy(t, file, buffer)
		insertBefore(t, sh, "agent-end", "step two\n")
		wantLacking(t, file, "secret line", "the person's deletion is undone")
		wantLines(t, file, "agent person x", "step two")
	})
}

// A fact memd wrote moments ago that the person took out and committed is
// not brought back by memd's next write, though the working file lacks it
// and holds an edit of theirs besides.
func TestShard_AFactTakenOutByACommitStaysOut(t *testing.T) {
	sh, dir := shardOfTwo(t, "erin")
	file := filepath.Join(dir, "profile.md")
	remember(t, sh, "Erin three", memd.TierProfile, "m3")
	var kept []string
	for _, l := range strings.SplitAfter(read(t, file), "\n") {
		if !strings.Contains(l, "Erin three") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "commit", "-qam", "Erin three is wrong")
	appendTo(t, file, "- (2026-12-01) Erin by hand\n")
	remember(t, sh, "Erin four", memd.TierProfile, "m4")
	got := read(t, file)
	if strings.Contains(got, "Erin three") {
		t.Errorf("the fact the person took out is back:\n%s", got)
	}
	for _, w := range []string{"Erin by hand", "Erin four"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q is not in the working file:\n%s", w, got)
		}
	}
}

// wantLacking checks that file does not hold text, saying why it should not.
func wantLacking(t *testing.T, file, text, why string) {
	t.Helper()
	if got := read(t, file); strings.Contains(got, text) {
		t.Errorf("%s:\n%s", why, got)
	}
}

// A copy read before memd's write and saved after it is merged again
// when memd's write went to the file alone (a git command held the index)
// and its retry caught the index up before the copy was saved, as when it
// was made with the index.
func TestShard_ACopySavedAfterACatchUpIsMergedAgain(t *testing.T) {
	for _, caughtUp := range []bool{true, false} {
		t.Run(fmt.Sprintf("caught up %v", caughtUp), func(t *testing.T) {
			sh := createShard(t, openStore(t), "agent/erin")
			for _, n := range []string{"one", "two"} {
				remember(t, sh, "Erin "+n, memd.TierProfile, "m-"+n)
			}
			file := filepath.Join(sh.Dir(), "profile.md")
			copyRead := read(t, file)
			lock := filepath.Join(sh.Dir(), ".git", "index.lock")
			if caughtUp {
				if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			remember(t, sh, "Erin three", memd.TierProfile, "m3")
			if caughtUp {
				os.Remove(lock)
				if !sh.SyncWorktree(time.Second) { // memd's retry
					t.Fatal("the working tree is not in step once git let go of the index")
				}
			}
			os.WriteFile(file, []byte(copyRead), 0o644) // the copy saved
			remember(t, sh, "Erin four", memd.TierProfile, "m4")
			wantCheckoutOf(t, sh.Dir(), "main")
		})
	}
}
