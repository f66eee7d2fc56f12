package daemon

import (
	"context"
	"slices"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Trace returns the provenance of a fact.
func (s *Service) Trace(ctx context.Context, id memd.ShardID, factID string) (memd.Trace, error) {
	if !memd.ValidFactID(factID) {
		// Recall's hits include passages of notes, whose IDs are not facts'.
		if d, ok := s.Index.Engine().Get(id, factID); ok && d.Note != "" {
			return memd.Trace{}, memd.Errorf(memd.EINVALID, "%s is a passage of note %s, not a fact: read the note (read_note, memd notes read %s)", factID, d.Note, d.Note)
		}
		return memd.Trace{}, memd.Errorf(memd.EINVALID, "fact ID %q: want 12 lowercase hex digits", factID)
	}
	sh, err := s.shard(id)
	if err != nil {
		return memd.Trace{}, err
	}
	tr, err := provenance.Trace(sh, factID)
	if err != nil {
		return tr, err
	}
	return tr, s.quote(&tr)
}

const (
	defaultLogLimit = 50
	maxLogLimit     = 1000
)

// Log lists a shard's commits, newest first, with provenance and fact diffs.
func (s *Service) Log(ctx context.Context, q memd.LogQuery) ([]memd.Commit, error) {
	page, err := newPager(q.Limit, q.Offset, defaultLogLimit, maxLogLimit)
	if err != nil {
		return nil, err
	}
	if err := memd.CheckOp(q.Op); err != nil {
		return nil, err
	}
	sh, head, err := s.shardAtHead(q.Shard)
	if err != nil {
		return nil, err
	}
	out := []memd.Commit{}
	err = sh.Walk(head, func(c gitstore.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := provenance.Parse(c.Message)
		if q.Message != "" && !slices.Contains(p.SourceMessages, q.Message) ||
			q.Agent != "" && c.Author.Name != q.Agent ||
			q.Op != "" && p.Op != q.Op {
			return nil
		}
		if !page.take() {
			return nil
		}
		commit, err := provenance.DescribeCommit(sh, c)
		if err != nil {
			return err
		}
		out = append(out, commit)
		return page.kept()
	})
	return out, err
}

// pager pages a walk over history: it passes over the first offset
// entries and stops the walk once the page holds limit.
type pager struct{ skip, left int }

func newPager(limit, offset, byDefault, most int) (pager, error) {
	switch {
	case limit == 0:
		limit = byDefault
	case limit < 0 || limit > most:
		return pager{}, memd.Errorf(memd.EINVALID, "limit must be between 1 and %d (0 or none: %d)", most, byDefault)
	}
	if offset < 0 {
		return pager{}, memd.Errorf(memd.EINVALID, "offset must be 0 or more")
	}
	return pager{skip: offset, left: limit}, nil
}

// take says whether the walk's next entry belongs on the page.
func (p *pager) take() bool {
	if p.skip > 0 {
		p.skip--
		return false
	}
	return true
}

// kept counts an entry put on the page, and stops the walk when it is full.
func (p *pager) kept() error {
	if p.left--; p.left == 0 {
		return gitstore.ErrStop
	}
	return nil
}

// Revert undoes one commit, or every commit citing a source message.
func (s *Service) Revert(ctx context.Context, req memd.RevertRequest) (memd.RevertResult, error) {
	c := callerOf(ctx)
	r := provenance.Reverter{Author: author(c), LearnedBy: learnedBy(c), DryRun: req.DryRun}
	msgs := req.Messages
	if req.Message != "" {
		msgs = append([]string{req.Message}, msgs...)
	}
	switch {
	case len(msgs) > 0 && req.Commit != "":
		return memd.RevertResult{}, memd.Errorf(memd.EINVALID, "revert either a commit (with its shard) or messages, not both")
	case len(msgs) > 0:
		if err := provenance.CheckSource(memd.Source{Messages: msgs, Chat: req.Chat}); err != nil {
			return memd.RevertResult{}, err
		}
		ids := slices.Compact(slices.SortedFunc(slices.Values(req.Shards), func(a, b memd.ShardID) int { return strings.Compare(a.String(), b.String()) }))
		if len(ids) == 0 {
			var err error
			if ids, err = s.Store.Shards(); err != nil {
				return memd.RevertResult{}, err
			}
		}
		var shards []*gitstore.Shard
		for _, id := range ids {
			sh, err := s.shard(id)
			if err != nil {
				return memd.RevertResult{}, err
			}
			shards = append(shards, sh)
		}
		if req.Confirmed != nil && !req.DryRun {
			if err := stillAsConfirmed(r, shards, msgs, req.Chat, req.Confirmed); err != nil {
				return memd.RevertResult{}, err
			}
		}
		// The learner's work and the proposals first, so that nothing of
		// the messages is written after the walk, or learned again later;
		// a dry run counts and lists them.
		agent := c.Agent
		if c.Admin {
			agent = "" // every agent's
		}
		var dropped int
		if s.Learner != nil {
			var err error
			if dropped, err = s.Learner.DropMessages(agent, req.Chat, msgs, req.DryRun); err != nil {
				return memd.RevertResult{}, err
			}
		}
		rejected, err := s.rejectCiting(ctx, shards, agent, msgs, req.Chat, req.DryRun)
		if err != nil {
			return memd.RevertResult{Rejected: rejected, LearningDropped: dropped}, err
		}
		reverts, err := r.RevertMessages(shards, msgs, req.Chat)
		if memd.ErrorCode(err) == memd.ENOTFOUND && (dropped > 0 || len(rejected) > 0) {
			// Nothing was committed of them on main; what waited is gone.
			reverts, err = []memd.Revert{}, nil
		}
		return memd.RevertResult{Reverts: reverts, Rejected: rejected, LearningDropped: dropped}, err
	case req.Commit != "":
		sh, err := s.shard(req.Shard)
		if err != nil {
			return memd.RevertResult{}, err
		}
		h, err := sh.ResolveCommit(req.Commit)
		if err != nil {
			return memd.RevertResult{}, err
		}
		rv, err := r.Revert(sh, h)
		if err != nil {
			return memd.RevertResult{}, err
		}
		return memd.RevertResult{Reverts: []memd.Revert{rv}}, nil
	}
	return memd.RevertResult{}, memd.Errorf(memd.EINVALID, "name a commit (with its shard) or a source message to revert")
}

// stillAsConfirmed refuses a revert by message whose dry run, now, would
// revert other commits than those the caller confirmed: a commit citing
// the messages made since the preview would be undone unseen.
func stillAsConfirmed(r provenance.Reverter, shards []*gitstore.Shard, msgs []string, chat string, confirmed []string) error {
	for _, c := range confirmed {
		if len(c) != 40 || strings.Trim(c, "0123456789abcdef") != "" {
			return memd.Errorf(memd.EINVALID, "confirmed: %q is not a commit as a dry run names it (40 hex digits, lower case)", memd.Shorten(c, 50))
		}
	}
	r.DryRun = true
	now, err := r.RevertMessages(shards, msgs, chat)
	if memd.ErrorCode(err) == memd.ENOTFOUND {
		err = nil // what the learner or a proposal holds of them, alone
	}
	if err != nil {
		return err
	}
	var would []string
	for _, rv := range now {
		if len(rv.Changes) > 0 || len(rv.Notes) > 0 {
			would = append(would, rv.Reverted)
		}
	}
	slices.Sort(would)
	would = slices.Compact(would)
	want := slices.Compact(slices.Sorted(slices.Values(confirmed)))
	if !slices.Equal(would, want) {
		return memd.Errorf(memd.ECONFLICT, "what reverting %s changes is no longer what was confirmed (%d commit(s) now, %d then): preview it again", strings.Join(msgs, ", "), len(would), len(want))
	}
	return nil
}

// rejectCiting rejects the proposals waiting for review in the given
// shards that cite any of msgs (in chat, when it is named), agent's own
// (every one for ""), as a person's rejection does: a revert by message
// leaves nothing of them for a later accept to bring onto main. With dry,
// it lists them.
func (s *Service) rejectCiting(ctx context.Context, shards []*gitstore.Shard, agent string, msgs []string, chat string, dry bool) ([]memd.Reviewed, error) {
	s.reviews.deciding.Lock()
	defer s.reviews.deciding.Unlock()
	var out []memd.Reviewed
	for _, sh := range shards {
		if !sh.HasProposals() {
			continue
		}
		list, err := s.refreshProposals(sh)
		if err != nil {
			return out, err
		}
		var chosen []gitstore.Commit
		for _, c := range list {
			if (agent == "" || c.Author.Name == agent) && provenance.Cites(provenance.Parse(c.Message), msgs, chat) {
				chosen = append(chosen, c)
			}
		}
		if len(chosen) == 0 {
			continue
		}
		if dry {
			for _, c := range chosen {
				out = append(out, memd.Reviewed{ID: proposalID(c), Shard: sh.ID(), Subject: c.Subject(), Proposal: c.Hash.String()})
			}
			continue
		}
		done, err := s.reviewIn(ctx, sh, chosen, memd.ReviewReject, callerOf(ctx).Name())
		out = append(out, done...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
