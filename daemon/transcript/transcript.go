// Package transcript keeps the text of the chat messages memd learned
// from, so a reviewer reads what was said behind a fact and not only its
// message IDs.
//
// Texts come from the exchanges the learner accepts and from excerpts
// agents send with an explicit remember, and are kept per agent: an agent
// can neither overwrite nor read another's by reusing its message IDs.
// When memd commits a fact from an agent's messages it records a citation,
// commit → (agent, chat, messages); a trace quotes only what the citations
// of its commits name, so a commit memd did not make (a push, whatever its
// author line says) quotes nothing. A text is kept while a commit memd made
// cites it; one no commit cites goes after a grace period, and an admin
// may purge one exchange's text, or set a retention, at any time.
package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/memd/memd"
)

// MaxExcerpt bounds the excerpt an explicit remember may carry, in
// characters.
const MaxExcerpt = 2000

// record is one kept message as stored.
type record struct {
	memd.Quote
	// Siblings are the IDs of the other messages of its exchange (same
	// agent and chat), so a purge of one drops the exchange whole.
	Siblings []string `json:"siblings,omitempty"`
	// Stored is when memd stored it, by its own clock: what the grace and
	// the retention count from (the quote's Time is the caller's word).
	Stored time.Time `json:"stored"`
	// Cited is set once a commit memd made cites it.
	Cited bool `json:"cited,omitempty"`
}

// Citation is what one commit was learned from: messages of one agent's
// chat (any of the agent's chats when Chat is empty, as an episode's).
type Citation struct {
	Agent    string   `json:"agent"`
	Chat     string   `json:"chat,omitempty"`
	Messages []string `json:"messages"`
}

// Store is the kept messages, in a buntdb file of their own.
type Store struct {
	db  *buntdb.DB
	now func() time.Time
}

const (
	msgPrefix  = "msg:"
	citePrefix = "cite:"
	sep        = "\x00"
)

// msgKey is where a message is kept: by agent, then ID, then chat, since
// message IDs are the caller's and two chats may reuse one.
func msgKey(agent, id, chat string) string { return msgPrefix + agent + sep + id + sep + chat }

// Open opens (or creates) the store at path. Every write is durable before
// it returns.
func Open(path string, now func() time.Time) (*Store, error) {
	db, err := buntdb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open kept messages %s: %w", path, err)
	}
	db.SetConfig(buntdb.Config{SyncPolicy: buntdb.Always, AutoShrinkPercentage: 100, AutoShrinkMinSize: 8 << 20})
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Keep stores the text of an exchange's messages under its agent. A message
// kept already keeps its text: what was said does not change.
func (s *Store) Keep(ex memd.Exchange) error {
	ids := ex.MessageIDs()
	now := s.now().UTC()
	var recs []record
	for _, m := range ex.Messages {
		recs = append(recs, record{Quote: memd.Quote{ID: m.ID, Role: m.Role, Text: m.Text, Agent: ex.Agent, User: ex.User, Chat: ex.Chat, Time: ex.Time.UTC()},
			Siblings: ids, Stored: now})
	}
	return s.put(recs)
}

// KeepExcerpt stores what an agent quoted with an explicit remember, under
// each message its source names, unless that message's text is kept.
func (s *Store) KeepExcerpt(agent string, src memd.Source) error {
	if src.Excerpt == "" {
		return nil
	}
	if err := CheckExcerpt(src); err != nil {
		return err
	}
	now := s.now().UTC()
	var recs []record
	for _, id := range src.Messages {
		recs = append(recs, record{Quote: memd.Quote{ID: id, Text: src.Excerpt, Agent: agent, Chat: src.Chat, Time: now, Excerpt: true},
			Siblings: src.Messages, Stored: now})
	}
	return s.put(recs)
}

// CheckExcerpt validates a source's excerpt: at most MaxExcerpt
// characters, not blank, and messages to keep it under.
func CheckExcerpt(src memd.Source) error {
	if src.Excerpt == "" {
		return nil
	}
	if len(src.Messages) == 0 {
		return memd.Errorf(memd.EINVALID, "source.excerpt needs source.messages: the excerpt is kept under the messages it quotes")
	}
	if n := len([]rune(src.Excerpt)); n > MaxExcerpt {
		return memd.Errorf(memd.EINVALID, "source.excerpt is %d characters; at most %d", n, MaxExcerpt)
	}
	if strings.TrimSpace(src.Excerpt) == "" {
		return memd.Errorf(memd.EINVALID, "source.excerpt is blank")
	}
	return nil
}

func (s *Store) put(recs []record) error {
	err := s.db.Update(func(tx *buntdb.Tx) error {
		for _, r := range recs {
			k := msgKey(r.Agent, r.ID, r.Chat)
			if _, err := tx.Get(k); err == nil {
				continue // kept already: never overwritten
			} else if !errors.Is(err, buntdb.ErrNotFound) {
				return err
			}
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if _, _, err := tx.Set(k, string(b), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep message text: %w", err)
	}
	return nil
}

// Cite records that memd's commit was made from these messages, and marks
// their texts cited.
func (s *Store) Cite(commit string, cs ...Citation) error {
	cs = slices.DeleteFunc(slices.Clone(cs), func(c Citation) bool { return c.Agent == "" || len(c.Messages) == 0 })
	if commit == "" || len(cs) == 0 {
		return nil
	}
	b, err := json.Marshal(cs)
	if err != nil {
		return err
	}
	err = s.db.Update(func(tx *buntdb.Tx) error {
		if _, _, err := tx.Set(citePrefix+commit, string(b), nil); err != nil {
			return err
		}
		for _, c := range cs {
			for _, id := range c.Messages {
				err := eachRecord(tx, c.Agent, id, c.Chat, func(k string, r *record) error {
					if r.Cited {
						return nil
					}
					r.Cited = true
					return setRecord(tx, k, r)
				})
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record what commit %s cites: %w", commit, err)
	}
	return nil
}

// eachRecord calls fn with every kept message of agent with id, in chat
// (in any of the agent's chats when chat is empty).
func eachRecord(tx *buntdb.Tx, agent, id, chat string, fn func(k string, r *record) error) error {
	var keys []string
	var recs []*record
	p := msgPrefix + agent + sep + id + sep
	if chat != "" {
		p = msgKey(agent, id, chat)
	}
	err := tx.AscendGreaterOrEqual("", p, func(k, v string) bool {
		if !strings.HasPrefix(k, p) {
			return false
		}
		if chat != "" && k != p {
			return true
		}
		var r record
		if json.Unmarshal([]byte(v), &r) == nil {
			keys, recs = append(keys, k), append(recs, &r)
		}
		return true
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if err := fn(k, recs[i]); err != nil {
			return err
		}
	}
	return nil
}

func setRecord(tx *buntdb.Tx, k string, r *record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, _, err = tx.Set(k, string(b), nil)
	return err
}

// Quotes returns the kept texts the citations of these commits name, in
// the order of the commits and their messages, each once.
func (s *Store) Quotes(commits []string) ([]memd.Quote, error) {
	var out []memd.Quote
	seen := make(map[string]bool)
	err := s.db.View(func(tx *buntdb.Tx) error {
		for _, c := range commits {
			v, err := tx.Get(citePrefix + c)
			if errors.Is(err, buntdb.ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			var cs []Citation
			if json.Unmarshal([]byte(v), &cs) != nil {
				continue
			}
			for _, ct := range cs {
				for _, id := range ct.Messages {
					err := eachRecord(tx, ct.Agent, id, ct.Chat, func(k string, r *record) error {
						if !seen[k] {
							seen[k] = true
							out = append(out, r.Quote)
						}
						return nil
					})
					if err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read kept messages: %w", err)
	}
	return out, nil
}

// Purge drops the kept text of message id — of every agent and chat that
// holds one, or only in chat when it is given — together with the other
// messages of its exchange, and returns the IDs dropped. ENOTFOUND when no
// text is kept for it.
func (s *Store) Purge(id, chat string) ([]string, error) {
	var dropped []string
	err := s.db.Update(func(tx *buntdb.Tx) error {
		type exchange struct{ agent, chat string }
		siblings := make(map[exchange][]string)
		err := tx.AscendGreaterOrEqual("", msgPrefix, func(k, v string) bool {
			if !strings.HasPrefix(k, msgPrefix) {
				return false
			}
			parts := strings.Split(strings.TrimPrefix(k, msgPrefix), sep)
			if len(parts) != 3 || parts[1] != id || chat != "" && parts[2] != chat {
				return true
			}
			var r record
			json.Unmarshal([]byte(v), &r)
			x := exchange{parts[0], parts[2]}
			siblings[x] = append(append(siblings[x], id), r.Siblings...)
			return true
		})
		if err != nil {
			return err
		}
		for x, ids := range siblings {
			for _, m := range ids {
				k := msgKey(x.agent, m, x.chat)
				if _, err := tx.Delete(k); err == nil {
					dropped = append(dropped, m)
				} else if !errors.Is(err, buntdb.ErrNotFound) {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("purge message text: %w", err)
	}
	if len(dropped) == 0 {
		return nil, memd.Errorf(memd.ENOTFOUND, "no text is kept for message %q", id)
	}
	return dropped, nil
}

// Sweep drops, in one step, the texts no commit cites that memd stored
// more than grace ago and that waiting does not name (the learner's
// unfinished work), and, when keep is not zero, every text stored more
// than keep ago. It returns how many it dropped.
func (s *Store) Sweep(grace, keep time.Duration, waiting func(agent, id string) bool) (int, error) {
	now := s.now()
	n := 0
	err := s.db.Update(func(tx *buntdb.Tx) error {
		var drop []string
		err := tx.AscendGreaterOrEqual("", msgPrefix, func(k, v string) bool {
			if !strings.HasPrefix(k, msgPrefix) {
				return false
			}
			var r record
			if json.Unmarshal([]byte(v), &r) != nil {
				drop = append(drop, k)
				return true
			}
			age := now.Sub(r.Stored)
			if keep > 0 && age > keep || age > grace && !r.Cited && !waiting(r.Agent, r.ID) {
				drop = append(drop, k)
			}
			return true
		})
		if err != nil {
			return err
		}
		for _, k := range drop {
			if _, err := tx.Delete(k); err != nil && !errors.Is(err, buntdb.ErrNotFound) {
				return err
			}
		}
		n = len(drop)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep kept messages: %w", err)
	}
	return n, nil
}

// Count returns how many messages are kept.
func (s *Store) Count() (int, error) {
	n := 0
	err := s.db.View(func(tx *buntdb.Tx) error {
		return tx.AscendGreaterOrEqual("", msgPrefix, func(k, v string) bool {
			if !strings.HasPrefix(k, msgPrefix) {
				return false
			}
			n++
			return true
		})
	})
	return n, err
}
