package daemon

import (
	"context"
	"fmt"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/learn"
	"github.com/memd/memd/provenance"
)

// Synthesize queues a synthesis pass over an agent's own shard.
func (s *Service) Synthesize(ctx context.Context, agent string) (memd.ExchangeStatus, error) {
	if s.Learner == nil {
		return memd.ExchangeStatus{}, memd.Errorf(memd.EUNAVAILABLE, "learning is off: start memd serve with --model-url and --synthesis")
	}
	if _, ok := s.Registry.Agent(agent); !ok {
		return memd.ExchangeStatus{}, memd.Errorf(memd.ENOTFOUND, "no agent %q (memd agent list)", agent)
	}
	return s.Learner.Synthesize(agent)
}

// SynthesisFacts returns the facts a pass over an agent's shard is shown:
// its lasting facts, then its highest-ranked dated ones, each with the
// origin of its line.
func (m learnerMemory) SynthesisFacts(ctx context.Context, agent string) ([]memd.Fact, error) {
	id := memd.AgentShard(agent)
	sh, err := m.s.Store.Shard(id)
	if memd.ErrorCode(err) == memd.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := m.s.Index.CatchUp(id); err != nil {
		return nil, err
	}
	var docs []search.Doc
	for _, profile := range []bool{true, false} {
		if len(docs) >= learn.MaxSynthesisFacts {
			break
		}
		m.s.Index.Engine().Walk(id, profile, func(d search.Doc) bool {
			if d.Note == "" {
				docs = append(docs, d)
			}
			return len(docs) < learn.MaxSynthesisFacts
		})
	}
	out := make([]memd.Fact, 0, len(docs))
	for _, d := range docs {
		o, err := m.s.lineOrigin(sh, d.Fact.ID)
		if err != nil {
			return nil, err
		}
		f := d.Fact
		f.Origin = o
		out = append(out, f)
	}
	return out, nil
}

// lineOrigin returns what wrote a fact's line as the shard holds it now:
// the commit git blame names. Nil when the shard does not hold the fact.
func (s *Service) lineOrigin(sh *gitstore.Shard, id string) (*memd.Origin, error) {
	commit := ""
	if d, ok := s.Index.Engine().Get(sh.ID(), id); ok {
		commit = d.Commit
	}
	if commit == "" {
		tr, err := provenance.Trace(sh, id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !tr.Present || tr.Introduced == nil {
			return nil, nil
		}
		commit = tr.Introduced.Hash
	}
	o, err := s.origins.of(sh, commit)
	if err != nil {
		return nil, fmt.Errorf("reading the commit that wrote fact %s: %w", id, err)
	}
	return &o, nil
}

// ApplySynthesis commits one approved synthesis change. Whether synthesis
// may touch each fact is decided here, from the history of the shard as it
// is now, whatever the models answered.
//
// It is long for its switch over the kinds of change, each checked against
// the shard's history before it is written.
func (m learnerMemory) ApplySynthesis(ctx context.Context, agent string, c learn.Change, p memd.Provenance) (string, error) {
	s := m.s
	id := memd.AgentShard(agent)
	sh, err := s.Store.Shard(id)
	if err != nil {
		return "", err
	}
	if err := s.Index.CatchUp(id); err != nil {
		return "", err
	}
	// The change is made where the agent's changes go: main, or in review
	// mode the tip of its proposals, and planned against the facts there.
	holds, err := s.factsWhereLearned(agent, sh)
	if err != nil {
		return "", err
	}
	var present []memd.Fact
	var gone []string
	for _, f := range c.Facts {
		cur, ok, err := holds(f.ID)
		if err != nil {
			return "", err
		}
		if !ok {
			gone = append(gone, f.ID) // applied before, or removed since
			continue
		}
		o, err := s.lineOrigin(sh, f.ID)
		if err != nil {
			return "", err
		}
		if !learn.Synthesizable(o) {
			by := "an unknown commit"
			if o != nil {
				by = fmt.Sprintf("%s (commit %.12s)", o.LearnedBy, o.Commit)
			}
			return "", fmt.Errorf("%w: fact %s was last written by %s", learn.ErrProtected, f.ID, by)
		}
		present = append(present, cur)
	}
	if len(present) == 0 {
		return s.madeBefore(agent, sh, c)
	}
	if err := goneFromMain(sh, gone); err != nil {
		return "", err
	}
	var msgs []string
	var sources []memd.Source // what to record the commit as learned from, chat by chat
	for _, e := range p.Evidence {
		if !memd.ValidFactID(e) {
			msgs = appendNew(msgs, e)
			sources = append(sources, memd.Source{Messages: []string{e}, Chat: c.Chats[e]})
		}
	}
	edits, subject, err := synthesisEdits(holds, c, present)
	if err != nil {
		return "", err
	}
	if len(edits) == 0 {
		return "", nil
	}
	p.Tier = present[0].Tier
	if c.Op == learn.SynthRemove {
		p.Op, p.SourceMessages = memd.OpForget, msgs
	} else {
		p.Op = memd.OpEdit
		newID := memd.FactID(c.Text)
		p.FactIDs = []string{newID}
		if edits[0].Op == gitstore.ReplaceFact {
			p.Replaces = edits[0].Fact.ID
		}
		// The new line still comes from what its facts were learned from.
		for _, f := range present {
			src, err := versionSources(sh, f.ID)
			if err != nil {
				return "", err
			}
			msgs = appendNew(msgs, src.Messages...)
			sources = append(sources, src)
			if p.SourceChat == "" {
				p.SourceChat, p.ChatKind = src.Chat, src.ChatKind
			}
		}
		p.SourceMessages = msgs
	}
	for _, f := range present {
		p.FactIDs = appendNew(p.FactIDs, f.ID)
	}
	if len(p.SourceMessages) > provenance.MaxInherited {
		p.SourceMessages = p.SourceMessages[:provenance.MaxInherited]
	}
	res, err := s.commitLearned(agent, sh, gitstore.Change{
		Author:  author(memd.Caller{Agent: agent}),
		Message: provenance.Message(provenance.Subject(p.Op, subject), p),
		Edits:   edits,
	})
	if err != nil || res.Commit.IsZero() {
		return "", err
	}
	for _, src := range sources {
		s.cite(memd.Caller{Agent: agent}, res.Commit.String(), src)
	}
	return res.Commit.String(), nil
}

// goneFromMain returns learn.ErrChangedSince when a fact of gone (those a
// change names and the shard no longer holds where the change is made) is
// gone from main too. A change is one commit: made before, none of its
// facts would be left; some gone from main means a person forgot or edited
// them since the pass read main. Gone from the proposals alone, an earlier
// proposal changed them, and the change is made on top of it.
func goneFromMain(sh *gitstore.Shard, gone []string) error {
	for _, id := range gone {
		if _, err := sh.Fact(id); memd.ErrorCode(err) == memd.ENOTFOUND {
			return fmt.Errorf("%w: fact %s is gone", learn.ErrChangedSince, id)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// madeBefore returns the commit that already made a merge or rewrite whose
// facts are all gone, when main's line of its new text was written by
// synthesis: the change applied just before a crash, found again so the
// resumed pass still counts it. "" otherwise.
func (s *Service) madeBefore(agent string, sh *gitstore.Shard, c learn.Change) (string, error) {
	if c.Op == learn.SynthRemove || s.Registry.InReview(agent) {
		return "", nil
	}
	o, err := s.lineOrigin(sh, memd.FactID(c.Text))
	if err != nil || o == nil || o.LearnedBy != memd.LearnedSynthesis {
		return "", err
	}
	return o.Commit, nil
}

// factsWhereLearned returns a lookup of the facts where an agent's learned
// changes are made: main, or, for an agent in review mode, the tip of the
// shard's proposals.
func (s *Service) factsWhereLearned(agent string, sh *gitstore.Shard) (func(id string) (memd.Fact, bool, error), error) {
	onMain := func(id string) (memd.Fact, bool, error) {
		f, err := sh.Fact(id)
		if memd.ErrorCode(err) == memd.ENOTFOUND {
			return f, false, nil
		}
		return f, err == nil, err
	}
	if !s.Registry.InReview(agent) {
		return onMain, nil
	}
	list, err := s.refreshProposals(sh)
	if err != nil || len(list) == 0 {
		return onMain, err
	}
	facts, err := sh.FactsAt(list[len(list)-1].Hash)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]memd.Fact, len(facts))
	for _, f := range facts {
		byID[f.ID] = f
	}
	return func(id string) (memd.Fact, bool, error) { f, ok := byID[id]; return f, ok, nil }, nil
}

// synthesisEdits turns a change into edits of the facts still present: a
// merge or rewrite puts the new text where the first of them stands (or,
// when the shard holds that text already, keeps it there) and removes the
// others; a removal removes.
func synthesisEdits(holds func(string) (memd.Fact, bool, error), c learn.Change, present []memd.Fact) ([]gitstore.Edit, string, error) {
	var edits []gitstore.Edit
	if c.Op == learn.SynthRemove {
		for _, f := range present {
			edits = append(edits, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: f.ID}})
		}
		return edits, present[0].Text, nil
	}
	newID := memd.FactID(c.Text)
	_, held, err := holds(newID)
	if err != nil {
		return nil, "", err
	}
	// The replacing edit first, so that Replaces names it; the text takes
	// the first fact's line unless the shard holds it already.
	var removes []gitstore.Edit
	for _, f := range present {
		switch {
		case f.ID == newID:
		case len(edits) == 0 && !held:
			edits = append(edits, gitstore.Edit{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: f.ID}, With: memd.Fact{Text: c.Text}})
		default:
			removes = append(removes, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: f.ID}})
		}
	}
	return append(edits, removes...), c.Text, nil
}

var _ learn.SynthesisMemory = learnerMemory{}
