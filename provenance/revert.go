package provenance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// Reverter undoes commits on behalf of someone.
type Reverter struct {
	Author    gitstore.Signature
	LearnedBy string // person for an admin, explicit for an agent
	// DryRun reports what a revert would change on the current HEAD and
	// commits nothing.
	DryRun bool

	preview preview // a dry run of several reverts: the facts as they would stand
}

// Revert undoes one commit of a shard semantically, on the current HEAD:
// a fact it added is removed if still there, a fact it removed is restored
// (with its date, tier and file) if absent. The result has no commit and
// no changes when nothing was left to undo, and a commit a standing revert
// undid already has nothing left.
func (r Reverter) Revert(sh *gitstore.Shard, h plumbing.Hash) (memd.Revert, error) {
	if done, err := Undone(sh, h); err != nil || done {
		// A revert that still stands undid it: nothing is left to undo.
		return memd.Revert{Shard: sh.ID(), Reverted: h.String(), Changes: []memd.FactChange{}}, err
	}
	return r.revert(sh, h)
}

// revert undoes commit h, which no standing revert undid.
func (r Reverter) revert(sh *gitstore.Shard, h plumbing.Hash) (memd.Revert, error) {
	c, err := sh.ReadCommit(h)
	if err != nil {
		return memd.Revert{}, err
	}

	d, err := sh.Diff(c)
	if err != nil {
		return memd.Revert{}, err
	}
	out := memd.Revert{Shard: sh.ID(), Reverted: h.String(), Changes: []memd.FactChange{}}
	// Removals of what it added first, so a line it changed is put back.
	var edits []gitstore.Edit
	var ids []string
	for _, ch := range d.Facts {
		if ch.Op == "+" {
			edits = append(edits, gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: ch.Fact.ID}})
			ids = appendID(ids, ch.Fact.ID)
		}
	}
	for _, ch := range d.Facts {
		if ch.Op == "-" {
			edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: ch.Fact})
			ids = appendID(ids, ch.Fact.ID)
		}
	}
	if len(edits) == 0 {
		return out, nil
	}
	if r.DryRun {
		out.Changes, err = wouldChange(sh, d.Facts, r.preview)
		return out, err
	}
	msg := Message(Subject(memd.OpRevert, c.Subject()), memd.Provenance{
		Op:        memd.OpRevert,
		FactIDs:   ids,
		LearnedBy: r.LearnedBy,
		Reverts:   h.String(),
	})
	res, err := sh.Apply(gitstore.Change{Author: r.Author, Message: msg, Edits: edits})
	if err != nil {
		return out, err
	}
	if !res.Commit.IsZero() {
		out.Commit = res.Commit.String()
		out.Changes = res.Changes
	}
	return out, nil
}

// preview is a shard's facts as a dry run of several reverts leaves
// them: what each would change is reckoned on what the ones before it
// changed, as the real reverts would find it.
type preview map[string]*memd.Fact // by ID; nil: absent

// wouldChange is what undoing fact changes would do on HEAD (as p says it
// stands, when given): remove the added facts still there, restore the
// removed ones now absent.
func wouldChange(sh *gitstore.Shard, changes []memd.FactChange, p preview) ([]memd.FactChange, error) {
	out := []memd.FactChange{}
	// Removals first, as Revert makes them.
	changes = slices.Clone(changes)
	slices.SortStableFunc(changes, func(a, b memd.FactChange) int { return strings.Compare(a.Op, b.Op) }) // "+" sorts before "-"
	for _, ch := range changes {
		f, present, err := factNow(sh, ch.Fact.ID, p)
		if err != nil {
			return nil, err
		}
		switch {
		case ch.Op == "+" && present:
			out = append(out, memd.FactChange{Op: "-", Fact: f})
			if p != nil {
				p[f.ID] = nil
			}
		case ch.Op == "-" && !present:
			out = append(out, memd.FactChange{Op: "+", Fact: ch.Fact})
			if p != nil {
				restored := ch.Fact
				p[restored.ID] = &restored
			}
		}
	}
	return out, nil
}

// factNow is a fact as a preview has it, or as HEAD has it.
func factNow(sh *gitstore.Shard, id string, p preview) (memd.Fact, bool, error) {
	if f, ok := p[id]; ok {
		if f == nil {
			return memd.Fact{}, false, nil
		}
		return *f, true, nil
	}
	f, err := sh.Fact(id)
	if err != nil && memd.ErrorCode(err) != memd.ENOTFOUND {
		return f, false, err
	}
	return f, err == nil, nil
}

func appendID(ids []string, id string) []string {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// Undone reports whether a revert that still stands (not itself undone)
// undid commit h, and none of the facts h added is back: a Reverts
// trailer alone (a push may carry any) does not make a commit undone.
func Undone(sh *gitstore.Shard, h plumbing.Hash) (bool, error) {
	head, err := sh.Head()
	if err != nil {
		return false, err
	}
	undone := make(map[string]bool)
	done := false
	var found gitstore.Commit
	err = sh.Walk(head, func(c gitstore.Commit) error {
		if c.Hash == h {
			done, found = undone[h.String()], c
			return gitstore.ErrStop
		}
		if p := Parse(c.Message); p.Reverts != "" && !undone[c.Hash.String()] {
			undone[p.Reverts] = true
		}
		return nil
	})
	if err != nil || !done {
		return false, err
	}
	back, err := addedStands(sh, found)
	return !back, err
}

// addedStands reports whether a fact commit c added is in HEAD.
func addedStands(sh *gitstore.Shard, c gitstore.Commit) (bool, error) {
	d, err := sh.Diff(c)
	if err != nil {
		return false, err
	}
	for _, ch := range d.Facts {
		if ch.Op != "+" {
			continue
		}
		if _, err := sh.Fact(ch.Fact.ID); err == nil {
			return true, nil
		} else if memd.ErrorCode(err) != memd.ENOTFOUND {
			return false, err
		}
	}
	return false, nil
}

// CitingCommits returns the commits of a shard whose Source-Message
// trailers name any of msgs (in chat, when it is given) and that are not
// already undone by a revert that still stands, newest first; cited is
// whether any commit ever cited one of them.
func CitingCommits(sh *gitstore.Shard, msgs []string, chat string) (commits []plumbing.Hash, cited bool, err error) {
	head, err := sh.Head()
	if err != nil {
		return nil, false, err
	}
	undone := make(map[string]bool)
	err = sh.Walk(head, func(c gitstore.Commit) error {
		p := Parse(c.Message)
		if p.Reverts != "" && !undone[c.Hash.String()] {
			undone[p.Reverts] = true
		}
		if (chat == "" || p.SourceChat == chat) && slices.ContainsFunc(p.SourceMessages, func(m string) bool { return slices.Contains(msgs, m) }) {
			cited = true
			back := false
			if undone[c.Hash.String()] {
				// Undone, says a trailer: unless what it added is back.
				var err error
				if back, err = addedStands(sh, c); err != nil {
					return err
				}
			}
			if !undone[c.Hash.String()] || back {
				commits = append(commits, c.Hash)
			}
		}
		return nil
	})
	return commits, cited, err
}

// RevertMessages undoes every commit that cites any of msgs (the messages
// of one exchange, or one message) in the given shards (those the caller
// may write), newest first in each shard, each commit once. Nothing left to
// undo is an empty list; ENOTFOUND when no commit ever cited them.
func (r Reverter) RevertMessages(shards []*gitstore.Shard, msgs []string, chat string) ([]memd.Revert, error) {
	out := []memd.Revert{}
	cited := false
	for _, sh := range shards {
		commits, ever, err := CitingCommits(sh, msgs, chat)
		if err != nil {
			return out, err
		}
		if r.DryRun {
			r.preview = make(preview)
		}
		cited = cited || ever
		for _, h := range commits {
			rv, err := r.revert(sh, h)
			if err != nil {
				return out, err
			}
			if len(rv.Changes) == 0 {
				continue // nothing of it stands
			}
			out = append(out, rv)
		}
	}
	if !cited {
		return out, memd.Errorf(memd.ENOTFOUND, "no commit cites source message %s in the shards you may write", quoteAll(msgs))
	}
	return out, nil
}

func quoteAll(msgs []string) string {
	q := make([]string, len(msgs))
	for i, m := range msgs {
		q[i] = fmt.Sprintf("%q", m)
	}
	return strings.Join(q, ", ")
}

// RestoreMessage is the message of the commit that puts back facts a git
// commit dropped by committing a stale index (see gitstore): a revert of
// that commit's removals.
func RestoreMessage(dropper gitstore.Commit, facts []memd.Fact) string {
	ids := make([]string, len(facts))
	for i, f := range facts {
		ids[i] = f.ID
	}
	subject := fmt.Sprintf("revert: restore %d %s that %s dropped by committing a stale index", len(facts), plural(len(facts), "fact", "facts"), dropper.Hash.String()[:12])
	return Message(subject, memd.Provenance{Op: memd.OpRevert, FactIDs: ids, LearnedBy: memd.LearnedExplicit, Reverts: dropper.Hash.String()})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
