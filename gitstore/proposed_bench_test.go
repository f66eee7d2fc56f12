package gitstore

import (
	"fmt"
	"testing"

	"github.com/memd/memd"
)

// BenchmarkPropose measures what review mode adds to each learned fact on
// shards of 1,000 to 100,000 facts: a proposal on top of the one already
// waiting (the proposals' tip is read from git), and making the waiting
// proposals again on main after it moved (main's files are parsed
// already), beside a plain commit to main.
func BenchmarkPropose(b *testing.B) {
	for _, n := range []int{1000, 10_000, 100_000} {
		_, sh := aliceShard(b)
		date, _ := memd.ParseDate("2026-11-03")
		var edits []Edit
		for i := 0; i < n; i++ {
			edits = append(edits, Edit{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Alice approved the billing service in Lisbon, ref %d", i), Date: memd.DateFromDays(date.Days() - i%400), Tier: memd.TierLog}})
		}
		if _, err := sh.Apply(Change{Author: who, Message: "import", Edits: edits}); err != nil {
			b.Fatal(err)
		}
		fact := func(kind string, i int) Change {
			return Change{Author: who, Message: "remember: " + kind, Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("%s fact %d", kind, i), Date: date, Tier: memd.TierLog}}}}
		}
		if _, err := sh.Propose(fact("first proposal", 0)); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("facts=%d/main", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sh.Apply(fact("main", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("facts=%d/rebuild", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if _, err := sh.Apply(fact("moved", i)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := sh.RebuildProposals(func(c Commit) (Change, bool, error) {
					d, err := sh.Diff(c)
					if err != nil {
						return Change{}, false, err
					}
					return Change{Author: c.Author, Message: c.Message, Edits: []Edit{{Op: AddFact, Fact: d.Facts[0].Fact}}}, true, nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("facts=%d/propose", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sh.Propose(fact("proposal", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
