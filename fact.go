package memd

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxFactLen is the longest fact text, in characters, after trimming.
const MaxFactLen = 500

// Tier says where a fact lives and how much it weighs in ranking.
type Tier string

const (
	TierProfile Tier = "profile" // lasting facts, profile.md
	TierLog     Tier = "log"     // dated history, log/YYYY-MM.md (or log/YYYY-MM/DD.md)
	TierNote    Tier = "note"    // a minor detail, a log line tagged [note], weight 0.5
	TierEpisode Tier = "episode" // a summary of recent work, tagged [episode], weight 1.5
)

// ParseTier checks a tier name; "" means profile.
func ParseTier(s string) (Tier, error) {
	switch Tier(s) {
	case "":
		return TierProfile, nil
	case TierProfile, TierLog, TierNote, TierEpisode:
		return Tier(s), nil
	}
	return "", Errorf(EINVALID, "tier %q: want profile, log, note or episode", Shorten(s, 40))
}

// Weight is the ranking weight of a tier.
func (t Tier) Weight() float64 {
	switch t {
	case TierNote:
		return 0.5
	case TierEpisode:
		return 1.5
	}
	return 1
}

// Fact is one dated line of memory.
type Fact struct {
	ID    string  `json:"id"`
	Shard ShardID `json:"shard"`
	Date  Date    `json:"date"`
	Tier  Tier    `json:"tier"`
	Text  string  `json:"text"`
	File  string  `json:"file"` // profile.md, log/YYYY-MM.md or log/YYYY-MM/DD.md
	// Origin, when asked for, is the commit that wrote the fact's line.
	Origin *Origin `json:"origin,omitempty"`
}

// FactID returns the identity of a fact's text: a short hex hash of the text
// in Unicode NFC, lowercased, with runs of white space folded to one space.
// The same text in the same shard is the same fact.
func FactID(text string) string {
	sum := factSum(text)
	return hex.EncodeToString(sum[:6])
}

// FactKey is FactID as a number, the six bytes its 12 hex digits spell:
// a store placing a million facts keeps numbers, not strings.
func FactKey(text string) uint64 {
	sum := factSum(text)
	return uint64(sum[0])<<40 | uint64(sum[1])<<32 | uint64(sum[2])<<24 | uint64(sum[3])<<16 | uint64(sum[4])<<8 | uint64(sum[5])
}

// factSum is the hash of a text's normal form, which FactID and FactKey
// are taken from.
func factSum(text string) [sha256.Size]byte {
	var buf [256]byte
	normal, ok := normalASCII(buf[:], text)
	if !ok {
		normal = []byte(NormalizeFactText(text))
	}
	return sha256.Sum256(normal)
}

// normalASCII returns NormalizeFactText(text), in buf when it is long
// enough, when text is ASCII alone (false otherwise), without the three
// copies the general form makes: every fact line read is identified, a
// million at a start. ASCII is its own NFC, lowercased by A-Z alone, and
// its white space is what strings.Fields splits at. Bytes are told apart
// by table: a branch on each, mispredicted at every space, was most of
// identifying a short fact.
func normalASCII(buf []byte, text string) ([]byte, bool) {
	if len(buf) < len(text) {
		buf = make([]byte, len(text)) // the normal form is never longer
	}
	// Most texts need their letters lowered and nothing else: one pass
	// with no branch on the bytes says so, and lowers them.
	odd := byte(0)
	prev := byte(' ') // a space first is odd
	for i := 0; i < len(text); i++ {
		c := text[i]
		k := asciiKinds[c]
		buf[i] = asciiLower[c]
		odd |= k&^asciiSpace | k&asciiKinds[prev]&asciiSpace // two spaces in a row are odd
		prev = c
	}
	if odd == 0 && prev != ' ' {
		return buf[:len(text)], true
	}
	n := 0
	space := false // a run of white space waits for the next word
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch asciiKinds[c] {
		case asciiBeyond:
			return nil, false
		case asciiSpace, asciiWhite:
			space = n > 0
			continue
		}
		if space {
			buf[n] = ' '
			n++
			space = false
		}
		buf[n] = asciiLower[c]
		n++
	}
	return buf[:n], true
}

// The kinds of byte normalASCII tells apart from those shown (0), by
// asciiKinds, as bits; asciiLower holds the lower case of each byte.
const (
	asciiSpace  = 1 << iota // ' '
	asciiWhite              // other white space, which strings.Fields splits at
	asciiBeyond             // not ASCII
)

var asciiKinds, asciiLower = func() (kinds, lower [256]byte) {
	for c := range 256 {
		lower[c] = byte(c)
		switch {
		case c >= utf8.RuneSelf:
			kinds[c] = asciiBeyond
		case c == ' ':
			kinds[c] = asciiSpace
		case c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			kinds[c] = asciiWhite
		case 'A' <= c && c <= 'Z':
			lower[c] = byte(c) + 'a' - 'A'
		}
	}
	return kinds, lower
}()

// NormalizeFactText is the form of a text that identity compares.
func NormalizeFactText(text string) string {
	s := strings.ToLower(norm.NFC.String(text))
	return strings.Join(strings.Fields(s), " ")
}

// ValidFactID reports whether id has the form FactID returns.
func ValidFactID(id string) bool {
	if len(id) != 12 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// CleanFactText trims text and checks it may be a fact: one line of
// 1..MaxFactLen characters, one at least that shows, valid UTF-8, no
// control characters, and not starting with a tier tag (which would change
// its meaning when read back).
func CleanFactText(text string) (string, error) {
	t := strings.TrimSpace(text)
	if !utf8.ValidString(t) {
		return "", Errorf(EINVALID, "fact text is not valid UTF-8")
	}
	if t == "" {
		return "", Errorf(EINVALID, "fact text is empty")
	}
	if n := utf8.RuneCountInString(t); n > MaxFactLen {
		return "", Errorf(EINVALID, "fact text is %d characters; the limit is %d (split it or shorten it)", n, MaxFactLen)
	}
	for _, r := range t {
		if r == '\n' || r == '\r' {
			return "", Errorf(EINVALID, "fact text must be one line; it contains a line break")
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", Errorf(EINVALID, "fact text contains the control character %U", r)
		}
	}
	if !strings.ContainsFunc(t, visible) {
		return "", Errorf(EINVALID, "fact text has nothing visible: only spaces and invisible characters")
	}
	if strings.HasPrefix(t, "[note]") || strings.HasPrefix(t, "[episode]") {
		return "", Errorf(EINVALID, "fact text may not start with a tier tag; pass the tier instead")
	}
	return t, nil
}

// visible reports whether r shows: not a space, and not a format
// character such as a zero-width space or a byte-order mark.
func visible(r rune) bool { return !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) }

// Date is a calendar day, comparable with ==. The zero Date is unset.
type Date struct {
	days int32 // since 1970-01-01
	set  bool
}

// DateOf returns the calendar day of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	u := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()
	return Date{days: int32(floorDiv(u, 86400)), set: true}
}

// DateFromDays returns the day n days after 1970-01-01, as Days counts.
func DateFromDays(n int) Date { return Date{days: int32(n), set: true} }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ParseDate parses "YYYY-MM-DD", accepting only real calendar dates: the
// strings time.Parse(time.DateOnly, s) accepts. By hand, as every fact
// line read holds one: time.Parse cost a fifth of reading a line.
func ParseDate(s string) (Date, error) {
	if len(s) != 10 {
		return Date{}, Errorf(EINVALID, "date %q: want YYYY-MM-DD", Shorten(s, 40))
	}
	y, okY := digits(s[0:4])
	m, okM := digits(s[5:7])
	d, okD := digits(s[8:10])
	if !okY || !okM || !okD || s[4] != '-' || s[7] != '-' || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return Date{}, Errorf(EINVALID, "date %q is not a calendar date (want YYYY-MM-DD)", s)
	}
	return Date{days: int32(daysFromCivil(y, m, d)), set: true}, nil
}

// digits reads a run of decimal digits, false if any byte is another.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysIn is how many days month m of year y has.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to the given day of
// the proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
func daysFromCivil(y, m, d int) int {
	if m <= 2 {
		y--
	}
	era := int(floorDiv(int64(y), 400))
	yoe := y - era*400                     // [0, 399]
	doy := (153*((m+9)%12)+2)/5 + d - 1    // [0, 365], from March 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return era*146097 + doe - 719468
}

// IsZero reports whether d is unset.
func (d Date) IsZero() bool { return !d.set }

func (d Date) String() string {
	if !d.set {
		return ""
	}
	return d.Time().Format(time.DateOnly)
}

// Month returns "YYYY-MM", which names a fact's log file.
func (d Date) Month() string { return d.Time().Format("2006-01") }

// Days returns the number of days since 1970-01-01.
func (d Date) Days() int { return int(d.days) }

// Time returns midnight UTC of d.
func (d Date) Time() time.Time { return time.Unix(int64(d.days)*86400, 0).UTC() }

// Before reports whether d is earlier than e.
func (d Date) Before(e Date) bool { return d.days < e.days }

// MarshalText renders "YYYY-MM-DD".
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses "YYYY-MM-DD"; an empty text is the zero date.
func (d *Date) UnmarshalText(b []byte) error { return unmarshalText(d, b, ParseDate) }

// unmarshalText sets *v to what parse makes of b; an empty b is the zero
// value.
func unmarshalText[T any](v *T, b []byte, parse func(string) (T, error)) error {
	var parsed T
	if len(b) > 0 {
		var err error
		if parsed, err = parse(string(b)); err != nil {
			return err
		}
	}
	*v = parsed
	return nil
}
