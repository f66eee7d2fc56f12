// Package udiff renders the difference of two texts as a unified diff, as
// git diff shows it, for notes in the feed.
package udiff

import (
	"fmt"
	"strings"
)

// context is the number of unchanged lines shown around a change.
const context = 3

// maxCells bounds the work of the line comparison; beyond it the diff shows
// the whole old text removed and the new one added.
const maxCells = 4 << 20

// Diff returns the unified diff from a to b, labelled with name, or "" when
// they are equal.
func Diff(name, a, b string) string {
	if a == b {
		return ""
	}
	x, y := lines(a), lines(b)
	ops := compare(x, y)
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

// compare lists the operations turning x into y, by longest common
// subsequence.
func compare(x, y []string) []op {
	n, m := len(x), len(y)
	var ops []op
	if n*m > maxCells {
		for i, l := range x {
			ops = append(ops, op{'-', l, i, 0})
		}
		for j, l := range y {
			ops = append(ops, op{'+', l, n, j})
		}
		return ops
	}
	// lcs[i][j] is the length of the LCS of x[i:] and y[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', x[i], i, j})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', y[j], i, j})
			j++
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
