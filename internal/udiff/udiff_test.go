package udiff_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd/internal/udiff"
)

// The diff applies with git apply and gives the new text back.
func TestDiff_AppliesWithGit(t *testing.T) {
	cases := []struct{ a, b string }{
		{"", "new note\n"},
		{"one\ntwo\nthree\n", ""},
		{"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n", "a\nb\nC\nd\ne\nf\ng\nh\ni\nJ\nk\nl\n"},
		{"no newline", "no newline at all"},
		{"keep\n", "keep\nadded\n"},
	}
	for i, c := range cases {
		dir := t.TempDir()
		run := func(args ...string) {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("case %d: git %v: %v\n%s", i, args, err, out)
			}
		}
		run("init", "-q")
		if c.a != "" {
			os.WriteFile(filepath.Join(dir, "n.md"), []byte(c.a), 0o644)
		}
		d := udiff.Diff("n.md", c.a, c.b)
		os.WriteFile(filepath.Join(dir, "p.diff"), []byte(d), 0o644)
		run("apply", "p.diff")
		got, _ := os.ReadFile(filepath.Join(dir, "n.md"))
		if string(got) != c.b {
			t.Errorf("case %d: applied diff gives %q, want %q\n%s", i, got, c.b, d)
		}
	}
	if udiff.Diff("n.md", "same\n", "same\n") != "" {
		t.Error("equal texts have a diff")
	}
	if d := udiff.Diff("n.md", "x\n", "y\n"); !strings.Contains(d, "-x\n+y\n") {
		t.Errorf("diff:\n%s", d)
	}
}

// A one-line edit in a long note is a one-line diff: what the feed sends
// does not grow with the note.
func TestDiff_OneLineEditInALongNote(t *testing.T) {
	var b strings.Builder
	for i := range 2102 {
		b.WriteString("line " + strings.Repeat("x", i%40) + " of the runbook, number " + string(rune('a'+i%26)) + "\n")
	}
	a := b.String()
	lines := strings.SplitAfter(a, "\n")
	lines[1050] = "an edited line\n"
	edited := strings.Join(lines, "")
	d := udiff.Diff("n.md", a, edited)
	if n := strings.Count(d, "\n"); n > 12 {
		t.Errorf("a one-line edit in 2,102 lines makes a %d-line diff:\n%.500s", n, d)
	}
	if !strings.Contains(d, "+an edited line\n") || strings.Count(d, "\n-") != 1 {
		t.Errorf("diff:\n%s", d)
	}
}

func BenchmarkDiff_OneLineEditIn2000Lines(b *testing.B) {
	var sb strings.Builder
	for i := range 2102 {
		sb.WriteString("line " + strings.Repeat("x", i%40) + " of the runbook\n")
	}
	a := sb.String()
	lines := strings.SplitAfter(a, "\n")
	lines[1050] = "an edited line\n"
	edited := strings.Join(lines, "")
	for b.Loop() {
		udiff.Diff("n.md", a, edited)
	}
}
