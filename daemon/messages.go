package daemon

import (
	"context"
	"slices"
	"time"

	"github.com/memd/memd"
)

// How the kept message texts are swept: a text no fact cites is dropped
// after messageGrace (the learner may still be working from it, or retry
// it), checked every sweepEvery.
const (
	messageGrace = 7 * 24 * time.Hour
	sweepEvery   = time.Hour
)

// sweepMessages drops the message texts no fact cites any more, and those
// older than KeepMessages when set, until ctx ends.
func (s *Service) sweepMessages(ctx context.Context) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := s.SweepMessages(); err != nil {
			s.Logger.Warn("sweeping kept message texts", "err", err)
		} else if n > 0 {
			s.Logger.Info("dropped message texts no fact cites", "messages", n)
		}
	}
}

// SweepMessages drops the message texts no fact cites (after a grace of
// a week) and, with KeepMessages set, those older than it. It sweeps only
// when the index knows every fact's source; otherwise it drops nothing but
// what KeepMessages says.
func (s *Service) SweepMessages() (int, error) {
	cited := make(map[string]bool)
	complete := s.Index.Backlog() == 0 && s.Index.Search().EachMessage(func(id string) { cited[id] = true })
	grace := messageGrace
	if !complete {
		grace = 1<<63 - 1
	}
	return s.Messages.Sweep(func(id string) bool { return cited[id] }, grace, s.KeepMessages)
}

// PurgeMessage drops the kept text of a message and of the rest of its
// exchange. The commits citing it stay as they are.
func (s *Service) PurgeMessage(ctx context.Context, id string) (memd.PurgeResult, error) {
	if id == "" {
		return memd.PurgeResult{}, memd.Errorf(memd.EINVALID, "name the message whose text to purge")
	}
	dropped, err := s.Messages.Purge(id)
	if err != nil {
		return memd.PurgeResult{}, err
	}
	s.Logger.Info("purged kept message texts", "message", id, "messages", len(dropped))
	return memd.PurgeResult{Messages: dropped}, nil
}

// quote adds to a trace the text of the messages its chain cites. A text
// is shown for a commit only when it was said to the agent who made the
// commit or one of the versions it rests on, so citing another agent's
// message ID reads nothing; an admin reads every text.
func (s *Service) quote(c memd.Caller, tr *memd.Trace) error {
	type key struct{ id, chat string }
	have := make(map[key]bool)
	for i, commit := range tr.Chain {
		p := commit.Provenance
		if len(p.SourceMessages) == 0 {
			continue
		}
		qs, err := s.Messages.Quotes(p.SourceMessages, p.SourceChat)
		if err != nil {
			return err
		}
		told := []string{commit.Author.Name}
		for _, older := range tr.Chain[i+1:] {
			told = append(told, older.Author.Name)
		}
		for _, q := range qs {
			k := key{q.ID, q.Chat}
			if have[k] || !c.Admin && !slices.Contains(told, q.Agent) {
				continue
			}
			have[k] = true
			tr.Messages = append(tr.Messages, q)
		}
	}
	return nil
}

// keepExcerpt stores the excerpt an agent sent with a remember or edit.
func (s *Service) keepExcerpt(c memd.Caller, src memd.Source) error {
	if src.Excerpt == "" {
		return nil
	}
	name := c.Agent
	if c.Admin {
		name = author(c).Name
	}
	return s.Messages.KeepExcerpt(name, src, src.Excerpt)
}
