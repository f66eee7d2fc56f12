// Package udiff renders the difference of two texts as a unified diff, as
// git diff shows it, for notes in the feed and their history. Lines are
// compared with Myers' algorithm (sergi/go-diff), after the common head
// and tail are set aside, so a one-line edit in a long note is a one-line
// diff, whatever the note's length.
package udiff

import (
	"fmt"
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// context is the number of unchanged lines shown around a change.
const context = 3

// timeout bounds the comparison of two very different long texts (a
// rewrite of 40,000 lines takes a second otherwise); past it the diff is
// still right, only not the shortest.
const timeout = 100 * time.Millisecond

// Diff returns the unified diff from a to b, labelled with name, or "" when
// they are equal.
func Diff(name, a, b string) string {
	if a == b {
		return ""
	}
	ops := compare(a, b)
	var out strings.Builder
	from, to := "a/"+name, "b/"+name
	if a == "" {
		from = "/dev/null"
	}
	if b == "" {
		to = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	for _, h := range hunks(ops) {
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", span(h.x0, h.xn), span(h.y0, h.yn))
		for _, o := range h.ops {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return out.String()
}

func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// lines splits s into lines, each with its newline (the last may lack one).
func lines(s string) []string {
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

type op struct {
	kind byte // ' ', '-', '+'
	text string
	x, y int // line numbers in a and b before this op
}

// compare lists the line operations turning a into b.
func compare(a, b string) []op {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = timeout
	ra, rb, table := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), table)
	var ops []op
	x, y := 0, 0
	for _, d := range diffs {
		if d.Text == "" {
			continue
		}
		for _, l := range lines(d.Text) {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				ops = append(ops, op{' ', l, x, y})
				x, y = x+1, y+1
			case diffmatchpatch.DiffDelete:
				ops = append(ops, op{'-', l, x, y})
				x++
			case diffmatchpatch.DiffInsert:
				ops = append(ops, op{'+', l, x, y})
				y++
			}
		}
	}
	return ops
}

type hunk struct {
	x0, xn, y0, yn int
	ops            []op
}

// hunks groups changes with up to three lines of context around them.
func hunks(ops []op) []hunk {
	var out []hunk
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-context)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		h := hunk{x0: ops[start].x, y0: ops[start].y, ops: ops[start:end]}
		for _, o := range h.ops {
			if o.kind != '+' {
				h.xn++
			}
			if o.kind != '-' {
				h.yn++
			}
		}
		out = append(out, h)
		i = end
	}
	return out
}
