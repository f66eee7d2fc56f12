package daemon

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// Budgets of one scope's block in the memory section (README, "Reading
// memory: recall and the memory section").
const (
	profileMaxFacts = 100
	profileMaxChars = 20000
	recentMaxFacts  = 30
	recentMaxChars  = 4000
)

// precedence tells the model how to read the section.
const precedence = "Facts are dated. Within one scope, a newer fact wins over an older one it contradicts. " +
	"Across scopes, your own memory wins over project memory, which wins over user memory. " +
	"Facts not shown here are still on disk: use recall to search them."

// contextBlock cuts one scope's block: its lasting facts, then its highest
// ranked dated facts, each part stopping at the first fact that would
// overflow its budget.
func contextBlock(walk search.Walker, shard memd.ShardID, title string) memd.ContextBlock {
	b := memd.ContextBlock{Shard: shard, Title: title, Profile: []memd.Fact{}, Recent: []memd.Fact{}}
	take := func(profile bool, maxFacts, maxChars int, out *[]memd.Fact) int {
		used := 0
		n := walk(shard, profile, func(d search.Doc) bool {
			size := lineSize(d.Fact)
			if len(*out) == maxFacts || used+size > maxChars {
				return false
			}
			used += size
			*out = append(*out, d.Fact)
			return true
		})
		return n - len(*out)
	}
	b.ProfileLeft = take(true, profileMaxFacts, profileMaxChars, &b.Profile)
	b.RecentLeft = take(false, recentMaxFacts, recentMaxChars, &b.Recent)
	return b
}

// lineSize is what a fact costs in a budget: its line, in characters.
func lineSize(f memd.Fact) int {
	return utf8.RuneCountInString(gitstore.FormatLine(f))
}

// renderContext renders blocks as Markdown. The output depends only on the
// facts, so it is byte-stable while memory is unchanged and can sit in a
// cached prompt prefix.
func renderContext(blocks []memd.ContextBlock) string {
	var b strings.Builder
	b.WriteString("## Memory\n\n" + precedence + "\n")
	for _, bl := range blocks {
		fmt.Fprintf(&b, "\n### %s\n", bl.Title)
		if len(bl.Profile)+bl.ProfileLeft+len(bl.Recent)+bl.RecentLeft == 0 {
			b.WriteString("\n(no facts yet)\n")
			continue
		}
		writeFacts(&b, "Lasting facts", "lasting", bl.Profile, bl.ProfileLeft)
		writeFacts(&b, "Recent facts", "dated", bl.Recent, bl.RecentLeft)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeFacts writes a block's list of facts under its heading, and how
// many more (described as kind) its budget left on disk; nothing when it
// has none.
func writeFacts(b *strings.Builder, heading, kind string, facts []memd.Fact, left int) {
	if len(facts)+left == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", heading)
	for _, f := range facts {
		b.WriteString(gitstore.FormatLine(f))
	}
	if left > 0 {
		fmt.Fprintf(b, "(%d more %s %s on disk)\n", left, kind, plural(left, "fact", "facts"))
	}
}
