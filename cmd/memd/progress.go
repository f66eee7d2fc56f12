package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// progress draws a progress bar on a terminal and prints nothing elsewhere.
type progress struct {
	w     io.Writer
	tty   bool
	stage string
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && term.IsTerminal(int(f.Fd()))}
}

// set shows how far a stage is.
func (p *progress) set(stage string, done, total int) {
	if !p.tty {
		if stage != p.stage {
			fmt.Fprintln(p.w, stage+"…")
			p.stage = stage
		}
		return
	}
	const width = 30
	filled := width
	if total > 0 {
		filled = width * min(done, total) / total
	}
	fmt.Fprintf(p.w, "\r\033[K%-30s [%s%s] %d/%d", stage, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total)
	p.stage = stage
}

// done ends the bar.
func (p *progress) done() {
	if p.tty && p.stage != "" {
		fmt.Fprintln(p.w)
	}
}
