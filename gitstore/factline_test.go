package gitstore_test

import (
	"fmt"
	"path/filepath"
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

// A list item begun as a person might begin a fact, but not as memd reads
// one, is named with the line memd would read, a line memd takes; a
// fact, prose, a heading, emphasis, a code block, an item without a date
// or with a date memd would not take is not.
func TestCheckFactLine_NamesAFactWrittenAnotherWay(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"* (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"+ (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"  - (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"   * (2026-11-04) Likes tea\r", `write "- (2026-11-04) Likes tea"`},
		{"-(2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"-  (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"-\u00a0(2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- [2026-11-04] Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- 2026-11-04 Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- 2026-11-04: Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"1. (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- (2026-02-30) Moved", `"2026-02-30" is not a calendar date`},
		{"- (2026-11-04 Moved", `has no ")" after its date`},
		{"- (2026-11-04) Likes tea", ""},
		{"- (2026-11-04) [note] Likes tea", ""},
		{"- Likes tea", ""},
		{"\ufeff* (2026-11-04) Likes tea", `write "- (2026-11-04) Likes tea"`},
		{"- (optional) bring an umbrella", ""},
		{"- (1) Pack the bags", ""},
		{"- (10:30) standup", ""},
		{"- (a) the first option", ""},
		{"* (2026-11-04)", ""},
		{"- 2026-11-04:", ""},
		{"* 2026-02-30 Moved to Berlin", ""},
		{"- 1234-56-78 a part number", ""},
		{"(2026-11-04) and the keys came a week later.", ""},
		{"  (2026-11-04) and the keys came a week later.", ""},
		{"*2026-11-04 was the day we moved*", ""},
		{"    - 2026-11-04 release 1.2", ""},
		{"\t- (2026-11-04) in a code block", ""},
		{"-2026-11-04 no bullet", ""},
		{"## 2026-11-04", ""},
		{"2026-11-04 was a Wednesday", ""},
		{"Met on 2026-11-04 in Lisbon", ""},
		{"<!-- memd: lasting facts, one per line as \"- (YYYY-MM-DD) text\".", ""},
		{"     \"[episode]\" after the date marks a minor detail or a summary of work.", ""},
		{"", ""},
	} {
		err := gitstore.CheckFactLine(c.line, false)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want no complaint", c.line, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %s", c.line, err, c.want)
		}
		if err == nil {
			continue
		}
		// The line it says to write is one memd reads.
		if _, sugg, ok := strings.Cut(err.Error(), `; write "`); ok {
			if f, ok := gitstore.ParseLine(strings.TrimSuffix(sugg, `"`)); !ok || f.Text != "Likes tea" {
				t.Errorf("%q: told to write %q, read as %+v, %v", c.line, sugg, f, ok)
			}
		}
	}
}

// The line suggested holds the person's whole text; a text longer than a
// fact may be is said, not cut.
func TestCheckFactLine_SuggestsTheWholeText(t *testing.T) {
	text := "Moved to Berlin in the autumn to join the platform team at the new office near the river"
	_, sugg, _ := strings.Cut(fmt.Sprint(gitstore.CheckFactLine("* 2026-11-04 "+text, false)), `; write "`)
	if f, ok := gitstore.ParseLine(strings.TrimSuffix(sugg, `"`)); !ok || f.Text != text {
		t.Errorf("told to write %q: read as %q, %v", sugg, f.Text, ok)
	}
	long := strings.Repeat("x", memd.MaxFactLen+1)
	if err := gitstore.CheckFactLine("* 2026-11-04 "+long, false); err == nil || !strings.Contains(err.Error(), `write "- (2026-11-04) " and the text, of at most 500 characters`) {
		t.Errorf("a text too long: %v", err)
	}
}

// In a fenced code block only a line memd would read as a fact there too
// is looked at: a tool's log pasted between fences is not refused.
func TestCheckStaged_ACodeBlockIsNotJudgedAsProse(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	writeWorking(t, sh, gitstore.ProfileFile, "The old tool wrote:\n\n```text\n* 2026-11-04 release 1.2\n- Plays the cello\n- (2026-02-30) read by memd all the same\n```\n~~~\n```\n* 2026-11-05 still in the block\n~~~\n* 2026-11-06 after it\n", true)
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, []string{
		`profile.md line 13: date "2026-02-30" is not a calendar date`,
		`profile.md line 19: "* 2026-11-06 after it" is not read as a fact`,
	})
	gitDir := filepath.Join(sh.Dir(), ".git")
	if staged, err := gitstore.CheckStaged(gitDir, filepath.Join(gitDir, "index")); err != nil || len(staged.Prose) != 0 {
		t.Errorf("said as prose: %v, %v", staged.Prose, err)
	}
}

// What Markdown makes a block of its own (an HTML comment over several
// lines, a fence that begins a list item, an indented code block) is
// not judged, and inline code of three backticks opens no fence.
func TestCheckStaged_BlocksAreNotJudged(t *testing.T) {
	sh := shardWithProfile(t, openStore(t))
	writeWorking(t, sh, gitstore.ProfileFile, "<!-- old list, kept for reference:\n* 2026-11-04 Moved to Berlin\n-->\n"+
		"```make``` builds it. The old tool wrote:\n```\n* 2026-11-04 release 1.2\n- (1) retry failed\n```\n"+
		"- ```text\n  * 2026-11-04 release 1.3\n  ```\n"+
		"The new one:\n\n    - release 1.4\n\n* (2026-11-05) Likes tea\n", true)
	git(t, sh.Dir(), "add", "-A")
	wantStaged(t, sh, []string{`profile.md line 23: "* (2026-11-05) Likes tea" is not read as a fact`})
	gitDir := filepath.Join(sh.Dir(), ".git")
	if staged, err := gitstore.CheckStaged(gitDir, filepath.Join(gitDir, "index")); err != nil || len(staged.Prose) != 0 {
		t.Errorf("said as prose: %v, %v", staged.Prose, err)
	}
}

// A long line is checked for what its start says, not read over and over:
// a 16 MiB line pasted into a fact file.
func BenchmarkCheckFactLine_LongLine(b *testing.B) {
	body := strings.Repeat("x", 16<<20)
	for _, line := range []string{"- 2026-11-04 " + body, "- " + body, "(2026-11-04) " + body, "- (2026-11-04) " + body} {
		b.Run(line[:4], func(b *testing.B) {
			for range b.N {
				gitstore.CheckFactLine(line, false)
			}
		})
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
			for _, code := range []bool{false, true} {
				if err := gitstore.CheckFactLine(line, code); err != nil {
					t.Fatalf("CheckFactLine(%q, %v) of a fact: %v", line, code, err)
				}
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

// InBlock follows fences and comments through any text: the block it
// keeps open is an HTML comment or a fence of three or more backticks or
// tildes, and a line of that fence alone, or "-->", closes it.
func FuzzInBlock(f *testing.F) {
	f.Add("```go\n- x\n```\n~~~\n```\n~~~~\n")
	f.Add("   ```\n    ```\n```` \n")
	f.Add("<!-- a\n- x\n-->\n```make``` b\n")
	f.Fuzz(func(t *testing.T, text string) {
		var fence string
		for line := range strings.SplitSeq(text, "\n") {
			_, fence = gitstore.InBlock(line, fence)
			if fence == "<!--" {
				if code, after := gitstore.InBlock("-->", fence); !code || after != "" {
					t.Fatalf("--> does not close a comment: %v, %q", code, after)
				}
				continue
			}
			if fence != "" && (len(fence) < 3 || strings.Trim(fence, "`") != "" && strings.Trim(fence, "~") != "") {
				t.Fatalf("fence %q kept open after %q", fence, line)
			}
			if fence != "" {
				if code, after := gitstore.InBlock(fence, fence); !code || after != "" {
					t.Fatalf("%q does not close itself: %v, %q", fence, code, after)
				}
			}
		}
	})
}
