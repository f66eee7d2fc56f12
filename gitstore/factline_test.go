package gitstore_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

func TestParseLine(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
		tier memd.Tier
		text string
	}{
		{"- (2026-11-03) Lives in Lisbon", true, "", "Lives in Lisbon"},
		{"- (2026-11-03) [note] Likes rooftop venues", true, memd.TierNote, "Likes rooftop venues"},
		{"- (2026-11-03) [episode] Worked on the budget", true, memd.TierEpisode, "Worked on the budget"},
		{"- (2026-11-03) trailing spaces   \r", true, "", "trailing spaces"},
		{"- (2026-02-30) not a real date", false, "", ""},
		{"- (2026-11-03)", false, "", ""},
		{"- (2026-11-03) ", false, "", ""},
		{"* (2026-11-03) other bullet", false, "", ""},
		{"# Profile", false, "", ""},
		{"<!-- comment -->", false, "", ""},
		{"-  (2026-11-03) extra space", false, "", ""},
		{"- 2026-11-03 no parens", false, "", ""},
	}
	for _, c := range cases {
		f, ok := gitstore.ParseLine(c.line)
		if ok != c.ok || ok && (f.Tier != c.tier || f.Text != c.text) {
			t.Errorf("ParseLine(%q) = %+v, %v; want ok=%v tier=%q text=%q", c.line, f, ok, c.ok, c.tier, c.text)
		}
	}
}

// A line begun as a person might begin a fact, but not as memd reads one,
// is named with the line memd would read; a fact, prose, a heading or an
// undated item is not.
func TestCheckFactLine_NamesAFactWrittenAnotherWay(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"* (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"+ (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"  - (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"\t- (2026-11-04) Likes tea\r", `write "- (2026-11-04) Likes tea"`},
		{"-(2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"-  (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- [2026-11-04] Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- 2026-11-04 Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- 2026-11-04: Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"1. (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"(2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"* (2026-11-04)", `write "- (2026-11-04) …"`},
		{"- (2026-02-30) Moved", `"2026-02-30" is not a calendar date`},
		{"- (2026-11-04) Likes tea", ""},
		{"- (2026-11-04) [note] Likes tea", ""},
		{"- Likes tea", ""},
		{"## 2026-11-04", ""},
		{"2026-11-04 was a Wednesday", ""},
		{"Met on 2026-11-04 in Lisbon", ""},
		{"- 20261104 a number", ""},
		{"<!-- memd: lasting facts, one per line as \"- (YYYY-MM-DD) text\".", ""},
		{"     \"[episode]\" after the date marks a minor detail or a summary of work.", ""},
		{"", ""},
	} {
		err := gitstore.CheckFactLine(c.line)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want no complaint", c.line, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %s", c.line, err, c.want)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"- (2026-11-03) Lives in Lisbon", "- (2026-11-03) [note] x", "- (2024-02-29) [episode] y",
		"- (2026-11-03)  ", "# header", "- (9999-12-31) z\r", "* (2026-11-03) x", "  - (2026-11-03) y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fact, ok := gitstore.ParseLine(line)
		if !ok {
			return
		}
		if fact.Text == "" || fact.Text != strings.TrimSpace(fact.Text) {
			t.Fatalf("parsed text %q is empty or untrimmed", fact.Text)
		}
		if fact.ID != memd.FactID(fact.Text) {
			t.Fatalf("ID %s is not the ID of the text", fact.ID)
		}
		if _, err := memd.CleanFactText(fact.Text); err == nil {
			// A line read as a fact is never said not to be one.
			if err := gitstore.CheckFactLine(line); err != nil {
				t.Fatalf("CheckFactLine(%q) of a fact: %v", line, err)
			}
		}
		if !utf8.ValidString(line) || strings.ContainsAny(fact.Text, "\n\r") {
			return // such lines are read as they are, but never written
		}
		// A fact memd writes reads back as the same fact.
		again, ok := gitstore.ParseLine(strings.TrimSuffix(gitstore.FormatLine(fact), "\n"))
		if !ok || again.ID != fact.ID || again.Date != fact.Date || again.Tier != fact.Tier {
			t.Fatalf("FormatLine(%+v) reads back as %+v, %v", fact, again, ok)
		}
	})
}
