package daemon

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// maxFactsLimit bounds one page of facts.
const maxFactsLimit = 10000

// Facts lists a shard's facts at HEAD or at a past commit or date,
// filtered, sorted and paged.
//
// It is long for the filters, sort keys and paging it applies in one pass.
func (s *Service) Facts(ctx context.Context, q memd.FactsQuery) (memd.FactList, error) {
	if q.Tier != "" {
		if _, err := memd.ParseTier(string(q.Tier)); err != nil {
			return memd.FactList{}, err
		}
	}
	if err := checkPaging(q); err != nil {
		return memd.FactList{}, err
	}
	byOrigin := q.LearnedBy != "" || q.Model != "" || q.Agent != ""
	if q.At != "" && (byOrigin || q.Origins) {
		return memd.FactList{}, memd.Errorf(memd.EINVALID, "origins and filters by learned_by, model or agent read HEAD only, not at=%s", q.At)
	}
	sh, err := s.shard(q.Shard)
	if err != nil {
		return memd.FactList{}, err
	}
	var facts []memd.Fact
	var commit string
	if q.At != "" {
		h, err := resolve(sh, q.At)
		if err != nil {
			return memd.FactList{}, err
		}
		if facts, err = sh.FactsAt(h); err != nil {
			return memd.FactList{}, err
		}
		if !h.IsZero() {
			commit = h.String()
		}
	} else {
		all, head, err := sh.Facts()
		if err != nil {
			return memd.FactList{}, err
		}
		facts = all
		if !head.IsZero() {
			commit = head.String()
		}
	}
	text := memd.NormalizeFactText(q.Text)
	// Filtered in place: a shard's facts are listed whole (a million of
	// them take 150 MB), and a second list of them would double that.
	out := memd.FactList{Shard: q.Shard, Commit: commit, Facts: facts[:0]}
	if out.Facts == nil {
		out.Facts = []memd.Fact{} // a list, never null, even at a date before the first commit
	}
	for _, f := range facts {
		if q.Tier != "" && f.Tier != q.Tier ||
			!q.From.IsZero() && f.Date.Before(q.From) ||
			!q.To.IsZero() && q.To.Before(f.Date) ||
			text != "" && !holdsText(f.Text, text) && !strings.HasPrefix(f.ID, text) {
			continue
		}
		out.Facts = append(out.Facts, f)
	}
	// What the index knows of each fact: when its line was written (for
	// newest first) and the commit that wrote it (for origins).
	var docs map[string]search.Doc
	if q.At == "" && (q.Origins || byOrigin || q.Sort == memd.SortNewest || q.Sort == memd.SortOldest) {
		if err := s.Index.CatchUp(q.Shard); err != nil {
			return memd.FactList{}, err
		}
		docs = make(map[string]search.Doc, len(out.Facts))
		for _, f := range out.Facts {
			if d, ok := s.Index.Engine().Get(q.Shard, f.ID); ok {
				docs[f.ID] = d
			}
		}
	}
	// Origins of every fact only when they filter; otherwise of the page.
	addOrigins := func(facts []memd.Fact) error {
		for i := range facts {
			if d := docs[facts[i].ID]; d.Commit != "" && facts[i].Origin == nil {
				o, err := s.origins.of(sh, d.Commit)
				if err != nil {
					return err
				}
				facts[i].Origin = &o
			}
		}
		return nil
	}
	if byOrigin {
		if err := addOrigins(out.Facts); err != nil {
			return memd.FactList{}, err
		}
		out.Facts = slices.DeleteFunc(out.Facts, func(f memd.Fact) bool {
			o := f.Origin
			return o == nil || q.LearnedBy != "" && o.LearnedBy != q.LearnedBy ||
				q.Model != "" && o.Model != q.Model || q.Agent != "" && o.Author != q.Agent
		})
	}
	sortFacts(out.Facts, q.Sort, func(id string) int64 { return docs[id].When })
	out.Total = len(out.Facts)
	// The page alone, so that the whole list can go while it is sent.
	out.Facts = slices.Clone(page(out.Facts, q.Offset, q.Limit))
	if q.Origins {
		if err := addOrigins(out.Facts); err != nil {
			return memd.FactList{}, err
		}
	} else {
		for i := range out.Facts {
			out.Facts[i].Origin = nil
		}
	}
	return out, nil
}

// holdsText says whether a fact's text holds typed, folded as
// memd.NormalizeFactText folds it: in any case, whichever way its accents
// were composed, spaces as one. Most texts are ASCII with single spaces,
// for which lowering them is the whole fold.
func holdsText(text, typed string) bool {
	plain := true
	for i := 0; i < len(text) && plain; i++ {
		plain = text[i] < utf8.RuneSelf && text[i] != '\t' && (text[i] != ' ' || i+1 == len(text) || text[i+1] != ' ')
	}
	if plain {
		return strings.Contains(strings.ToLower(text), typed)
	}
	return strings.Contains(memd.NormalizeFactText(text), typed)
}

func checkPaging(q memd.FactsQuery) error {
	switch q.Sort {
	case memd.SortFile, memd.SortNewest, memd.SortOldest, memd.SortText, memd.SortTier:
	default:
		return memd.Errorf(memd.EINVALID, "sort must be newest, oldest, text or tier, not %q", q.Sort)
	}
	if err := memd.CheckLearnedBy(q.LearnedBy); err != nil {
		return err
	}
	if q.Offset < 0 || q.Limit < 0 || q.Limit > maxFactsLimit {
		return memd.Errorf(memd.EINVALID, "offset must be 0 or more and limit between 0 (all) and %d", maxFactsLimit)
	}
	return checkPeriod(q.From, q.To)
}

// checkPeriod refuses a period that ends before it starts: it would match
// nothing, and an empty answer would hide the mistake.
func checkPeriod(from, to memd.Date) error {
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return memd.Errorf(memd.EINVALID, "to (%s) is before from (%s)", to, from)
	}
	return nil
}

// sortFacts orders facts as asked; facts come in file order, which breaks
// ties (within a file, later lines were written later).
func sortFacts(facts []memd.Fact, by string, written func(id string) int64) {
	newer := func(a, b memd.Fact) int {
		return cmp.Or(cmp.Compare(a.Date.Days(), b.Date.Days()), cmp.Compare(written(a.ID), written(b.ID)))
	}
	switch by {
	case memd.SortNewest:
		slices.Reverse(facts)
		slices.SortStableFunc(facts, func(a, b memd.Fact) int { return newer(b, a) })
	case memd.SortOldest:
		slices.SortStableFunc(facts, newer)
	case memd.SortText:
		slices.SortStableFunc(facts, func(a, b memd.Fact) int { return strings.Compare(strings.ToLower(a.Text), strings.ToLower(b.Text)) })
	case memd.SortTier:
		slices.SortStableFunc(facts, func(a, b memd.Fact) int { return strings.Compare(string(a.Tier), string(b.Tier)) })
	}
}

func page[T any](list []T, offset, limit int) []T {
	if offset >= len(list) {
		return list[:0]
	}
	list = list[offset:]
	if limit > 0 && limit < len(list) {
		list = list[:limit]
	}
	return list
}

// originCache keeps what each commit's trailers say about the facts it
// wrote; commits never change, so entries never go stale.
type originCache struct {
	mu   sync.Mutex
	byID map[string]memd.Origin
}

// maxOrigins bounds the cache; past it, it starts again empty.
const maxOrigins = 200_000

func (c *originCache) of(sh *gitstore.Shard, hash string) (memd.Origin, error) {
	c.mu.Lock()
	o, ok := c.byID[hash]
	c.mu.Unlock()
	if ok {
		return o, nil
	}
	cm, err := sh.ReadCommit(gitstore.NewHash(hash))
	if err != nil {
		return memd.Origin{}, err
	}
	p := provenance.Parse(cm.Message)
	o = memd.Origin{Commit: hash, Time: cm.Time, Author: cm.Author.Name, Op: p.Op, LearnedBy: p.LearnedBy, Model: p.Model, Prompt: p.Prompt}
	c.mu.Lock()
	if c.byID == nil || len(c.byID) >= maxOrigins {
		c.byID = make(map[string]memd.Origin)
	}
	c.byID[hash] = o
	c.mu.Unlock()
	return o, nil
}
