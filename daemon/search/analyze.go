package search

import (
	"runtime"
	"sync"
	"unsafe"
)

// analysed is a fact's text prepared for the index: its folded text (only
// for a text that is not plain ASCII: foldASCII gives the others' when
// needed), its terms, and how many terms it has. Facts whose postings
// come from a snapshot have no terms here, only their number.
type analysed struct {
	folded string
	terms  []string
	length int
}

// analyzeDoc analyses a fact's text.
func analyzeDoc(d Doc) analysed {
	if isASCII(d.Text) {
		ts := terms(fold(d.Text))
		return analysed{terms: ts, length: len(ts)}
	}
	f, ts := analyze(d.Text)
	return analysed{f, ts, len(ts)}
}

// foldedOnly prepares facts whose terms are known already: only the texts
// that are not plain ASCII are folded.
func foldedOnly(docs []Doc, lengths []int) []analysed {
	out := make([]analysed, len(docs))
	for i, d := range docs {
		out[i].length = lengths[i]
		if !isASCII(d.Text) {
			out[i].folded, _ = foldWords(d.Text)
		}
	}
	return out
}

// foldedString returns entry i's folded words joined by single spaces:
// the one kept, or folded into buf and valid until buf is used again
// (clone what is kept). It returns buf for reuse.
func (x *Engine) foldedString(i int32, buf []byte) (string, []byte) {
	if x.entries.at(i).foldKept {
		return x.folded[i], buf
	}
	buf = foldASCII(buf[:0], x.textOf(i))
	return unsafe.String(unsafe.SliceData(buf), len(buf)), buf
}

// analyzeAll analyses many facts, spread over the processors.
func analyzeAll(docs []Doc) []analysed {
	out := make([]analysed, len(docs))
	workers := runtime.GOMAXPROCS(0)
	if len(docs) < 1000 || workers == 1 {
		for i, d := range docs {
			out[i] = analyzeDoc(d)
		}
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(docs) + workers - 1) / workers
	for w := 0; w < len(docs); w += chunk {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			for i := from; i < to; i++ {
				out[i] = analyzeDoc(docs[i])
			}
		}(w, min(w+chunk, len(docs)))
	}
	wg.Wait()
	return out
}
