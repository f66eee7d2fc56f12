package daemon

import (
	"context"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/transcript"
)

// How the kept message texts are swept: a text no commit cites is dropped
// once memd has kept it for messageGrace and the learner no longer needs
// it, checked a minute after start (so a daemon restarted often still
// sweeps) and every sweepEvery.
const (
	messageGrace = 7 * 24 * time.Hour
	firstSweep   = time.Minute
	sweepEvery   = time.Hour
)

// sweepMessages sweeps the kept message texts soon after start and then
// every sweepEvery, until ctx ends.
func (s *Service) sweepMessages(ctx context.Context) {
	t := time.NewTimer(firstSweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(sweepEvery)
		if n, err := s.SweepMessages(); err != nil {
			s.Logger.Warn("sweeping kept message texts", "err", err)
		} else if n > 0 {
			s.Logger.Info("dropped kept message texts", "messages", n)
		}
	}
}

// SweepMessages drops the message texts no commit cites, kept for more
// than a week, that the learner is not still working from; and, with
// KeepMessages set, every text kept longer than that.
func (s *Service) SweepMessages() (int, error) {
	waiting := func(agent, id string) bool { return false }
	if s.Learner != nil {
		var err error
		if waiting, err = s.Learner.Waiting(); err != nil {
			return 0, err
		}
		// What synthesis keeps of exchanges is held to the same limit.
		if s.KeepMessages > 0 {
			if err := s.Learner.SweepEvidence(s.Now().Add(-s.KeepMessages)); err != nil {
				return 0, err
			}
		}
	}
	return s.Messages.Sweep(messageGrace, s.KeepMessages, waiting)
}

// PurgeMessage drops the kept text of a message and of the rest of its
// exchange. The commits citing it stay as they are.
func (s *Service) PurgeMessage(ctx context.Context, req memd.PurgeRequest) (memd.PurgeResult, error) {
	if req.Message == "" {
		return memd.PurgeResult{}, memd.Errorf(memd.EINVALID, "name the message whose text to purge")
	}
	// The text synthesis keeps of learned exchanges goes too.
	if s.Learner != nil {
		if err := s.Learner.PurgeEvidence(req.Message, req.Chat); err != nil {
			return memd.PurgeResult{}, err
		}
	}
	dropped, err := s.Messages.Purge(req.Message, req.Chat)
	if err != nil {
		return memd.PurgeResult{}, err
	}
	s.Logger.Info("purged kept message texts", "message", req.Message, "chat", req.Chat, "messages", len(dropped))
	return memd.PurgeResult{Messages: dropped}, nil
}

// quote adds to a trace the kept text of the messages its chain was
// learned from: what memd recorded, when it made each commit, of the
// messages of the agent it made it for. A commit memd did not make quotes
// nothing, whatever its trailers or author say.
func (s *Service) quote(tr *memd.Trace) error {
	qs, err := s.Messages.Quotes(tr.Chain)
	if err != nil {
		return err
	}
	tr.Messages = qs
	return nil
}

// keep stores the excerpt a caller sent with a remember or edit.
func (s *Service) keepExcerpt(c memd.Caller, src memd.Source) error {
	return s.Messages.KeepExcerpt(author(c).Name, src)
}

// cite records what a commit memd made for a caller was learned from: the
// caller's own messages, the only ones a trace of it will quote.
func (s *Service) cite(c memd.Caller, commit string, src memd.Source) {
	if commit == "" || len(src.Messages) == 0 {
		return
	}
	s.Messages.Cite(commit, transcript.Citation{Agent: author(c).Name, Chat: src.Chat, Messages: src.Messages})
}
