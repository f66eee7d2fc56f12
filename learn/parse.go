package learn

import (
	"iter"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memd/memd"
)

// Kinds of fact the learner may add, as the model writes them.
const (
	KindProfile = "profile" // a lasting fact about the agent's work
	KindLog     = "log"     // something that happened
	KindNote    = "note"    // a minor detail
	KindUser    = "user"    // a lasting fact about the person (direct chats only)
)

// Add is one fact the model proposes.
type Add struct {
	Kind string
	Text string
}

// Answer is what the learner takes from a model's answer.
type Answer struct {
	Adds    []Add
	Removes []Quote // facts the model quoted
	None    bool    // the model said NONE
	Ignored int     // lines that were not a valid instruction, or over a cap
}

// Quote is a known fact a model quoted to remove: its text, and whether it
// carried the label the prompt puts on the person's facts.
type Quote struct {
	Text string
	User bool
}

// Blank tells whether the answer held no line to read (only blank lines
// and code fences): a model or a server at fault, as an empty answer is.
func (a Answer) Blank() bool {
	return len(a.Adds) == 0 && len(a.Removes) == 0 && !a.None && a.Ignored == 0
}

var (
	listMarker = regexp.MustCompile(`^(?:[-*•+]\s+|\(?\d{1,3}[.)]\s+)`)
	instrLine  = regexp.MustCompile("(?i)^(profile|log|note|user|remove)" + closingMark + "\\s*:\\s*(.*)$")
	noneLine   = regexp.MustCompile(`(?i)^none\.?$`)
	datePrefix = regexp.MustCompile(`^\(\d{4}-\d{2}-\d{2}\)\s*`)
)

// ParseAnswer reads a model's answer, tolerating what models do around the
// format — code fences, numbering, bullets, bold, quotes, prose — and
// keeping only well-formed lines: at most maxAdds facts and maxRemoves
// removals, each fact a valid one-line fact of at most 500 characters.
// Everything else is ignored and counted. Marks a model puts around a
// line, a keyword or a whole fact are taken off; those inside a fact
// ("with `make test`", "__init__") are the fact's own.
func ParseAnswer(text string, maxAdds, maxRemoves int) Answer {
	var a Answer
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "```") {
			continue
		}
		line = strings.TrimSpace(listMarker.ReplaceAllString(line, ""))
		if noneLine.MatchString(unwrap(line)) {
			a.None = true
			continue
		}
		kind, body, ok := splitInstruction(line, instrLine)
		if !ok {
			a.Ignored++
			continue
		}
		kind, body = strings.ToLower(kind), unquote(body)
		if kind == "remove" {
			q := quoteOf(body)
			if q.Text == "" || len(a.Removes) == maxRemoves {
				a.Ignored++
				continue
			}
			a.Removes = append(a.Removes, q)
			continue
		}
		t, err := memd.CleanFactText(body)
		if err != nil || len(a.Adds) == maxAdds {
			a.Ignored++
			continue
		}
		a.Adds = append(a.Adds, Add{Kind: kind, Text: t})
	}
	return a
}

// marks are the Markdown marks a model puts around a line, a keyword or a
// fact, the longer first; closingMark matches one closing a keyword.
var marks = []string{"***", "**", "__", "*", "_", "`"}

const closingMark = "(\\*\\*\\*|\\*\\*|__|\\*|_|`)?"

// openingMark returns the mark s starts with, or "".
func openingMark(s string) string {
	for _, m := range marks {
		if strings.HasPrefix(s, m) {
			return m
		}
	}
	return ""
}

// splitInstruction matches a line (its list marker taken off) against an
// instruction's pattern, whose groups are the keyword, the mark closing it
// and the body, and takes off the marks around the keyword or the whole
// line ("**profile:** x", "**profile**: x", "`log: x`") and around the
// whole body. A mark closed before the colon leaves the body as it is:
// "**log**: Released **v2**".
func splitInstruction(line string, pattern *regexp.Regexp) (keyword, body string, ok bool) {
	mark := openingMark(line)
	m := pattern.FindStringSubmatch(line[len(mark):])
	if m == nil {
		return "", "", false
	}
	keyword, closed, body := m[1], m[2], strings.TrimSpace(m[3])
	switch {
	case mark == "" || closed != "":
	case strings.HasPrefix(body, mark): // closed after the colon
		body = body[len(mark):]
	case loneMarks(body, mark)%2 == 1 && strings.HasSuffix(body, mark): // closed at the end of the line
		body = body[:len(body)-len(mark)]
	}
	return keyword, unwrap(strings.TrimSpace(body)), true
}

// loneMarks counts the marks in s that are not within a word: the
// underscores of snake_case are the word's.
func loneMarks(s, mark string) int {
	n := 0
	for i := range indexes(s, mark) {
		if before, after := around(s, i, len(mark)); !isWordRune(before) || !isWordRune(after) {
			n++
		}
	}
	return n
}

// indexes yields where sub stands in s, one place after another.
func indexes(s, sub string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for at := 0; ; {
			i := strings.Index(s[at:], sub)
			if i < 0 || !yield(at+i) {
				return
			}
			at += i + len(sub)
		}
	}
}

// around returns the runes before and after the n bytes at i of s
// (utf8.RuneError at either end).
func around(s string, i, n int) (before, after rune) {
	before, _ = utf8.DecodeLastRuneInString(s[:i])
	after, _ = utf8.DecodeRuneInString(s[i+n:])
	return before, after
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// unwrap takes off marks that enclose all of s and nothing inside it:
// "**x**" is x, while "`a` or `b`" stays as it is.
func unwrap(s string) string {
	for {
		m := openingMark(s)
		inner, ok := strings.CutSuffix(strings.TrimPrefix(s, m), m)
		if m == "" || !ok || len(s) < 2*len(m) || strings.Contains(inner, m) || strings.TrimSpace(inner) == "" {
			return s
		}
		s = strings.TrimSpace(inner)
	}
}

// quoteOf reads a removal's quote: what a model copies along with a fact
// from the known facts (a bullet, the date, the person's label) and quotes
// around it are taken off; the label says whose fact it is.
func quoteOf(s string) Quote {
	s = unquote(unwrap(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "- "))))
	s = datePrefix.ReplaceAllString(s, "")
	label := labelPrefix.FindString(s)
	s = datePrefix.ReplaceAllString(s[len(label):], "") // "[user] (date) x" too
	return Quote{Text: unquote(unwrap(strings.TrimSpace(s))), User: label != ""}
}

// labelPrefix is the person's label as a model copies it: "[user]", in
// any case, with or without marks around it.
var labelPrefix = regexp.MustCompile("(?i)^" + closingMark + `\[user\]` + closingMark + `:?\s*`)

// unquote takes off quotes that enclose all of s and no other quote of
// theirs: "\"Dune\" is better than \"Foundation\"" keeps its own, while
// an apostrophe ("doesn't", "the teams' board") is no quote.
func unquote(s string) string {
	for _, q := range [][2]string{{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"‘", "’"}} {
		if len(s) < len(q[0])+len(q[1]) || !strings.HasPrefix(s, q[0]) || !strings.HasSuffix(s, q[1]) {
			continue
		}
		inner := s[len(q[0]) : len(s)-len(q[1])]
		if !holdsQuote(inner, q[0]) && !holdsQuote(inner, q[1]) {
			return strings.TrimSpace(inner)
		}
	}
	return s
}

// holdsQuote tells whether s holds quote q as a quote: any double quote,
// but a single one only where it opens a quotation (after a space, before
// a word), for an apostrophe ends words ("teams'") and stands in them
// ("doesn't", "90's").
func holdsQuote(s, q string) bool {
	if q != "'" && q != "’" {
		return strings.Contains(s, q)
	}
	for i := range indexes(s, q) {
		if before, after := around(s, i, len(q)); !isWordRune(before) && isWordRune(after) {
			return true
		}
	}
	return false
}
