package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/learn"
	"github.com/memd/memd/provenance"
)

// reviews is what memd remembers of each shard's proposals between looks,
// to tell a person's `git merge proposed` from memd's own work.
type reviews struct {
	mu       sync.Mutex
	seen     map[memd.ShardID]seenProposals
	accepted int // through memd, or by a person's merge memd saw; kept in file
	pending  map[memd.ShardID]int
	counting sync.Mutex            // held from reading a shard's proposals to counting them
	busy     map[memd.ShardID]bool // a rebuild is on its way
	stopped  bool                  // the daemon is stopping: start no rebuild
	rejected map[memd.ShardID]rejectedSet
	file     string     // where accepted is kept across restarts
	deciding sync.Mutex // held by a review
	merging  sync.Mutex // held while looking for proposals a person merged
}

type rejectedSet struct {
	head    gitstore.Hash
	commits map[gitstore.Hash]bool
}

type seenProposals struct {
	main gitstore.Hash
	ids  map[string]bool
}

// proposalID names a proposal across rebuilds: its author and message stay
// when its commit is made again on a newer main.
func proposalID(c gitstore.Commit) string {
	sum := sha256.Sum256([]byte(c.Author.Name + "\x00" + c.Message))
	return hex.EncodeToString(sum[:6])
}

// SetReview turns review mode on or off for an agent.
func (s *Service) SetReview(ctx context.Context, agent string, on bool) (memd.Agent, error) {
	return s.Registry.SetReview(agent, on)
}

// Proposals lists the proposals of a shard, or of every shard that has
// any, oldest first.
func (s *Service) Proposals(ctx context.Context, shard memd.ShardID) ([]memd.Proposal, error) {
	ids, err := s.proposalShards(shard)
	if err != nil {
		return nil, err
	}
	out := []memd.Proposal{}
	for _, id := range ids {
		sh, list, err := s.proposalsIn(id)
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			pr := memd.Proposal{ID: proposalID(c)}
			if pr.Commit, err = provenance.DescribeCommit(sh, c); err != nil {
				return nil, err
			}
			if pr.Messages, err = s.Messages.Quotes([]memd.Commit{pr.Commit}); err != nil {
				return nil, err
			}
			out = append(out, pr)
		}
	}
	return out, nil
}

// proposalShards returns the shard asked for, or every shard with a branch
// proposed.
func (s *Service) proposalShards(shard memd.ShardID) ([]memd.ShardID, error) {
	if !shard.IsZero() {
		if _, err := s.shard(shard); err != nil {
			return nil, err
		}
		return []memd.ShardID{shard}, nil
	}
	all, err := s.Store.Shards()
	if err != nil {
		return nil, err
	}
	var out []memd.ShardID
	for _, id := range all {
		sh, err := s.Store.Shard(id)
		if err == nil && sh.HasProposals() {
			out = append(out, id)
		}
	}
	return out, nil
}

// proposalsIn returns a shard and its proposals, refreshed.
func (s *Service) proposalsIn(id memd.ShardID) (*gitstore.Shard, []gitstore.Commit, error) {
	sh, err := s.Store.Shard(id)
	if err != nil {
		return nil, nil, err
	}
	list, err := s.refreshProposals(sh)
	return sh, list, err
}

// refreshProposals returns a shard's proposals, first rebuilding them on
// main when main has moved since they were made, and noting those a
// person's git merge took into main.
func (s *Service) refreshProposals(sh *gitstore.Shard) ([]gitstore.Commit, error) {
	if !sh.HasProposals() {
		s.countPending(sh) // none: the last may have gone since the count
		return nil, nil
	}
	main, list, err := sh.Proposals()
	if err != nil {
		return nil, err
	}
	s.noteMerged(sh, main, list)
	// Only a model's changes are proposals. A commit a person dropped from
	// main is not one, and neither is a proposal rejected just before a
	// crash, still on the branch as it was (the very commit the record
	// names).
	rejected, err := s.rejectedCommits(sh)
	if err != nil {
		return nil, err
	}
	drop := make(map[string]bool)
	for _, c := range list {
		if rejected[c.Hash] || !modelMade(c) {
			drop[proposalID(c)] = true
		}
	}
	onTop := len(list) > 0 && (main.IsZero() && len(list[0].Parents) == 0 || len(list[0].Parents) == 1 && list[0].Parents[0] == main)
	if len(drop) == 0 && onTop {
		s.countPending(sh)
		return list, nil
	}
	if err := s.rebuildProposals(sh, list, drop); err != nil {
		return nil, err
	}
	main, list, err = sh.Proposals()
	if err != nil {
		return nil, err
	}
	s.noteMerged(sh, main, list)
	s.countPending(sh)
	return list, nil
}

// modelMade reports whether memd made a commit for a model: the learner,
// an episode or synthesis.
func modelMade(c gitstore.Commit) bool {
	if !c.ByMemd() {
		return false
	}
	switch provenance.Parse(c.Message).LearnedBy {
	case memd.LearnedLearner, memd.LearnedEpisode, memd.LearnedSynthesis:
		return true
	}
	return false
}

// rejectedCommits returns the proposal commits the shard's records of
// rejections name, read once per position of refs/memd/rejected.
func (s *Service) rejectedCommits(sh *gitstore.Shard) (map[gitstore.Hash]bool, error) {
	head, err := sh.Ref("refs/memd/rejected")
	if err != nil {
		return nil, err
	}
	r := &s.reviews
	r.mu.Lock()
	cached, ok := r.rejected[sh.ID()]
	r.mu.Unlock()
	if ok && cached.head == head {
		return cached.commits, nil
	}
	commits := make(map[gitstore.Hash]bool)
	if err := sh.Rejections(func(_, prop gitstore.Commit) error { commits[prop.Hash] = true; return nil }); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.rejected == nil {
		r.rejected = make(map[memd.ShardID]rejectedSet)
	}
	r.rejected[sh.ID()] = rejectedSet{head: head, commits: commits}
	r.mu.Unlock()
	return commits, nil
}

// noteMerged counts the proposals seen last time that are now commits of
// main as they were proposed: a person merged the branch proposed.
func (s *Service) noteMerged(sh *gitstore.Shard, main gitstore.Hash, list []gitstore.Commit) {
	// One look at a time, so that a merge is counted once.
	s.reviews.merging.Lock()
	defer s.reviews.merging.Unlock()
	ids := make(map[string]bool, len(list))
	for _, c := range list {
		ids[proposalID(c)] = true
	}
	r := &s.reviews
	r.mu.Lock()
	prev, ok := r.seen[sh.ID()]
	if r.seen == nil {
		r.seen = make(map[memd.ShardID]seenProposals)
	}
	r.seen[sh.ID()] = seenProposals{main: main, ids: ids}
	r.mu.Unlock()
	if !ok || prev.main == main || len(prev.ids) == 0 {
		return
	}
	newer, _, err := sh.Range(prev.main, main, 10_000)
	if err != nil {
		s.Logger.Warn("reading main for proposals a person merged", "shard", sh.ID(), "err", err)
		return
	}
	merged := 0
	for _, c := range newer {
		if prev.ids[proposalID(c)] && !ids[proposalID(c)] {
			merged++
		}
	}
	if merged > 0 {
		s.countAccepted(merged)
		if s.Metrics != nil {
			s.Metrics.Reviews.WithLabelValues("merge").Add(float64(merged))
		}
		s.Logger.Info("proposals accepted by a git merge", "shard", sh.ID(), "proposals", merged)
	}
}

// reviewFile keeps, in the data directory, how many proposals were
// accepted.
const reviewFile = "review.json"

// countAccepted adds to the proposals accepted, kept on disk.
func (s *Service) countAccepted(n int) {
	r := &s.reviews
	r.mu.Lock()
	defer r.mu.Unlock()
	s.loadReviewsLocked()
	r.accepted += n
	b, _ := json.Marshal(map[string]int{"accepted": r.accepted})
	tmp := r.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err == nil {
		err = os.Rename(tmp, r.file)
		if err != nil {
			s.Logger.Warn("keeping the count of accepted proposals", "err", err)
		}
	}
}

// loadReviewsLocked reads the count of accepted proposals once.
func (s *Service) loadReviewsLocked() {
	r := &s.reviews
	if r.file != "" {
		return
	}
	r.file = filepath.Join(s.Store.Dir(), reviewFile)
	var saved struct{ Accepted int }
	if b, err := os.ReadFile(r.file); err == nil && json.Unmarshal(b, &saved) == nil {
		r.accepted = saved.Accepted
	}
}

// countPending counts the proposals pending in a shard. It reads them
// itself, under a lock held until the count is recorded: counts then land
// in the order the branch was read, and one read before a person merged
// the proposals cannot replace the count of one read after.
func (s *Service) countPending(sh *gitstore.Shard) {
	r := &s.reviews
	r.counting.Lock()
	defer r.counting.Unlock()
	_, list, err := sh.Proposals()
	if err != nil {
		return // the next look counts
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = make(map[memd.ShardID]int)
	}
	r.pending[sh.ID()] = len(list)
	if s.Metrics != nil {
		total := 0
		for _, k := range r.pending {
			total += k
		}
		s.Metrics.ProposalsPending.Set(float64(total))
	}
}

// rebuildSoon rebuilds a shard's proposals on main in the background,
// after main moved.
func (s *Service) rebuildSoon(id memd.ShardID) {
	sh, err := s.Store.Shard(id)
	if err != nil || !sh.HasProposals() {
		return
	}
	r := &s.reviews
	r.mu.Lock()
	if r.busy == nil {
		r.busy = make(map[memd.ShardID]bool)
	}
	if r.busy[id] || r.stopped {
		r.mu.Unlock()
		return
	}
	r.busy[id] = true
	s.background.Add(1) // under the lock stopBackground takes first
	r.mu.Unlock()
	go func() {
		defer s.background.Done()
		defer func() {
			r.mu.Lock()
			delete(r.busy, id)
			r.mu.Unlock()
		}()
		if _, err := s.refreshProposals(sh); err != nil {
			s.Logger.Warn("rebuilding proposals on main", "shard", id, "err", err)
		}
	}()
}

// stopBackground waits for background rebuilds and starts no more.
func (s *Service) stopBackground() {
	s.reviews.mu.Lock()
	s.reviews.stopped = true
	s.reviews.mu.Unlock()
	s.background.Wait()
}

// proposalChange is the change a proposal makes, to make again on another
// commit: its fact changes, with an edit's removal and addition as one
// rewrite in place, under the same author and message.
func proposalChange(sh *gitstore.Shard, c gitstore.Commit) (gitstore.Change, error) {
	d, err := sh.Diff(c)
	if err != nil {
		return gitstore.Change{}, err
	}
	p := provenance.Parse(c.Message)
	var edits []gitstore.Edit
	replaced := -1
	for _, ch := range d.Facts {
		if ch.Op == "-" {
			edits = append(edits, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: ch.Fact.ID}})
			// The first of the fact's lines becomes the rewrite, before the
			// removals of its others: a removal first would take every
			// line of it, and leave the rewrite nothing to rewrite.
			if p.Op == memd.OpEdit && ch.Fact.ID == p.Replaces && replaced < 0 {
				replaced = len(edits) - 1
			}
		}
	}
	for _, ch := range d.Facts {
		if ch.Op != "+" {
			continue
		}
		if replaced >= 0 && len(p.FactIDs) > 0 && ch.Fact.ID == p.FactIDs[0] {
			edits[replaced] = gitstore.Edit{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: p.Replaces}, With: memd.Fact{Text: ch.Fact.Text}}
			replaced = -1
			continue
		}
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: ch.Fact})
	}
	return gitstore.Change{Author: c.Author, AuthorTime: c.AuthorTime, Message: c.Message, Edits: edits}, nil
}

// commitLearned commits what a model wrote for an agent: into main, or,
// for an agent in review mode, onto the branch proposed.
func (s *Service) commitLearned(agent string, sh *gitstore.Shard, c gitstore.Change) (gitstore.Result, error) {
	if !s.Registry.InReview(agent) {
		return sh.Apply(c)
	}
	if _, err := s.refreshProposals(sh); err != nil {
		return gitstore.Result{}, err
	}
	res, err := sh.Propose(c)
	if err != nil || res.Commit.IsZero() {
		return res, err
	}
	s.countPending(sh)
	s.Feed.Announce(memd.FeedEvent{Type: memd.EventProposed, Shard: sh.ID(), Commit: res.Commit.String(),
		Author: memd.Person{Name: c.Author.Name, Email: c.Author.Email}, Time: res.Time,
		Subject: strings.SplitN(c.Message, "\n", 2)[0], Provenance: provenance.Parse(c.Message), Changes: res.Changes})
	return res, nil
}

// Review accepts proposals into main, each as one commit with its
// trailers and Reviewed-By, or rejects them, each leaving a record.
//
// It is long for its two branches, accepting and rejecting, which share the
// proposals' lookup and the rebuild after.
func (s *Service) Review(ctx context.Context, req memd.ReviewRequest) (memd.ReviewResult, error) {
	// One review at a time: two people deciding the same proposal at once
	// must not both succeed.
	s.reviews.deciding.Lock()
	defer s.reviews.deciding.Unlock()
	out := memd.ReviewResult{Verdict: req.Verdict, Reviewed: []memd.Reviewed{}}
	if req.Verdict != memd.ReviewAccept && req.Verdict != memd.ReviewReject {
		return out, memd.Errorf(memd.EINVALID, "verdict must be accept or reject, not %q", req.Verdict)
	}
	if req.All == (len(req.IDs) > 0) {
		return out, memd.Errorf(memd.EINVALID, "name the proposals to %s by ID, or ask for all of them", req.Verdict)
	}
	reviewer := req.Reviewer
	if reviewer == "" {
		reviewer = callerOf(ctx).Name()
	}
	if err := provenance.CheckTrailer("reviewer", reviewer); err != nil {
		return out, err
	}
	ids, err := s.proposalShards(req.Shard)
	if err != nil {
		return out, err
	}
	// Every ID must name one proposal before anything is done.
	type pick struct {
		sh   *gitstore.Shard
		list []gitstore.Commit
	}
	var picks []pick
	matched := make(map[string]int)
	for _, id := range ids {
		sh, list, err := s.proposalsIn(id)
		if err != nil {
			return out, err
		}
		var chosen []gitstore.Commit
		for _, c := range list {
			pid := proposalID(c)
			hit := req.All
			for _, want := range req.IDs {
				if len(want) >= 4 && strings.HasPrefix(pid, want) {
					hit = true
					matched[want]++
				}
			}
			if hit {
				chosen = append(chosen, c)
			}
		}
		if len(chosen) > 0 {
			picks = append(picks, pick{sh, chosen})
		}
	}
	for _, want := range req.IDs {
		switch {
		case matched[want] == 0:
			return out, memd.Errorf(memd.ENOTFOUND, "no proposal %q waits for review (memd review list)", want)
		case matched[want] > 1:
			return out, memd.Errorf(memd.EINVALID, "%q names %d proposals; give more of the ID", want, matched[want])
		}
	}
	if req.Verdict == memd.ReviewAccept {
		for _, p := range picks {
			for _, c := range p.list {
				if err := s.stillSynthesizable(p.sh, c); err != nil {
					return out, err
				}
			}
		}
	}
	for _, p := range picks {
		done, err := s.reviewIn(ctx, p.sh, p.list, req.Verdict, reviewer)
		out.Reviewed = append(out.Reviewed, done...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// stillSynthesizable refuses to accept a synthesis proposal that would now
// change a fact main holds as written on purpose (saved or edited since
// the proposal was made): the rule holds at every door into main.
func (s *Service) stillSynthesizable(sh *gitstore.Shard, c gitstore.Commit) error {
	if provenance.Parse(c.Message).LearnedBy != memd.LearnedSynthesis {
		return nil
	}
	d, err := sh.Diff(c)
	if err != nil {
		return err
	}
	if err := s.Index.CatchUp(sh.ID()); err != nil {
		return err
	}
	for _, ch := range d.Facts {
		if ch.Op != "-" {
			continue
		}
		if _, err := sh.Fact(ch.Fact.ID); err != nil {
			continue // main does not hold it: nothing to protect
		}
		o, err := s.lineOrigin(sh, ch.Fact.ID)
		if err != nil {
			return err
		}
		if !learn.Synthesizable(o) {
			by := "a commit memd cannot read"
			if o != nil {
				by = o.LearnedBy
			}
			return memd.Errorf(memd.ECONFLICT, "proposal %s would change fact %s, which main now holds as written on purpose (%s); reject it", proposalID(c), ch.Fact.ID, by)
		}
	}
	return nil
}

// reviewIn accepts or rejects some proposals of one shard, oldest first,
// then rebuilds the branch proposed without them.
func (s *Service) reviewIn(ctx context.Context, sh *gitstore.Shard, chosen []gitstore.Commit, verdict, reviewer string) ([]memd.Reviewed, error) {
	var out []memd.Reviewed
	gone := make(map[string]bool)
	for _, c := range chosen {
		r := memd.Reviewed{ID: proposalID(c), Shard: sh.ID(), Subject: c.Subject(), Proposal: c.Hash.String()}
		p := provenance.Parse(c.Message)
		if verdict == memd.ReviewAccept {
			ch, err := proposalChange(sh, c)
			if err != nil {
				return out, err
			}
			ch.Message = strings.TrimRight(ch.Message, "\n") + "\n" + provenance.KeyReviewed + ": " + reviewer + "\n"
			res, err := sh.Apply(ch)
			if err != nil {
				return out, fmt.Errorf("accept proposal %s: %w", r.ID, err)
			}
			if !res.Commit.IsZero() {
				r.Commit = res.Commit.String()
				if err := s.Messages.Recite(c.Author.Name, p.SourceMessages, c.Hash.String(), r.Commit); err != nil {
					s.Logger.Warn("recording what an accepted proposal quotes", "shard", sh.ID(), "err", err)
				}
				s.countAccepted(1)
			}
		} else {
			msg := provenance.Message(provenance.Subject(memd.OpReject, strings.TrimPrefix(c.Subject(), p.Op+": ")),
				memd.Provenance{Op: memd.OpReject, FactIDs: p.FactIDs, LearnedBy: memd.LearnedPerson, ReviewedBy: reviewer, Rejects: c.Hash.String()})
			rec, err := sh.RecordRejected(c, author(callerOf(ctx)), msg)
			if err != nil {
				return out, fmt.Errorf("reject proposal %s: %w", r.ID, err)
			}
			r.Commit = rec.String()
			s.Feed.Announce(memd.FeedEvent{Type: memd.EventRejected, Shard: sh.ID(), Commit: c.Hash.String(),
				Author: memd.Person{Name: c.Author.Name, Email: c.Author.Email}, Time: s.Now(), Subject: c.Subject(), Provenance: p})
		}
		if s.Metrics != nil {
			s.Metrics.Reviews.WithLabelValues(verdict).Inc()
		}
		gone[r.ID] = true
		out = append(out, r)
	}
	_, list, err := sh.Proposals()
	if err != nil {
		return out, err
	}
	if err := s.rebuildProposals(sh, list, gone); err != nil {
		return out, err
	}
	_, err = s.refreshProposals(sh)
	return out, err
}

// rebuildProposals makes the shard's proposals again on main, but those
// whose IDs drop names, and records what each new commit was learned from,
// so that it quotes its exchange as the proposal did.
func (s *Service) rebuildProposals(sh *gitstore.Shard, list []gitstore.Commit, drop map[string]bool) error {
	// Decided before the branch is locked: reading main's facts takes the
	// lock the rebuild holds. A proposal made in between is made again
	// as it is; it was checked when it was made.
	stale := make(map[gitstore.Hash]bool)
	added := make(map[string]bool) // facts the proposals kept so far add
	for _, c := range list {
		if drop[proposalID(c)] {
			continue
		}
		why, err := s.synthesisStale(sh, c, added)
		if err != nil {
			return err
		}
		if why != "" {
			s.Logger.Warn("dropped a synthesis proposal", "shard", sh.ID(), "proposal", proposalID(c), "why", why)
			stale[c.Hash] = true
			continue
		}
		d, err := sh.Diff(c)
		if err != nil {
			return err
		}
		for _, ch := range d.Facts {
			if ch.Op == "+" {
				added[ch.Fact.ID] = true
			}
		}
	}
	kept, err := sh.RebuildProposals(func(c gitstore.Commit) (gitstore.Change, bool, error) {
		if drop[proposalID(c)] || stale[c.Hash] {
			return gitstore.Change{}, false, nil
		}
		ch, err := proposalChange(sh, c)
		return ch, true, err
	})
	if err != nil {
		return fmt.Errorf("rebuild the proposals of %s on main: %w", sh.ID(), err)
	}
	for _, c := range list {
		if next, ok := kept[c.Hash]; ok {
			if err := s.Messages.Recite(c.Author.Name, provenance.Parse(c.Message).SourceMessages, c.Hash.String(), next.String()); err != nil {
				s.Logger.Warn("recording what a rebuilt proposal quotes", "shard", sh.ID(), "err", err)
			}
		}
	}
	return nil
}

// synthesisStale says why a synthesis proposal cannot be made again on
// main as it is now ("" when it can): a fact it changes is held on purpose
// there now, or one it rewrites, merges or removes is gone (edited or
// removed on main since). Made again, a merge would bring a forgotten
// fact's words back, and a rewrite would leave only its removals. added
// holds the facts the proposals before it add.
func (s *Service) synthesisStale(sh *gitstore.Shard, c gitstore.Commit, added map[string]bool) (string, error) {
	p := provenance.Parse(c.Message)
	if p.LearnedBy != memd.LearnedSynthesis {
		return "", nil
	}
	if err := s.stillSynthesizable(sh, c); memd.ErrorCode(err) == memd.ECONFLICT {
		return memd.ErrorMessage(err), nil
	} else if err != nil {
		return "", err
	}
	d, err := sh.Diff(c)
	if err != nil {
		return "", err
	}
	for _, ch := range d.Facts {
		if ch.Op != "-" || added[ch.Fact.ID] {
			continue
		}
		if _, err := sh.Fact(ch.Fact.ID); memd.ErrorCode(err) == memd.ENOTFOUND {
			return "fact " + ch.Fact.ID + ", which it changes, is no longer in main", nil
		} else if err != nil {
			return "", err
		}
	}
	return "", nil
}

// reviewStatus counts proposals; nil when no agent is in review mode and
// no shard has a branch proposed.
func (s *Service) reviewStatus() (*memd.ReviewStatus, error) {
	ids, err := s.Store.Shards()
	if err != nil {
		return nil, err
	}
	st := &memd.ReviewStatus{}
	seen := slices.ContainsFunc(s.Registry.List(), func(a memd.Agent) bool { return a.Review })
	// A status answers everyone, at once: it reads, never rebuilds, and a
	// shard it cannot read is left out (and logged), not an error.
	for _, id := range ids {
		sh, err := s.Store.Shard(id)
		if err != nil {
			continue
		}
		rejected, err := s.rejectedCommits(sh)
		if err != nil {
			s.Logger.Warn("reading the rejected proposals", "shard", id, "err", err)
			continue
		}
		st.Rejected += len(rejected)
		if !sh.HasProposals() {
			seen = seen || len(rejected) > 0
			continue
		}
		seen = true
		_, list, err := sh.Proposals()
		if err != nil {
			s.Logger.Warn("reading the proposals", "shard", id, "err", err)
			continue
		}
		for _, c := range list {
			if modelMade(c) && !rejected[c.Hash] {
				st.Pending++
			}
		}
	}
	if !seen {
		return nil, nil
	}
	s.reviews.mu.Lock()
	s.loadReviewsLocked()
	st.Accepted = s.reviews.accepted
	s.reviews.mu.Unlock()
	return st, nil
}
