package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
)

// The substring fallback answers the same whether a part's words are
// looked through first or every text is read: for pieces of words whose
// stems cut them short ("bernetes" of "Kubernetes", "ning" of
// "running"), codes, accented words, words of no fact, and while facts
// are put, forgotten, and a shard is replaced from its snapshot.
func TestSubstrings_PrefilteredAsReadWhole(t *testing.T) {
	prefilterEvery(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	shard := memd.ProjectShard("subs")
	vocab := strings.Fields("Kubernetes running runs happy happily happiness services serviced generation generators " +
		"Lisbon Lisboa café naïve Straße Zürich crème brûlée AB-1234 x9y2 ref#77 Q3 budgeting budgets " +
		"deployed deploying redeployment O'Brien e-mail emailing cancelled cancellation nodes nodal")
	rng := rand.New(rand.NewPCG(7, 11))
	factText := func(n int) string {
		var b strings.Builder
		for range 3 + rng.IntN(6) {
			b.WriteString(vocab[rng.IntN(len(vocab))])
			b.WriteString([]string{" ", ", ", "-", " (", ") "}[rng.IntN(5)])
		}
		fmt.Fprintf(&b, "n%d", n)
		return b.String()
	}
	doc := func(n int) Doc {
		text := factText(n)
		d := memd.DateOf(now.AddDate(0, 0, -n%60))
		return Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: "log/" + d.Month() + ".md"}, Offset: n * 60}
	}
	// Pieces of the vocabulary's words, folded as a query folds them, and
	// words no fact holds.
	var needles []string
	for _, w := range vocab {
		for _, word := range words(fold(w)) {
			for from := 0; from+3 <= len(word); from++ {
				needles = append(needles, word[from:min(len(word), from+3+rng.IntN(5))])
			}
		}
	}
	needles = append(needles, "zorblax", "qqq", "tes", "ning", "eploy", "bernetes", "ssi", "1234", "rass", "ürich",
		"ppi", "ili") // in a stem ("happi", "happili") but not in all its words ("happy", "happily")

	x := New()
	x.KeepWords()
	var docs []Doc
	for n := range 600 {
		docs = append(docs, doc(n))
	}
	// Facts of other words, so that the vocabulary's terms are rare
	// enough to be looked through rather than every text read (mayHold's
	// budget); and a shard of as many again, so that replacing the first
	// leaves fewer dead facts than live, and no compaction analyses its
	// texts again.
	others := func(s memd.ShardID) []Doc {
		var ds []Doc
		for n := range 3000 {
			text := fmt.Sprintf("other %d", n)
			ds = append(ds, Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: s, Date: memd.DateOf(now), Tier: memd.TierLog, Text: text, File: "log/other.md"}, Offset: n * 20})
		}
		return ds
	}
	x.PutAll(append(others(shard), docs...))
	x.PutAll(append(others(memd.ProjectShard("more")), others(memd.ProjectShard("yet-more"))...))
	compare := func(stage string) {
		t.Helper()
		p := x.parts[x.shardNum[shard]]
		if p.surface.words.Load() == nil {
			buildNow(x, p)
		}
		if p.surface.words.Load() == nil {
			t.Fatalf("%s: the part's words were not built", stage)
		}
		if !slices.IsSorted(p.entries) {
			t.Fatalf("%s: the part's entries do not rise, as the fallback reads them", stage)
		}
		for _, n := range needles {
			q := Query{Text: n, Shards: []memd.ShardID{shard}, K: 50, Now: now, Literal: true}
			minPrefiltered = 1 << 30
			want := x.Search(q)
			minPrefiltered = 0
			got := x.Search(q)
			same := func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }
			if !slices.EqualFunc(got.Hits, want.Hits, same) {
				t.Errorf("%s: %q looked through words first:\n%v\nevery text read:\n%v", stage, n, texts(got.Hits), texts(want.Hits))
			}
		}
	}
	compare("built")
	// Words first put after the words were built, and pieces of them that
	// their stems cut short.
	vocab = append(vocab, "Zebrafishing", "Kubeflows", "emailing", "Überweisungen")
	for n := 600; n < 700; n++ {
		x.Put(doc(n))
	}
	needles = append(needles, "shing", "flows", "iling", "ebrafish", "berweis")
	for _, d := range docs[:200] {
		x.Delete(shard, d.ID)
	}
	compare("put and forgotten")

	var order []Doc
	epoch := x.epoch
	postings := string(x.ExportShard(shard, func(int) {}, func(d Doc) { order = append(order, d) }))
	if _, err := x.ReplaceInParts(Update{Shard: shard, Head: "h2", Postings: postings}, len(order), func(put func([]Doc)) error {
		for part := range slices.Chunk(order, 64) {
			put(part)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if x.epoch != epoch {
		t.Fatal("the replace compacted the index: its facts were analysed again, not installed with their postings")
	}
	compare("replaced from its snapshot")
}

// A word put after a part's words were built counts among its term's: a
// "happy" fact is not taken for one holding "ppi" because "happi", and
// "happiness", hold it.
func TestSubstrings_WordsPutAfterTheBuild(t *testing.T) {
	prefilterEvery(t)
	shard := memd.ProjectShard("subs")
	x := New()
	x.KeepWords()
	docs := []Doc{novemberDoc(shard, "happiness all round")}
	for n := range 400 {
		docs = append(docs, novemberDoc(shard, fmt.Sprintf("filler %d", n)))
	}
	x.PutAll(docs)
	buildNow(x, x.parts[x.shardNum[shard]])
	x.Put(novemberDoc(shard, "a happy fact"))
	q := Query{Text: "ppi", Shards: []memd.ShardID{shard}, K: 10, Literal: true}
	got := x.Search(q)
	minPrefiltered = 1 << 30
	want := x.Search(q)
	if !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
		t.Fatalf("looked through words first:\n%v\nevery text read:\n%v", texts(got.Hits), texts(want.Hits))
	}
}

// A needle no word of a large part holds is answered without reading its
// texts, and one a word holds finds the facts holding that word.
func TestSubstrings_LooksThroughWords(t *testing.T) {
	prefilterEvery(t)
	shard := memd.ProjectShard("subs")
	x := New()
	x.KeepWords()
	docs := []Doc{novemberDoc(shard, "Kubernetes nodes patched"), novemberDoc(shard, "Running the deploy")}
	for n := range 40 { // room in the budget of postings to mark
		docs = append(docs, novemberDoc(shard, fmt.Sprintf("filler %d", n)))
	}
	x.PutAll(docs)
	_, _, st := x.statsOf([]memd.ShardID{shard})
	p := st.parts[0]
	buildNow(x, p)
	surf := p.surface.words.Load()
	if surf == nil {
		t.Fatal("the part's words were not built")
	}
	if held, _, some := x.mayHold(p, surf, []string{"zorblax"}); some {
		t.Errorf("zorblax: held %v, want none", held.bits)
	}
	for _, c := range []struct {
		needle string
		sure   bool // its facts' texts need no reading
	}{{"bernetes", false}, {"unning", false}, {"kube", true}} {
		held, sure, some := x.mayHold(p, surf, []string{c.needle})
		if !some || held.bits == nil {
			t.Errorf("%q: held %v, %v; want a fact", c.needle, held.bits, some)
		}
		if (sure[0].bits != nil) != c.sure {
			t.Errorf("%q: sure of %v, want %v", c.needle, sure[0].bits, c.sure)
		}
	}
	// Searches start building a part's words, several at once, while
	// others read them (go test -race).
	y := New()
	y.KeepWords()
	y.PutAll([]Doc{novemberDoc(shard, "Kubernetes nodes patched"), novemberDoc(shard, "Running the deploy")})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if res := y.Search(Query{Text: "bernetes", Shards: []memd.ShardID{shard}, K: 5}); len(res.Hits) == 0 || res.Hits[0].Text != "Kubernetes nodes patched" {
				t.Errorf("bernetes: %v", texts(res.Hits))
			}
		})
	}
	wg.Wait()
}

// Parts each too small to have their words built when read, but searched
// together in more facts than reading them all would cost (an agent's
// own shard, its user's and its projects'), have their words built by
// the first fallback over them, and are then looked through: with the
// same answer as reading every text, for parts whose entries start far
// from the index's first and interleave with each other's. A part
// searched alone, or a very small one, is still read whole.
func TestSubstrings_SmallPartsSearchedTogether(t *testing.T) {
	oldPrefiltered, oldSurfaced := minPrefiltered, minSurfaced
	t.Cleanup(func() { minPrefiltered, minSurfaced = oldPrefiltered, oldSurfaced })
	minPrefiltered, minSurfaced = 2500, 500

	vocab := strings.Fields("Kubernetes running happy happiness services deployed Lisbon café budgets emailing nodes")
	rng := rand.New(rand.NewPCG(3, 5))
	text := func(n int) string {
		// A word of the vocabulary in a fact in 12: few enough to be
		// looked through within mayHold's budget.
		return fmt.Sprintf("%s other n%d", vocab[rng.IntN(len(vocab))], n)
	}
	first, tiny := memd.ProjectShard("first"), memd.ProjectShard("tiny")
	together := []memd.ShardID{memd.AgentShard("own"), memd.UserShard("pat"), memd.ProjectShard("alpha")}
	x := New()
	x.KeepWords()
	var docs []Doc
	for n := range 1000 {
		docs = append(docs, novemberDoc(first, text(n)))
	}
	x.PutAll(docs)
	for n := range 1000 {
		for _, s := range together {
			x.Put(novemberDoc(s, text(n)))
		}
	}
	for n := range 100 {
		x.Put(novemberDoc(tiny, text(n)))
	}
	partOf := func(s memd.ShardID) *part { return x.parts[x.shardNum[s]] }

	x.Search(Query{Text: "bernetes", Shards: together[:1], K: 5})
	x.WaitWords()
	if partOf(together[0]).surface.words.Load() != nil {
		t.Fatal("a part of 1,000 facts searched alone had its words built")
	}
	all := append(slices.Clone(together), tiny)
	x.Search(Query{Text: "bernetes", Shards: all, K: 5})
	x.WaitWords()
	for _, s := range together {
		if partOf(s).surface.words.Load() == nil {
			t.Errorf("%s: searched with others in 3,100 facts, its words were not built", s)
		}
	}
	for _, s := range []memd.ShardID{tiny, first} {
		if partOf(s).surface.words.Load() != nil {
			t.Errorf("%s: words built, though too small or never searched", s)
		}
	}
	// Every hit compared, of every shard, for pieces alone and together.
	for _, n := range []string{"kube", "bernetes", "ppi", "unning", "appines", "afé", "isbo", "zorblax", "kube ppi", "bernetes isbo", "kube afé", "unning appines zorblax"} {
		q := Query{Text: n, Shards: all, K: 5000, Literal: true}
		got := x.Search(q)
		minPrefiltered = 1 << 30
		want := x.Search(q)
		minPrefiltered = 2500
		if len(want.Hits) == 0 && n != "zorblax" {
			t.Fatalf("%q: no hit when every text is read", n)
		}
		if !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
			t.Errorf("%q: looked through words first:\n%v\nevery text read:\n%v", n, texts(got.Hits), texts(want.Hits))
		}
	}
}

// buildNow builds a part's words as a search would ask for them.
func buildNow(x *Engine, p *part) {
	x.mu.RLock()
	drops, epoch := p.surface.drops.Load(), x.epoch
	x.mu.RUnlock()
	x.buildSurface(p, drops, epoch)
}

// A build asked for just before the index is compacted gives up rather
// than read the part's entries against the entries numbered again, fewer
// than before (it would read past them, and panic).
func TestSubstrings_BuildAfterCompaction(t *testing.T) {
	prefilterEvery(t)
	oldBuild := surfaceBuild
	t.Cleanup(func() { surfaceBuild = oldBuild })
	shard := memd.ProjectShard("subs")
	docs := func(n int) []Doc {
		var ds []Doc
		for i := range n {
			ds = append(ds, novemberDoc(shard, fmt.Sprintf("Kubernetes node %d of %d patched", i, n)))
		}
		return ds
	}
	x := New()
	x.KeepWords()
	x.PutAll(docs(3000))
	release, built := make(chan struct{}), make(chan struct{})
	var first sync.Once
	surfaceBuild = func(build func()) {
		<-release
		build()
		first.Do(func() { close(built) })
	}
	p := x.parts[x.shardNum[shard]]
	x.Search(Query{Text: "bernetes", Shards: []memd.ShardID{shard}, K: 5}) // asks for a build
	// Every fact replaced by fewer: more dead than live, and a compaction.
	x.Apply(Update{Shard: shard, Head: "h1", Replace: true, Put: docs(2000)})
	close(release)
	<-built
	if p.surface.words.Load() != nil {
		t.Error("a part the index no longer holds was given words")
	}
	if res := x.Search(Query{Text: "bernetes", Shards: []memd.ShardID{shard}, K: 5}); len(res.Hits) != 5 || !strings.Contains(res.Hits[0].Text, " of 2000 ") {
		t.Errorf("after the compaction: %v", texts(res.Hits))
	}
}

// A replace that fails half way leaves facts without their terms: the
// fallback reads the texts and finds them, as it did before.
func TestSubstrings_AfterAFailedReplace(t *testing.T) {
	prefilterEvery(t)
	shard := memd.ProjectShard("subs")
	var docs []Doc
	for n := range 500 { // a tenth hold the word: few enough to mark
		thing := []string{"Kubernetes", "Postgres", "Redis", "Kafka", "Nginx"}[n%5]
		if n%10 == 5 {
			thing = "Terraform"
		}
		docs = append(docs, novemberDoc(shard, fmt.Sprintf("%s node %d patched", thing, n)))
	}
	x := New()
	x.KeepWords()
	x.PutAll(docs)
	buildNow(x, x.parts[x.shardNum[shard]])
	// The same words: their terms are in the dictionary.
	order := failReplace(t, x, shard, func(_ int, text string) string { return text + " again" })
	q := Query{Text: "bernetes", Shards: []memd.ShardID{shard}, K: 5}
	minPrefiltered = 1 << 30
	want := x.Search(q)
	minPrefiltered = 0
	if got := x.Search(q); !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) || len(got.Hits) == 0 {
		t.Errorf("half read: %v, every text read: %v", texts(got.Hits), texts(want.Hits))
	}
	// Replaced whole again, the shard's words are looked through again.
	x.Apply(Update{Shard: shard, Head: "h3", Replace: true, Put: order})
	if p := x.parts[x.shardNum[shard]]; p.surface.unsure.Load() {
		t.Error("the shard replaced whole still reads every text")
	}
	minPrefiltered = 1 << 30
	want = x.Search(q)
	minPrefiltered = 0
	if got := x.Search(q); !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) || len(got.Hits) == 0 {
		t.Errorf("replaced again: %v, every text read: %v", texts(got.Hits), texts(want.Hits))
	}
}

// A replace that failed half way leaves facts put without their terms,
// dead once the shard is replaced whole, until the index is compacted.
// The part's words are built past them, once, and not read again by
// every later fallback.
func TestSubstrings_BuiltPastFactsWithoutTerms(t *testing.T) {
	prefilterEvery(t)
	oldBuild := surfaceBuild
	t.Cleanup(func() { surfaceBuild = oldBuild })
	var builds atomic.Int32
	surfaceBuild = func(build func()) {
		builds.Add(1)
		build()
	}
	shard := memd.ProjectShard("subs")
	facts := func(format string) []Doc {
		var ds []Doc
		for n := range 300 {
			ds = append(ds, novemberDoc(shard, fmt.Sprintf(format, n)))
		}
		return ds
	}
	x := New()
	x.KeepWords()
	x.PutAll(facts("Kubernetes node %d patched"))
	// Words the part's dictionary lacks.
	failReplace(t, x, shard, func(i int, _ string) string { return fmt.Sprintf("Zeppelins moored %d", i) })
	epoch := x.epoch
	x.Apply(Update{Shard: shard, Head: "h3", Replace: true, Put: facts("Kubernetes node %d patched again")})
	if x.epoch != epoch {
		t.Fatal("the replace compacted the index: no dead facts are left to build past")
	}
	x.WaitWords() // read at a commit, the shard has its words built
	builds.Store(0)
	q := Query{Text: "bernetes", Shards: []memd.ShardID{shard}, K: 500}
	for range 3 {
		x.Search(q)
		x.WaitWords()
	}
	if n, words := builds.Load(), x.parts[x.shardNum[shard]].surface.words.Load(); n != 0 || words == nil {
		t.Errorf("the words kept: %v; three fallbacks then started %d builds of them; want them kept, and none", words != nil, n)
	}
	got := x.Search(q)
	minPrefiltered = 1 << 30
	want := x.Search(q)
	if len(got.Hits) != 300 || !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
		t.Errorf("looked through words: %d hits; every text read: %d", len(got.Hits), len(want.Hits))
	}
}

// failReplace replaces a shard from its own snapshot, each fact's text
// changed by text, with the snapshot's lists cut short: the replace fails
// half way, its facts put without their terms. It returns the facts put.
func failReplace(t *testing.T, x *Engine, shard memd.ShardID, text func(i int, text string) string) []Doc {
	t.Helper()
	var order []Doc
	postings := string(x.ExportShard(shard, func(int) {}, func(d Doc) { order = append(order, d) }))
	for i := range order {
		order[i].Text = text(i, order[i].Text)
		order[i].ID = memd.FactID(order[i].Text)
	}
	if _, err := x.ReplaceInParts(Update{Shard: shard, Head: "h2", Postings: postings[:len(postings)-2]}, len(order), func(put func([]Doc)) error {
		put(order)
		return nil
	}); err == nil {
		t.Fatal("a replace with its lists cut short: no error")
	}
	return order
}

// prefilterEvery has the fallback look through the words of every part,
// however small, for the test (which may set minPrefiltered again).
func prefilterEvery(t *testing.T) {
	old, oldSurfaced := minPrefiltered, minSurfaced
	t.Cleanup(func() { minPrefiltered, minSurfaced = old, oldSurfaced })
	minPrefiltered, minSurfaced = 0, 0
}

// The live index builds a large shard's words once the shard is read at a
// commit; an engine made for one view of history never does, and its
// fallback reads the texts.
func TestSubstrings_WordsBuiltWhenRead(t *testing.T) {
	prefilterEvery(t)
	oldBuild := surfaceBuild
	t.Cleanup(func() { surfaceBuild = oldBuild })
	built := make(chan struct{}, 1)
	surfaceBuild = func(build func()) {
		build()
		built <- struct{}{}
	}
	shard := memd.ProjectShard("subs")
	docs := []Doc{novemberDoc(shard, "Kubernetes nodes patched"), novemberDoc(shard, "Running the deploy")}
	live := New()
	live.KeepWords()
	live.Apply(Update{Shard: shard, Head: "h1", Put: docs})
	<-built
	if live.parts[live.shardNum[shard]].surface.words.Load() == nil {
		t.Error("the live index did not build the words of a shard it read")
	}
	view := New()
	view.Apply(Update{Shard: shard, Head: "h1", Put: docs})
	if res := view.Search(Query{Text: "bernetes", Shards: []memd.ShardID{shard}, K: 5}); len(res.Hits) == 0 {
		t.Error("an engine made for one view found nothing inside words")
	}
	if p := view.parts[view.shardNum[shard]]; p.surface.building.Load() || p.surface.words.Load() != nil {
		t.Error("an engine made for one view began building words")
	}
}

// Texts are read alike for one or two needles (each found in the text as
// it is, in any case) and for more (found in the text folded once): each
// fact gains one for each piece its folded words hold, ASCII or not.
func TestSubstrings_TextsReadAlikeForFewAndManyPieces(t *testing.T) {
	shard := memd.AgentShard("alice")
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	texts := []string{
		"Zebrafishing in LISBON", "Überweisungen für KUBERNETES-Cluster", "kubernetes ops (lisbon)",
		"ZebraFish tank, Lisbon office", "Paid the Überweisung", "isbon? no: LisBon!", "nothing here at all",
		"K8s: KuBeRnEtEs; zebrafishing", "e-bra fish", "Inrnetes", "Lisbo",
	}
	x := New()
	for n, text := range texts {
		x.Put(Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: memd.DateOf(now), Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}, Offset: n * 60})
	}
	for _, q := range []string{"ebrafi", "ebrafi isbo", "ebrafi isbo berweis", "ebrafi isbo berweis rnete bernet"} {
		needles := strings.Fields(q)
		res := x.Search(Query{Text: q, Shards: []memd.ShardID{shard}, K: 50, Now: now, Explain: true, Literal: true})
		got := map[string]float64{}
		for _, h := range res.Hits {
			got[h.Text] = h.Explain.Substring
		}
		for _, text := range texts {
			folded, _ := analyze(text)
			want := 0.0
			for _, n := range needles {
				if strings.Contains(folded, n) {
					want++
				}
			}
			if got[text] != want {
				t.Errorf("%q: %q gained %v, want one for each piece its words hold: %v", q, text, got[text], want)
			}
		}
	}
}
