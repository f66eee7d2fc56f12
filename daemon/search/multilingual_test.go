package search_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// otherLanguageSets are the judged sets in languages other than English,
// each with its tuning and held-out parts, among the English store's
// distractors too: their words must not be lost in a store of English.
// "intl" is testdata/recall/multilingual.txt (Chinese, Japanese, Korean,
// Russian), "eu" european.txt (German, French, Spanish, Italian,
// Portuguese).
func otherLanguageSets(t testing.TB) []qualitySet {
	var sets []qualitySet
	for _, set := range []struct{ name, file string }{{"intl", "multilingual"}, {"eu", "european"}} {
		s := amongDistractors(loadMemoryFrom(t, "../../testdata/recall/"+set.file+".txt"))
		tuning, heldOut := loadQueriesFrom(t, "../../testdata/recall/"+set.file+"-queries.txt", s.known)
		sets = append(sets,
			newQualitySet(set.name+" tuning", "facts", tuning, s.x, s.shards, s.all, byText),
			newQualitySet(set.name+" held-out", "facts", heldOut, s.x, s.shards, s.all, byText))
	}
	return sets
}

// A query of one CJK character finds it inside a run of them as well as
// alone; a Russian stem of three letters is not taken
// for the start of every longer word; Russian's stop words count for
// nothing.
func TestSearch_OtherScriptsAsUsersWriteThem(t *testing.T) {
	x := index(
		doc(alice, "2026-10-01", "我的猫叫小白", 0),
		doc(alice, "2026-10-02", "宠物：猫，狗", 100),
		doc(alice, "2026-10-03", "Tom喜欢喝绿茶", 200),
		doc(alice, "2026-10-04", "집에서 일하는 날은 화요일입니다", 300),
		doc(alice, "2026-10-05", "우리 집 주소가 바뀌었습니다", 400),
		doc(alice, "2026-10-06", "Мы обсуждали проект, который начался вчера", 500),
		doc(alice, "2026-10-07", "Кот спит на диване", 600),
		doc(alice, "2026-10-08", "Это было в Берлине", 700),
		doc(alice, "2026-10-09", "Встреча в Берлине перенесена", 800),
		doc(alice, "2026-10-10", "Postgres upgrade planned for Friday", 900),
		doc(alice, "2026-10-11", "Upgrade the office printers", 1000),
		doc(alice, "2026-10-12", "В пятницу нельзя выкатывать релизы", 1100),
		doc(alice, "2026-09-01", "我们把年会放在东京举办", 1400),
		doc(alice, "2026-09-02", "东京的分公司下周举办培训", 1500),
		doc(alice, "2026-10-13", "В пятницу можно уйти", 1200),
	)
	for _, c := range []struct {
		q         string
		want, not []string
	}{
		{q: "猫", want: []string{"我的猫叫小白", "宠物：猫，狗"}},
		{q: "茶", want: []string{"Tom喜欢喝绿茶"}},
		{q: "집", want: []string{"집에서 일하는 날은 화요일입니다", "우리 집 주소가 바뀌었습니다"}},
		{q: "кота", want: []string{"Кот спит на диване"}, not: []string{"Мы обсуждали проект, который начался вчера"}},
	} {
		hits := x.Search(search.Query{Text: c.q, Shards: []memd.ShardID{alice}, K: 5, Now: now}).Hits
		got := texts(hits)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: hits %q, want %q among them", c.q, got, w)
			}
		}
		for _, n := range c.not {
			for _, h := range x.Search(search.Query{Text: c.q, Shards: []memd.ShardID{alice}, K: 5, Now: now, Explain: true}).Hits {
				if h.Text == n && len(h.Explain.Terms) > 0 {
					t.Errorf("%q: %q matched by %+v", c.q, n, h.Explain.Terms)
				}
			}
		}
	}
	for q, want := range map[string]string{
		// "Это было" (it was) are stop words: the fact naming the meeting wins.
		"встреча в Берлине это было": "Встреча в Берлине перенесена",
		// A word a question turns on is none: "нельзя" (must not).
		"что нельзя делать в пятницу": "В пятницу нельзя выкатывать релизы",
		// A code still finds the word it starts with.
		"postgres16 upgrade": "Postgres upgrade planned for Friday",
	} {
		if got := first(t, x, q); got != want {
			t.Errorf("%q: first hit %q, want %q", q, got, want)
		}
	}
	// Characters standing together as the query has them are a phrase.
	hits := x.Search(search.Query{Text: "东京举办", Shards: []memd.ShardID{alice}, K: 5, Now: now, Explain: true}).Hits
	if len(hits) == 0 || hits[0].Text != "我们把年会放在东京举办" || hits[0].Explain.Phrase <= 0 {
		t.Errorf("东京举办: hits %q, the first without a phrase's share", texts(hits))
	}
}

// A CJK character weighs as rare as the facts holding it make it, alone
// or in pairs: one in a quarter of the facts still counts beside an
// English word.
func TestSearch_CJKCharacterWeighsByItsFacts(t *testing.T) {
	var docs []search.Doc
	for i := range 25 {
		docs = append(docs, doc(alice, "2026-10-01", fmt.Sprintf("黑猫和白猫都睡了 %d", i), i*100))
	}
	for i := range 9 {
		docs = append(docs, doc(alice, "2026-10-02", fmt.Sprintf("vet appointment booked %d", i), 3000+i*100))
	}
	docs = append(docs, doc(alice, "2026-09-01", "vet 说 猫 很健康", 5000))
	for i := range 65 {
		docs = append(docs, doc(alice, "2026-10-03", fmt.Sprintf("office supplies ordered %d", i), 6000+i*100))
	}
	if got := first(t, index(docs...), "猫 vet"); got != "vet 说 猫 很健康" {
		t.Errorf("first hit %q", got)
	}
}
