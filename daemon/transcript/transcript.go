// Package transcript keeps the text of the chat messages memd learned
// from, so a reviewer reads what was said behind a fact and not only its
// message IDs. Texts come from the exchanges the learner accepts and from
// excerpts agents send with an explicit remember. A text is kept while a
// fact cites its message; a sweep drops the rest, and an admin may purge
// one exchange's text at any time.
package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/memd/memd"
)

// MaxExcerpt bounds the excerpt an explicit remember may carry, in
// characters.
const MaxExcerpt = 2000

// record is one kept message as stored. Siblings are the IDs of the other
// messages of its exchange, so a purge of one drops the exchange whole.
type record struct {
	memd.Quote
	Siblings []string `json:"siblings,omitempty"`
}

// Store is the kept messages, in a buntdb file of their own.
type Store struct {
	db  *buntdb.DB
	now func() time.Time
}

const prefix = "msg:"

// key is where a message is kept: by ID, then chat, since message IDs are
// the caller's and two chats may reuse one.
func key(id, chat string) string { return prefix + id + "\x00" + chat }

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

// Keep stores the text of an exchange's messages.
func (s *Store) Keep(ex memd.Exchange) error {
	ids := ex.MessageIDs()
	when := ex.Time
	if when.IsZero() {
		when = s.now()
	}
	return s.put(func(put func(record)) {
		for _, m := range ex.Messages {
			put(record{Quote: memd.Quote{ID: m.ID, Role: m.Role, Text: m.Text, Agent: ex.Agent, User: ex.User, Chat: ex.Chat, Time: when.UTC()}, Siblings: ids})
		}
	})
}

// KeepExcerpt stores what an agent quoted with an explicit remember, under
// each message its source names. A message whose own text is kept already
// keeps it.
func (s *Store) KeepExcerpt(agent string, src memd.Source, text string) error {
	if text == "" {
		return nil
	}
	if err := CheckExcerpt(src, text); err != nil {
		return err
	}
	return s.put(func(put func(record)) {
		for _, id := range src.Messages {
			put(record{Quote: memd.Quote{ID: id, Text: text, Agent: agent, Chat: src.Chat, Time: s.now().UTC(), Excerpt: true}, Siblings: src.Messages})
		}
	})
}

// CheckExcerpt validates an excerpt: at most MaxExcerpt characters, valid
// UTF-8, and a source message to keep it under.
func CheckExcerpt(src memd.Source, text string) error {
	if text == "" {
		return nil
	}
	if len(src.Messages) == 0 {
		return memd.Errorf(memd.EINVALID, "source.excerpt needs source.messages: the excerpt is kept under the messages it quotes")
	}
	if n := len([]rune(text)); n > MaxExcerpt {
		return memd.Errorf(memd.EINVALID, "source.excerpt is %d characters; at most %d", n, MaxExcerpt)
	}
	if !strings.ContainsFunc(text, func(r rune) bool { return r != ' ' && r != '\n' && r != '\t' }) {
		return memd.Errorf(memd.EINVALID, "source.excerpt is blank")
	}
	return nil
}

func (s *Store) put(each func(put func(record))) error {
	err := s.db.Update(func(tx *buntdb.Tx) error {
		var failed error
		each(func(r record) {
			if failed != nil {
				return
			}
			k := key(r.ID, r.Chat)
			if r.Excerpt {
				if v, err := tx.Get(k); err == nil && !isExcerpt(v) {
					return // the message itself is kept
				}
			}
			b, err := json.Marshal(r)
			if err != nil {
				failed = err
				return
			}
			_, _, failed = tx.Set(k, string(b), nil)
		})
		return failed
	})
	if err != nil {
		return fmt.Errorf("keep message text: %w", err)
	}
	return nil
}

func isExcerpt(v string) bool {
	var r record
	return json.Unmarshal([]byte(v), &r) == nil && r.Excerpt
}

// Quotes returns the kept messages with these IDs, in the order asked. A
// chat, when given, picks among messages of several chats with one ID.
func (s *Store) Quotes(ids []string, chat string) ([]memd.Quote, error) {
	var out []memd.Quote
	err := s.db.View(func(tx *buntdb.Tx) error {
		for _, id := range ids {
			var found []memd.Quote
			err := ascendPrefix(tx, prefix+id+"\x00", func(k, v string) bool {
				var r record
				if json.Unmarshal([]byte(v), &r) == nil {
					found = append(found, r.Quote)
				}
				return true
			})
			if err != nil {
				return err
			}
			for _, q := range found {
				if chat == "" || q.Chat == chat || len(found) == 1 {
					out = append(out, q)
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

// ascendPrefix calls fn with every key that starts with p, in order.
func ascendPrefix(tx *buntdb.Tx, p string, fn func(k, v string) bool) error {
	return tx.AscendGreaterOrEqual("", p, func(k, v string) bool {
		return strings.HasPrefix(k, p) && fn(k, v)
	})
}

// Purge drops the text of a message and of every message of its exchange,
// and returns the IDs dropped. ENOTFOUND when no text is kept for it.
func (s *Store) Purge(id string) ([]string, error) {
	var dropped []string
	err := s.db.Update(func(tx *buntdb.Tx) error {
		var keys []string
		seen := make(map[string]bool)
		var visit func(id string) error
		visit = func(id string) error {
			if seen[id] {
				return nil
			}
			seen[id] = true
			var siblings []string
			err := ascendPrefix(tx, prefix+id+"\x00", func(k, v string) bool {
				keys = append(keys, k)
				var r record
				if json.Unmarshal([]byte(v), &r) == nil {
					siblings = append(siblings, r.Siblings...)
				}
				return true
			})
			if err != nil {
				return err
			}
			for _, sib := range siblings {
				if err := visit(sib); err != nil {
					return err
				}
			}
			return nil
		}
		if err := visit(id); err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.Delete(k); err != nil && !errors.Is(err, buntdb.ErrNotFound) {
				return err
			}
			id, _, _ := strings.Cut(strings.TrimPrefix(k, prefix), "\x00")
			dropped = append(dropped, id)
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

// Sweep drops the messages no fact cites that are older than grace, and,
// when keep is not zero, every message older than keep. cited reports
// whether a fact at HEAD cites a message. It returns how many it dropped.
func (s *Store) Sweep(cited func(id string) bool, grace, keep time.Duration) (int, error) {
	now := s.now()
	var drop []string
	err := s.db.View(func(tx *buntdb.Tx) error {
		return ascendPrefix(tx, prefix, func(k, v string) bool {
			var r record
			if json.Unmarshal([]byte(v), &r) != nil {
				drop = append(drop, k)
				return true
			}
			age := now.Sub(r.Time)
			if keep > 0 && age > keep || age > grace && !cited(r.ID) {
				drop = append(drop, k)
			}
			return true
		})
	})
	if err != nil || len(drop) == 0 {
		return 0, err
	}
	err = s.db.Update(func(tx *buntdb.Tx) error {
		for _, k := range drop {
			if _, err := tx.Delete(k); err != nil && !errors.Is(err, buntdb.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep kept messages: %w", err)
	}
	return len(drop), nil
}

// Count returns how many messages are kept.
func (s *Store) Count() (int, error) {
	n := 0
	err := s.db.View(func(tx *buntdb.Tx) error {
		return ascendPrefix(tx, prefix, func(k, v string) bool { n++; return true })
	})
	return n, err
}
