package vectors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/internal/conceptembed"
)

// engineSource reads facts from a search engine, as the daemon's index
// source does.
type engineSource struct{ x *search.Engine }

func (s engineSource) Indexed() map[memd.ShardID]string { return s.x.Indexed() }
func (s engineSource) Facts(shard memd.ShardID) int     { return s.x.Facts(shard) }
func (s engineSource) FactsSince(shard memd.ShardID, m search.Mark, gone func(string), fn func(id, text string) bool) (search.Mark, bool) {
	return s.x.FactsSince(shard, m, gone, fn)
}
func (s engineSource) EachFact(shard memd.ShardID, fn func(id, text string) bool) {
	s.x.EachFact(shard, fn)
}

func fact1(shard memd.ShardID, n int) search.Doc {
	text := fmt.Sprintf("Fact number %d of the shard", n)
	d, _ := memd.ParseDate("2026-05-01")
	return search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: d, Tier: memd.TierLog, Text: text, File: "log/2026-05.md"}, Offset: n * 40}
}

// BenchmarkLook_AfterAWrite times what the filler does after a write to a
// shard of 1,000,000 facts, every one with its vector: it reads only the
// fact the shard gained, not the million.
func BenchmarkLook_AfterAWrite(b *testing.B) {
	const n = 1000000
	x := search.New()
	docs := make([]search.Doc, n)
	for i := range docs {
		docs[i] = fact1(alice, i)
	}
	x.PutAll(docs)
	x.SetHead(alice, "h0")
	set, err := Open(filepath.Join(b.TempDir(), "v.bin"), "m")
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]Vector, n)
	for i, d := range docs {
		vs[i] = Vector{Shard: alice, ID: d.ID, V: randomVector(rng, 8)}
	}
	if err := set.Put(vs); err != nil {
		b.Fatal(err)
	}
	f := NewFiller(set, NewClient(Config{Model: "m"}), engineSource{x}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if todo := f.look(); len(todo) != 0 {
		b.Fatalf("%d facts to embed", len(todo))
	}
	added := n
	b.Run("since-the-last-look", func(b *testing.B) {
		for range b.N {
			d := fact1(alice, added)
			added++
			x.Put(d)
			x.SetHead(alice, fmt.Sprint("h", added))
			todo := f.look()
			if len(todo) != 1 || todo[0].id != d.ID {
				b.Fatalf("to embed %v, want the new fact", todo)
			}
			set.Put([]Vector{{Shard: alice, ID: d.ID, V: randomVector(rng, 8)}})
		}
	})
	// What a look cost when it read every fact of the shard, for the
	// ratio.
	b.Run("every-fact", func(b *testing.B) {
		for range b.N {
			missing := 0
			x.EachFact(alice, func(id, _ string) bool {
				if !set.Has(alice, id) {
					missing++
				}
				return true
			})
		}
	})
}

// fill looks and embeds until nothing is left, as Run does.
func fill(t *testing.T, f *Filler) error {
	t.Helper()
	for range 100 {
		todo := f.look()
		if len(todo) == 0 {
			return nil
		}
		if err := f.embed(context.Background(), todo); err != nil {
			return err
		}
	}
	t.Fatal("still facts to embed after 100 looks")
	return nil
}

// Facts edited while the endpoint is down: their old vectors go at once,
// the new texts count as pending (recall is not ready), and once the
// endpoint is back every fact has its vector and only those.
func TestFiller_EditedFactsWhileTheEndpointIsDown(t *testing.T) {
	es := conceptembed.New("concepts")
	defer es.Close()
	x := search.New()
	var docs []search.Doc
	for i := range 1000 {
		docs = append(docs, fact1(alice, i))
	}
	x.PutAll(docs)
	x.SetHead(alice, "h0")
	set, err := Open(filepath.Join(t.TempDir(), "v.bin"), "concepts")
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	f := NewFiller(set, NewClient(Config{BaseURL: es.URL + "/v1", Model: "concepts"}), engineSource{x}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := fill(t, f); err != nil {
		t.Fatal(err)
	}
	if st := f.Status(); st.Vectors != 1000 || st.Pending != 0 || !st.Ready {
		t.Fatalf("filled: %+v", st)
	}
	// A hundred facts edited in one commit.
	u := search.Update{Shard: alice, Head: "h1"}
	for i := range 100 {
		u.Delete = append(u.Delete, docs[i].ID)
		d := fact1(alice, 5000+i)
		u.Put = append(u.Put, d)
	}
	x.Apply(u)
	es.Fail(true)
	if err := fill(t, f); err == nil {
		t.Fatal("embedding with the endpoint down went through")
	}
	if st := f.Status(); st.Vectors != 900 || st.Pending != 100 || st.Ready {
		t.Errorf("while down: %+v, want the old vectors gone and 100 pending", st)
	}
	es.Fail(false)
	if err := fill(t, f); err != nil {
		t.Fatal(err)
	}
	if st := f.Status(); st.Vectors != 1000 || st.Pending != 0 || !st.Ready {
		t.Errorf("back up: %+v", st)
	}
	for _, d := range u.Put {
		if !set.Has(alice, d.ID) {
			t.Fatalf("%s has no vector", d.ID)
		}
	}
}
