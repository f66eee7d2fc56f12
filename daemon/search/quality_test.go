package search_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/daemon/vectors"
	"github.com/memd/memd/internal/conceptembed"
)

// The judged sets live in testdata/recall. memory.txt and queries.txt: a
// memory of 122 facts of several agents and the queries that should find
// them, answered among thousands of distractors. conversations/: long chats
// between people and their agents (conversations.go), searched as agents
// keep them: every turn a fact, or the facts a learner extracts.
// paraphrases.txt: queries that share no word with the fact they should
// find (paraphrase_test.go). multilingual.txt and multilingual-queries.txt:
// facts and queries in Chinese, Japanese, Korean and Russian; european.txt
// and european-queries.txt in German, French, Spanish, Italian and
// Portuguese (multilingual_test.go).

// judged is a query and what it should find: fact texts, or for the
// conversation sets the message IDs of its evidence turns.
type judged struct {
	q      string
	shards []memd.ShardID // nil: the set's shards
	expect []string
}

func loadMemory(t testing.TB) []search.Doc {
	return loadMemoryFrom(t, "../../testdata/recall/memory.txt")
}

// loadMemoryFrom reads a memory in memory.txt's format.
func loadMemoryFrom(t testing.TB, path string) []search.Doc {
	t.Helper()
	f, err := os.Open(path)
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
	qs, heldOut := loadQueriesFrom(t, "../../testdata/recall/queries.txt", known)
	if len(heldOut) > 0 {
		t.Fatalf("queries.txt has a held-out part, which the store set would not judge")
	}
	return qs
}

// loadQueriesFrom reads judged queries in queries.txt's format: those
// before a line "# held-out", and those after it.
func loadQueriesFrom(t testing.TB, path string, known map[string]bool) (out, heldOut []judged) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	into := &out
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "# held-out" {
			into = &heldOut
		}
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
		*into = append(*into, j)
	}
	return out, heldOut
}

// ranker answers a query with facts, best first.
type ranker func(j judged, k int) []search.Doc

var judgedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// memdRanker answers with memd's search; literal leaves the thesaurus out.
func memdRanker(x *search.Engine, shards []memd.ShardID, literal bool) ranker {
	return func(j judged, k int) []search.Doc {
		in := shards
		if j.shards != nil {
			in = j.shards
		}
		var out []search.Doc
		for _, h := range x.Search(search.Query{Text: j.q, Shards: in, K: k, Now: judgedNow, Literal: literal}).Hits {
			out = append(out, h.Doc)
		}
		return out
	}
}

// bm25Ranker answers each query over the facts of the shards it searches.
func bm25Ranker(docs []search.Doc) ranker {
	byShards := map[string]*bm25{}
	return func(j judged, k int) []search.Doc {
		key := fmt.Sprint(j.shards)
		x := byShards[key]
		if x == nil {
			var in []search.Doc
			for _, d := range docs {
				if j.shards == nil || slices.Contains(j.shards, d.Shard) {
					in = append(in, d)
				}
			}
			x = newBM25(in)
			byShards[key] = x
		}
		return x.search(j.q, k)
	}
}

// byText says which expected things a hit is: its text.
func byText(d search.Doc) []string { return []string{d.Text} }

// byMessage says which expected things a hit is: its source messages.
func byMessage(d search.Doc) []string { return d.Messages }

// recallAt returns the mean share of each query's expected things found in
// its first k hits, and the queries that missed some.
func recallAt(r ranker, qs []judged, k int, is func(search.Doc) []string) (float64, []string) {
	total := 0.0
	var misses []string
	for _, q := range qs {
		got := map[string]bool{}
		for _, d := range r(q, k) {
			for _, s := range is(d) {
				got[s] = true
			}
		}
		found := 0
		for _, e := range q.expect {
			if got[e] {
				found++
			}
		}
		total += float64(found) / float64(len(q.expect))
		if found < len(q.expect) {
			misses = append(misses, fmt.Sprintf("%q: found %d of %d", q.q, found, len(q.expect)))
		}
	}
	return total / float64(max(1, len(qs))), misses
}

// qualitySet is one judged set in one shape, with the rankers over it:
// memd, memd without its thesaurus, plain BM25; and what memd with an
// embeddings endpoint needs (see meaningRanker).
type qualitySet struct {
	set, shape          string
	qs                  []judged
	memd, literal, bm25 ranker
	is                  func(search.Doc) []string
	x                   *search.Engine
	shards              []memd.ShardID
	docs                []search.Doc
}

func newQualitySet(set, shape string, qs []judged, x *search.Engine, shards []memd.ShardID, docs []search.Doc, is func(search.Doc) []string) qualitySet {
	return qualitySet{set: set, shape: shape, qs: qs, memd: memdRanker(x, shards, false), literal: memdRanker(x, shards, true), bm25: bm25Ranker(docs), is: is,
		x: x, shards: shards, docs: docs}
}

// meanings embeds each engine's facts once, through the test endpoint.
type meanings struct {
	client *vectors.Client
	dir    string
	sets   map[*search.Engine]*vectors.Set
}

// ranker answers as recall does with an embeddings endpoint: the facts
// nearest by meaning joined to those found by words (search.Fuse).
func (m *meanings) ranker(t *testing.T, s qualitySet) ranker {
	set := m.sets[s.x]
	if set == nil {
		var err error
		if set, err = vectors.Open(filepath.Join(m.dir, fmt.Sprintf("%d.bin", len(m.sets))), "concepts"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { set.Close() })
		for batch := range slices.Chunk(s.docs, 256) {
			texts := make([]string, len(batch))
			for i, d := range batch {
				texts[i] = d.Text
			}
			got, err := m.client.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			vs := make([]vectors.Vector, len(batch))
			for i, d := range batch {
				vs[i] = vectors.Vector{Shard: d.Shard, ID: d.ID, V: got[i]}
			}
			if err := set.Put(vs); err != nil {
				t.Fatal(err)
			}
		}
		m.sets[s.x] = set
	}
	weight := m.client.Config().Weight
	return func(j judged, k int) []search.Doc {
		in := s.shards
		if j.shards != nil {
			in = j.shards
		}
		if in == nil {
			in = shardsOf(s.docs)
		}
		n := max(3*k, 30)
		res := s.x.Search(search.Query{Text: j.q, Shards: in, K: n, Now: judgedNow})
		q, err := m.client.Embed(context.Background(), []string{j.q})
		if err != nil {
			t.Fatal(err)
		}
		near, err := set.Nearest(q[0], in, n+1)
		if err != nil {
			t.Fatal(err)
		}
		cosine := func(shard memd.ShardID, id string) (float64, bool) {
			c, ok, err := set.Cosine(q[0], shard, id)
			return c, ok && err == nil
		}
		var out []search.Doc
		for _, h := range search.Fit(s.x.Fuse(res.Hits, res.Full, cosine, near, n, weight, false), k, 0) {
			out = append(out, h.Doc)
		}
		return out
	}
}

func shardsOf(docs []search.Doc) []memd.ShardID {
	seen := map[memd.ShardID]bool{}
	var out []memd.ShardID
	for _, d := range docs {
		if !seen[d.Shard] {
			seen[d.Shard] = true
			out = append(out, d.Shard)
		}
	}
	return out
}

func loadStoreSet(t testing.TB) qualitySet {
	s := amongDistractors(loadMemory(t))
	return newQualitySet("store", "facts", loadQueries(t, s.known), s.x, s.shards, s.all, byText)
}

// judgedStore is a judged memory indexed among 3,000 distractors: the
// engine, every fact, the shards, and the texts of the judged facts.
type judgedStore struct {
	x      *search.Engine
	all    []search.Doc
	shards []memd.ShardID
	known  map[string]bool
}

func amongDistractors(docs []search.Doc) judgedStore {
	s := judgedStore{known: map[string]bool{}}
	shards := map[memd.ShardID]bool{memd.AgentShard("noise"): true}
	for _, d := range docs {
		s.known[d.Text] = true
		shards[d.Shard] = true
	}
	s.all = append(docs, distractors(3000)...)
	s.x = search.New()
	s.x.PutAll(s.all)
	for id := range shards {
		s.shards = append(s.shards, id)
	}
	return s
}

// storeFloor is memd's recall@10 on the store set when the conversation
// sets were added; it must not fall.
const storeFloor = 0.955

// intlFloor is what memd's recall@10 on the tuning part of the set in
// other languages must reach: 0.56 when Chinese and Japanese were read as
// one word a phrase, and Russian's cases as other words; 1.0 since.
const intlFloor = 0.9

// TestRecallQuality holds memd's ranking to every judged set in every
// shape: never below plain BM25; on the conversations as far above it as
// context from the chat allows; on the paraphrases 20 points above it,
// through the thesaurus, which must cost no other set anything. Set
// MEMD_RECALL_MISSES=1 to list the tuning queries missed at 10 (never the
// held-out ones).
//
// It scores thousands of queries one after another, with nothing of its
// own running concurrently: under the race detector it took six times as
// long (95 s against 15 s), so `make test` runs it without the detector
// (`make quality`), beside the race run.
func TestRecallQuality(t *testing.T) {
	if raceDetector {
		t.Skip("run without the race detector: make quality")
	}
	sets := []qualitySet{loadStoreSet(t)}
	if len(sets[0].qs) < 200 {
		t.Fatalf("the store set has %d queries; keep at least 200", len(sets[0].qs))
	}
	sets = append(sets, conversationSets(t)...)
	sets = append(sets, paraphraseSets(t)...)
	sets = append(sets, otherLanguageSets(t)...)
	es := conceptembed.New("concepts")
	defer es.Close()
	vs := &meanings{client: vectors.NewClient(vectors.Config{BaseURL: es.URL + "/v1", Model: "concepts"}), dir: t.TempDir(), sets: map[*search.Engine]*vectors.Set{}}
	at10 := map[string]map[string][2]float64{} // set -> shape -> memd, bm25
	t.Logf("%-13s %-11s %5s  %-17s  %-17s  %-17s  %-17s", "set", "shape", "qs", "memd @5/@10/@20", "literal", "bm25", "memd+vectors")
	for _, s := range sets {
		var m, l, b, v [3]float64
		meaning := vs.ranker(t, s)
		for j, k := range []int{5, 10, 20} {
			var misses []string
			m[j], misses = recallAt(s.memd, s.qs, k, s.is)
			l[j], _ = recallAt(s.literal, s.qs, k, s.is)
			b[j], _ = recallAt(s.bm25, s.qs, k, s.is)
			v[j], _ = recallAt(meaning, s.qs, k, s.is)
			if m[j] < b[j] {
				t.Errorf("%s, %s: recall@%d of memd %.3f is below plain BM25's %.3f", s.set, s.shape, k, m[j], b[j])
			}
			if k == 10 && os.Getenv("MEMD_RECALL_MISSES") != "" && !strings.Contains(s.set, "held-out") {
				for _, miss := range misses {
					t.Logf("  %s, %s, missed at 10: %s", s.set, s.shape, miss)
				}
			}
		}
		t.Logf("%-13s %-11s %5d  %.3f %.3f %.3f  %.3f %.3f %.3f  %.3f %.3f %.3f  %.3f %.3f %.3f", s.set, s.shape, len(s.qs), m[0], m[1], m[2], l[0], l[1], l[2], b[0], b[1], b[2], v[0], v[1], v[2])
		// A guard rather than a target, so held on the held-out parts too.
		if !strings.HasPrefix(s.set, "para") && m[1] < l[1] {
			t.Errorf("%s, %s: recall@10 %.3f with the thesaurus, below the %.3f without it", s.set, s.shape, m[1], l[1])
		}
		if at10[s.set] == nil {
			at10[s.set] = map[string][2]float64{}
		}
		at10[s.set][s.shape] = [2]float64{m[1], b[1]}
	}
	if m, b := at10["para tuning"]["facts"][0], at10["para tuning"]["facts"][1]; m < b+0.20 {
		t.Errorf("paraphrases: recall@10 %.3f, not 20 points above plain BM25 %.3f", m, b)
	}
	if got := at10["store"]["facts"][0]; got < storeFloor {
		t.Errorf("store set: recall@10 %.3f, below the %.2f it had", got, storeFloor)
	}
	if got := at10["intl tuning"]["facts"][0]; got < intlFloor {
		t.Errorf("set in other languages: recall@10 %.3f, below %.2f", got, intlFloor)
	}
	// The margins are held on the tuning part; the held-out figures are
	// reported, and held only to plain BM25 above, so that nothing is
	// tuned on them.
	for _, set := range []string{"tuning"} {
		r := at10[set]
		if r == nil {
			continue
		}
		if chat, plain := r["turns+chat"][0], r["turns"][0]; chat < plain-0.03 {
			t.Errorf("%s: turns with their chat %.3f, more than 3 points below the same turns without %.3f", set, chat, plain)
		}
		if m, b := r["turns+chat"][0], r["turns+chat"][1]; m < b+0.10 {
			t.Errorf("%s: turns with their chat %.3f, not 10 points above plain BM25 %.3f", set, m, b)
		}
		if m, b := r["facts+chat"][0], r["facts+chat"][1]; m < b+0.05 {
			t.Errorf("%s: extracted facts with their chat %.3f, not 5 points above plain BM25 %.3f", set, m, b)
		}
	}
}

// BenchmarkRecallByMeaning_1M times recall as memd answers it with an
// embeddings endpoint, in a store of 1,000,000 facts in 100 shards, for an
// agent reading 5 of them (its own, its user's, three projects'): the
// search by words, the nearest vectors (384 dimensions), and their fusion,
// as recall runs them at its default k; the query's own embedding, a
// request to the endpoint, is not in it. It reports the p99 and the heap each fact costs, words and
// vectors apart. Slow to set up (about a minute); run it alone:
//
//	go test -run X -bench RecallByMeaning_1M -benchtime 2000x ./daemon/search
func BenchmarkRecallByMeaning_1M(b *testing.B) {
	const shards, perShard, dim = 100, 10000, 384
	people := strings.Fields("Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Marta Pat Sam Lena Omar Priya")
	things := strings.Fields("flight invoice budget cluster database lease contract dinner review pipeline keys forecast")
	places := strings.Fields("Lisbon Porto Madrid Berlin Paris London Dublin Oslo Tokyo Sydney")
	var all []memd.ShardID
	var docs []search.Doc
	for s := range shards {
		id := memd.ProjectShard(fmt.Sprintf("p%03d", s))
		all = append(all, id)
		for i := range perShard {
			n := s*perShard + i
			text := fmt.Sprintf("%s booked the %s in %s, ref %d", people[n%len(people)], things[(n/7)%len(things)], places[(n/3)%len(places)], n)
			d, _ := memd.ParseDate(fmt.Sprintf("2026-%02d-%02d", 1+n%11, 1+n%28))
			docs = append(docs, search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: id, Date: d, Tier: memd.TierLog, Text: text, File: "log/" + d.Month() + ".md"}, Offset: i * 60})
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	x := search.New()
	x.PutAll(docs)
	withWords := heap()
	set, err := vectors.Open(filepath.Join(b.TempDir(), "v.bin"), "m")
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for batch := range slices.Chunk(docs, 10000) {
		vs := make([]vectors.Vector, len(batch))
		for i, d := range batch {
			vs[i] = vectors.Vector{Shard: d.Shard, ID: d.ID, V: vec()}
		}
		if err := set.Put(vs); err != nil {
			b.Fatal(err)
		}
	}
	withVectors := heap()
	runtime.KeepAlive(docs) // counted in neither
	queries := []string{"Marta flight", "budget Lisbon", "who booked the lease in Oslo", "ref 4242", "Berlin"}
	qv := vec()
	in := all[:5]
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		// As recall asks with its default k of 20: 60 of each side.
		res := x.Search(search.Query{Text: queries[i%len(queries)], Shards: in, K: 60, Now: judgedNow})
		near, err := set.Nearest(qv, in, 61)
		if err != nil {
			b.Fatal(err)
		}
		cosine := func(shard memd.ShardID, id string) (float64, bool) {
			c, ok, err := set.Cosine(qv, shard, id)
			return c, ok && err == nil
		}
		search.Fit(x.Fuse(res.Hits, res.Full, cosine, near, 60, 0.3, false), 20, 4000)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(withWords-base)/float64(shards*perShard), "words-B/fact")
	b.ReportMetric(float64(withVectors-withWords)/float64(shards*perShard), "vectors-B/fact")
}
