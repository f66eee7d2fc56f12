package search

import (
	"hash/maphash"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/russian"
	"golang.org/x/text/unicode/norm"

	"github.com/memd/memd"
)

// fold lowercases text and strips accents, so "Café" and "cafe" match,
// and reads compatibility forms as their letters ("ﬁ", "Ａ", "ｶ"). A
// Hangul syllable, a kana and the Cyrillic й are kept whole, however they
// were typed: taken apart, Korean would be read as letters rather than
// syllables, Japanese would lose the marks that make "バス" (bus) another
// word than "ハス" (lotus), and Russian the й its endings are told by.
func fold(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	if folded, ok := foldPlain(s); ok {
		return folded
	}
	return foldByTables(s)
}

// foldPlain is fold for a text of ASCII, plainRune's runes and the runes
// foldedAlone knows, which most texts are whatever their language:
// Unicode's normal forms join none of them to its neighbour (only marks
// and jamo join), so the text is folded a rune at a time with no look-up
// in Unicode's tables. ok is false for any other text.
func foldPlain(s string) (folded string, ok bool) { return foldPlainTo(s, false) }

// foldPlainTo is foldPlain, writing only the runs of the folded text
// joined by single spaces if runsOnly (see foldedText). It gives up at the
// first rune it does not know.
func foldPlainTo(s string, runsOnly bool) (string, bool) {
	var alone *runesAlone
	w := foldWriter{buf: make([]byte, 0, len(s)), runsOnly: runsOnly}
	for i := 0; i < len(s); {
		if c := s[i]; c < 0x80 {
			w.ascii(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= aloneEnd {
			lower, ok := plainRune(r)
			if !ok {
				return "", false
			}
			w.rune(lower)
			continue
		}
		if alone == nil {
			alone = foldedAlone()
		}
		if one := alone.single(r); one != 0 {
			w.rune(one)
			continue
		}
		f, ok := alone.lookUp(r)
		if !ok {
			return "", false
		}
		for _, r := range f {
			w.rune(r)
		}
	}
	return w.text(), true
}

// foldWriter writes folded runes, lowering ASCII; if runsOnly, only the
// runs of runes in words, joined by single spaces.
type foldWriter struct {
	buf      []byte
	runsOnly bool
	gap      bool // a rune outside words since the last one written
}

// text returns what was written. The writer is not used again.
func (w *foldWriter) text() string { return unsafe.String(unsafe.SliceData(w.buf), len(w.buf)) }

func (w *foldWriter) ascii(c byte) {
	if !w.runsOnly {
		w.buf = append(w.buf, lowerASCII(c))
		return
	}
	f := asciiFolds[c] // 0 outside words
	switch {
	case f == 0:
		w.gap = len(w.buf) > 0
	case w.gap:
		w.buf = append(w.buf, ' ', f)
		w.gap = false
	default:
		w.buf = append(w.buf, f)
	}
}

func (w *foldWriter) rune(r rune) {
	if r < 0x80 {
		w.ascii(byte(r))
		return
	}
	if w.runsOnly {
		if !inWord(r) {
			w.gap = len(w.buf) > 0
			return
		}
		if w.gap {
			w.buf = append(w.buf, ' ')
			w.gap = false
		}
	}
	w.buf = utf8.AppendRune(w.buf, r)
}

// lowerASCII lowers an ASCII letter.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldByTables is fold, by Unicode's tables a rune.
func foldByTables(s string) string {
	if !utf8.ValidString(s) {
		// Each byte that is not UTF-8 made U+FFFD, as the loop below
		// reads it, before NFKC: after such a byte NFKC leaves some text
		// as it is ("΅" for " ̈́"), and fold would not give the same again.
		s = strings.Map(func(r rune) rune { return r }, s)
	}
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	dropped := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		p := norm.NFD.PropertiesString(s[i:])
		if d := p.Decomposition(); d != nil && !keptWhole(r) {
			for _, r := range string(d) {
				dropped = !writeFolded(&b, r) || dropped
			}
		} else {
			dropped = !writeFolded(&b, r) || dropped
		}
		i += size
	}
	folded := b.String()
	if dropped && strings.ContainsFunc(folded, isJamo) {
		// An accent between a syllable and a letter of Hangul kept them
		// apart; gone, they make one syllable, as the same text typed
		// without it does.
		return foldByTables(folded)
	}
	return folded
}

// plainRune returns a rune from aloneEnd on as fold writes it, where that
// needs none of Unicode's tables (see foldPlain): the ideographs, kana and
// Hangul syllables most of a text in Chinese, Japanese or Korean is (with
// kana's long vowel and iteration marks), the ideographic space, stops,
// brackets and iteration marks, and the full-width forms of ASCII
// (NFKC's ASCII, lowered). A start folds every such fact's text.
func plainRune(r rune) (lower rune, ok bool) {
	switch {
	case r < aloneEnd:
		return 0, false
	case plainLetter(r),
		0x3001 <= r && r <= 0x3002, 0x3005 <= r && r <= 0x3011, 0x309D <= r && r <= 0x309E, 0x30FB <= r && r <= 0x30FE:
		return r, true
	case 0xFF01 <= r && r <= 0xFF5E:
		return rune(lowerASCII(byte(r - 0xFEE0))), true
	case r == 0x3000:
		return ' ', true
	}
	return 0, false
}

// writeFolded writes r lowered, or nothing if it is an accent (see
// droppedMark), and tells whether it wrote it.
func writeFolded(b *strings.Builder, r rune) bool {
	if r < 0x80 {
		b.WriteByte(byte(unicode.ToLower(r)))
		return true
	}
	if droppedMark(r) {
		return false
	}
	b.WriteRune(unicode.ToLower(r))
	return true
}

// runs splits folded text into runs of letters, digits and the marks of
// scripts that write vowels as marks, of any length, so "NYC", "SQL" and
// "Q3" are words like any other. A fact's folded text is its runs joined
// by single spaces.
func runs(folded string) []string {
	if isASCII(folded) {
		return wordsASCII(folded)
	}
	return strings.FieldsFunc(folded, notInWord)
}

// words returns the words of folded text: its runs, but that Chinese,
// Japanese and Korean put no space between the words of a phrase, or join
// their particles to them: of a run of their characters each character
// and each pair of neighbours is a word (see appendPaired), so that "东京"
// is found in "把年会放在东京举办" and "서울" in "서울에서".
func words(folded string) []string { return paired(runs(folded)) }

// paired returns the words of runs (see words).
func paired(rs []string) []string {
	if !slices.ContainsFunc(rs, hasCJK) {
		return rs
	}
	out := make([]string, 0, 3*len(rs))
	for _, w := range rs {
		out = appendPaired(out, w)
	}
	return out
}

// wordsASCII is words for ASCII text, read a byte at a time: decoding
// runes and asking Unicode of each took a third of analysing a fact,
// and a start analyses a million.
func wordsASCII(s string) []string {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		w := inWordASCII(s[i])
		if w && !in {
			n++
		}
		in = w
	}
	ws := make([]string, 0, n)
	start := -1
	for i := 0; i < len(s); i++ {
		switch w := inWordASCII(s[i]); {
		case w && start < 0:
			start = i
		case !w && start >= 0:
			ws = append(ws, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		ws = append(ws, s[start:])
	}
	return ws
}

func inWordASCII(c byte) bool { return asciiFolds[c] != 0 }

// stemSlots caches the stems of words, as vocabularies are small and
// stemming every word of a million facts would take most of a start. A
// word has the two slots its hash names, and pushes out a word held in
// one of them: the cache holds at most that many words, a few megabytes
// whatever words queries bring (typos among them), and needs no lock.
// Words with digits (numbers, codes, references) are not stemmed: a
// store holds nearly one per fact.
var (
	stemSlots [1 << 17]atomic.Pointer[stemmed]
	stemSeed  = maphash.MakeSeed()
)

type stemmed struct{ word, stem string }

// stem returns the Snowball stem of a folded word, so "flights" matches
// "flight" and "migrated" matches "migration": the Russian one for a word
// in Cyrillic ("Москве" matches "Москва"), the English (Porter2) one for
// the others, which leaves the CJK pairs as they are.
func stem(w string) string { return stemWord(w, hasDigit(w)) }

// stemWord is stem, told whether the word holds a digit.
func stemWord(w string, digit bool) string {
	if len(w) <= 2 || digit {
		return w
	}
	r, _ := utf8.DecodeRuneInString(w)
	if isCJK(r) {
		return w
	}
	h := maphash.String(stemSeed, w) & (uint64(len(stemSlots)) - 1)
	first, second := &stemSlots[h], &stemSlots[h^1]
	e1, e2 := first.Load(), second.Load()
	switch {
	case e1 != nil && e1.word == w:
		return e1.stem
	case e2 != nil && e2.word == w:
		return e2.stem
	}
	var s string
	if unicode.Is(unicode.Cyrillic, r) {
		s = russian.Stem(w, true)
	} else {
		s = english.Stem(w, true)
	}
	if s == "" {
		s = w
	}
	// Copies: w and s are parts of the whole text they were read from.
	e := &stemmed{strings.Clone(w), strings.Clone(s)}
	if e1 != nil && e2 == nil {
		second.Store(e)
	} else {
		first.Store(e)
	}
	return s
}

// analyze returns a text's words, folded and joined by single spaces (for
// phrase and substring matching), and its stemmed terms, in order.
func analyze(text string) (folded string, ts []string) {
	folded, ws := foldWords(text)
	return folded, stemAll(ws)
}

// plainLetter tells the letters among plainRune's runes: the ideographs,
// kana, Hangul syllables and Russian's letters.
func plainLetter(r rune) bool {
	return 0x4E00 <= r && r <= 0x9FFF || 0x3041 <= r && r <= 0x3096 || 0x30A1 <= r && r <= 0x30FA ||
		hangulFirst <= r && r <= hangulLast || 0x410 <= r && r <= 0x44F
}

// inWord is !notInWord, told at once for ASCII and plain letters.
func inWord(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return plainLetter(r) || !notInWord(r)
}

// foldedText is the folded text foldWords returns, alone: the runs of
// fold(text) joined by single spaces, written in one pass. A start makes
// it for every fact not in ASCII whose terms a snapshot holds.
func foldedText(text string) string {
	if folded, ok := foldPlainTo(text, true); ok {
		return folded
	}
	f := foldByTables(text)
	w := foldWriter{buf: make([]byte, 0, len(f)), runsOnly: true}
	for _, r := range f {
		w.rune(r)
	}
	return w.text()
}

// foldWords returns a text's folded words, and its folded text: its runs
// joined by single spaces (a run of CJK characters whole, so that it is
// held once and a phrase of them is found in it as it is written).
func foldWords(text string) (folded string, ws []string) {
	rs := runs(fold(text))
	return strings.Join(rs, " "), paired(rs)
}

// terms returns the stemmed terms of a folded text, in order.
func terms(folded string) []string { return stemAll(words(folded)) }

func stemAll(ws []string) []string {
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return ws
}

// hasDigit reports whether a word holds a digit: a number or a code.
func hasDigit(w string) bool {
	for i := 0; i < len(w); i++ {
		if '0' <= w[i] && w[i] <= '9' {
			return true
		}
	}
	return false
}

// isASCII reports whether s is plain ASCII, whose folded words foldASCII
// gives without allocating.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// containsFold reports whether the folded words of the ASCII text s,
// joined by single spaces, hold n: a folded word (lower case letters and
// digits), or several joined by single spaces. s is read as it is: a run
// of letters and digits cannot span a separator, and a run of separators
// folds to one space.
func containsFold(s, n string) bool {
	if n == "" {
		return true
	}
	if !isASCII(n) {
		return false // s's folded words are ASCII
	}
	first, upper := n[0], n[0]
	if 'a' <= first && first <= 'z' {
		upper = first - 'a' + 'A'
	}
	// Folding never lengthens a text: a match starts before end. Where the
	// next first letter and the next capital are is searched again only
	// once passed: a text holding many of one and none of the other would
	// otherwise be read to its end at each try.
	end := len(s) - len(n) + 1
	lower, capital := -1, -1
	if upper == first {
		capital = end
	}
	for i := 0; i < end; i++ {
		if lower < i {
			lower = indexFrom(s[:end], i, first)
		}
		if capital < i {
			capital = indexFrom(s[:end], i, upper)
		}
		if i = min(lower, capital); i == end {
			return false
		}
		if startsFolded(s[i:], n) {
			return true
		}
	}
	return false
}

// indexFrom returns where byte c is first in s from i on, len(s) if
// nowhere.
func indexFrom(s string, i int, c byte) int {
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return len(s)
}

// startsFolded reports whether the folded words of s, which starts with a
// letter or digit, start with n.
func startsFolded(s, n string) bool {
	j, gap := 0, false
	for k := 0; k < len(s); k++ {
		c := asciiFolds[s[k]]
		if c == 0 {
			gap = true
			continue
		}
		if gap {
			if n[j] != ' ' {
				return false
			}
			if j++; j == len(n) {
				return true
			}
			gap = false
		}
		if n[j] != c {
			return false
		}
		if j++; j == len(n) {
			return true
		}
	}
	return false
}

// foldASCII appends to buf the folded words of an ASCII text joined by
// single spaces: what analyze gives as folded, for such a text. It writes
// into room made once, the folded text being no longer than the text.
func foldASCII(buf []byte, s string) []byte {
	n := len(buf)
	buf = slices.Grow(buf, len(s))[:n+len(s)]
	w, gap := n, false
	for i := 0; i < len(s); i++ {
		c := asciiFolds[s[i]]
		if c == 0 {
			gap = true
			continue
		}
		if gap && w > 0 {
			buf[w] = ' '
			w++
		}
		gap = false
		buf[w] = c
		w++
	}
	return buf[:w]
}

// asciiFolds maps a byte of a word to its folded form, and any other to 0.
var asciiFolds = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c + 'a' - 'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = byte(c)
		}
	}
	return t
}()

// russianStop reports whether a folded word in Cyrillic carries little
// meaning in a query: Snowball's Russian stop words and forms of "это",
// but those a question may turn on, as English's are kept ("one", "never",
// "after", "without"). Ukrainian and Bulgarian words are read as Russian.
func russianStop(w string) bool {
	switch w {
	case "один", "два", "три", "нельзя", "можно", "надо", "всегда", "никогда", "иногда", "хорошо", "лучше",
		"после", "перед", "до", "без", "через", "между", "больше", "более", "много", "сейчас", "теперь", "вдруг":
		return false
	case "это", "эта", "эти", "этот", "этих", "этим":
		return true
	}
	return russian.IsStopWord(w)
}

// isStop reports whether a folded word carries little meaning in a query.
func isStop(w string) bool {
	if english.IsStopWord(w) {
		return true
	}
	if r, _ := utf8.DecodeRuneInString(w); unicode.Is(unicode.Cyrillic, r) {
		return russianStop(w)
	}
	switch w {
	case "what", "when", "where", "which", "who", "whom", "why", "did", "does", "do", "we", "us", "you", "your", "i", "tell", "know", "remember", "anything", "something":
		return true
	}
	return false
}

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

var (
	isoDate   = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	monthDay  = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b`)
	dayMonth  = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b(?:,?\s+(\d{4}))?`)
	monthYear = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?\s+(\d{4})\b`)
)

// dateSpan is a range of days a query names, inclusive.
type dateSpan struct{ from, to int }

// queryDates finds the dates a query names: 2026-03-14, "March 14",
// "14 March 2026", "March 2026". A day without a year is taken in the year
// of ref (or the year before, if that day would be after ref). It returns
// the query with the dates removed, so their words do not count as terms.
func queryDates(q string, ref time.Time) ([]dateSpan, string) {
	if !hasDigit(q) {
		return nil, q // every pattern holds a digit (\d is ASCII's); most queries none
	}
	var spans []dateSpan
	day := func(y int, m time.Month, d int) (int, bool) {
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if t.Month() != m || t.Day() != d {
			return 0, false
		}
		return memd.DateOf(t).Days(), true
	}
	yearOf := func(s string, m time.Month, d int) int {
		if s != "" {
			y, _ := strconv.Atoi(s)
			return y
		}
		y := ref.Year()
		if time.Date(y, m, d, 0, 0, 0, 0, time.UTC).After(ref) {
			y--
		}
		return y
	}
	q = isoDate.ReplaceAllStringFunc(q, func(s string) string {
		if d, err := memd.ParseDate(s); err == nil {
			spans = append(spans, dateSpan{d.Days(), d.Days()})
			return " "
		}
		return s
	})
	// "March 3" and "3 March", each with a year or not: the month's and
	// the day's groups are where each pattern has them.
	for _, p := range []struct {
		re         *regexp.Regexp
		month, day int
	}{{monthDay, 1, 2}, {dayMonth, 2, 1}} {
		q = p.re.ReplaceAllStringFunc(q, func(s string) string {
			m := p.re.FindStringSubmatch(s)
			mon, dd := months[strings.ToLower(m[p.month])], atoi(m[p.day])
			if n, ok := day(yearOf(m[3], mon, dd), mon, dd); ok {
				spans = append(spans, dateSpan{n, n})
				return " "
			}
			return s
		})
	}
	q = monthYear.ReplaceAllStringFunc(q, func(s string) string {
		m := monthYear.FindStringSubmatch(s)
		mon, y := months[strings.ToLower(m[1])], atoi(m[2])
		first, _ := day(y, mon, 1)
		last := memd.DateOf(time.Date(y, mon+1, 0, 0, 0, 0, 0, time.UTC)).Days()
		spans = append(spans, dateSpan{first, last})
		return " "
	})
	return spans, q
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ContentTerms returns the stemmed terms of a text that carry meaning in a
// query, its stop words left out: the terms a search looks up. The
// thesaurus generator keys its table by them, and the judged sets check
// their paraphrases with them.
func ContentTerms(text string) []string {
	_, ws := foldWords(text)
	var out []string
	for _, w := range ws {
		if !isStop(w) {
			out = append(out, stem(w))
		}
	}
	return out
}
