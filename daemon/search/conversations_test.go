package search_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// The conversation sets, in testdata/recall/conversations, one chat each:
//
//	NAME.txt            "## YYYY-MM-DD" starts a session; a turn is
//	                    "<message id> <speaker>: <text>"
//	NAME.facts.txt      "<date> <message id>,<message id> | <fact>": what a
//	                    learner extracts, each fact citing its turns
//	NAME.questions.txt  "<question> | <evidence message id> ..."
//
// The questions were written with the chats, before any tuning. The chats
// of heldOut are never tuned on: their figures are reported apart.
var heldOut = []string{"luis", "hannah"}

type turn struct {
	id, speaker, text string
	date              memd.Date
}

type extracted struct {
	ids  []string
	text string
	date memd.Date
}

type conversation struct {
	name      string
	turns     []turn
	facts     []extracted
	questions []judged
}

var turnLine = regexp.MustCompile(`^(\S+) ([^:]{1,40}): (.+)$`)

func readLines(t testing.TB, path string, fn func(n int, line string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "# ") && line != "#" {
			fn(n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func loadConversation(t testing.TB, dir, name string) conversation {
	t.Helper()
	c := conversation{name: name}
	base := filepath.Join(dir, name)
	var date memd.Date
	ids := map[string]memd.Date{}
	readLines(t, base+".txt", func(n int, line string) {
		if d, ok := strings.CutPrefix(line, "## "); ok {
			var err error
			if date, err = memd.ParseDate(d); err != nil {
				t.Fatalf("%s.txt:%d: %v", base, n, err)
			}
			return
		}
		m := turnLine.FindStringSubmatch(line)
		if m == nil || date.IsZero() {
			t.Fatalf("%s.txt:%d: not a turn of a session: %q", base, n, line)
		}
		if _, dup := ids[m[1]]; dup {
			t.Fatalf("%s.txt:%d: message %s twice", base, n, m[1])
		}
		ids[m[1]] = date
		c.turns = append(c.turns, turn{id: m[1], speaker: m[2], text: m[3], date: date})
	})
	readLines(t, base+".facts.txt", func(n int, line string) {
		meta, text, ok := strings.Cut(line, " | ")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 2 {
			t.Fatalf("%s.facts.txt:%d: want \"<date> <ids> | <fact>\": %q", base, n, line)
		}
		d, err := memd.ParseDate(fields[0])
		if err != nil {
			t.Fatalf("%s.facts.txt:%d: %v", base, n, err)
		}
		f := extracted{text: strings.TrimSpace(text), date: d, ids: strings.Split(fields[1], ",")}
		for _, id := range f.ids {
			if _, ok := ids[id]; !ok {
				t.Fatalf("%s.facts.txt:%d: no turn %s", base, n, id)
			}
		}
		c.facts = append(c.facts, f)
	})
	shard := []memd.ShardID{memd.AgentShard(name)}
	readLines(t, base+".questions.txt", func(n int, line string) {
		q, ev, ok := strings.Cut(line, " | ")
		if !ok || len(strings.Fields(ev)) == 0 {
			t.Fatalf("%s.questions.txt:%d: want \"<question> | <ids>\": %q", base, n, line)
		}
		j := judged{q: strings.TrimSpace(q), shards: shard, expect: strings.Fields(ev)}
		for _, id := range j.expect {
			if _, ok := ids[id]; !ok {
				t.Fatalf("%s.questions.txt:%d: no turn %s", base, n, id)
			}
		}
		c.questions = append(c.questions, j)
	})
	return c
}

// shapes are the ways an agent's memory holds a conversation: every turn
// remembered, or the facts a learner extracts, with the chat in their
// commits' trailers or without.
var shapes = []struct {
	name  string
	turns bool
	chat  bool
}{{"turns+chat", true, true}, {"turns", true, false}, {"facts+chat", false, true}, {"facts", false, false}}

// conversationDocs turns a conversation into the facts of one shape, as
// memd writes them: one log file a month, lines appended in order, the
// same text in a shard one fact (the first).
func conversationDocs(c conversation, turns, chat bool) []search.Doc {
	shard := memd.AgentShard(c.name)
	offsets := map[string]int{}
	seen := map[string]bool{}
	var docs []search.Doc
	add := func(date memd.Date, text string, messages []string) {
		id := memd.FactID(text)
		if seen[id] {
			return
		}
		seen[id] = true
		d := search.Doc{Fact: memd.Fact{ID: id, Shard: shard, Date: date, Tier: memd.TierLog, Text: text, File: "log/" + date.Month() + ".md"}, Messages: messages}
		if chat {
			d.Chat = c.name
		}
		// A commit a turn (or fact), a few seconds apart.
		d.When = date.Time().Unix() + int64(len(docs))*7
		d.Offset = offsets[d.File]
		offsets[d.File] += len(text) + 16
		docs = append(docs, d)
	}
	if turns {
		for _, tn := range c.turns {
			add(tn.date, tn.speaker+": "+tn.text, []string{tn.id})
		}
	} else {
		for _, f := range c.facts {
			add(f.date, f.text, f.ids)
		}
	}
	return docs
}

// conversationSets loads every conversation and returns, for the tuning
// part and the held-out part, one set per shape.
func conversationSets(t testing.TB) []qualitySet {
	dir := "../../testdata/recall/conversations"
	names, err := filepath.Glob(filepath.Join(dir, "*.questions.txt"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no conversation sets in %s: %v", dir, err)
	}
	var convs []conversation
	for _, n := range names {
		convs = append(convs, loadConversation(t, dir, strings.TrimSuffix(filepath.Base(n), ".questions.txt")))
	}
	var sets []qualitySet
	for _, part := range []string{"tuning", "held-out"} {
		var in []conversation
		for _, c := range convs {
			if slices.Contains(heldOut, c.name) == (part == "held-out") {
				in = append(in, c)
			}
		}
		for _, sh := range shapes {
			var docs []search.Doc
			var qs []judged
			for _, c := range in {
				docs = append(docs, conversationDocs(c, sh.turns, sh.chat)...)
				qs = append(qs, c.questions...)
			}
			x := search.New()
			x.PutAll(docs)
			sets = append(sets, newQualitySet(part, sh.name, qs, x, nil, docs, byMessage))
		}
	}
	return sets
}

// TestConversationSets_Shape checks the conversation sets are as long and
// as varied as real agent memory: enough turns, sessions and questions.
func TestConversationSets_Shape(t *testing.T) {
	dir := "../../testdata/recall/conversations"
	names, _ := filepath.Glob(filepath.Join(dir, "*.questions.txt"))
	if len(names) < 5 {
		t.Errorf("%d conversation sets; keep at least 5", len(names))
	}
	total := 0
	for _, n := range names {
		c := loadConversation(t, dir, strings.TrimSuffix(filepath.Base(n), ".questions.txt"))
		sessions := map[memd.Date]bool{}
		for _, tn := range c.turns {
			sessions[tn.date] = true
		}
		if len(c.turns) < 300 || len(sessions) < 15 {
			t.Errorf("%s: %d turns in %d sessions; want at least 300 in 15", c.name, len(c.turns), len(sessions))
		}
		if len(c.facts) == 0 {
			t.Errorf("%s: no extracted facts", c.name)
		}
		total += len(c.questions)
		t.Logf("%s: %d turns, %d sessions, %d facts, %d questions", c.name, len(c.turns), len(sessions), len(c.facts), len(c.questions))
	}
	if total < 300 {
		t.Errorf("%d questions over the conversations; want at least 300", total)
	}
}
