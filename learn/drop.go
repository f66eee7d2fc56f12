package learn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/buntdb"

	"github.com/memd/memd"
)

// reverted holds the messages a revert by message took back, by message
// ID, each with the chats it was named in ("" for any chat): the learner
// must not learn from them again, whatever of its work still holds them.
type reverted map[string][]string

// has reports whether message id of chat was reverted; a message of no
// known chat (a turn stored before turns kept their chat) is taken as
// reverted when its ID was in any chat.
func (r reverted) has(chat, id string) bool {
	chats, ok := r[id]
	return ok && (chat == "" || slices.Contains(chats, "") || slices.Contains(chats, chat))
}

func (r reverted) any(chat string, ids []string) (string, bool) {
	for _, id := range ids {
		if r.has(chat, id) {
			return id, true
		}
	}
	return "", false
}

// DropMessages keeps the learner from learning again from messages a
// revert took back (in chat, or in any chat when it is ""), of agent's
// work or, for "" (an admin), every agent's. What it still holds of them
// goes: an exchange waiting to be learned is skipped, the turns gathering
// for an episode or in one not yet written lose theirs (an episode left
// with none is skipped), the evidence synthesis keeps drops theirs, and a
// pass whose answer read them asks again. Work under way when it is called
// is waited for, and work under way after it writes nothing of them, so a
// revert by message that walks history once this returns finds every
// commit the learner made of them.
//
// It returns how many pieces of waiting work it changed.
func (l *Learner) DropMessages(agent, chat string, ids []string) (int, error) {
	l.dropMu.Lock()
	defer l.dropMu.Unlock()
	if l.dropped == nil {
		l.dropped = make(reverted)
	}
	for _, id := range ids {
		if !slices.Contains(l.dropped[id], chat) {
			l.dropped[id] = append(l.dropped[id], chat)
		}
	}
	mine := func(a string) bool { return agent == "" || a == agent }
	changed := 0
	err := l.db.Update(func(tx *buntdb.Tx) error {
		var jobs []*job
		var bad error
		for _, state := range []string{memd.ExchangePending, memd.ExchangeFailed} {
			err := tx.AscendEqual(stateIndex, stateDoc(state), func(k, v string) bool {
				j, err := decodeJob(k, v)
				if err != nil {
					bad = err
					return false
				}
				if mine(j.Agent) {
					jobs = append(jobs, j)
				}
				return true
			})
			if err == nil {
				err = bad
			}
			if err != nil {
				return err
			}
		}
		for _, j := range jobs {
			if !l.dropFrom(j) {
				continue
			}
			changed++
			if err := putJob(tx, j); err != nil {
				return err
			}
		}
		n, err := l.dropTurns(tx, mine)
		changed += n
		if err != nil {
			return err
		}
		n, err = l.dropEvidenceIn(tx, mine)
		changed += n
		return err
	})
	if err != nil {
		return changed, fmt.Errorf("drop the learner's work from reverted messages: %w", err)
	}
	return changed, nil
}

// dropFrom takes the reverted messages out of a job, and reports whether
// it changed it: an exchange holding one is skipped; an episode loses the
// turns holding one, and is asked again (skipped if none is left); a
// synthesis pass whose answer read one asks again. The caller holds
// dropMu.
func (l *Learner) dropFrom(j *job) bool {
	switch j.Kind {
	case kindExchange:
		if j.Exchange == nil {
			return false
		}
		id, ok := l.dropped.any(j.Exchange.Chat, j.Exchange.MessageIDs())
		if !ok {
			return false
		}
		j.State, j.Reason, j.Plan = memd.ExchangeSkipped, revertedReason(id), nil
		return true
	case kindEpisode:
		kept := slices.DeleteFunc(slices.Clone(j.Turns), func(t Turn) bool { _, ok := l.dropped.any(t.Chat, t.Messages); return ok })
		if len(kept) == len(j.Turns) {
			return false
		}
		j.Turns, j.Plan = kept, nil
		if len(kept) == 0 {
			j.State, j.Reason = memd.ExchangeSkipped, "every turn of it was from a reverted message"
		}
		return true
	case kindSynthesis:
		if j.Plan == nil || !slices.ContainsFunc(j.Plan.Changes, func(c Change) bool { return l.citesDropped(c) }) {
			return false
		}
		j.Plan = nil
		return true
	}
	return false
}

// citesDropped reports whether a synthesis change rests on a reverted
// message. The caller holds dropMu.
func (l *Learner) citesDropped(c Change) bool {
	return slices.ContainsFunc(c.Evidence, func(id string) bool { return l.dropped.has(c.Chats[id], id) })
}

func revertedReason(id string) string {
	return fmt.Sprintf("message %s was reverted before this was learned; nothing of it was written", memd.Shorten(id, 60))
}

// dropTurns takes the reverted messages' turns out of the agents' episode
// buffers. The caller holds dropMu.
func (l *Learner) dropTurns(tx *buntdb.Tx, mine func(agent string) bool) (int, error) {
	buffers := make(map[string][]Turn)
	err := tx.AscendKeys(turnsPrefix+"*", func(k, v string) bool {
		if agent := strings.TrimPrefix(k, turnsPrefix); mine(agent) {
			var turns []Turn
			json.Unmarshal([]byte(v), &turns)
			buffers[k] = turns
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	changed := 0
	for k, turns := range buffers {
		kept := slices.DeleteFunc(slices.Clone(turns), func(t Turn) bool { _, ok := l.dropped.any(t.Chat, t.Messages); return ok })
		if len(kept) == len(turns) {
			continue
		}
		changed++
		b, _ := json.Marshal(kept)
		if _, _, err := tx.Set(k, string(b), nil); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// dropEvidenceIn takes the exchanges holding a reverted message out of
// synthesis's evidence. The caller holds dropMu.
func (l *Learner) dropEvidenceIn(tx *buntdb.Tx, mine func(agent string) bool) (int, error) {
	var keys []string
	err := tx.AscendKeys(evidencePrefix+"*", func(k, v string) bool {
		agent, _, _ := strings.Cut(strings.TrimPrefix(k, evidencePrefix), ":")
		var e evidenceExchange
		if !mine(agent) || json.Unmarshal([]byte(v), &e) != nil {
			return true
		}
		if slices.ContainsFunc(e.Messages, func(m evidenceMessage) bool { return l.dropped.has(e.Chat, m.ID) }) {
			keys = append(keys, k)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if _, err := tx.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}
