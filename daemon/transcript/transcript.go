// Package transcript keeps the text of the chat messages memd learned
// from, so a reviewer reads what was said behind a fact and not only its
// message IDs.
//
// Texts come from the exchanges the learner accepts and from excerpts
// agents send with an explicit remember, and are kept per agent and chat:
// an agent can neither overwrite nor read another's by reusing message
// IDs. When memd commits a fact for an agent from messages whose text it
// keeps, it records the commit on each of them; a trace quotes a message
// for a commit only when the message records that commit, so a commit
// memd did not make (a push, whatever its author line or trailers say)
// quotes nothing. A text some commit cites is kept; one no commit cites
// goes after a grace period; an admin may purge one exchange's text, or
// set a retention.
//
// The texts live on disk (bbolt), not in memory: a year of a team's chats
// is far larger than the rest of memd.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

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
	// CitedBy are the commits memd made from it.
	CitedBy []string `json:"cited_by,omitempty"`
}

// Citation is what one commit memd made was learned from: messages of
// one agent in one chat (or in no named chat, when Chat is empty).
type Citation struct {
	Agent    string
	Chat     string
	Messages []string
}

// Store is the kept messages, in a bbolt file of their own.
type Store struct {
	db  *bolt.DB
	now func() time.Time

	// Errors, when set, hears of citations that could not be written.
	Errors func(error)

	mu      sync.Mutex
	pending map[string][]Citation // citations not yet written, by commit
	writing sync.Mutex            // held from taking the pending citations to their write
	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	closing sync.Once
}

var bucket = []byte("messages")

// citeDelay is how long citations gather before one write stores them:
// every remember cites, and one fsync each would cap writes.
const citeDelay = 50 * time.Millisecond

// key is where a message is kept: by agent, then ID, then chat, since
// message IDs are the caller's and two chats may reuse one.
func key(agent, id, chat string) []byte { return []byte(agent + "\x00" + id + "\x00" + chat) }

// Open opens (or creates) the store at path. A text is on disk before Keep
// returns; citations are written in batches a few times a second, so a
// crash may lose the quotes (never the facts) of the last commits.
func Open(path string, now func() time.Time) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("open kept messages %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		db.Close()
		return nil, fmt.Errorf("open kept messages %s: %w", path, err)
	}
	if now == nil {
		now = time.Now
	}
	s := &Store{db: db, now: now, pending: make(map[string][]Citation),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go s.writeCitations()
	return s, nil
}

// Close writes the citations still pending and closes the store.
func (s *Store) Close() error {
	var err error
	s.closing.Do(func() {
		close(s.stop)
		<-s.stopped
		err = s.flush()
		if cerr := s.db.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// Keep stores the text of an exchange's messages under its agent and chat.
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

// put stores records. A message kept already keeps its text — what was
// said does not change — except that the message itself replaces an
// excerpt quoting it.
func (s *Store) put(recs []record) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for _, r := range recs {
			k := key(r.Agent, r.ID, r.Chat)
			if had, ok := get(b, k); ok {
				if r.Excerpt || !had.Excerpt {
					continue
				}
				r.CitedBy = had.CitedBy
			}
			if err := set(b, k, &r); err != nil {
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

func get(b *bolt.Bucket, k []byte) (record, bool) {
	var r record
	v := b.Get(k)
	return r, v != nil && json.Unmarshal(v, &r) == nil
}

func set(b *bolt.Bucket, k []byte, r *record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// Cite records that memd's commit was made from these messages. It is
// written within a moment, with the citations of other commits.
func (s *Store) Cite(commit string, cs ...Citation) {
	cs = slices.DeleteFunc(slices.Clone(cs), func(c Citation) bool { return c.Agent == "" || len(c.Messages) == 0 })
	if commit == "" || len(cs) == 0 {
		return
	}
	s.mu.Lock()
	s.pending[commit] = append(s.pending[commit], cs...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Recite records that commit next cites what commit old cited, of the
// agent's messages ids, in whatever chat: a proposal made again on a newer
// main, or accepted into it, quotes what it quoted before.
func (s *Store) Recite(agent string, ids []string, old, next string) error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.cite(func(b *bolt.Bucket, cite func(k []byte, commit string) error) error {
		cur := b.Cursor()
		var keys [][]byte
		for _, id := range ids {
			prefix := []byte(agent + "\x00" + id + "\x00")
			for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
				var r record
				if json.Unmarshal(v, &r) == nil && slices.Contains(r.CitedBy, old) && !slices.Contains(r.CitedBy, next) {
					keys = append(keys, slices.Clone(k))
				}
			}
		}
		for _, k := range keys {
			if err := cite(k, next); err != nil {
				return err
			}
		}
		return nil
	})
}

// cite runs fn in a transaction, with a function that adds a commit to
// those citing the message of key k, if it is kept and not cited by it
// already.
func (s *Store) cite(fn func(b *bolt.Bucket, cite func(k []byte, commit string) error) error) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		return fn(b, func(k []byte, commit string) error {
			r, ok := get(b, k)
			if !ok || slices.Contains(r.CitedBy, commit) {
				return nil
			}
			r.CitedBy = append(r.CitedBy, commit)
			return set(b, k, &r)
		})
	})
	if err != nil {
		return fmt.Errorf("record what commits cite: %w", err)
	}
	return nil
}

func (s *Store) writeCitations() {
	defer close(s.stopped)
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		select {
		case <-s.stop:
			return
		case <-time.After(citeDelay):
		}
		if err := s.flush(); err != nil && s.Errors != nil {
			s.Errors(err)
		}
	}
}

// flush writes the pending citations: each commit onto the messages it
// cites whose text is kept.
func (s *Store) flush() error {
	// One flush at a time: a reader that flushes first waits for a write
	// already under way, and so sees it.
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	pending := s.pending
	s.pending = make(map[string][]Citation)
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	return s.cite(func(_ *bolt.Bucket, cite func(k []byte, commit string) error) error {
		for commit, cs := range pending {
			for _, c := range cs {
				for _, id := range c.Messages {
					if err := cite(key(c.Agent, id, c.Chat), commit); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

// Quotes returns the kept texts of the messages these commits were made
// from: for each commit, the messages its trailers name, of the agent who
// made it (in any of its chats: an edit names one chat for several), that
// record the commit. Each once, in order.
func (s *Store) Quotes(commits []memd.Commit) ([]memd.Quote, error) {
	if err := s.flush(); err != nil {
		return nil, err
	}
	var out []memd.Quote
	seen := make(map[string]bool)
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		cur := b.Cursor()
		for _, c := range commits {
			for _, id := range c.Provenance.SourceMessages {
				prefix := []byte(c.Author.Name + "\x00" + id + "\x00")
				for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
					var r record
					if json.Unmarshal(v, &r) != nil || !slices.Contains(r.CitedBy, c.Hash) || seen[string(k)] {
						continue
					}
					seen[string(k)] = true
					out = append(out, r.Quote)
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
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		var drop [][]byte
		err := b.ForEach(func(k, v []byte) error {
			parts := strings.Split(string(k), "\x00")
			if len(parts) != 3 || parts[1] != id || chat != "" && parts[2] != chat {
				return nil
			}
			var r record
			json.Unmarshal(v, &r)
			for _, m := range append([]string{id}, r.Siblings...) {
				drop = append(drop, key(parts[0], m, parts[2]))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range drop {
			if b.Get(k) == nil {
				continue
			}
			if err := b.Delete(k); err != nil {
				return err
			}
			dropped = append(dropped, strings.Split(string(k), "\x00")[1])
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
	if err := s.flush(); err != nil {
		return 0, err
	}
	now := s.now()
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		var drop [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var r record
			if json.Unmarshal(v, &r) != nil {
				drop = append(drop, slices.Clone(k))
				return nil
			}
			age := now.Sub(r.Stored)
			if keep > 0 && age > keep || age > grace && len(r.CitedBy) == 0 && !waiting(r.Agent, r.ID) {
				drop = append(drop, slices.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range drop {
			if err := b.Delete(k); err != nil {
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
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucket).Stats().KeyN
		return nil
	})
	if err != nil && !errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return 0, err
	}
	return n, err
}
