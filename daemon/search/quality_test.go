package search_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// The judged set lives in testdata/recall: a memory of 122 facts and the
// queries that should find them, answered among thousands of distractors.

type judged struct {
	q      string
	expect []string
}

func loadMemory(t testing.TB) []search.Doc {
	t.Helper()
	f, err := os.Open("../../testdata/recall/memory.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []search.Doc
	var shard memd.ShardID
	offsets := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			if shard, err = memd.ParseShardID(strings.TrimPrefix(line, "## ")); err != nil {
				t.Fatal(err)
			}
			continue
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		}
		meta, text, ok := strings.Cut(line, " | ")
		fields := strings.Fields(meta)
		if !ok || len(fields) < 2 {
			t.Fatalf("bad line %q", line)
		}
		date, err := memd.ParseDate(fields[0])
		if err != nil {
			t.Fatal(err)
		}
		d := search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: date, Tier: memd.Tier(fields[1]), Text: text}}
		if len(fields) > 2 {
			d.Chat = strings.TrimPrefix(fields[2], "chat=")
		}
		d.File = "log/" + date.Month() + ".md"
		if d.Tier == memd.TierProfile {
			d.File = "profile.md"
		}
		key := shard.String() + d.File
		d.Offset = offsets[key]
		offsets[key] += len(text) + 16
		docs = append(docs, d)
	}
	return docs
}

// distractors are plausible facts of another agent that share words with
// the judged ones, so ranking matters.
func distractors(n int) []search.Doc {
	rng := rand.New(rand.NewPCG(42, 42))
	who := []string{"The ops team", "Finance", "The sales lead", "Our intern", "The support desk", "A customer", "The CTO", "Legal", "The office manager", "The data team"}
	did := []string{"reviewed", "asked about", "updated", "postponed", "approved", "discussed", "rejected", "renewed", "documented", "tested"}
	what := []string{"the travel policy", "a hotel booking for a sales trip", "the flight reimbursement rules", "the invoice template", "the quarterly budget forecast",
		"the database backup schedule", "the dashboard colour scheme", "the conference calendar", "the venue shortlist for a workshop", "the vendor list",
		"the migration checklist for the CRM", "the server room cooling", "a dinner reservation for clients", "the onboarding guide", "the disk quota for home folders",
		"the office lease", "the on-call schedule", "the report layout", "the expense approval flow", "the guest wifi"}
	var docs []search.Doc
	noise := memd.AgentShard("noise")
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("%s %s %s (item %d)", who[rng.IntN(len(who))], did[rng.IntN(len(did))], what[rng.IntN(len(what))], i)
		date := memd.DateOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(330)))
		docs = append(docs, search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: noise, Date: date, Tier: memd.TierLog, Text: text, File: "log/" + date.Month() + ".md"}, Offset: i * 80})
	}
	return docs
}

func loadQueries(t testing.TB, known map[string]bool) []judged {
	t.Helper()
	f, err := os.Open("../../testdata/recall/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []judged
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, exp, ok := strings.Cut(line, " | ")
		if !ok {
			t.Fatalf("bad query line %q", line)
		}
		j := judged{q: q}
		for _, e := range strings.Split(exp, " || ") {
			if !known[e] {
				t.Fatalf("query %q expects a fact the memory lacks: %q", q, e)
			}
			j.expect = append(j.expect, e)
		}
		out = append(out, j)
	}
	return out
}

// ranker answers a query with fact texts, best first.
type ranker func(q string, k int) []string

func memdRanker(x *search.Index, shards []memd.ShardID) ranker {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func(q string, k int) []string {
		var out []string
		for _, h := range x.Search(search.Query{Text: q, Shards: shards, K: k, Now: now}) {
			out = append(out, h.Text)
		}
		return out
	}
}

// overlapRanker is the plain word-overlap baseline: the number of query
// words (lowercased, stop words dropped, no stemming) a fact shares, then
// the newer fact; a substring match when no word is shared.
func overlapRanker(docs []search.Doc) ranker {
	split := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	stop := map[string]bool{}
	for _, w := range strings.Fields("a an and are as at be by did do does for from had has have how i in is it of on or the to was we what when where which who why with") {
		stop[w] = true
	}
	return func(q string, k int) []string {
		var qw []string
		for _, w := range split(q) {
			if !stop[w] {
				qw = append(qw, w)
			}
		}
		type scored struct {
			d search.Doc
			n int
		}
		var hits []scored
		for _, d := range docs {
			words := split(d.Text)
			n := 0
			for _, w := range qw {
				if slices.Contains(words, w) {
					n++
				}
			}
			if n > 0 {
				hits = append(hits, scored{d, n})
			}
		}
		if len(hits) == 0 {
			for _, d := range docs {
				for _, w := range qw {
					if len(w) >= 3 && strings.Contains(strings.ToLower(d.Text), w) {
						hits = append(hits, scored{d, 1})
						break
					}
				}
			}
		}
		slices.SortStableFunc(hits, func(a, b scored) int {
			if a.n != b.n {
				return b.n - a.n
			}
			return b.d.Date.Days() - a.d.Date.Days()
		})
		var out []string
		for i := 0; i < len(hits) && i < k; i++ {
			out = append(out, hits[i].d.Text)
		}
		return out
	}
}

// recallAt returns the mean share of expected facts among the first k hits.
func recallAt(r ranker, qs []judged, k int) (float64, []string) {
	total := 0.0
	var misses []string
	for _, q := range qs {
		got := r(q.q, k)
		found := 0
		for _, e := range q.expect {
			if slices.Contains(got, e) {
				found++
			}
		}
		total += float64(found) / float64(len(q.expect))
		if found < len(q.expect) {
			misses = append(misses, fmt.Sprintf("%q: found %d of %d", q.q, found, len(q.expect)))
		}
	}
	return total / float64(len(qs)), misses
}

type qualitySet struct {
	qs       []judged
	memd     ranker
	baseline ranker
}

func loadQualitySet(t testing.TB) qualitySet {
	docs := loadMemory(t)
	known := map[string]bool{}
	shards := map[memd.ShardID]bool{memd.AgentShard("noise"): true}
	for _, d := range docs {
		known[d.Text] = true
		shards[d.Shard] = true
	}
	all := append(docs, distractors(3000)...)
	x := search.New()
	x.PutAll(all)
	var ids []memd.ShardID
	for s := range shards {
		ids = append(ids, s)
	}
	return qualitySet{qs: loadQueries(t, known), memd: memdRanker(x, ids), baseline: overlapRanker(all)}
}

// TestRecallQuality holds memd's ranking to the judged set.
func TestRecallQuality(t *testing.T) {
	set := loadQualitySet(t)
	if len(set.qs) < 200 {
		t.Fatalf("the judged set has %d queries; keep at least 200", len(set.qs))
	}
	for _, k := range []int{5, 10, 20} {
		m, misses := recallAt(set.memd, set.qs, k)
		b, _ := recallAt(set.baseline, set.qs, k)
		t.Logf("recall@%d: memd %.3f, word overlap %.3f", k, m, b)
		if m < b {
			t.Errorf("recall@%d: memd %.3f is below the word-overlap baseline %.3f", k, m, b)
		}
		if k == 10 {
			for _, miss := range misses {
				t.Log("  missed at 10:", miss)
			}
			if m < 0.93 {
				t.Errorf("recall@10 is %.3f; it was 0.93 or better", m)
			}
		}
	}
}

// BenchmarkRecallQuality reports recall@k for memd's ranking and for the
// word-overlap baseline over the judged set.
func BenchmarkRecallQuality(b *testing.B) {
	set := loadQualitySet(b)
	for i := 0; i < b.N; i++ {
		for _, k := range []int{5, 10, 20} {
			m, _ := recallAt(set.memd, set.qs, k)
			o, _ := recallAt(set.baseline, set.qs, k)
			b.ReportMetric(m, fmt.Sprintf("memd-recall@%d", k))
			b.ReportMetric(o, fmt.Sprintf("overlap-recall@%d", k))
		}
	}
}
