package provenance_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Two daemons keeping one shard through a remote each learn on their own
// line of history until a merge joins them. A revert by message must
// leave each fact as the history without that message has it, whichever
// line merged the other and whatever the commits' times say.

// stepClock is a commit clock a test sets, minute by minute; left alone,
// every commit falls in one second, as a learner's burst does.
type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time { return c.t }
func (c *stepClock) at(minute int)  { c.t = time.Date(2026, 10, 1, 10, minute, 0, 0, time.UTC) }

func newClockedShard(t *testing.T) (*gitstore.Shard, *stepClock) {
	t.Helper()
	clk := &stepClock{}
	clk.at(0)
	return openShard(t, gitstore.Options{NoSync: true, RepackAt: -1, Now: clk.now, Merge: provenance.MergeMessage}), clk
}

// fork sets the shard's main back to base after the peer's line was made
// on it, and returns the peer's tip, kept on a branch.
func fork(t *testing.T, sh *gitstore.Shard, base, theirs gitstore.Hash) gitstore.Hash {
	t.Helper()
	git(t, sh.Dir(), "branch", "-f", "peer", theirs.String())
	git(t, sh.Dir(), "reset", "-q", "--hard", base.String())
	return theirs
}

// merge integrates the peer's line into main as the daemon does, by a
// merge commit.
func merge(t *testing.T, sh *gitstore.Shard, theirs gitstore.Hash) {
	t.Helper()
	if in, err := sh.Integrate(theirs, gitstore.IntegrateOptions{From: "peer"}); err != nil || in.Kind != gitstore.IntegrateMerge {
		t.Fatalf("merge: %+v, %v", in, err)
	}
}

func revertMessages(t *testing.T, sh *gitstore.Shard, msgs ...string) []memd.Revert {
	t.Helper()
	rvs, err := byAdmin.RevertMessages([]*gitstore.Shard{sh}, msgs, "")
	if err != nil {
		t.Fatal(err)
	}
	return rvs
}

func wantFacts(t *testing.T, sh *gitstore.Shard, want ...string) {
	t.Helper()
	if got := facts(t, sh); !slices.Equal(got, want) {
		t.Errorf("facts: %q, want %q", got, want)
	}
}

// step is a commit of a scenario: at a minute, remember or forget a
// fact, citing a message.
type step struct {
	at        int
	op        string
	text, msg string
}

func (s step) commit(t *testing.T, sh *gitstore.Shard, clk *stepClock) gitstore.Hash {
	clk.at(s.at)
	return change(t, sh, s.op, s.text, s.msg)
}

func remembers(at int, text, msg string) step { return step{at, memd.OpRemember, text, msg} }
func forgets(at int, text, msg string) step   { return step{at, memd.OpForget, text, msg} }

// Each scenario: a base commit, the peer's line and ours from it, the
// daemon merging the peer's; then the revert of some messages.
func TestRevert_LeavesWhatTheHistoryWithoutTheMessagesHolds(t *testing.T) {
	lisbon, acme := "Office is in Lisbon", "Vendor is Acme"
	for _, c := range []struct {
		name         string
		base         step
		theirs, ours []step
		revert       []string
		merged, want []string
	}{
		{name: "both taught it, the peer first, ours reverted", base: remembers(0, lisbon, "base"),
			theirs: []step{remembers(1, acme, "theirs")}, ours: []step{remembers(2, acme, "ours")},
			revert: []string{"ours"}, want: []string{lisbon, acme}},
		{name: "both taught it, the peer first, theirs reverted", base: remembers(0, lisbon, "base"),
			theirs: []step{remembers(1, acme, "theirs")}, ours: []step{remembers(2, acme, "ours")},
			revert: []string{"theirs"}, want: []string{lisbon, acme}},
		{name: "both taught it, we first, ours reverted", base: remembers(0, lisbon, "base"),
			theirs: []step{remembers(2, acme, "theirs")}, ours: []step{remembers(1, acme, "ours")},
			revert: []string{"ours"}, want: []string{lisbon, acme}},
		{name: "both taught it, we first, theirs reverted", base: remembers(0, lisbon, "base"),
			theirs: []step{remembers(2, acme, "theirs")}, ours: []step{remembers(1, acme, "ours")},
			revert: []string{"theirs"}, want: []string{lisbon, acme}},
		{name: "both taught it, both reverted at once", base: remembers(0, lisbon, "base"),
			theirs: []step{remembers(1, acme, "theirs")}, ours: []step{remembers(2, acme, "ours")},
			revert: []string{"ours", "theirs"}, want: []string{lisbon}},
		{name: "the peer taught it and forgot it around our teaching", base: remembers(0, lisbon, "base"),
			theirs: []step{remembers(1, acme, "p1"), forgets(3, acme, "p2")}, ours: []step{remembers(2, acme, "ours")},
			revert: []string{"ours"}, merged: []string{lisbon, acme}, want: []string{lisbon}},
		{name: "the peer forgot it and was taught it again around our forgetting", base: remembers(0, acme, "base"),
			theirs: []step{forgets(1, acme, "p1"), remembers(3, acme, "p2")}, ours: []step{forgets(2, acme, "ours"), remembers(2, lisbon, "later")},
			revert: []string{"ours"}, merged: []string{lisbon}, want: []string{lisbon, acme}},
		{name: "an exchange learned on both lines, a fact of it taught by another message too", base: remembers(0, lisbon, "base"),
			theirs: []step{remembers(1, acme, "other"), remembers(2, "Pat drinks tea", "m2")}, ours: []step{remembers(3, acme, "m1")},
			revert: []string{"m1", "m2"}, want: []string{lisbon, acme}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh, clk := newClockedShard(t)
			base := c.base.commit(t, sh, clk)
			var theirs gitstore.Hash
			for _, s := range c.theirs {
				theirs = s.commit(t, sh, clk)
			}
			fork(t, sh, base, theirs)
			for _, s := range c.ours {
				s.commit(t, sh, clk)
			}
			clk.at(4)
			merge(t, sh, theirs)
			if c.merged != nil {
				wantFacts(t, sh, c.merged...)
			}
			clk.at(5)
			revertMessages(t, sh, c.revert...)
			wantFacts(t, sh, c.want...)
			if slices.Contains(c.want, acme) {
				if lines, err := sh.FactLines(memd.FactID(acme)); err != nil || len(lines) != 1 {
					t.Errorf("lines of %q: %+v, %v; want one", acme, lines, err)
				}
			}
		})
	}
}

// editCase rewrites a fact's case where it stands (its ID stays), as a
// person's edit through memd does.
func editCase(t *testing.T, sh *gitstore.Shard, text, to string) gitstore.Hash {
	t.Helper()
	id := memd.FactID(text)
	p := memd.Provenance{Op: memd.OpEdit, FactIDs: []string{id}, Replaces: id, SourceMessages: []string{"edit"}, LearnedBy: memd.LearnedPerson}
	return commitEdit(t, sh, provenance.Subject(memd.OpEdit, to), p, gitstore.Edit{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: id}, With: memd.Fact{Text: to}})
}

// An edit in place is undone, though the other line taught the fact
// again: it rewrote the fact, it did not teach it.
func TestRevert_AnEditIsUndoneThoughTheOtherLineTaughtTheFactAgain(t *testing.T) {
	sh, clk := newClockedShard(t)
	base := change(t, sh, memd.OpRemember, "Colour is green", "base")
	clk.at(1)
	change(t, sh, memd.OpForget, "Colour is green", "p1")
	clk.at(2)
	theirs := fork(t, sh, base, change(t, sh, memd.OpRemember, "Colour is green", "p2"))
	clk.at(3)
	edit := editCase(t, sh, "Colour is green", "COLOUR is green")
	clk.at(4)
	merge(t, sh, theirs)
	wantFacts(t, sh, "COLOUR is green")
	clk.at(5)
	if _, err := byAdmin.Revert(sh, edit); err != nil {
		t.Fatal(err)
	}
	wantFacts(t, sh, "Colour is green")
}

// Every commit in one second: what came after the edit is told by the
// history, not by the time (which would take our own older commits for
// another line's).
func TestRevert_CommitsOfOneSecondAreOrderedByTheirHistory(t *testing.T) {
	sh, _ := newClockedShard(t)
	change(t, sh, memd.OpRemember, "Colour is green", "a")
	base := change(t, sh, memd.OpRemember, "Office is in Lisbon", "f")
	theirs := fork(t, sh, base, change(t, sh, memd.OpRemember, "Pat drinks tea", "b"))
	edit := editCase(t, sh, "Colour is green", "COLOUR is green")
	change(t, sh, memd.OpRemember, "Pat drinks coffee", "o2")
	merge(t, sh, theirs)
	if _, err := byAdmin.Revert(sh, edit); err != nil {
		t.Fatal(err)
	}
	wantFacts(t, sh, "Colour is green", "Office is in Lisbon", "Pat drinks coffee", "Pat drinks tea")
}

// rememberDated teaches a fact dated as given.
func rememberDated(t *testing.T, sh *gitstore.Shard, text, date, msg string) gitstore.Hash {
	t.Helper()
	d, _ := memd.ParseDate(date)
	p := memd.Provenance{Op: memd.OpRemember, FactIDs: []string{memd.FactID(text)}, Tier: memd.TierProfile, SourceMessages: []string{msg}, LearnedBy: memd.LearnedLearner}
	return commitEdit(t, sh, provenance.Subject(memd.OpRemember, text), p, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: memd.TierProfile}})
}

// We were taught a fact and then told to forget it, by one message; the
// peer was taught it at another date. Undoing the message leaves the
// peer's line, and the dry run says what the revert then does.
func TestRevert_DryRunOfAMessageWhoseFactTheOtherLineTaughtAgrees(t *testing.T) {
	sh, clk := newClockedShard(t)
	base := change(t, sh, memd.OpRemember, "Office is in Lisbon", "base")
	clk.at(1)
	theirs := fork(t, sh, base, rememberDated(t, sh, "Vendor is Acme", "2026-10-02", "other"))
	clk.at(2)
	rememberDated(t, sh, "Vendor is Acme", "2026-10-01", "m")
	clk.at(3)
	change(t, sh, memd.OpForget, "Vendor is Acme", "m")
	clk.at(4)
	merge(t, sh, theirs)
	clk.at(5)
	changes := func(rvs []memd.Revert) string {
		var s []string
		for _, rv := range rvs {
			for _, ch := range rv.Changes {
				s = append(s, ch.Op+ch.Fact.Text+"@"+ch.Fact.Date.String())
			}
		}
		return strings.Join(s, " ")
	}
	dry := byAdmin
	dry.DryRun = true
	pre, err := dry.RevertMessages([]*gitstore.Shard{sh}, []string{"m"}, "")
	if err != nil {
		t.Fatal(err)
	}
	done := revertMessages(t, sh, "m")
	if changes(pre) != changes(done) {
		t.Errorf("the dry run said %q, the revert did %q", changes(pre), changes(done))
	}
	lines, err := sh.FactLines(memd.FactID("Vendor is Acme"))
	if err != nil || len(lines) != 1 || lines[0].Date.String() != "2026-10-02" {
		t.Errorf("lines of the fact: %+v, %v; want the peer's alone", lines, err)
	}
}

// Each daemon merged the other's line, then one merged the other's merge.
func TestRevert_AFactBothLinesTaughtStandsAfterCrossedMerges(t *testing.T) {
	for _, reverted := range []string{"ours", "theirs"} {
		t.Run(reverted, func(t *testing.T) {
			sh, clk := newClockedShard(t)
			base := change(t, sh, memd.OpRemember, "Office is in Lisbon", "base")
			clk.at(1)
			theirs := fork(t, sh, base, change(t, sh, memd.OpRemember, "Vendor is Acme", "theirs"))
			clk.at(2)
			ours := change(t, sh, memd.OpRemember, "Vendor is Acme", "ours")
			// The peer merges our line into its own.
			git(t, sh.Dir(), "reset", "-q", "--hard", theirs.String())
			clk.at(3)
			if _, err := sh.Integrate(ours, gitstore.IntegrateOptions{From: "us"}); err != nil {
				t.Fatal(err)
			}
			peerMerge, err := sh.Head()
			if err != nil {
				t.Fatal(err)
			}
			fork(t, sh, ours, peerMerge)
			merge(t, sh, theirs)
			clk.at(4)
			change(t, sh, memd.OpRemember, "Later", "later")
			clk.at(5)
			merge(t, sh, peerMerge)
			clk.at(6)
			revertMessages(t, sh, reverted)
			wantFacts(t, sh, "Later", "Office is in Lisbon", "Vendor is Acme")
		})
	}
}

// A person wrote the fact again on a line of their own after memd taught
// it: undoing memd's teaching takes memd's line, and the person's stays,
// as in the history without it.
func TestRevert_AFactWrittenAgainByHandKeepsThePersonsLine(t *testing.T) {
	sh, clk := newClockedShard(t)
	taught := rememberDated(t, sh, "Vendor is Acme", "2026-10-01", "m")
	clk.at(1)
	personAppends(t, sh, "profile: Acme again", map[string]string{"profile.md": "- (2026-10-05) Vendor is Acme"})
	clk.at(2)
	if _, err := byAdmin.Revert(sh, taught); err != nil {
		t.Fatal(err)
	}
	wantLines(t, sh, "Vendor is Acme", "profile.md@2026-10-05")
}

// personAppends appends a line to each file named (made if absent) and
// commits them with git, as a person does.
func personAppends(t *testing.T, sh *gitstore.Shard, msg string, lines map[string]string) gitstore.Hash {
	t.Helper()
	for path, line := range lines {
		full := filepath.Join(sh.Dir(), path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(full)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, append(b, line+"\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, sh.Dir(), "add", path)
	}
	git(t, sh.Dir(), "commit", "-q", "-m", msg)
	h, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// wantLines checks a fact's lines, each as file@date.
func wantLines(t *testing.T, sh *gitstore.Shard, text string, want ...string) {
	t.Helper()
	lines, err := sh.FactLines(memd.FactID(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.File+"@"+l.Date.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines of %q: %q, want %q", text, got, want)
	}
}

// A person's commit wrote a fact in the profile and in the log; the peer
// taught the same profile line, which the merge holds once. Without the
// person's commit the peer's line stands: the revert takes the log's
// alone, as its dry run says.
func TestRevert_AFactInTwoFilesKeepsTheLineAnotherLineWroteToo(t *testing.T) {
	sh, clk := newClockedShard(t)
	base := change(t, sh, memd.OpRemember, "Office is in Lisbon", "base")
	clk.at(1)
	theirs := fork(t, sh, base, change(t, sh, memd.OpRemember, "Vendor is Acme", "theirs"))
	clk.at(2)
	ours := personAppends(t, sh, "vendor, by hand", map[string]string{
		"profile.md":     "- (2026-10-01) Vendor is Acme",
		"log/2026-10.md": "- (2026-10-01) Vendor is Acme",
	})
	clk.at(3)
	merge(t, sh, theirs)
	clk.at(4)
	dry := byAdmin
	dry.DryRun = true
	pre, err := dry.Revert(sh, ours)
	if err != nil {
		t.Fatal(err)
	}
	done, err := byAdmin.Revert(sh, ours)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pre.Changes, done.Changes) {
		t.Errorf("the dry run said %+v, the revert did %+v", pre.Changes, done.Changes)
	}
	wantLines(t, sh, "Vendor is Acme", "profile.md@2026-10-01")
}

// An edit of a fact forgotten since, here or on the peer's line merged
// in, is not undone by putting the fact back: without the edit it is
// forgotten all the same.
func TestRevert_AnEditOfAFactForgottenSinceLeavesItForgotten(t *testing.T) {
	t.Run("here", func(t *testing.T) {
		sh, clk := newClockedShard(t)
		change(t, sh, memd.OpRemember, "Colour is green", "m0")
		clk.at(1)
		edit := editCase(t, sh, "Colour is green", "COLOUR is green")
		clk.at(2)
		change(t, sh, memd.OpForget, "Colour is green", "m2")
		clk.at(3)
		if _, err := byAdmin.Revert(sh, edit); err != nil {
			t.Fatal(err)
		}
		wantFacts(t, sh)
	})
	t.Run("by the peer", func(t *testing.T) {
		sh, clk := newClockedShard(t)
		base := change(t, sh, memd.OpRemember, "Colour is green", "base")
		clk.at(1)
		theirs := fork(t, sh, base, change(t, sh, memd.OpForget, "Colour is green", "p1"))
		clk.at(2)
		edit := editCase(t, sh, "Colour is green", "COLOUR is green")
		change(t, sh, memd.OpRemember, "Later", "later")
		clk.at(3)
		merge(t, sh, theirs)
		clk.at(4)
		if _, err := byAdmin.Revert(sh, edit); err != nil {
			t.Fatal(err)
		}
		wantFacts(t, sh, "Later")
	})
}

// bothLinesTaught makes a shard where "Office is in Lisbon" stood, the
// peer's line (message "theirs") and ours ("ours") each taught text, and
// ours merged the peer's, at minutes 0 to 3.
func bothLinesTaught(t *testing.T, text string) (*gitstore.Shard, *stepClock) {
	t.Helper()
	sh, clk := newClockedShard(t)
	base := change(t, sh, memd.OpRemember, "Office is in Lisbon", "base")
	clk.at(1)
	theirs := fork(t, sh, base, change(t, sh, memd.OpRemember, text, "theirs"))
	clk.at(2)
	change(t, sh, memd.OpRemember, text, "ours")
	clk.at(3)
	merge(t, sh, theirs)
	return sh, clk
}

// Both lines taught a fact, and a person edited it after the merge: the
// fact stands edited whichever teaching is undone (the edit rewrote what
// both taught).
func TestRevert_AFactBothLinesTaughtAndAPersonEditedStandsEdited(t *testing.T) {
	for _, reverted := range []string{"ours", "theirs"} {
		t.Run(reverted, func(t *testing.T) {
			sh, clk := bothLinesTaught(t, "Colour is green")
			clk.at(4)
			personRewrites(t, sh, "Colour is green", "COLOUR is green", "capitals, by hand")
			clk.at(5)
			revertMessages(t, sh, reverted)
			wantFacts(t, sh, "COLOUR is green", "Office is in Lisbon")
		})
	}
}

// We taught a fact and merged the peer's teaching of it; the peer then
// forgot it, and we merged that too. The peer's teaching is reached from
// HEAD through the first merge without passing its forgetting, but it
// comes before the forgetting: without ours, the fact is gone.
func TestRevert_AChangeTheOtherLineMadeAgainLaterDoesNotCount(t *testing.T) {
	sh, clk := newClockedShard(t)
	base := change(t, sh, memd.OpRemember, "Office is in Lisbon", "base")
	clk.at(1)
	taught := fork(t, sh, base, change(t, sh, memd.OpRemember, "Vendor is Acme", "theirs"))
	clk.at(2)
	ours := personAppends(t, sh, "vendor in the log, by hand", map[string]string{"log/2026-10.md": "- (2026-10-01) Vendor is Acme"})
	clk.at(3)
	merge(t, sh, taught)
	merged, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	clk.at(4)
	git(t, sh.Dir(), "reset", "-q", "--hard", taught.String())
	forgot := change(t, sh, memd.OpForget, "Vendor is Acme", "p2")
	git(t, sh.Dir(), "reset", "-q", "--hard", merged.String())
	clk.at(5)
	merge(t, sh, forgot)
	clk.at(6)
	if _, err := byAdmin.Revert(sh, ours); err != nil {
		t.Fatal(err)
	}
	wantFacts(t, sh, "Office is in Lisbon")
}

// dryThenReal runs a revert as a dry run and then for real, and fails the
// test where the dry run said other than the revert did.
func dryThenReal(t *testing.T, revert func(provenance.Reverter) ([]memd.Revert, error)) []memd.Revert {
	t.Helper()
	dry := byAdmin
	dry.DryRun = true
	said, err := revert(dry)
	if err != nil {
		t.Fatal(err)
	}
	did, err := revert(byAdmin)
	if err != nil {
		t.Fatal(err)
	}
	changes := func(rvs []memd.Revert) (all []memd.FactChange) {
		for _, rv := range rvs {
			all = append(all, rv.Changes...)
		}
		return all
	}
	if !slices.Equal(changes(said), changes(did)) {
		t.Errorf("the dry run said %+v, the revert did %+v", changes(said), changes(did))
	}
	return did
}

func byCommit(sh *gitstore.Shard, h gitstore.Hash) func(provenance.Reverter) ([]memd.Revert, error) {
	return func(r provenance.Reverter) ([]memd.Revert, error) {
		rv, err := r.Revert(sh, h)
		return []memd.Revert{rv}, err
	}
}

// A forgetting undone, where a later one took the fact away again after
// it was taught again: without the first, the later forgetting takes the
// old line all the same.
func TestRevert_AForgettingStaysWhereALaterOneTookTheFactAgain(t *testing.T) {
	sh := newShard(t)
	change(t, sh, memd.OpRemember, "Vendor is Acme", "m0")
	forgot := change(t, sh, memd.OpForget, "Vendor is Acme", "m1")
	change(t, sh, memd.OpRemember, "Vendor is Acme", "m2")
	change(t, sh, memd.OpForget, "Vendor is Acme", "m3")
	rememberDated(t, sh, "Vendor is Acme", "2026-10-05", "m4")
	dryThenReal(t, byCommit(sh, forgot))
	wantLines(t, sh, "Vendor is Acme", "profile.md@2026-10-05")
}

// Both lines taught a fact (the merge holds its line once) and a person
// wrote it in the log later: undoing either teaching leaves the other's
// line and the person's.
func TestRevert_TheOtherTeachingsLineStaysThoughAPersonWroteTheFactAfter(t *testing.T) {
	for _, reverted := range []string{"theirs", "ours"} {
		t.Run(reverted, func(t *testing.T) {
			sh, clk := bothLinesTaught(t, "Vendor is Acme")
			clk.at(4)
			personAppends(t, sh, "vendor in the log, by hand", map[string]string{"log/2026-10.md": "- (2026-10-01) Vendor is Acme"})
			clk.at(5)
			dryThenReal(t, func(r provenance.Reverter) ([]memd.Revert, error) {
				return r.RevertMessages([]*gitstore.Shard{sh}, []string{reverted}, "")
			})
			wantLines(t, sh, "Vendor is Acme", "profile.md@2026-10-01", "log/2026-10.md@2026-10-01")
		})
	}
}

// personReplaces replaces old by new once in each file named and commits
// that with git, as a person does.
func personReplaces(t *testing.T, sh *gitstore.Shard, msg, old, new string, paths ...string) gitstore.Hash {
	t.Helper()
	for _, path := range paths {
		full := filepath.Join(sh.Dir(), path)
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, sh.Dir(), "commit", "-qam", msg)
	h, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A person rewrote a fact's case on both its lines, and later deleted the
// log's: undoing the edit puts the profile's line back as it was, and the
// log's stays deleted.
func TestRevert_AnEditOfTwoLinesIsUndoneWhereItsLineIsLeft(t *testing.T) {
	sh := newShard(t)
	change(t, sh, memd.OpRemember, "Colour is green", "m")
	personAppends(t, sh, "colour in the log, by hand", map[string]string{"log/2026-10.md": "- (2026-10-01) Colour is green"})
	edit := personReplaces(t, sh, "capitals, by hand", "Colour is green", "COLOUR is green", "profile.md", "log/2026-10.md")
	personReplaces(t, sh, "drop the log's line", "- (2026-10-01) COLOUR is green\n", "", "log/2026-10.md")
	dryThenReal(t, byCommit(sh, edit))
	wantFacts(t, sh, "Colour is green")
	wantLines(t, sh, "Colour is green", "profile.md@2026-10-01")
}

// A forgetting undone where the fact was taught again since at another
// date: without the forgetting the fact stood when it was taught again,
// which added nothing, so the line goes back as it was and the later
// line goes.
func TestRevert_AForgettingUndoneTakesBackTheLineTaughtSince(t *testing.T) {
	sh := newShard(t)
	rememberDated(t, sh, "Vendor is Acme", "2026-10-01", "m1")
	forgot := change(t, sh, memd.OpForget, "Vendor is Acme", "m0")
	rememberDated(t, sh, "Vendor is Acme", "2026-10-03", "m2")
	dryThenReal(t, byCommit(sh, forgot))
	wantLines(t, sh, "Vendor is Acme", "profile.md@2026-10-01")
}

// The peer forgot a fact around our forgetting of it, and after the merge
// it was taught again at another date: the line we took the peer took
// too, so undoing our forgetting leaves the new line alone, as the history
// without it has it (the merge would have taken the old line all the same).
func TestRevert_AForgettingUndoneLeavesALineThePeerTookToo(t *testing.T) {
	sh, clk := newClockedShard(t)
	base := rememberDated(t, sh, "Vendor is Acme", "2026-10-01", "base")
	clk.at(1)
	theirs := fork(t, sh, base, change(t, sh, memd.OpForget, "Vendor is Acme", "p1"))
	clk.at(2)
	change(t, sh, memd.OpForget, "Vendor is Acme", "ours")
	change(t, sh, memd.OpRemember, "Office is in Lisbon", "later")
	clk.at(3)
	merge(t, sh, theirs)
	clk.at(4)
	rememberDated(t, sh, "Vendor is Acme", "2026-10-03", "again")
	clk.at(5)
	dryThenReal(t, func(r provenance.Reverter) ([]memd.Revert, error) {
		return r.RevertMessages([]*gitstore.Shard{sh}, []string{"ours"}, "")
	})
	wantLines(t, sh, "Vendor is Acme", "profile.md@2026-10-03")
}

// A person's line written by hand after a forgetting is theirs, whatever
// memd held: undoing the forgetting keeps it beside the line put back.
func TestRevert_AForgettingUndoneKeepsALineAPersonWroteSince(t *testing.T) {
	sh := newShard(t)
	personAppends(t, sh, "vendor in the log, by hand", map[string]string{"log/2026-10.md": "- (2026-10-01) Vendor is Acme"})
	forgot := change(t, sh, memd.OpForget, "Vendor is Acme", "m")
	personAppends(t, sh, "vendor in the profile, by hand", map[string]string{"profile.md": "- (2026-10-03) Vendor is Acme"})
	dryThenReal(t, byCommit(sh, forgot))
	wantLines(t, sh, "Vendor is Acme", "profile.md@2026-10-03", "log/2026-10.md@2026-10-01")
}

// A message taught a fact and forgot it, with the line a person wrote of
// it too; another message taught it again after. Undoing the first
// message leaves the person's line, which stood when the fact was taught
// again: that teaching added nothing, and its line goes.
func TestRevert_AMessageUndoneLeavesAPersonsLineAndNotALaterTeachings(t *testing.T) {
	sh := newShard(t)
	rememberDated(t, sh, "Vendor is Acme", "2026-10-01", "m")
	personAppends(t, sh, "vendor in the log, by hand", map[string]string{"log/2026-10.md": "- (2026-10-01) Vendor is Acme"})
	change(t, sh, memd.OpForget, "Vendor is Acme", "m")
	rememberDated(t, sh, "Vendor is Acme", "2026-10-03", "m2")
	dryThenReal(t, func(r provenance.Reverter) ([]memd.Revert, error) {
		return r.RevertMessages([]*gitstore.Shard{sh}, []string{"m"}, "")
	})
	wantLines(t, sh, "Vendor is Acme", "log/2026-10.md@2026-10-01")
}
