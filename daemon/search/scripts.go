package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// How the words of scripts other than Latin are read (see fold, words and
// stem in text.go).

// keptWhole tells a character fold keeps as it is, however it was
// written: a Hangul syllable, a kana and the Cyrillic й.
func keptWhole(r rune) bool {
	return r == 'й' || r == 'Й' || kanaFirst <= r && r <= kanaLast || hangulFirst <= r && r <= hangulLast
}

// The hiragana and katakana, and the Hangul syllables, all composed.
const (
	kanaFirst, kanaLast     = 0x3040, 0x30FF
	hangulFirst, hangulLast = 0xAC00, 0xD7A3
)

// isJamo tells a letter of Hangul that makes syllables with its
// neighbours.
func isJamo(r rune) bool { return 0x1100 <= r && r <= 0x11FF }

// droppedMarks are the marks fold drops: the accents of Latin, Greek and
// Cyrillic, the vowel points of Hebrew and Arabic, which writers mostly
// leave out, Japanese's voiced marks standing alone, and the selectors of
// a character's look. The marks of scripts that write their vowels, tones
// or consonant clusters with them (Devanagari's, Thai's) make another
// word and are kept.
var droppedMarks = &unicode.RangeTable{R16: []unicode.Range16{
	{Lo: 0x0300, Hi: 0x036F, Stride: 1},
	{Lo: 0x0483, Hi: 0x0487, Stride: 1},
	{Lo: 0x0591, Hi: 0x05C7, Stride: 1},
	{Lo: 0x0610, Hi: 0x061A, Stride: 1},
	{Lo: 0x064B, Hi: 0x065F, Stride: 1},
	{Lo: 0x0670, Hi: 0x0670, Stride: 1},
	{Lo: 0x06D6, Hi: 0x06ED, Stride: 1},
	{Lo: 0x1AB0, Hi: 0x1AFF, Stride: 1},
	{Lo: 0x1DC0, Hi: 0x1DFF, Stride: 1},
	{Lo: 0x20D0, Hi: 0x20FF, Stride: 1},
	{Lo: 0x3099, Hi: 0x309A, Stride: 1},
	{Lo: 0xFE00, Hi: 0xFE0F, Stride: 1},
	{Lo: 0xFE20, Hi: 0xFE2F, Stride: 1},
}, R32: []unicode.Range32{
	{Lo: 0xE0100, Hi: 0xE01EF, Stride: 1},
}}

func droppedMark(r rune) bool { return unicode.Is(unicode.Mn, r) && unicode.Is(droppedMarks, r) }

// notInWord tells a character that parts words: neither a letter nor a
// digit, an ideograph (〇 is a number) nor a mark that is part of its
// letter (an enclosing one, as of "1⃣", is not).
func notInWord(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.In(r, unicode.Mn, unicode.Mc, unicode.Ideographic)
}

// isCJK tells a character of the scripts written without spaces between
// words (Korean, with spaces, joins particles to them), and Japanese's
// mark of a long vowel, which belongs to its word.
func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo, unicode.Ideographic) || r == 'ー')
}

func hasCJK(w string) bool { return strings.IndexFunc(w, isCJK) >= 0 }

// appendPaired appends the words of w, a run of letters and digits: its
// pieces in other scripts whole, and of each piece of CJK characters each
// character and each pair of neighbours, in the order they stand (a, ab,
// b, bc, c): a pair says the two stand together, as a word of two
// characters mostly does, and a character alone finds it wherever it is.
// The words of a piece inside another piece stand together in its words,
// so a phrase of them is found as the phrase of any other words is.
func appendPaired(out []string, w string) []string {
	piece := 0   // where the piece of other scripts being read starts
	cjk := false // whether a CJK piece is being read instead
	last := 0    // where its last character starts
	for i, r := range w {
		if !isCJK(r) {
			if cjk {
				piece, cjk = i, false
			}
			continue
		}
		end := i + utf8.RuneLen(r)
		if cjk {
			out = append(out, w[last:end])
		} else if piece < i {
			out = append(out, w[piece:i])
		}
		out = append(out, w[i:end])
		cjk, last = true, i
	}
	if !cjk && piece < len(w) {
		out = append(out, w[piece:])
	}
	return out
}

// cjkPair tells a term of two CJK characters.
func cjkPair(t string) (first, second string, ok bool) {
	r, size := utf8.DecodeRuneInString(t)
	if !isCJK(r) || size == len(t) {
		return "", "", false
	}
	return t[:size], t[size:], true
}

// prefixOf returns the first prefixLen letters of a term that has as
// many or more: terms sharing them are matched by prefix when one extends
// the other ("auditor", "audit"). Terms of CJK characters have none: each
// character is a term already.
func prefixOf(t string) (string, bool) {
	if r, _ := utf8.DecodeRuneInString(t); isCJK(r) {
		return "", false
	}
	if end, ok := firstLetters(t, prefixLen); ok {
		return t[:end], true
	}
	return "", false
}

// firstLetters returns where the first n characters of t end, and false
// if t has fewer.
func firstLetters(t string, n int) (int, bool) {
	for i := range t {
		if n == 0 {
			return i, true
		}
		n--
	}
	return len(t), n == 0
}
