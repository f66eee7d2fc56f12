package gitstore

import (
	"testing"
	"time"

	"github.com/memd/memd"
)

// A shard that gives up its parsed files when idle reads them again for
// the next write and lookup, and loses nothing: the fact written before is
// still one fact, not written twice.
func TestShard_IdleStateIsReadAgain(t *testing.T) {
	_, sh := aliceShard(t)
	date, _ := memd.ParseDate("2026-11-03")
	add := func(text string) Result {
		t.Helper()
		res, err := sh.Apply(Change{Author: Signature{Name: "alice", Email: "alice@agents.memd"}, Message: "remember",
			Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: date, Tier: memd.TierLog}}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	add("Booked a flight to Lisbon")
	id := memd.FactID("Booked a flight to Lisbon")

	// A background catch-up of the working tree after a commit may hold the
	// shard's lock a moment, and a drop gives way to it: try until it ends.
	dropIdle := func() {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); sh.cur.Load() != nil && time.Now().Before(deadline); {
			if sh.dropIfIdle(time.Now().Add(idleAfter)) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	dropIdle()
	if sh.cur.Load() != nil {
		t.Fatal("an idle shard kept its state")
	}
	if f, err := sh.Fact(id); err != nil || f.Text != "Booked a flight to Lisbon" {
		t.Fatalf("after the state was given up, Fact = %v, %v", f, err)
	}
	dropIdle()
	if again := add("Booked a flight to Lisbon"); !again.Commit.IsZero() {
		t.Errorf("after the state was given up, the same fact was written again in %s", again.Commit)
	}
	dropIdle()
	add("Paid the hotel")
	found, _, err := sh.Lookup([]string{id, memd.FactID("Paid the hotel")})
	if err != nil || len(found) != 2 {
		t.Fatalf("Lookup after the state was given up: %v, %v", found, err)
	}
	// A shard used a moment ago keeps it.
	sh.dropIfIdle(time.Now())
	if sh.cur.Load() == nil {
		t.Error("a shard in use gave up its state")
	}
}

// A state given up and read again once the store has closed is refused:
// reading it again catches up with main, which may commit a restore.
func TestShard_NoStateReadAgainAfterClose(t *testing.T) {
	s, sh := aliceShard(t)
	applyAsAlice(t, sh, rememberEdit("Booked a flight to Lisbon", memd.TierLog, "2026-11-03"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sh.cur.Store(nil) // given up while idle
	sh.mu.Lock()
	_, err := sh.lockedState()
	sh.mu.Unlock()
	if memd.ErrorCode(err) != memd.EUNAVAILABLE {
		t.Errorf("reading the state again after close: got %v, want unavailable", err)
	}
}
