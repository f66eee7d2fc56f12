// Package thesaurus relates a search term to terms of like meaning, for
// recall of paraphrases with no model: "puppy" to "dog", "purchase" to
// "buy", "flat" to "apartment". The table is generated from WordNet 3.0
// (see gen and LICENSE-WordNet) and embedded; it is keyed and valued by
// the stemmed terms a search looks up.
package thesaurus

//go:generate go run ./gen -out thesaurus.txt.gz

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Entry holds a term's relatives, by relation.
type Entry struct {
	Synonyms []string // words of the same senses, and similar adjectives
	Derived  []string // forms derived from the word or it from them: "marry", "marriage"
	Broader  []string // hypernyms: "dog" for "puppy"
	Narrower []string // a few hyponyms: "puppy" for "dog"
	Bases    []string // the base of an irregular form: "buy" for "bought"
}

// Kind is a relation of the table.
type Kind int

// The relations, in the order of Entry's lists.
const (
	Synonym Kind = iota
	Derived
	Broader
	Narrower
	Base
	Kinds // how many
)

// ByKind returns the entry's lists indexed by their relation.
func (e *Entry) ByKind() [Kinds][]string {
	return [Kinds][]string{e.Synonyms, e.Derived, e.Broader, e.Narrower, e.Bases}
}

func (e *Entry) lists() []*[]string {
	return []*[]string{&e.Synonyms, &e.Derived, &e.Broader, &e.Narrower, &e.Bases}
}

// Clean sorts each list, drops repeats and the key itself, and keeps each
// term in the first list that holds it.
func (e *Entry) Clean(key string) {
	seen := map[string]bool{key: true}
	for _, l := range e.lists() {
		slices.Sort(*l)
		*l = slices.Compact(*l)
		*l = slices.DeleteFunc(*l, func(t string) bool { return seen[t] })
		for _, t := range *l {
			seen[t] = true
		}
		if len(*l) == 0 {
			*l = nil
		}
	}
}

// Empty reports whether the entry relates its key to nothing.
func (e *Entry) Empty() bool {
	for _, l := range e.lists() {
		if len(*l) > 0 {
			return false
		}
	}
	return true
}

// FormatLine writes a term's entry as a line of the table: the term and
// each list, tab-separated, each list's terms separated by spaces.
func FormatLine(key string, e *Entry) string {
	var b strings.Builder
	b.WriteString(key)
	for _, l := range e.lists() {
		b.WriteByte('\t')
		b.WriteString(strings.Join(*l, " "))
	}
	b.WriteByte('\n')
	return b.String()
}

func parseLine(line string) (key string, e *Entry, err error) {
	fields := strings.Split(line, "\t")
	e = &Entry{}
	lists := e.lists()
	if len(fields) != len(lists)+1 {
		return "", nil, fmt.Errorf("thesaurus line %q: %d fields, want %d", line, len(fields), len(lists)+1)
	}
	for i, l := range lists {
		*l = strings.Fields(fields[i+1])
	}
	return fields[0], e, nil
}

//go:embed thesaurus.txt.gz
var compressed []byte

// table is the uncompressed table and where each of its lines starts,
// read once: about 50 ms, and 4.5 MB held.
var table = sync.OnceValues(func() (*lines, error) { return load(compressed) })

var preload sync.Once

// Preload reads the table in the background, so that the first search
// does not wait for it.
func Preload() { preload.Do(func() { go table() }) }

type lines struct {
	text   []byte
	starts []uint32
}

func load(gz []byte) (*lines, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("thesaurus: %w", err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("thesaurus: %w", err)
	}
	t := &lines{text: text}
	for i := 0; i < len(text); {
		t.starts = append(t.starts, uint32(i))
		n := bytes.IndexByte(text[i:], '\n')
		if n < 0 {
			return nil, fmt.Errorf("thesaurus: the table's last line is unterminated")
		}
		i += n + 1
	}
	return t, nil
}

func (t *lines) line(i int) string {
	end := len(t.text)
	if i+1 < len(t.starts) {
		end = int(t.starts[i+1])
	}
	return string(t.text[t.starts[i] : end-1])
}

func (t *lines) key(i int) []byte {
	rest := t.text[t.starts[i]:]
	return rest[:bytes.IndexByte(rest, '\t')]
}

// Lookup returns a term's relatives, or nil when the table has none.
func Lookup(term string) *Entry {
	t, err := table()
	if err != nil {
		return nil // the embedded table is checked by the package's tests
	}
	i := sort.Search(len(t.starts), func(i int) bool { return string(t.key(i)) >= term })
	if i == len(t.starts) || string(t.key(i)) != term {
		return nil
	}
	_, e, err := parseLine(t.line(i))
	if err != nil {
		return nil
	}
	return e
}
