package search

import (
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// aloneEnd bounds the runes looked up in foldedAlone: Latin with its
// accents, Greek, Cyrillic, Hebrew, Arabic, the scripts of India, and the
// punctuation, currency and letter-like symbols of any language ("…", "€",
// "«»", "№", "™").
const aloneEnd = 0x3000

// runesAlone holds, for each rune from 0x80 below aloneEnd, what fold
// makes of it wherever it stands, where that is so: Unicode's normal
// forms join no such rune to what is on its left (norm's BoundaryBefore),
// nor to anything on its right that is not joined to its own left, so a
// text of them, ASCII and plainRune's runes folds a rune at a time. Each
// is taken from the tables once, the first time a text needs them.
type runesAlone struct {
	folded [aloneEnd - 0x80]string
	one    [aloneEnd - 0x80]rune // the folded rune, where it is one (most are)
	known  [(aloneEnd - 0x80 + 63) / 64]uint64
}

var foldedAlone = sync.OnceValue(func() *runesAlone {
	t := new(runesAlone)
	for r := rune(0x80); r < aloneEnd; r++ {
		s := string(r)
		if !utf8.ValidRune(r) || isJamo(r) || !norm.NFKC.PropertiesString(s).BoundaryBefore() {
			continue
		}
		f := foldByTables(s)
		if strings.ContainsFunc(f, isJamo) {
			continue // fold joins it to its neighbours (see foldByTables)
		}
		i := r - 0x80
		t.folded[i] = f
		if r, size := utf8.DecodeRuneInString(f); size == len(f) && size > 0 {
			t.one[i] = r
		}
		t.known[i/64] |= 1 << (i % 64)
	}
	return t
})

// single returns the rune fold makes of r, below aloneEnd, where that is
// one rune and the same wherever r stands, or 0.
func (t *runesAlone) single(r rune) rune { return t.one[r-0x80] }

// lookUp returns what fold makes of r, below aloneEnd, and whether that
// is the same wherever r stands.
func (t *runesAlone) lookUp(r rune) (string, bool) {
	i := r - 0x80
	return t.folded[i], t.known[i/64]&(1<<(i%64)) != 0
}
