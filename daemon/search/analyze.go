package search

import (
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"
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
	if _, ts, ok := appendTermsASCII(make([]byte, 0, len(d.Text)), make([]string, 0, len(d.Text)/6+1), d.Text); ok {
		return analysed{terms: ts, length: len(ts)}
	}
	return analyzeOther(d.Text)
}

// analyzeOther analyses a text that is not plain ASCII.
func analyzeOther(text string) analysed {
	f, ts := analyze(text)
	return analysed{f, ts, len(ts)}
}

// foldedOnly prepares facts whose terms are known already: only the texts
// that are not plain ASCII are folded.
func foldedOnly(docs []Doc, lengths []int) []analysed {
	out := make([]analysed, len(docs))
	for i, d := range docs {
		out[i].length = lengths[i]
		if !isASCII(d.Text) {
			out[i].folded = foldedText(d.Text)
		}
	}
	return out
}

// foldedString returns entry i's folded words joined by single spaces:
// the one kept, or folded into buf and valid until buf is used again
// (clone what is kept). It returns buf for reuse.
func (x *Engine) foldedString(i int32, buf []byte) (string, []byte) {
	if x.entries.at(i).foldKept {
		return x.texts.get(x.folded[i]), buf
	}
	buf = foldASCII(buf[:0], x.textOf(i))
	return unsafe.String(unsafe.SliceData(buf), len(buf)), buf
}

// analyzeAll analyses many facts, spread over the processors.
func analyzeAll(docs []Doc) []analysed {
	out := make([]analysed, len(docs))
	workers := runtime.GOMAXPROCS(0)
	if len(docs) < 1000 || workers == 1 {
		analyzeInto(out, docs)
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(docs) + workers - 1) / workers
	for w := 0; w < len(docs); w += chunk {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			analyzeInto(out[from:to], docs[from:to])
		}(w, min(w+chunk, len(docs)))
	}
	wg.Wait()
	return out
}

// analyzeInto analyses docs into out. The ASCII texts' lowered words
// and terms are kept in one array each for all: a start analyses a
// million facts, and two small arrays each, held only until the facts
// are put, were most of what the collector did meanwhile.
func analyzeInto(out []analysed, docs []Doc) {
	size := 0
	for _, d := range docs {
		size += len(d.Text)
	}
	lower := make([]byte, 0, size)
	ts := make([]string, 0, size/6+len(docs))
	for i, d := range docs {
		n := len(ts)
		var ok bool
		if lower, ts, ok = appendTermsASCII(lower, ts, d.Text); ok {
			out[i] = analysed{terms: ts[n:len(ts):len(ts)], length: len(ts) - n}
		} else {
			out[i] = analyzeOther(d.Text)
		}
	}
}

// appendTermsASCII appends terms(fold(text)) to ts, and the lowered text
// they are pieces of to lower, for ASCII text, in one pass; for any other
// text it returns them as they were and false. Asking whether a fact is
// ASCII, lowering, splitting and stemming its words, each reading the
// whole text again, was most of reading it at a start.
func appendTermsASCII(lower []byte, ts []string, text string) ([]byte, []string, bool) {
	at, n := len(lower), len(ts)
	lower = slices.Grow(lower, len(text))[:at+len(text)]
	// The terms not stemmed are pieces of lower, which is only appended
	// to: a piece, once made, is never written again. A byte between words
	// is lowered to 0 (asciiFolds), and is in no piece.
	low := lower[at:]
	start, digit := -1, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8.RuneSelf {
			return lower[:at], ts[:n], false
		}
		f := asciiFolds[c]
		low[i] = f
		switch {
		case f == 0 && start >= 0:
			ts = append(ts, stemWord(unsafe.String(&low[start], i-start), digit))
			start = -1
		case f != 0 && start < 0:
			start, digit = i, false
		}
		digit = digit || f-'0' < 10 // 0 wraps round, above '9'
	}
	if start >= 0 {
		ts = append(ts, stemWord(unsafe.String(&low[start], len(text)-start), digit))
	}
	return lower, ts, true
}
