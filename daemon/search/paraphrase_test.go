package search_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// The paraphrase set (testdata/recall/paraphrases.txt): queries that share
// no content word with the fact they should find, among the memory of
// memory.txt and thousands of distractors.

const paraphraseFile = "../../testdata/recall/paraphrases.txt"

// loadParaphrases returns the set's queries by part (tuning, held-out)
// and its facts.
func loadParaphrases(t testing.TB) (parts map[string][]judged, facts []search.Doc) {
	t.Helper()
	f, err := os.Open(paraphraseFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parts = map[string][]judged{}
	part := ""
	shard := memd.AgentShard("paraphrase")
	date := memd.DateOf(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			part = strings.TrimPrefix(line, "## ")
			continue
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		}
		q, fact, ok := strings.Cut(line, " | ")
		if !ok || part == "" {
			t.Fatalf("%s: bad line %q", paraphraseFile, line)
		}
		parts[part] = append(parts[part], judged{q: q, expect: []string{fact}})
		facts = append(facts, search.Doc{Fact: memd.Fact{ID: memd.FactID(fact), Shard: shard, Date: date, Tier: memd.TierProfile, Text: fact, File: "profile.md"}, Offset: len(facts) * 80})
	}
	return parts, facts
}

// The set is what it says: at least 150 queries, a held-out part of at
// least a quarter, each query with no content word (nor a stem of one) of
// its fact, and no fact twice.
func TestParaphraseSet_SharesNoWordWithItsFact(t *testing.T) {
	parts, facts := loadParaphrases(t)
	tuning, held := len(parts["tuning"]), len(parts["held-out"])
	if tuning+held < 150 || 4*held < tuning+held {
		t.Fatalf("%d tuning and %d held-out queries: want 150 or more, a quarter held out", tuning, held)
	}
	seen := map[string]bool{}
	for _, d := range facts {
		if seen[d.Text] {
			t.Errorf("fact %q is in the set twice", d.Text)
		}
		seen[d.Text] = true
	}
	for _, js := range parts {
		for _, j := range js {
			fact := search.ContentTerms(j.expect[0])
			for _, term := range search.ContentTerms(j.q) {
				if slices.Contains(fact, term) {
					t.Errorf("%q shares %q with %q", j.q, term, j.expect[0])
				}
			}
		}
	}
}

// paraphraseSets returns the tuning and held-out parts as judged sets
// over the paraphrases' facts, memory.txt and 3,000 distractors.
func paraphraseSets(t testing.TB) []qualitySet {
	parts, facts := loadParaphrases(t)
	all := append(append(facts, loadMemory(t)...), distractors(3000)...)
	shards := map[memd.ShardID]bool{}
	for _, d := range all {
		shards[d.Shard] = true
	}
	var ids []memd.ShardID
	for s := range shards {
		ids = append(ids, s)
	}
	x := search.New()
	x.PutAll(all)
	var sets []qualitySet
	for _, part := range []string{"tuning", "held-out"} {
		sets = append(sets, newQualitySet("para "+part, "facts", parts[part], x, ids, all, byText))
	}
	return sets
}
