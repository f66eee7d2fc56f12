package daemon_test

import (
	"context"
	"slices"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// The desk lists a shard's facts newest first, a page at a time, and by
// what wrote them.
func TestFacts_SortPageAndFilterByOrigin(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	day := func(v string) memd.Date { d, _ := memd.ParseDate(v); return d }
	for _, r := range []struct {
		text, date string
		admin      bool
	}{
		{"Visited Porto", "2026-09-02", false},
		{"Visited Braga", "2026-11-20", true},
		{"Visited Faro", "2026-10-11", false},
		{"Visited Evora", "2026-11-20", false}, // same day as Braga, written later
	} {
		c := alice
		if r.admin {
			c = e.admin
		}
		if _, err := c.Remember(ctx, memd.RememberRequest{Shard: s, Text: r.text, Tier: memd.TierLog, Date: day(r.date)}); err != nil {
			t.Fatal(err)
		}
	}
	texts := func(l memd.FactList) []string { return memdtest.Texts(l.Facts) }
	all, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: s, Sort: memd.SortNewest})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Visited Evora", "Visited Braga", "Visited Faro", "Visited Porto"}; !slices.Equal(texts(all), want) || all.Total != 4 {
		t.Errorf("newest first: %q (total %d), want %q", texts(all), all.Total, want)
	}
	pg, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: s, Sort: memd.SortNewest, Offset: 1, Limit: 2})
	if err != nil || !slices.Equal(texts(pg), []string{"Visited Braga", "Visited Faro"}) || pg.Total != 4 {
		t.Errorf("second page: %q (total %d), %v", texts(pg), pg.Total, err)
	}
	byPerson, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: s, LearnedBy: memd.LearnedPerson, Origins: true})
	if err != nil || !slices.Equal(texts(byPerson), []string{"Visited Braga"}) || byPerson.Facts[0].Origin.Author != "admin" {
		t.Errorf("learned by a person: %+v, %v", byPerson.Facts, err)
	}
	byAlice, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: s, Agent: "alice", Text: "o", Sort: memd.SortText})
	if err != nil || !slices.Equal(texts(byAlice), []string{"Visited Evora", "Visited Faro", "Visited Porto"}) || byAlice.Facts[0].Origin != nil {
		t.Errorf("alice's, holding o, by text: %+v, %v", byAlice.Facts, err)
	}
	_, err = e.admin.Facts(ctx, memd.FactsQuery{Shard: s, Sort: "random"})
	wantCode(t, err, memd.EINVALID)
	_, err = e.admin.Facts(ctx, memd.FactsQuery{Shard: s, Limit: 100000})
	wantCode(t, err, memd.EINVALID)
	_, err = e.admin.Facts(ctx, memd.FactsQuery{Shard: s, At: "2026-11-01", Agent: "alice"})
	wantCode(t, err, memd.EINVALID)
	// A period that ends before it starts matches nothing: a mistake, said.
	from, _ := memd.ParseDate("2026-11-02")
	to, _ := memd.ParseDate("2026-11-01")
	_, err = e.admin.Facts(ctx, memd.FactsQuery{Shard: s, From: from, To: to})
	wantCode(t, err, memd.EINVALID)

	log, err := e.admin.Log(ctx, memd.LogQuery{Shard: s, Offset: 1, Limit: 2})
	if err != nil || len(log) != 2 || log[0].Subject != "remember: Visited Faro" {
		t.Errorf("the log's second page: %+v, %v", log, err)
	}
}

// Growth counts additions and removals by the day of their commit, and
// the facts held now by their date, with running totals.
func TestGrowth_ByCommitAndByDate(t *testing.T) {
	e, alice, s := startAlice(t)
	ctx := context.Background()
	day := func(v string) memd.Date { d, _ := memd.ParseDate(v); return d }
	var ids []string
	for _, r := range []struct{ text, date string }{{"Went to Porto", "2026-09-02"}, {"Went to Faro", "2026-10-11"}, {"Went to Braga", "2026-10-11"}} {
		res, err := alice.Remember(ctx, memd.RememberRequest{Shard: s, Text: r.text, Tier: memd.TierLog, Date: day(r.date)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Fact.ID)
	}
	// Counted once, then again after one more commit (only that one read).
	if g, err := alice.Growth(ctx, memd.GrowthQuery{Shard: s}); err != nil || g.ByCommit[0].Added != 3 || g.ByCommit[0].Total != 3 {
		t.Fatalf("before the forget: %+v, %v", g, err)
	}
	if _, err := alice.Forget(ctx, memd.ForgetRequest{Shard: s, ID: ids[0]}); err != nil {
		t.Fatal(err)
	}
	g, err := alice.Growth(ctx, memd.GrowthQuery{Shard: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.ByCommit) != 1 || g.ByCommit[0].Added != 3 || g.ByCommit[0].Removed != 1 || g.ByCommit[0].Total != 2 || g.Facts != 2 {
		t.Errorf("by commit: %+v (facts %d)", g.ByCommit, g.Facts)
	}
	if len(g.ByDate) != 1 || g.ByDate[0].Day.String() != "2026-10-11" || g.ByDate[0].Total != 2 {
		t.Errorf("by date: %+v", g.ByDate)
	}
	if _, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: shard(t, "project/apollo"), Text: "Launch in May"}); err != nil {
		t.Fatal(err)
	}
	all, err := e.admin.Growth(ctx, memd.GrowthQuery{})
	if err != nil || all.Facts != 3 || all.ByCommit[len(all.ByCommit)-1].Total != 3 {
		t.Errorf("all memory: %+v, %v", all, err)
	}
	_, err = alice.Growth(ctx, memd.GrowthQuery{})
	wantCode(t, err, memd.EFORBIDDEN)
}

// The text filter finds a fact however its accents were composed, in the
// fact or in what was typed, in any case, as fact IDs and recall do.
func TestFacts_TextFilterIgnoresUnicodeForm(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	s := shard(t, "project/apollo")
	for _, text := range []string{"Visited Mu\u0308nchen in spring", "Ate at the Caf\u00e9 Central"} {
		if _, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	for _, typed := range []string{"M\u00fcnchen", "mu\u0308nchen", "M\u00dcNCHEN", "caf\u00e9 central", "Cafe\u0301", "at  the"} {
		got, err := e.admin.Facts(ctx, memd.FactsQuery{Shard: s, Text: typed})
		if err != nil || got.Total != 1 {
			t.Errorf("facts holding %q: %+v %v, want one", typed, got.Facts, err)
		}
	}
}
