package vectors

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// engineSource reads facts from a search engine, as the daemon's index
// source does.
type engineSource struct{ x *search.Engine }

func (s engineSource) Indexed() map[memd.ShardID]string { return s.x.Indexed() }
func (s engineSource) Facts(shard memd.ShardID) int     { return s.x.Facts(shard) }
func (s engineSource) FactsSince(shard memd.ShardID, m search.Mark, fn func(id, text string)) search.Mark {
	return s.x.FactsSince(shard, m, fn)
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
