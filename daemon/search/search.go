package search

import (
	"strings"
	"time"

	"github.com/memd/memd"
)

// Query is a recall query.
type Query struct {
	Text    string
	Shards  []memd.ShardID // the shards the caller may read; none means none
	K       int            // at most this many hits
	Budget  int            // at most this many characters of fact text
	Now     time.Time      // anchors dates named without a year
	Explain bool           // say why each hit ranked
	Literal bool           // the query's words alone, none of their relatives
}

// Hit is a fact recall found, with its score.
type Hit struct {
	Doc
	Score   float64
	Explain *memd.ScoreParts // with Query.Explain: the parts of Score
}

// Result is what a search found, and the commit each searched shard was
// read at (shards never indexed, or without a commit, are absent).
type Result struct {
	Hits   []Hit
	ReadAt map[memd.ShardID]string
	// Full is the score of a fact holding each of the query's words once,
	// at the length of most: how much there was to find by words (an
	// unknown word weighs the most). Fuse scales word scores by it.
	Full float64
}

// Tuning of the ranking, chosen on the tuning part of the judged sets in
// testdata/recall (see quality_test.go).
const (
	k1                = 1.2
	b                 = 0.75
	phraseBoost       = 0.5 // added share of the score when the words appear as a phrase
	dateWindow        = 3   // days around a named date that still count
	maxLenders        = 256
	minIDF            = 0.3 // below this a word is in most facts (about 70% or more)
	prefixLen         = 5   // letters (not bytes) two terms must share to match by prefix
	prefixShare       = 0.6 // weight of a term matched by prefix
	namedShardBoost   = 0.5 // added share for facts of a shard the query names
	namedProfileScore = 1.0 // score of a named shard's lasting facts, about one matched word
	maxNeedles        = 8   // words the substring fallback looks for, at most
)

// Search ranks the facts of the allowed shards against a query: BM25 over
// stemmed words, a bonus when the words appear as a phrase, a substring
// fallback when no word matches, facts near a date the query names, and
// context from the conversation a fact was learned in (see context.go).
// Ties go to the newer fact. BM25's statistics are those of the shards
// searched, so the answer depends on nothing else.
func (x *Engine) Search(q Query) Result {
	x.mu.RLock()
	defer x.mu.RUnlock()
	res := Result{ReadAt: x.headsOf(q.Shards)}
	sc := getScores()
	defer putScores(sc)
	res.Hits, res.Full = x.search(sc, q, nil)
	if q.Explain && len(res.Hits) > 0 {
		// Scoring again, recording the parts of the hits alone, costs less
		// than recording the parts of every candidate; it is the same
		// scoring, so the same hits come back.
		want := make(map[int32]*memd.ScoreParts, len(res.Hits))
		for _, h := range res.Hits {
			if i, ok := x.lookup(h.Shard, h.ID); ok {
				want[i] = nil
			}
		}
		res.Hits, _ = x.search(sc, q, want)
	}
	return res
}

// search scores and collects the hits of a query; with parts, it records
// the parts of the scores of the entries parts names.
func (x *Engine) search(sc *scores, q Query, parts map[int32]*memd.ScoreParts) (hits []Hit, full float64) {
	if len(q.Shards) == 0 || x.live == 0 {
		return nil, 0
	}
	allowed, allowedNum, st := x.statsOf(q.Shards)
	if st.live == 0 {
		return nil, 0
	}
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	// Dates the query names favour facts of those days. Spelled-out dates
	// ("March 14") still count as words, for facts that mention the date in
	// their text; numeric ones (2026-03-14) rarely appear in text and do not.
	spans, _ := queryDates(q.Text, now)
	content := contentWords(q.Text)

	defer func() {
		sc.clear()
		sc.gained = sc.gained[:0] // only if scoreRelated stopped half way
		sc.parts = nil
	}()
	if len(sc.slot) < int(x.entries.len()) {
		sc.size(int(x.entries.len()))
	}
	sc.parts = parts
	// A part's facts are all of its shard, searched, so the passes over
	// parts ask only whether a fact is live; ok is for facts reached
	// otherwise (a candidate's neighbours).
	ok := func(i int32) bool { return x.alive[i] && allowedNum[x.shardOf[i]] }

	qt := x.queryTerms(sc, content, st, ok)
	qt.depth = collected(q.K)
	qt.scoreRare()
	x.boostNamedShards(sc, content, allowed)
	if len(sc.touched) == 0 && len(spans) == 0 {
		// Parts of words before words of like meaning: "kube" is more
		// likely the start of "kubecorp" than anything a thesaurus knows.
		x.scoreSubstrings(sc, st, qt.unknown)
		if len(sc.touched) == 0 {
			qt.scoreCommon()
		}
	}
	x.scoreDates(sc, st, spans)
	if len(spans) == 0 && !q.Literal {
		// A query naming a date asks what happened then; its other words
		// ("happened", "did") have relatives in most facts.
		qt.scoreRelated()
	}
	// The phrase and the context only change the order of the strongest
	// candidates; weaker ones could not reach the results anyway.
	top := x.strongest(sc, maxLenders)
	if len(qt.words) >= 2 { // two runs, or CJK characters together
		x.boostPhrase(sc, strings.Join(content, " "), top, qt.inner(content))
	}
	// Both passes read the strongest candidates' neighbours: found once.
	sc.near = x.neighboursOf(top, sc.near[:0])
	qt.relateNeighbours(sc.near)
	top = x.lendContext(sc, top, sc.near, ok)
	x.liftChatDays(sc, top, qt.meant())
	return x.collect(sc, q, top), qt.full()
}

// stats are BM25's statistics over the shards a search reads, and their
// parts of the index.
type stats struct {
	live, length int // facts, and terms in them
	parts        []*part
}

// statsOf returns the shards a search reads, as a set and by their numbers
// in the index, and the statistics over them.
func (x *Engine) statsOf(shards []memd.ShardID) (allowed map[memd.ShardID]bool, allowedNum []bool, st stats) {
	allowed = make(map[memd.ShardID]bool, len(shards))
	allowedNum = make([]bool, len(x.shardIDs))
	for _, s := range shards {
		if allowed[s] {
			continue
		}
		allowed[s] = true
		if n, ok := x.shardNum[s]; ok {
			allowedNum[n] = true
			st.parts = append(st.parts, x.parts[n])
			st.live += x.parts[n].live
			st.length += x.parts[n].length
		}
	}
	return allowed, allowedNum, st
}

// contentWords returns the folded runs of a query (see runs) but its stop
// words and numeric dates, or all its runs when it has nothing else.
func contentWords(query string) []string {
	if hasDigit(query) {
		query = isoDate.ReplaceAllString(query, " ")
	}
	qwords := runs(fold(query))
	content := make([]string, 0, len(qwords))
	for _, w := range qwords {
		if !isStop(w) {
			content = append(content, w)
		}
	}
	if len(content) == 0 {
		return qwords
	}
	return content
}
