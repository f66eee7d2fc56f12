package memd

import (
	"unicode/utf8"
)

// CheckJSONText checks that JSON a client sent can be read as it was
// meant: valid UTF-8, and no string escaping half of a UTF-16 surrogate
// pair ("\ud800" alone). Go's decoder, like most, reads either as U+FFFD
// without a word, so a fact would be kept with other text than the one
// sent; memd refuses it instead. It does not check the JSON's syntax.
func CheckJSONText(raw []byte) error {
	if !utf8.Valid(raw) {
		return Errorf(EINVALID, "the JSON is not valid UTF-8")
	}
	// A backslash is only ever inside a string in JSON, and starts an
	// escape there; a "\\" escape is passed over whole.
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw[i+1:])
		switch {
		case !ok || r < 0xD800 || r > 0xDFFF:
		case r <= 0xDBFF && len(raw) >= i+11 && raw[i+5] == '\\' && raw[i+6] == 'u':
			if low, ok := hex4(raw[i+7:]); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 10 // the pair, whole
				continue
			}
			return loneSurrogate(r)
		default:
			return loneSurrogate(r)
		}
		i += 4
	}
	return nil
}

func loneSurrogate(r rune) error {
	return Errorf(EINVALID, "the JSON holds \\u%04x, half of a UTF-16 surrogate pair, alone: it stands for no character (send text as UTF-8, or the pair whole)", r)
}

// hex4 reads four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
