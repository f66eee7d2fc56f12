package search_test

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/memd/memd/daemon/search"
)

// bm25 is the plain baseline recall is held to: Okapi BM25 with k1 1.2 and
// b 0.75 over lowercased words, with no stemming and no stop words, ties
// to the fact indexed first.
type bm25 struct {
	docs     []search.Doc
	postings map[string][]bm25Posting
	lengths  []float64
	avg      float64
}

type bm25Posting struct {
	doc int
	tf  float64
}

func bm25Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func newBM25(docs []search.Doc) *bm25 {
	x := &bm25{docs: docs, postings: map[string][]bm25Posting{}, lengths: make([]float64, len(docs))}
	total := 0.0
	for i, d := range docs {
		ws := bm25Words(d.Text)
		x.lengths[i] = float64(len(ws))
		total += float64(len(ws))
		tf := map[string]float64{}
		for _, w := range ws {
			tf[w]++
		}
		for w, n := range tf {
			x.postings[w] = append(x.postings[w], bm25Posting{i, n})
		}
	}
	x.avg = total / math.Max(1, float64(len(docs)))
	return x
}

func (x *bm25) search(q string, k int) []search.Doc {
	const k1, b = 1.2, 0.75
	score := map[int]float64{}
	seen := map[string]bool{}
	for _, w := range bm25Words(q) {
		if seen[w] {
			continue
		}
		seen[w] = true
		list := x.postings[w]
		n := float64(len(list))
		idf := math.Log(1 + (float64(len(x.docs))-n+0.5)/(n+0.5))
		for _, p := range list {
			score[p.doc] += idf * p.tf * (k1 + 1) / (p.tf + k1*(1-b+b*x.lengths[p.doc]/x.avg))
		}
	}
	ids := make([]int, 0, len(score))
	for i := range score {
		ids = append(ids, i)
	}
	slices.SortFunc(ids, func(a, b int) int {
		if score[a] != score[b] {
			if score[a] > score[b] {
				return -1
			}
			return 1
		}
		return a - b
	})
	var out []search.Doc
	for _, i := range ids[:min(k, len(ids))] {
		out = append(out, x.docs[i])
	}
	return out
}
