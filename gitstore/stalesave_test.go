package gitstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
)

// A person's tool that reads a working file, then writes its copy back
// after memd wrote the file in between (sed -i, a script, an editor saving
// a buffer read a moment before), takes memd's write out of the working
// tree; the person's next git commit -a would commit that as their
// removal. Within moments of memd's write, memd's next write to the file
// brings its lines back, and what the person changed stays.
func TestShard_ACopyReadBeforeMemdsWriteIsMergedAgain(t *testing.T) {
	for _, how := range []string{"with a line of theirs", "unchanged, holding an earlier line of theirs"} {
		t.Run(how, func(t *testing.T) {
			sh, dir := shardOfTwo(t, "erin")
			file := filepath.Join(dir, "profile.md")
			var want []string
			if how != "with a line of theirs" {
				appendTo(t, file, "- (2026-12-01) Erin by hand, kept uncommitted\n")
				want = append(want, "Erin by hand, kept uncommitted")
			}
			copied := read(t, file) // the tool reads the file
			remember(t, sh, "Erin three", memd.TierProfile, "m3")
			saved := copied
			if how == "with a line of theirs" {
				saved += "- (2026-12-01) Erin by hand\n"
				want = append(want, "Erin by hand")
			}
			if err := os.WriteFile(file+".new", []byte(saved), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(file+".new", file); err != nil { // and writes its copy back
				t.Fatal(err)
			}
			remember(t, sh, "Erin four", memd.TierProfile, "m4")
			got := read(t, file)
			for _, w := range append(want, "Erin one", "Erin two", "Erin three", "Erin four") {
				if !strings.Contains(got, w) {
					t.Errorf("%q is not in the working file:\n%s", w, got)
				}
			}
		})
	}
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
