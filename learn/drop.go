package learn

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tidwall/buntdb"

	"github.com/memd/memd"
)

// drop is one revert's hold on a message: the agent whose work it takes
// the message out of ("" for every agent's, an admin's revert), the chat
// it was named in ("" for any), and the last job queued when it was made.
// Work queued after it is not held to it: a message sent again is new.
type drop struct {
	agent, chat string
	upTo        uint64
}

// reverted holds the messages reverts took back, by message ID, and the
// exchanges of synthesis's evidence dropped for them, by agent and job.
type reverted struct {
	messages map[string][]drop
	evidence map[string]map[uint64]bool
}

// add takes in what another drop holds.
func (r *reverted) add(o reverted) {
	if r.messages == nil {
		r.messages, r.evidence = make(map[string][]drop), make(map[string]map[uint64]bool)
	}
	for id, ds := range o.messages {
		r.messages[id] = append(r.messages[id], ds...)
	}
	for agent, seqs := range o.evidence {
		if r.evidence[agent] == nil {
			r.evidence[agent] = make(map[uint64]bool)
		}
		for seq := range seqs {
			r.evidence[agent][seq] = true
		}
	}
}

// forgetBefore forgets the drops no job a worker may still hold can meet:
// those made before the oldest pending job was queued (a job a drop ended
// is kept from being stored again by save, and from being applied by
// work, whatever is held here), and, with none pending, the evidence
// noted. So reverts in a loop do not grow what is held.
func (r *reverted) forgetBefore(oldest uint64) {
	for id, ds := range r.messages {
		ds = slices.DeleteFunc(ds, func(d drop) bool { return d.upTo < oldest })
		if len(ds) == 0 {
			delete(r.messages, id)
		} else {
			r.messages[id] = ds
		}
	}
	if oldest == math.MaxUint64 {
		clear(r.evidence)
	}
}

// has reports whether message id of chat, in agent's job seq (0 for work
// queued before any revert, as the episode buffers are), was taken back. A
// message of no known chat (a turn stored before turns kept their chat)
// is taken as held by a drop in any chat.
func (r reverted) has(agent, chat, id string, seq uint64) bool {
	return slices.ContainsFunc(r.messages[id], func(d drop) bool {
		return (d.agent == "" || d.agent == agent) && (d.chat == "" || chat == "" || d.chat == chat) && seq <= d.upTo
	})
}

// first returns the first of ids that was taken back.
func (r reverted) first(agent, chat string, ids []string, seq uint64) (string, bool) {
	for _, id := range ids {
		if r.has(agent, chat, id, seq) {
			return id, true
		}
	}
	return "", false
}

// DropMessages keeps the learner from learning again from messages a
// revert took back (in chat, or in any chat when it is ""), in agent's
// work or, for "" (an admin), every agent's. What it holds of them goes:
// an exchange waiting to be learned is skipped; the turns gathering for an
// episode, or in one not yet written, lose theirs (an episode left with
// none is skipped); the exchanges synthesis keeps as evidence go; and the
// changes of a pass answered already that rest on one are refused. Work
// under way when it is called is waited for, and work under way after it
// writes nothing of them, so a revert by message that walks history once
// this returns finds every commit the learner made of them. Work queued
// after it is not held to it.
//
// It returns how many pieces of waiting work held the messages; with dry,
// it only counts them.
func (l *Learner) DropMessages(agent, chat string, ids []string, dry bool) (int, error) {
	l.dropMu.Lock()
	defer l.dropMu.Unlock()
	mine := func(a string) bool { return agent == "" || a == agent }
	changed := 0
	err := l.db.Update(func(tx *buntdb.Tx) error {
		v, err := tx.Get(seqKey)
		if err != nil && !errors.Is(err, buntdb.ErrNotFound) {
			return err
		}
		upTo, _ := strconv.ParseUint(v, 10, 64)
		this := reverted{messages: make(map[string][]drop, len(ids)), evidence: make(map[string]map[uint64]bool)}
		for _, id := range ids {
			this.messages[id] = []drop{{agent: agent, chat: chat, upTo: upTo}}
		}
		// The evidence first: a pass that read an exchange dropped from
		// it is held to the drop too.
		n, err := dropHeldEvidence(tx, this, mine, dry)
		changed += n
		if err != nil {
			return err
		}
		var jobs []*job
		oldest := uint64(math.MaxUint64) // the oldest job a worker may hold
		for _, state := range []string{memd.ExchangePending, memd.ExchangeFailed} {
			all, err := jobsIn(tx, state)
			if err != nil {
				return err
			}
			for _, j := range all {
				if state == memd.ExchangePending {
					oldest = min(oldest, j.Seq)
				}
			}
			jobs = append(jobs, slices.DeleteFunc(all, func(j *job) bool { return !mine(j.Agent) })...)
		}
		for _, j := range jobs {
			if !dropFrom(j, this) {
				continue
			}
			changed++
			if dry {
				continue
			}
			if err := putJob(tx, j); err != nil {
				return err
			}
		}
		n, err = dropTurns(tx, this, mine, dry)
		changed += n
		if err != nil || dry {
			return err
		}
		l.dropped.add(this)
		l.dropped.forgetBefore(oldest)
		return nil
	})
	if err != nil {
		return changed, fmt.Errorf("drop the learner's work from reverted messages: %w", err)
	}
	return changed, nil
}

// dropFrom takes the messages r holds out of a job, and reports whether
// it changed it: an exchange holding one is skipped; an episode loses the
// turns holding one, and is asked again (skipped if none is left); the
// changes of a pass that read an exchange dropped from its evidence, or
// that rest on such a message, are refused.
func dropFrom(j *job, r reverted) bool {
	switch j.Kind {
	case kindExchange:
		if j.Exchange == nil {
			return false
		}
		id, ok := r.first(j.Agent, j.Exchange.Chat, j.Exchange.MessageIDs(), j.Seq)
		if !ok {
			return false
		}
		j.State, j.Reason, j.Plan = memd.ExchangeSkipped, revertedReason(id), nil
		return true
	case kindEpisode:
		kept := slices.DeleteFunc(slices.Clone(j.Turns), func(t Turn) bool {
			_, ok := r.first(j.Agent, t.Chat, t.Messages, j.Seq)
			return ok
		})
		if len(kept) == len(j.Turns) {
			return false
		}
		j.Turns, j.Plan = kept, nil
		if len(kept) == 0 {
			j.State, j.Reason = memd.ExchangeSkipped, "every turn of it was from a reverted message"
		}
		return true
	case kindSynthesis:
		if j.Plan == nil {
			return false
		}
		read := slices.ContainsFunc(j.Plan.Evidence, func(seq uint64) bool { return r.evidence[j.Agent][seq] })
		changed := false
		for i := range j.Plan.Changes {
			c := &j.Plan.Changes[i]
			if c.Verdict != VerdictApproved || c.Commit != "" {
				continue
			}
			if read {
				c.Verdict, c.Reason = VerdictRefused, "the pass read an exchange of a message reverted since"
				changed = true
				continue
			}
			for _, id := range c.Evidence {
				if r.has(j.Agent, c.Chats[id], id, j.Seq) {
					c.Verdict, c.Reason = VerdictRefused, fmt.Sprintf("it rests on message %s, which was reverted", memd.Shorten(id, 60))
					changed = true
					break
				}
			}
		}
		return changed
	}
	return false
}

func revertedReason(id string) string {
	return fmt.Sprintf("message %s was reverted before this was learned; nothing of it was written", memd.Shorten(id, 60))
}

// dropTurns takes the turns holding a message r holds out of the agents'
// episode buffers.
func dropTurns(tx *buntdb.Tx, r reverted, mine func(agent string) bool, dry bool) (int, error) {
	buffers, err := turnBuffers(tx)
	if err != nil {
		return 0, err
	}
	changed := 0
	for agent, turns := range buffers {
		if !mine(agent) {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(turns), func(t Turn) bool {
			_, ok := r.first(agent, t.Chat, t.Messages, 0)
			return ok
		})
		if len(kept) == len(turns) {
			continue
		}
		changed++
		if dry {
			continue
		}
		b, _ := json.Marshal(kept)
		if _, _, err := tx.Set(turnsPrefix+agent, string(b), nil); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// dropHeldEvidence takes the exchanges holding a message r holds out of
// synthesis's evidence, and notes them in r.
func dropHeldEvidence(tx *buntdb.Tx, r reverted, mine func(agent string) bool, dry bool) (int, error) {
	keys, err := evidenceWhere(tx, func(agent string, seq uint64, e evidenceExchange) bool {
		return mine(agent) && slices.ContainsFunc(e.Messages, func(m evidenceMessage) bool { return r.has(agent, e.Chat, m.ID, seq) })
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		agent, seq := evidenceOwner(k)
		if r.evidence[agent] == nil {
			r.evidence[agent] = make(map[uint64]bool)
		}
		r.evidence[agent][seq] = true
		if dry {
			continue
		}
		if _, err := tx.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// errEnded refuses to store a job's copy over the job a revert ended
// meanwhile (see save).
var errEnded = errors.New("a revert ended this job meanwhile")
