package anchor

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Fold returns s as folded matching sees it: composed (NFC), wide and
// non-breaking spaces as plain spaces, zero-width characters gone, curly
// quotes straight, dashes as hyphens, runs of spaces as one, and no spaces
// before a line break or at the end.
func Fold(s string) string { return fold(s).s }

// folded is a folded text with, for each of its bytes, the bytes of the
// original it stands for.
type folded struct {
	s        string
	from, to []int  // original range each byte stands for
	canStart []bool // a match may start at this byte
	canEnd   []bool // a match may end after this byte
}

// unit is one folded rune and the original bytes it came from. A rune from
// a segment that normalisation changed is tied to the whole segment, and
// matches may neither start nor end inside it.
type unit struct {
	r           rune
	from, to    int
	first, last bool
}

func fold(text string) folded {
	var units []unit
	var it norm.Iter
	it.InitString(norm.NFC, text)
	for !it.Done() {
		start := it.Pos()
		seg := it.Next()
		end := it.Pos()
		if string(seg) == text[start:end] {
			for i := start; i < end; {
				r, size := utf8.DecodeRuneInString(text[i:])
				units = appendFolded(units, unit{r: r, from: i, to: i + size, first: true, last: true})
				i += size
			}
			continue
		}
		n := len(units)
		for i := 0; i < len(seg); {
			r, size := utf8.DecodeRune(seg[i:])
			units = appendFolded(units, unit{r: r, from: start, to: end})
			i += size
		}
		if len(units) > n {
			units[n].first = true
			units[len(units)-1].last = true
		}
	}
	units = foldSpaces(units)

	var f folded
	var b strings.Builder
	for _, u := range units {
		size := utf8.RuneLen(u.r)
		b.WriteRune(u.r)
		for j := 0; j < size; j++ {
			f.from = append(f.from, u.from)
			f.to = append(f.to, u.to)
			f.canStart = append(f.canStart, j == 0 && u.first)
			f.canEnd = append(f.canEnd, j == size-1 && u.last)
		}
	}
	f.s = b.String()
	return f
}

// appendFolded appends a unit with its rune folded, or nothing for a
// zero-width character.
func appendFolded(units []unit, u unit) []unit {
	switch u.r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad':
		// A dropped rune that ends a changed segment hands its end on.
		if u.last && len(units) > 0 && units[len(units)-1].from == u.from {
			units[len(units)-1].last = true
		}
		return units
	case '\u00a0', '\u1680', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005',
		'\u2006', '\u2007', '\u2008', '\u2009', '\u200a', '\u202f', '\u205f', '\u3000':
		u.r = ' '
	case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032':
		u.r = '\''
	case '\u201c', '\u201d', '\u201e', '\u201f', '\u2033':
		u.r = '"'
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		u.r = '-'
	}
	return append(units, u)
}

// foldSpaces turns each run of spaces into one space standing for the
// whole run, and drops a run that ends a line or the text.
func foldSpaces(units []unit) []unit {
	out := units[:0]
	for i := 0; i < len(units); {
		if units[i].r != ' ' {
			out = append(out, units[i])
			i++
			continue
		}
		j := i
		for j < len(units) && units[j].r == ' ' {
			j++
		}
		if j == len(units) || units[j].r == '\n' || units[j].r == '\r' {
			i = j
			continue
		}
		u := units[i]
		u.to, u.last = units[j-1].to, units[j-1].last
		out = append(out, u)
		i = j
	}
	return out
}
