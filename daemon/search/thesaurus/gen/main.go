// Command gen writes memd's table of related words (thesaurus.txt.gz) from
// the database files of WordNet 3.0, keyed and valued by the terms a
// search looks up (search.ContentTerms), so a query term finds its
// relatives with one map lookup. Run it through go generate, with WordNet
// where Debian's wordnet-base puts it:
//
//	apt-get install wordnet-base
//	go generate ./daemon/search/thesaurus
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/daemon/search/thesaurus"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "the directory of WordNet 3.0's data.* and index.* files")
	out := flag.String("out", "thesaurus.txt.gz", "the table to write")
	senses := flag.Int("senses", 2, "the most frequent senses of a word whose relatives count")
	maxNarrower := flag.Int("narrower", 12, "narrower words kept per word, at most")
	flag.BoolVar(&phrases, "phrases", true, "relate the words of phrases")
	flag.Parse()
	wn, err := readWordNet(*dir)
	if err != nil {
		log.Fatal(err)
	}
	t := build(wn, *senses, *maxNarrower)
	if err := write(*out, t); err != nil {
		log.Fatal(err)
	}
	fi, err := os.Stat(*out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d terms, %d bytes\n", *out, len(t), fi.Size())
}

// parts of speech, as WordNet's file names and synset types spell them.
var poses = []struct{ file, code string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}, {"adv", "r"}}

type pointer struct {
	symbol   string
	target   string // pos code and offset: "n02691156"
	from, to int    // word numbers, from 1; 0 for a relation of whole synsets
}

type synset struct {
	words    []string // lemmas, lowercased, with spaces for underscores
	pointers []pointer
}

type wordNet struct {
	synsets map[string]*synset
	// senses holds each lemma's synsets, most frequent first, by part of
	// speech.
	senses map[string][][]string
	// bases holds the irregular forms of the exception lists ("mice",
	// "bought") and their base forms.
	bases map[string][]string
}

func readWordNet(dir string) (*wordNet, error) {
	wn := &wordNet{synsets: map[string]*synset{}, senses: map[string][][]string{}, bases: map[string][]string{}}
	for _, p := range poses {
		if err := eachLine(filepath.Join(dir, "data."+p.file), func(f []string) error { return wn.addSynset(p.code, f) }); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, "index."+p.file), func(f []string) error { return wn.addIndex(p.code, f) }); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, p.file+".exc"), func(f []string) error {
			if len(f) >= 2 {
				wn.bases[lemma(f[0])] = append(wn.bases[lemma(f[0])], lemma(f[1]))
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if len(wn.synsets) < 100000 {
		return nil, fmt.Errorf("%s holds %d synsets; is it WordNet 3.0?", dir, len(wn.synsets))
	}
	return wn, nil
}

// eachLine calls fn with the fields of each line of a WordNet file but its
// licence, whose lines start with spaces.
func eachLine(path string, fn func([]string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue
		}
		if data, _, ok := strings.Cut(line, " | "); ok {
			line = data // a synset's gloss
		}
		if err := fn(strings.Fields(line)); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

func lemma(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", " ")) }

// addSynset reads a line of data.*: offset, lexicographer file, type,
// word count (hex), words with their lexical IDs, pointer count, pointers.
func (wn *wordNet) addSynset(pos string, f []string) error {
	if len(f) < 4 {
		return fmt.Errorf("short synset line")
	}
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil {
		return err
	}
	s := &synset{}
	i := 4
	for range n {
		if i+1 >= len(f) {
			return fmt.Errorf("short synset line")
		}
		w := f[i]
		if j := strings.IndexByte(w, '('); j > 0 {
			w = w[:j] // an adjective's position marker: "galore(ip)"
		}
		s.words = append(s.words, lemma(w))
		i += 2
	}
	if i >= len(f) {
		return fmt.Errorf("short synset line")
	}
	np, err := strconv.Atoi(f[i])
	if err != nil {
		return err
	}
	i++
	for range np {
		if i+3 >= len(f) {
			return fmt.Errorf("short pointer list")
		}
		from, err1 := strconv.ParseInt(f[i+3][:2], 16, 32)
		to, err2 := strconv.ParseInt(f[i+3][2:], 16, 32)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("bad pointer %q", f[i+3])
		}
		code := f[i+2]
		if code == "s" {
			code = "a" // adjective satellites live in data.adj
		}
		s.pointers = append(s.pointers, pointer{symbol: f[i], target: code + f[i+1], from: int(from), to: int(to)})
		i += 4
	}
	wn.synsets[pos+f[0]] = s
	return nil
}

// addIndex reads a line of index.*: lemma, type, synset count, pointer
// count and symbols, sense count, tagged sense count, synset offsets by
// frequency.
func (wn *wordNet) addIndex(pos string, f []string) error {
	if len(f) < 4 {
		return fmt.Errorf("short index line")
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return err
	}
	if len(f) < n {
		return fmt.Errorf("short index line")
	}
	var offsets []string
	for _, o := range f[len(f)-n:] {
		offsets = append(offsets, pos+o)
	}
	w := lemma(f[0])
	wn.senses[w] = append(wn.senses[w], offsets)
	return nil
}

// build relates each single-word lemma's term to the terms of the words
// of its most frequent senses: their synonyms and similar adjectives,
// the forms derived from the word, the broader words (hypernyms) and a
// few of the narrower ones (hyponyms); and each irregular form to its
// base.
func build(wn *wordNet, senses, maxNarrower int) map[string]*thesaurus.Entry {
	t := map[string]*thesaurus.Entry{}
	for w, byPOS := range wn.senses {
		e := entry(t, w)
		if e == nil {
			continue
		}
		for _, offsets := range byPOS {
			for _, off := range offsets[:min(senses, len(offsets))] {
				s := wn.synsets[off]
				if s == nil {
					continue
				}
				num := slices.Index(s.words, w) + 1
				for _, o := range s.words {
					add(&e.Synonyms, o)
				}
				narrower := 0
				for _, p := range s.pointers {
					target := wn.synsets[p.target]
					if target == nil {
						continue
					}
					switch p.symbol {
					case "&":
						addAll(&e.Synonyms, target.words)
					case "+", "\\", "<":
						if p.from == num && p.to > 0 && p.to <= len(target.words) {
							add(&e.Derived, target.words[p.to-1])
						}
					case "@", "@i":
						addAll(&e.Broader, target.words)
					case "~", "~i":
						if narrower < maxNarrower {
							addAll(&e.Narrower, target.words)
							narrower++
						}
					}
				}
			}
		}
	}
	for form, bases := range wn.bases {
		if e := entry(t, form); e != nil {
			addAll(&e.Bases, bases)
		}
	}
	for key, e := range t {
		e.Clean(key)
		if e.Empty() {
			delete(t, key)
		}
	}
	return t
}

// entry returns the table's entry for a single-word lemma, made if new;
// nil for a lemma that is no one term.
func entry(t map[string]*thesaurus.Entry, w string) *thesaurus.Entry {
	key := oneTerm(w)
	if key == "" {
		return nil
	}
	e := t[key]
	if e == nil {
		e = &thesaurus.Entry{}
		t[key] = e
	}
	return e
}

// oneTerm is the term of a single-word lemma, or "" for a phrase, a stop
// word, or a word with digits.
func oneTerm(w string) string {
	ts := search.ContentTerms(w)
	if len(ts) != 1 || strings.ContainsAny(ts[0], "0123456789") || strings.Contains(w, " ") {
		return ""
	}
	return ts[0]
}

var phrases bool

// add adds the terms of a word or phrase to a list.
func add(list *[]string, w string) {
	if !phrases && strings.Contains(w, " ") {
		return
	}
	for _, t := range search.ContentTerms(w) {
		if !strings.ContainsAny(t, "0123456789") {
			*list = append(*list, t)
		}
	}
}

func addAll(list *[]string, ws []string) {
	for _, w := range ws {
		add(list, w)
	}
}

func write(path string, t map[string]*thesaurus.Entry) error {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := zw.Write([]byte(thesaurus.FormatLine(k, t[k]))); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
