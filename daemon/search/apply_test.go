package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
)

// Postings read with a shard's snapshot are installed in that shard's
// part: an update whose facts are not all the shard's is analysed from
// its texts instead, so no fact is searched as another shard's.
func TestApply_PostingsOfAnotherShardsFactsAreNotInstalled(t *testing.T) {
	alice, bob := memd.UserShard("alice"), memd.UserShard("bob")
	y := New()
	y.PutAll([]Doc{novemberDoc(alice, "Alice likes tea"), novemberDoc(alice, "Secret salary figure")})
	var docs []Doc
	postings := string(y.ExportShard(alice, func(int) {}, func(d Doc) { docs = append(docs, d) }))
	for k := range docs {
		if docs[k].Text == "Secret salary figure" {
			docs[k].Shard = bob
		}
	}
	x := New()
	if used := x.Apply(Update{Shard: alice, Replace: true, Put: docs, Postings: postings}); used {
		t.Error("the postings were used")
	}
	for shard, want := range map[memd.ShardID]int{alice: 0, bob: 1} {
		if hits := x.Search(Query{Text: "salary", Shards: []memd.ShardID{shard}, K: 5}).Hits; len(hits) != want {
			t.Errorf("%s's search for salary: %d hits, want %d", shard, len(hits), want)
		}
	}
}

// parts3000 is a shard of 3,000 facts over 400 days, profile and log, a
// fifth of them learned in one of seven chats.
func parts3000(shard memd.ShardID, now time.Time) []Doc {
	var docs []Doc
	for n := range 3000 {
		text := fmt.Sprintf("Fact %d about the %s budget in %s", n, []string{"travel", "hardware", "hiring"}[n%3], []string{"Lisbon", "Porto", "Oslo", "Tokyo"}[n%4])
		d := memd.DateOf(now.AddDate(0, 0, -(n*7919)%400))
		tier := memd.TierLog
		if n%11 == 0 {
			tier = memd.TierProfile
		}
		doc := Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: tier, Text: text, File: "log/" + d.Month() + ".md"}, Offset: (n * 37) % 5000}
		if n%5 == 0 {
			doc.Chat, doc.When = fmt.Sprintf("chat-%d", n%7), int64(n)
		}
		docs = append(docs, doc)
	}
	return docs
}

// Facts put in parts, as a start reads a large shard, are walked, searched
// and lend context in the order of the same facts put at once.
func TestPutAll_InPartsAsAtOnce(t *testing.T) {
	shard := memd.ProjectShard("parts")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	docs := parts3000(shard, now)
	whole := New()
	whole.PutAll(docs)
	parts := New()
	for part := range slices.Chunk(docs, 700) { // larger than a small batch
		parts.Apply(Update{Shard: shard, Put: part})
	}
	for _, profile := range []bool{true, false} {
		var want, got []string
		whole.Walk(shard, profile, func(d Doc) bool { want = append(want, d.ID); return true })
		parts.Walk(shard, profile, func(d Doc) bool { got = append(got, d.ID); return true })
		if !slices.Equal(got, want) {
			t.Errorf("profile %v: walked in parts in another order (%d facts, want %d)", profile, len(got), len(want))
		}
	}
	for _, q := range []string{"travel budget Lisbon", "hiring Tokyo", "Fact 42"} {
		query := Query{Text: q, Shards: []memd.ShardID{shard}, K: 30, Now: now, Explain: true}
		want, got := whole.Search(query).Hits, parts.Search(query).Hits
		if !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
			t.Errorf("%q searched in parts:\n%v\nwant\n%v", q, texts(got), texts(want))
		}
	}
}

// A shard replaced in parts with the postings it was exported with is
// searched as the same shard put at once; parts that give other facts
// than the postings count are an error, never a shard half searchable.
func TestReplaceInParts_AsApply(t *testing.T) {
	shard := memd.ProjectShard("parts")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var docs []Doc
	for n := range 500 {
		text := fmt.Sprintf("Fact %d about the %s budget in %s", n, []string{"travel", "hardware", "hiring"}[n%3], []string{"Lisbon", "Porto", "Oslo", "Tökyö"}[n%4]) +
			strings.Repeat(", again", n%5) // of several lengths
		d := memd.DateOf(now.AddDate(0, 0, -n%90))
		docs = append(docs, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: "log/" + d.Month() + ".md"}, Offset: n * 50})
	}
	saved := New()
	saved.PutAll(docs)
	var order []Doc
	postings := string(saved.ExportShard(shard, func(int) {}, func(d Doc) { order = append(order, d) }))
	whole := New()
	if !whole.Apply(Update{Shard: shard, Head: "h1", Replace: true, Put: order, Postings: postings}) {
		t.Fatal("the postings were not used")
	}
	inParts := func(from []Doc, fail error) func(put func([]Doc)) error {
		return func(put func([]Doc)) error {
			buf := make([]Doc, 0, 37)
			for part := range slices.Chunk(from, 37) {
				buf = append(buf[:0], part...) // one buffer, reused
				put(buf)
			}
			return fail
		}
	}
	x := New()
	used, err := x.ReplaceInParts(Update{Shard: shard, Head: "h1", Postings: postings}, len(order), inParts(order, nil))
	if err != nil || !used {
		t.Fatalf("replaced in parts: used %v, %v", used, err)
	}
	for _, q := range []string{"travel budget Lisbon", "tokyo hiring", "Fact 42"} {
		query := Query{Text: q, Shards: []memd.ShardID{shard}, K: 30, Now: now}
		want, got := whole.Search(query), x.Search(query)
		if !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score && a.Text == b.Text }) || got.ReadAt[shard] != "h1" {
			t.Errorf("%q in parts:\n%v\nwant\n%v", q, texts(got.Hits), texts(want.Hits))
		}
	}
	for name, c := range map[string]struct {
		facts    []Doc
		fail     error
		postings string
	}{
		"fewer facts":  {order[:400], nil, postings},
		"more facts":   {append(slices.Clone(order), order[:3]...), nil, postings},
		"parts failed": {order, errBadSnapshot, postings},
		// Their start reads well, so the facts are put before the lists
		// are found damaged.
		"lists cut short": {order, nil, postings[:len(postings)-2]},
	} {
		// Into an empty index, and over the shard as an earlier read left it.
		for _, held := range [][]Doc{nil, order[:50]} {
			x := New()
			x.Apply(Update{Shard: shard, Head: "h0", Replace: true, Put: held})
			if _, err := x.ReplaceInParts(Update{Shard: shard, Head: "h1", Postings: c.postings}, len(order), inParts(c.facts, c.fail)); err == nil {
				t.Errorf("%s over %d facts: no error", name, len(held))
			}
			// Half read, for the caller to replace again: read at no
			// commit, and searched without postings that name facts
			// never put (a search would read past the facts).
			got := x.Search(Query{Text: "budget Lisbon hiring", Shards: []memd.ShardID{shard}, K: 5, Now: now})
			if got.ReadAt[shard] != "" {
				t.Errorf("%s over %d facts: the half read shard is given as read at %q", name, len(held), got.ReadAt[shard])
			}
		}
	}
}

var errBadSnapshot = errors.New("a damaged snapshot")

// A shard's postings are measured before they are written, into a buffer
// of their size: big numbers, long terms, a fact forgotten and a fact of
// another shard between them.
func TestExportShard_WritesIntoABufferOfItsSize(t *testing.T) {
	alice, bob := memd.UserShard("alice"), memd.UserShard("bob")
	y := New()
	var docs []Doc
	for i := range 3000 {
		docs = append(docs, novemberDoc(alice, fmt.Sprintf("fact %d says %s café naïve", i, strings.Repeat("long", 1+i%40))))
		if i%7 == 0 {
			docs = append(docs, novemberDoc(bob, fmt.Sprintf("bob's fact %d", i)))
		}
	}
	y.PutAll(docs)
	y.Delete(alice, docs[10].ID)
	facts := -1
	b := y.ExportShard(alice, func(n int) { facts = n }, func(Doc) {})
	if facts != 2999 || len(b) != cap(b) {
		t.Fatalf("%d facts, %d bytes of postings in a buffer of %d", facts, len(b), cap(b))
	}
}

// novemberDoc is a fact of a shard's log on the last day of November 2026.
func novemberDoc(s memd.ShardID, text string) Doc {
	day := memd.DateOf(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	return Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: s, Date: day, Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}}
}

// An index changed fact by fact (facts put in their places, forgotten,
// moved to another chat) and a shard replaced whole are searched, walked
// and lend context as an index built afresh from what they hold.
func TestChangedIndex_AsBuiltAfresh(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	a, b := memd.ProjectShard("a"), memd.ProjectShard("b")
	doc := func(shard memd.ShardID, n int) Doc {
		// A few facts hold the words searched for; the facts next to them
		// in their conversation borrow context from them.
		text := fmt.Sprintf("Fact %d, item %d of the list", n, n)
		switch n % 20 {
		case 0:
			text = fmt.Sprintf("Fact %d: the travel budget for Lisbon", n)
		case 7:
			text = fmt.Sprintf("Fact %d: the hiring plan in Tokyo", n)
		}
		d := memd.DateOf(now.AddDate(0, 0, -n/50))
		doc := Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: "log/" + d.Month() + ".md"}, Offset: (n%400)*60 + n/400*30}
		if (n/10)%3 != 0 { // runs of ten facts of no chat, whose file is their conversation
			doc.Chat, doc.When = fmt.Sprintf("chat-%d", n%2), int64(n)
		}
		return doc
	}
	var first, later []Doc
	for n := range 400 {
		first = append(first, doc(a, n), doc(b, n))
		later = append(later, doc(a, 400+n)) // between the lines of the first

	}
	x := New()
	x.PutAll(first)
	held := map[string]Doc{}
	for _, d := range first {
		held[d.Shard.String()+d.ID] = d
	}
	check := func(stage string) {
		t.Helper()
		var docs []Doc
		for _, d := range held {
			docs = append(docs, d)
		}
		fresh := New()
		fresh.PutAll(docs)
		for _, shard := range []memd.ShardID{a, b} {
			for _, profile := range []bool{true, false} {
				var want, got []string
				fresh.Walk(shard, profile, func(d Doc) bool { want = append(want, d.ID); return true })
				x.Walk(shard, profile, func(d Doc) bool { got = append(got, d.ID); return true })
				if !slices.Equal(got, want) {
					t.Errorf("%s: %s walked in another order (%d facts, want %d)", stage, shard, len(got), len(want))
				}
			}
			for _, q := range []string{"travel budget Lisbon", "hiring plan Tokyo"} {
				query := Query{Text: q, Shards: []memd.ShardID{shard}, K: 200, Now: now, Explain: true}
				want, got := fresh.Search(query).Hits, x.Search(query).Hits
				same := func(g, w Hit) bool {
					return g.ID == w.ID && g.Score == w.Score && fmt.Sprint(g.Explain.ContextFrom) == fmt.Sprint(w.Explain.ContextFrom)
				}
				if !slices.EqualFunc(got, want, same) {
					t.Errorf("%s: %q in %s:\n%v\nwant\n%v", stage, q, shard, texts(got), texts(want))
				}
			}
		}
	}
	for _, d := range later[:60] { // one at a time, each into its place
		x.Put(d)
		held[d.Shard.String()+d.ID] = d
	}
	check("facts put one at a time")
	for n := range 60 {
		gone := first[n*4]
		x.Delete(gone.Shard, gone.ID)
		delete(held, gone.Shard.String()+gone.ID)
	}
	check("facts forgotten one at a time")
	moved := first[9] // learned in another chat than it was thought
	x.SetProvenance(moved.Shard, moved.ID, "c1", nil, "chat-9", 5)
	moved.Chat, moved.When, moved.Commit = "chat-9", 5, "c1"
	held[moved.Shard.String()+moved.ID] = moved
	check("a fact moved to another chat")
	x.Apply(Update{Shard: a, Replace: true, Put: later})
	for k, d := range held {
		if d.Shard == a {
			delete(held, k)
		}
	}
	for _, d := range later {
		held[d.Shard.String()+d.ID] = d
	}
	check("a shard replaced")
}

// An older copy of a fact the index holds, put with KeepNewer, leaves the
// index as it was: the held fact, and no tier or file named for the copy
// (a tier's factor bounds how far relatives are pruned).
func TestKeepNewer_AnOlderCopyLeavesNoTrace(t *testing.T) {
	shard := memd.UserShard("alice")
	x := New()
	held := novemberDoc(shard, "Alice likes tea")
	x.PutAll([]Doc{held})
	tiers, files := slices.Clone(x.tiers), slices.Clone(x.fileNames.list)
	older := held
	older.Date = memd.DateOf(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	older.File, older.Tier = "log/2026-10.md", memd.TierEpisode
	x.Apply(Update{Shard: shard, Put: []Doc{older}, KeepNewer: true})
	if got, ok := x.Get(shard, held.ID); !ok || got.File != held.File || got.Date != held.Date {
		t.Fatalf("after an older copy: %+v, want the fact held (%s, %s)", got, held.File, held.Date)
	}
	if !slices.Equal(x.tiers, tiers) || !slices.Equal(x.fileNames.list, files) {
		t.Errorf("an older copy named tiers %v (were %v), files %v (were %v)", x.tiers, tiers, x.fileNames.list, files)
	}
}
