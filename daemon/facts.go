package daemon

import (
	"context"
	"fmt"
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/transcript"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Remember adds a fact as one commit whose trailers name its source.
func (s *Service) Remember(ctx context.Context, req memd.RememberRequest) (memd.RememberResult, error) {
	c := callerOf(ctx)
	text, err := memd.CleanFactText(req.Text)
	if err != nil {
		return memd.RememberResult{}, err
	}
	tier, err := memd.ParseTier(string(req.Tier))
	if err != nil {
		return memd.RememberResult{}, err
	}
	if err := checkSource(req.Source); err != nil {
		return memd.RememberResult{}, err
	}
	date := req.Date
	if date.IsZero() {
		date = memd.DateOf(s.Now())
	}
	sh, err := s.shardToWrite(req.Shard, req.Create)
	if err != nil {
		return memd.RememberResult{}, err
	}
	if err := s.keepExcerpt(c, req.Source); err != nil {
		return memd.RememberResult{}, err
	}
	p := trailers(c, memd.OpRemember, memd.FactID(text), tier, req.Source)
	res, err := s.commitOne(c, sh, text, p, req.Source, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: date, Tier: tier}})
	if err != nil {
		return memd.RememberResult{}, err
	}
	out := memd.RememberResult{Fact: res.Facts[0], Existing: res.Commit.IsZero()}
	if !out.Existing {
		out.Commit = res.Commit.String()
	}
	return out, nil
}

// commitOne commits one edit of a fact by c, with subject text and the
// trailers p, and keeps the messages src cites for reviewers; an edit that
// changes nothing commits nothing (a zero Commit).
func (s *Service) commitOne(c memd.Caller, sh *gitstore.Shard, text string, p memd.Provenance, src memd.Source, e gitstore.Edit) (gitstore.Result, error) {
	res, err := sh.Apply(gitstore.Change{
		Author:  author(c),
		Message: provenance.Message(provenance.Subject(p.Op, text), p),
		Edits:   []gitstore.Edit{e},
	})
	if err == nil && !res.Commit.IsZero() {
		s.cite(c, res.Commit.String(), src)
	}
	return res, err
}

// checkSource validates a source given with a remember or an edit: its
// trailers and its excerpt.
func checkSource(src memd.Source) error {
	if err := provenance.CheckSource(src); err != nil {
		return err
	}
	return transcript.CheckExcerpt(src)
}

// trailers is the provenance of a direct remember or forget.
func trailers(c memd.Caller, op, id string, tier memd.Tier, src memd.Source) memd.Provenance {
	return memd.Provenance{
		Op:             op,
		FactIDs:        []string{id},
		Tier:           tier,
		SourceMessages: src.Messages,
		SourceChat:     src.Chat,
		ChatKind:       chatKindOf(src),
		LearnedBy:      learnedBy(c),
	}
}

// chatKindOf is the Chat-Kind a direct write records: the kind declared;
// undeclared, a group chat's when a chat is named, as the rules of access
// read it, and api, a call outside any chat, when none is.
func chatKindOf(src memd.Source) memd.ChatKind {
	switch {
	case src.ChatKind != "":
		return src.ChatKind
	case src.Chat != "":
		return memd.ChatGroup
	}
	return memd.ChatAPI
}

// Forget removes every line of a fact as one commit.
func (s *Service) Forget(ctx context.Context, req memd.ForgetRequest) (memd.ForgetResult, error) {
	c := callerOf(ctx)
	if err := provenance.CheckSource(req.Source); err != nil {
		return memd.ForgetResult{}, err
	}
	sh, f, err := s.factToChange(req.Shard, req.ID)
	if err != nil {
		return memd.ForgetResult{}, err
	}
	p := trailers(c, memd.OpForget, f.ID, f.Tier, req.Source)
	res, err := s.commitOne(c, sh, f.Text, p, req.Source, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: f.ID}})
	if err != nil {
		return memd.ForgetResult{}, err
	}
	if res.Commit.IsZero() {
		return memd.ForgetResult{}, memd.Errorf(memd.ENOTFOUND, "shard %s holds no fact %s", req.Shard, req.ID)
	}
	return memd.ForgetResult{Fact: res.Facts[0], Commit: res.Commit.String()}, nil
}

// factToChange finds the fact a forget or an edit names, and its shard.
func (s *Service) factToChange(shard memd.ShardID, id string) (*gitstore.Shard, memd.Fact, error) {
	if !memd.ValidFactID(id) {
		return nil, memd.Fact{}, memd.Errorf(memd.EINVALID, "fact ID %q: want 12 lowercase hex digits", id)
	}
	sh, err := s.shard(shard)
	if err != nil {
		return nil, memd.Fact{}, err
	}
	f, err := sh.Fact(id)
	return sh, f, err
}

// EditFact rewrites a fact's text where its line stands, as one commit.
func (s *Service) EditFact(ctx context.Context, req memd.EditFactRequest) (memd.EditFactResult, error) {
	c := callerOf(ctx)
	text, err := memd.CleanFactText(req.Text)
	if err != nil {
		return memd.EditFactResult{}, err
	}
	if err := checkSource(req.Source); err != nil {
		return memd.EditFactResult{}, err
	}
	sh, old, err := s.factToChange(req.Shard, req.ID)
	if err != nil {
		return memd.EditFactResult{}, err
	}
	newID := memd.FactID(text)
	if newID != old.ID {
		if other, err := sh.Fact(newID); err == nil {
			return memd.EditFactResult{}, memd.Errorf(memd.ECONFLICT, "shard %s already holds that text as fact %s; forget %s instead", req.Shard, other.ID, old.ID)
		}
	}
	p, err := editTrailers(c, sh, old, newID, req.Source)
	if err != nil {
		return memd.EditFactResult{}, err
	}
	if err := s.keepExcerpt(c, req.Source); err != nil {
		return memd.EditFactResult{}, err
	}
	// The messages cited are the editor's own; the versions before cite theirs.
	res, err := s.commitOne(c, sh, text, p, req.Source, gitstore.Edit{Op: gitstore.ReplaceFact, Fact: memd.Fact{ID: old.ID}, With: memd.Fact{Text: text}})
	if err != nil {
		return memd.EditFactResult{}, err
	}
	if res.Facts[0].ID == "" {
		return memd.EditFactResult{}, memd.Errorf(memd.ENOTFOUND, "shard %s holds no fact %s", req.Shard, req.ID)
	}
	out := memd.EditFactResult{Fact: res.Facts[0], Replaced: old}
	if !res.Commit.IsZero() {
		out.Commit = res.Commit.String()
	}
	return out, nil
}

// editTrailers is the provenance of an edit: the editor's, with the source
// of the version it replaces (so the new text still cites the messages it
// was learned from) and any source the editor gives besides.
func editTrailers(c memd.Caller, sh *gitstore.Shard, old memd.Fact, newID string, src memd.Source) (memd.Provenance, error) {
	p := trailers(c, memd.OpEdit, newID, old.Tier, src)
	p.Replaces = old.ID
	if newID != old.ID {
		p.FactIDs = append(p.FactIDs, old.ID)
	}
	was, err := versionSources(sh, old.ID)
	if err != nil {
		return p, err
	}
	// The trailer holds one chat: the one the fact was first learned in,
	// with its kind, not the editor's.
	if was.Chat != "" {
		p.SourceChat, p.ChatKind = was.Chat, was.ChatKind
	}
	// The editor's messages always: without them the edit could not be
	// undone by its message. The old version's fill what room is left,
	// the first learned first.
	own := p.SourceMessages
	older := slices.DeleteFunc(slices.Clone(was.Messages), func(m string) bool { return slices.Contains(own, m) })
	older = older[:min(len(older), max(0, provenance.MaxInherited-len(own)))]
	p.SourceMessages = appendNew(older, own...)
	return p, nil
}

// versionSources returns the sources of every version of a fact, oldest
// first, and the chat it was first learned in: what put a version back (a
// revert) carries none of its own.
func versionSources(sh *gitstore.Shard, id string) (memd.Source, error) {
	tr, err := provenance.Trace(sh, id)
	if err != nil {
		return memd.Source{}, fmt.Errorf("reading the source of fact %s: %w", id, err)
	}
	var src memd.Source
	for i := len(tr.Chain) - 1; i >= 0; i-- {
		was := tr.Chain[i].Provenance
		src.Messages = appendNew(src.Messages, was.SourceMessages...)
		if src.Chat == "" {
			src.Chat, src.ChatKind = was.SourceChat, was.ChatKind
		}
	}
	return src, nil
}

// appendNew appends the values list does not hold yet.
func appendNew(list []string, values ...string) []string {
	for _, v := range values {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
