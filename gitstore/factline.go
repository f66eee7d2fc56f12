package gitstore

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/memd/memd"
)

// Fact files: lasting facts in profile.md, dated history in one file a month
// (a busy month split into a file a day).
const (
	ProfileFile = "profile.md"
	LogDir      = "log"
	NotesDir    = "notes"
)

// A fact line is
//
//	- (YYYY-MM-DD) <text>
//	- (YYYY-MM-DD) [note] <text>
//	- (YYYY-MM-DD) [episode] <text>
//
// with a real calendar date. Every other line is kept exactly as it is.

// ParseLine parses one line (without its newline) as a fact. ok is false for
// lines that are not facts: headers, comments, prose, blank lines.
func ParseLine(line string) (f memd.Fact, ok bool) {
	date, tier, text, ok := splitLine(line)
	if !ok {
		return memd.Fact{}, false
	}
	return memd.Fact{ID: memd.FactID(text), Date: date, Tier: tier, Text: text}, true
}

// taggedTiers are the tiers a line names in a tag, with their tags, made
// once: a start reads a million lines.
var taggedTiers = [...]struct {
	tier memd.Tier
	tag  string
}{{memd.TierNote, "[note] "}, {memd.TierEpisode, "[episode] "}}

// splitLine is ParseLine without the fact's ID: the line's date, its tag's
// tier ("" when untagged) and its text.
func splitLine(line string) (date memd.Date, tier memd.Tier, text string, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	if len(line) < 15 || line[0] != '-' || line[1] != ' ' || line[2] != '(' || line[13] != ')' || line[14] != ' ' {
		return date, "", "", false
	}
	date, err := memd.ParseDate(line[3:13])
	if err != nil {
		return date, "", "", false
	}
	// Spaces before a tag (a hand edit) do not hide it: trim as the text
	// itself is trimmed.
	text = strings.TrimSpace(line[15:])
	for _, t := range taggedTiers {
		if strings.HasPrefix(text, t.tag) {
			tier, text = t.tier, text[len(t.tag):]
			break
		}
	}
	text = strings.TrimSpace(text)
	return date, tier, text, text != ""
}

// datedItem matches the start of a list item begun as a person might
// begin a fact that memd does not read as one: indented by up to three
// spaces (four make a code block), behind another bullet (*, + or a
// number) or "-" with a no-break space or two spaces, "-(" with none, the
// date in brackets or bare, then a space. The submatch is the date. A
// bullet needs its space, as Markdown's does: "*2026-11-04 was …*" is
// emphasis.
var datedItem = regexp.MustCompile(`^ {0,3}(?:(?:[-*+]|[0-9]{1,3}[.)])[ \t\x{a0}]+[(\[]?|-[(\[])([0-9]{4}-[0-9]{2}-[0-9]{2})[)\]]?:?[ \t\x{a0}]+`)

// misplacedFact explains why a dated list item with text, but not
// "- (date) " at the line's start, is not read as a fact, and gives the
// line memd would read; nil for any other line. Only the line's start and
// the text the message shows are read: a long line costs what a short
// one does.
func misplacedFact(line string) error {
	line = strings.TrimPrefix(strings.TrimSuffix(line, "\r"), "\ufeff")
	m := datedItem.FindStringSubmatchIndex(line[:min(len(line), 64)])
	if m == nil {
		return nil
	}
	date, text := line[m[2]:m[3]], strings.TrimSpace(line[m[1]:min(len(line), m[1]+suggested)])
	if _, err := memd.ParseDate(date); err != nil || text == "" {
		return nil // a code or a number; a date heading items below it
	}
	write := fmt.Sprintf("write \"- (%s) %s\"", date, text)
	if len(line)-m[1] > suggested || utf8.RuneCountInString(text) > memd.MaxFactLen {
		write = fmt.Sprintf("write \"- (%s) \" and the text, of at most %d characters", date, memd.MaxFactLen)
	}
	return memd.Errorf(memd.EINVALID, "%q is not read as a fact: memd reads facts only from lines that begin \"- (YYYY-MM-DD) \"; %s", shortLine(line), write)
}

// suggested is the most bytes of text misplacedFact puts in the line it
// suggests: more than a fact may hold is said, not shown.
const suggested = 4 * memd.MaxFactLen

// shortLine is a line shortened to be quoted in a message, without
// reading more of a long one than it shows.
func shortLine(line string) string {
	return memd.Shorten(line[:min(len(line), 256)], 60)
}

// listItem matches the start of a Markdown list item: indented by up to
// three spaces (four make a code block), a bullet (-, * or +) or a
// number, then a space.
var listItem = regexp.MustCompile(`^ {0,3}(?:[-*+]|[0-9]{1,3}[.)])[ \t]+`)

// InBlock tells whether a line of Markdown is within a fenced code block
// or an HTML comment (their first and last lines included), given the
// block open before it ("" for none), and returns the block open after
// it. memd reads a fact line anywhere; only what a person may have meant
// is judged by where it is.
func InBlock(line, open string) (bool, string) {
	line = strings.TrimPrefix(line, "\ufeff") // the first line of a file an editor saved so
	if open == htmlComment {
		if strings.Contains(line, "-->") {
			return true, ""
		}
		return true, open
	}
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return open != "", open
	}
	if m := listItem.FindStringIndex(line[:min(len(line), 64)]); m != nil && open == "" {
		trimmed = line[m[1]:] // a block may begin a list item: "- ```text"
	}
	if open == "" {
		if rest, ok := strings.CutPrefix(trimmed, "<!--"); ok {
			if strings.Contains(rest, "-->") {
				return false, "" // a comment of one line
			}
			return true, htmlComment
		}
	}
	for _, mark := range []string{"```", "~~~"} {
		if !strings.HasPrefix(trimmed, mark) {
			continue
		}
		fence := trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, mark[:1]))]
		info := trimmed[len(fence):]
		switch {
		case open == "" && mark == "```" && strings.Contains(info, "`"):
			return false, "" // "```make``` builds it": code in a line
		case open == "":
			return true, fence
		case strings.HasPrefix(fence, open) && strings.TrimSpace(info) == "":
			return true, "" // closes it
		}
	}
	return open != "", open
}

// htmlComment is InBlock's name of an open HTML comment.
const htmlComment = "<!--"

// undatedItem explains that a list item in a fact file that is not a fact
// line (nor one CheckFactLine names) is kept as prose: what a person
// writing "- Likes tea" in profile.md may well have meant as a fact. nil
// for any other line: a fact, a rule ("- - -"), a heading, prose. It
// reads the line's start only.
func undatedItem(line string) error {
	line = strings.TrimSuffix(line, "\r")
	start := line[:min(len(line), 256)]
	if !listItem.MatchString(start) || CheckFactLine(line, false) != nil {
		return nil
	}
	if _, _, _, fact := splitLine(line); fact {
		return nil
	}
	if !strings.ContainsFunc(start, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return nil
	}
	return memd.Errorf(memd.EINVALID, "%q is a list item, not a fact line: memd keeps it as prose", shortLine(line))
}

// FormatLine renders a fact as its line, with a trailing newline.
func FormatLine(f memd.Fact) string {
	tag := ""
	for _, t := range taggedTiers {
		if f.Tier == t.tier {
			tag = t.tag
		}
	}
	return "- (" + f.Date.String() + ") " + tag + f.Text + "\n"
}

// SplitLogAt is the size from which a month's log takes no more facts: later
// facts of that month go into a file per day. A lone writer's commit stores
// the whole new version of the file it appends to, so a busy month split by
// day keeps that cost small, while a quiet month stays one file to read.
const SplitLogAt = 256 << 10

// MonthLog is the log file of d's month, log/YYYY-MM.md.
func MonthLog(d memd.Date) string { return LogDir + "/" + d.Month() + ".md" }

// DayLog is the log file of d's day in a split month, log/YYYY-MM/DD.md.
func DayLog(d memd.Date) string {
	s := d.String()
	return LogDir + "/" + s[:7] + "/" + s[8:] + ".md"
}

// logFileFor picks the file a new fact of tier t and date d goes in, among
// the fact files a shard holds.
func logFileFor(t memd.Tier, d memd.Date, files map[string]fileAt) string {
	if t == memd.TierProfile || t == "" {
		return ProfileFile
	}
	day := DayLog(d)
	if _, ok := files[day]; ok {
		return day
	}
	if month, ok := files[MonthLog(d)]; !ok || month.size < SplitLogAt {
		return MonthLog(d)
	}
	return day
}

// IsFactFile reports whether a path in a shard holds facts: profile.md,
// log/YYYY-MM.md or log/YYYY-MM/DD.md.
func IsFactFile(path string) bool {
	if path == ProfileFile {
		return true
	}
	name, ok := strings.CutPrefix(path, LogDir+"/")
	if !ok || !strings.HasSuffix(name, ".md") {
		return false
	}
	switch len(name) {
	case len("2006-01.md"):
		_, err := memd.ParseDate(name[:7] + "-01")
		return err == nil
	case len("2006-01/02.md"):
		if name[7] != '/' {
			return false
		}
		_, err := memd.ParseDate(name[:7] + "-" + name[8:10])
		return err == nil
	}
	return false
}

// isLogMonthDir reports whether a path is a split month's folder,
// log/YYYY-MM/.
func isLogMonthDir(path string) bool {
	name, ok := strings.CutPrefix(path, LogDir+"/")
	if !ok || len(name) != len("2006-01/") || name[7] != '/' {
		return false
	}
	_, err := memd.ParseDate(name[:7] + "-01")
	return err == nil
}

// fileTier is the tier of an untagged fact in a file.
func fileTier(path string) memd.Tier {
	if path == ProfileFile {
		return memd.TierProfile
	}
	return memd.TierLog
}

// header returns the text a new fact file starts with, telling a person the
// format.
func header(path string) string {
	if path == ProfileFile {
		return "# Profile\n\n" +
			"<!-- memd: lasting facts, one per line as \"- (YYYY-MM-DD) text\".\n" +
			"     Other lines are kept as written. Edit freely and commit with git. -->\n\n"
	}
	// "2026-11" for a month's log, "2026-11-30" for a day's.
	period := strings.Replace(strings.TrimSuffix(strings.TrimPrefix(path, LogDir+"/"), ".md"), "/", "-", 1)
	return "# Log " + period + "\n\n" +
		"<!-- memd: dated facts, one per line as \"- (YYYY-MM-DD) text\"; \"[note]\" or\n" +
		"     \"[episode]\" after the date marks a minor detail or a summary of work.\n" +
		"     Other lines are kept as written. Edit freely and commit with git. -->\n\n"
}

// lineFact is a fact and where its line sits in its file.
type lineFact struct {
	memd.Fact
	start, end int // byte range of the line, newline included
}

// factFile is one fact file at one commit. It is never modified once built.
type factFile struct {
	path  string
	blob  [20]byte
	data  []byte
	facts []lineFact
	// byID leads from a fact ID to its lines in facts, made once a file
	// has been looked in a few times: a change removing thousands of facts
	// from one month's log looked for each through every line, while most
	// writes look in a file once or not at all.
	lookups  atomic.Int32
	byIDOnce sync.Once
	byID     map[string][]int32
}

// scansBeforeIndex is how many look-ups by ID scan a file's lines before
// the next builds byID, which costs several scans.
const scansBeforeIndex = 8

// linesOf returns the lines of f holding fact id, in file order.
func (f *factFile) linesOf(id string) []lineFact {
	if f.lookups.Add(1) <= scansBeforeIndex {
		var out []lineFact
		for _, lf := range f.facts {
			if lf.ID == id {
				out = append(out, lf)
			}
		}
		return out
	}
	f.byIDOnce.Do(func() {
		f.byID = make(map[string][]int32, len(f.facts))
		for i, lf := range f.facts {
			f.byID[lf.ID] = append(f.byID[lf.ID], int32(i))
		}
	})
	at := f.byID[id]
	out := make([]lineFact, len(at))
	for j, i := range at {
		out[j] = f.facts[i]
	}
	return out
}

// parseFactFile finds the fact lines of a file.
func parseFactFile(path string, data []byte) []lineFact {
	// Room for every line that may be a fact: a month's log of thousands
	// grown by doubling was a fifth of what a first start allocated.
	return appendFactLines(make([]lineFact, 0, bytes.Count(data, []byte("\n-"))+1), path, data)
}

// appendFactLines appends the fact lines of a file to facts.
func appendFactLines(facts []lineFact, path string, data []byte) []lineFact {
	tier := fileTier(path)
	// One copy of the file for all its lines' texts, not one a line: a
	// shard of a million facts is parsed with a million fewer allocations.
	eachLine(string(data), func(line string, start, end int) {
		if f, ok := ParseLine(line); ok {
			if f.Tier == "" {
				f.Tier = tier
			}
			f.File = path
			facts = append(facts, lineFact{Fact: f, start: start, end: end})
		}
	})
	return facts
}

// factLineKeys returns the IDs of a file's fact lines, those parseFactFile
// finds, in their order, as numbers (memd.FactKey), without the facts:
// where facts are, cheaply. Nothing it returns is a piece of data.
func factLineKeys(data []byte) []uint64 {
	keys := make([]uint64, 0, bytes.Count(data, []byte("\n-"))+1)
	eachLine(unsafe.String(unsafe.SliceData(data), len(data)), func(line string, _, _ int) {
		if _, _, text, ok := splitLine(line); ok {
			keys = append(keys, memd.FactKey(text))
		}
	})
	return keys
}

// eachLine calls fn with each line of text that may be a fact's (those
// starting with "-"), without its newline, and the byte range of the line,
// newline included.
func eachLine(text string, fn func(line string, start, end int)) {
	start := 0
	for line := range strings.Lines(text) {
		end := start + len(line)
		if line[0] == '-' {
			fn(strings.TrimSuffix(line, "\n"), start, end)
		}
		start = end
	}
}
