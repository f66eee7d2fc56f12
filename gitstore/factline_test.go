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

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"- (2026-11-03) Lives in Lisbon", "- (2026-11-03) [note] x", "- (2024-02-29) [episode] y",
		"- (2026-11-03)  ", "# header", "- (9999-12-31) z\r",
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
