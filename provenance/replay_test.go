package provenance_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// A revert by message must leave a shard of one line of history as the
// history without that message's commits does. Random histories of two
// facts remembered (at one of two dates) and forgotten by three messages,
// each commit changing something, are built twice, with and without the
// message, and the lines of every fact compared; the dry run must say
// what the revert did.
func TestRevertMessages_MatchTheHistoryReplayedWithoutThem(t *testing.T) {
	texts := []string{"Alpha is one", "Beta is two"}
	dates := []string{"2026-10-01", "2026-10-03"}
	type step struct {
		forget     bool
		text, date string
		msg        string
	}
	seeds := 120
	if testing.Short() {
		seeds = 30
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 34))
		var steps []step
		held := map[string]bool{}
		for n := 3 + rng.IntN(5); len(steps) < n; {
			s := step{forget: rng.IntN(3) == 0, text: texts[rng.IntN(2)], date: dates[rng.IntN(2)], msg: fmt.Sprintf("m%d", rng.IntN(3))}
			if s.forget != held[s.text] {
				continue // a commit that changes nothing is not made
			}
			held[s.text] = !s.forget
			steps = append(steps, s)
		}
		reverted := fmt.Sprintf("m%d", rng.IntN(3))
		build := func(skip string) *gitstore.Shard {
			sh := newShard(t)
			for _, s := range steps {
				switch {
				case s.msg == skip:
				case s.forget:
					change(t, sh, memd.OpForget, s.text, s.msg)
				default:
					rememberDated(t, sh, s.text, s.date, s.msg)
				}
			}
			return sh
		}
		lines := func(sh *gitstore.Shard) string {
			var all []string
			for _, text := range texts {
				ls, err := sh.FactLines(memd.FactID(text))
				if err != nil && memd.ErrorCode(err) != memd.ENOTFOUND {
					t.Fatal(err)
				}
				for _, l := range ls {
					all = append(all, text[:1]+"@"+l.File+"@"+l.Date.String())
				}
			}
			slices.Sort(all)
			return strings.Join(all, " ")
		}
		sh := build("")
		dryThenRealOrNothing(t, sh, reverted)
		if got, want := lines(sh), lines(build(reverted)); got != want {
			var told []string
			for _, s := range steps {
				op := "+"
				if s.forget {
					op = "-"
				}
				told = append(told, s.msg+op+s.text[:1]+"@"+s.date[8:])
			}
			t.Errorf("seed %d: %s, reverting %s: lines %q, the history without it %q", seed, strings.Join(told, " "), reverted, got, want)
		}
	}
}

// dryThenRealOrNothing is dryThenReal for a message the history may never
// have cited.
func dryThenRealOrNothing(t *testing.T, sh *gitstore.Shard, msg string) {
	t.Helper()
	dryThenReal(t, func(r provenance.Reverter) ([]memd.Revert, error) {
		rvs, err := r.RevertMessages([]*gitstore.Shard{sh}, []string{msg}, "")
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			err = nil
		}
		return rvs, err
	})
}
