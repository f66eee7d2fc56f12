package gitstore

import (
	"fmt"
	"testing"

	"github.com/memd/memd"
)

// BenchmarkDiffOfNewCommit measures describing a commit just made that
// appends one fact to a monthly log of 4,000 lines, as the feed does for
// every commit: from the writer's cache, and rebuilt from git objects.
func BenchmarkDiffOfNewCommit(b *testing.B) {
	s, sh := aliceShard(b)
	date, _ := memd.ParseDate("2026-11-03")
	var edits []Edit
	for i := 0; i < 4000; i++ {
		edits = append(edits, Edit{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Alice approved the billing service in Lisbon, ref %d", i), Date: date, Tier: memd.TierLog}})
	}
	if _, err := sh.Apply(Change{Author: who, Message: "import", Edits: edits}); err != nil {
		b.Fatal(err)
	}
	for _, cached := range []bool{true, false} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				res, err := sh.Apply(Change{Author: who, Message: "remember", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("New fact %v %d", cached, i), Date: date, Tier: memd.TierLog}}}})
				if err != nil {
					b.Fatal(err)
				}
				c, _ := sh.ReadCommit(res.Commit)
				if !cached {
					s.diffs = newDiffCache() // git objects stay cached, as in the daemon
				}
				b.StartTimer()
				if _, err := sh.Diff(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
