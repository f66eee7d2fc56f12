package learn

import (
	"regexp"
	"strings"

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
	Removes []string // fact texts the model quoted
	None    bool     // the model said NONE
	Ignored int      // lines that were not a valid instruction, or over a cap
}

var (
	listMarker = regexp.MustCompile(`^(?:[-*•+]\s+|\(?\d{1,3}[.)]\s+)`)
	instrLine  = regexp.MustCompile(`(?i)^(profile|log|note|user|remove)\s*:\s*(.*)$`)
	noneLine   = regexp.MustCompile(`(?i)^none\.?$`)
	datePrefix = regexp.MustCompile(`^\(\d{4}-\d{2}-\d{2}\)\s*`)
	tagPrefix  = regexp.MustCompile(`^\[[a-z]+\]\s*`)
)

// ParseAnswer reads a model's answer, tolerating what models do around the
// format — code fences, numbering, bullets, bold, quotes, prose — and
// keeping only well-formed lines: at most maxAdds facts and maxRemoves
// removals, each fact a valid one-line fact of at most 500 characters.
// Everything else is ignored and counted.
func ParseAnswer(text string, maxAdds, maxRemoves int) Answer {
	var a Answer
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "```") {
			continue
		}
		line = strings.TrimSpace(listMarker.ReplaceAllString(line, ""))
		line = strings.TrimSpace(strings.Trim(line, "*_`"))
		if noneLine.MatchString(line) {
			a.None = true
			continue
		}
		m := instrLine.FindStringSubmatch(line)
		if m == nil {
			a.Ignored++
			continue
		}
		kind, body := strings.ToLower(m[1]), unquote(strings.Trim(strings.TrimSpace(m[2]), "*_`"))
		if kind == "remove" {
			body = stripFactPrefix(body)
			if body == "" || len(a.Removes) == maxRemoves {
				a.Ignored++
				continue
			}
			a.Removes = append(a.Removes, body)
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

// stripFactPrefix removes what a model copies along with a fact it quotes
// from the known facts: a bullet, the date, a tag.
func stripFactPrefix(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "- "))
	s = datePrefix.ReplaceAllString(s, "")
	s = tagPrefix.ReplaceAllString(s, "")
	return unquote(strings.TrimSpace(s))
}

func unquote(s string) string {
	for _, q := range [][2]string{{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"‘", "’"}} {
		if len(s) >= 2 && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) {
			return strings.TrimSpace(s[len(q[0]) : len(s)-len(q[1])])
		}
	}
	return s
}
