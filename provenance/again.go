package provenance

import (
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// How a commit changed a fact: taught it (a line added), took it away (a
// line removed), or rewrote it where it stood (both, one ID: its case or
// its date).
const (
	taught    = "+"
	removed   = "-"
	rewritten = "rewritten"
)

// factOps returns how a diff changed each fact it touches.
func factOps(d gitstore.Diff) map[string]string {
	ops := make(map[string]string, len(d.Facts))
	for _, ch := range d.Facts {
		if prev, ok := ops[ch.Fact.ID]; ok && prev != ch.Op {
			ops[ch.Fact.ID] = rewritten
		} else {
			ops[ch.Fact.ID] = ch.Op
		}
	}
	return ops
}

// changedAgain returns, for each commit of us, the facts it taught or
// took away that the rest of the history taught or took away too: a
// revert of the commit leaves each as that history has it, as a replay of
// the history without the commit would.
//
// The rest of the history is every commit HEAD reaches and the commit
// does not (git's commit..HEAD): those after it, and those of another
// line merged in (another daemon's, a person's clone). For each fact the
// commit changed, what counts is the last change of it on each line down
// from HEAD, in the history's order rather than by commit times (a
// burst of commits shares one second, and another machine's clock may be
// off): a fact the peer taught and then forgot was taken away on that
// line, and one forgotten there and taught again stands there. A fact
// the commit taught stands by another teaching, or by a rewrite on a line
// it is not below (the fact stood there without it); one it took away is
// gone by another removal. An edit of the commit's own (a rewrite) is
// always undone. Merges pass what their lines did; a revert's changes do
// not count (it puts a fact back as it stood, taught by what taught it
// before), nor those of a commit a standing revert undid, nor those of
// the commits undone together with it (together: the history replayed is
// without all of them).
func changedAgain(sh *gitstore.Shard, head gitstore.Hash, us, together []undoing) (map[gitstore.Hash]map[string]string, error) {
	out := make(map[gitstore.Hash]map[string]string, len(us))
	read := make(map[gitstore.Hash]map[string]string) // each commit's fact changes, diffed once
	for _, u := range together {
		read[u.c.Hash] = nil // changes nothing that counts
	}
	for _, u := range us {
		again := make(map[string]string)
		out[u.c.Hash] = again
		ops := factOps(u.d)
		for id, op := range ops {
			if op == rewritten {
				delete(ops, id)
			}
		}
		if len(ops) == 0 {
			continue
		}
		rest, _, err := sh.Range(u.c.Hash, head, -1)
		if err != nil {
			return nil, err
		}
		changes, err := restChanges(sh, rest, ops, read)
		if err != nil {
			return nil, err
		}
		below := descendants(u.c.Hash, rest)
		for id, op := range ops {
			if lastChangesAgree(head, rest, changes, id, func(c gitstore.Hash, other string) bool {
				return other == op || op == taught && other == rewritten && !below[c]
			}) {
				again[id] = op
			}
		}
	}
	return out, nil
}

// restChanges returns how each commit of rest (parents first) changed the
// facts of ops, for the commits that changed any and count: not merges,
// not memd's reverts, not commits a revert still standing undid. memd's
// own commits whose trailers name none of the facts are not diffed. read
// keeps every commit's changes between calls.
func restChanges(sh *gitstore.Shard, rest []gitstore.Commit, ops map[string]string, read map[gitstore.Hash]map[string]string) (map[gitstore.Hash]map[string]string, error) {
	changes := make(map[gitstore.Hash]map[string]string)
	rv := newReverts(sh)
	for _, c := range slices.Backward(rest) { // newest first: a revert before what it undid
		p := Parse(c.Message)
		if err := rv.see(c, p); err != nil {
			return nil, err
		}
		if undone, err := rv.undone(c); err != nil || undone {
			if err != nil {
				return nil, err
			}
			continue
		}
		byMemd := madeByMemd(c, p)
		if len(c.Parents) > 1 || p.Op == memd.OpRevert && byMemd {
			continue
		}
		if byMemd && !slices.ContainsFunc(p.FactIDs, func(id string) bool { return ops[id] != "" }) {
			continue
		}
		did, ok := read[c.Hash] // nil for a commit undone together
		if !ok {
			d, err := sh.Diff(c)
			if err != nil {
				return nil, err
			}
			did = factOps(d)
			read[c.Hash] = did
		}
		for id := range ops {
			if op, ok := did[id]; ok {
				if changes[c.Hash] == nil {
					changes[c.Hash] = make(map[string]string)
				}
				changes[c.Hash][id] = op
			}
		}
	}
	return changes, nil
}

// descendants returns the commits of rest (parents first) that have c
// among their ancestors.
func descendants(c gitstore.Hash, rest []gitstore.Commit) map[gitstore.Hash]bool {
	below := make(map[gitstore.Hash]bool)
	for _, r := range rest {
		if slices.ContainsFunc(r.Parents, func(p gitstore.Hash) bool { return p == c || below[p] }) {
			below[r.Hash] = true
		}
	}
	return below
}

// lastChangesAgree reports whether, going down from head through the
// commits of rest, any change of fact id met first on its line (no
// commit between it and head changing the fact) is one agree accepts.
func lastChangesAgree(head gitstore.Hash, rest []gitstore.Commit, changes map[gitstore.Hash]map[string]string, id string, agree func(c gitstore.Hash, op string) bool) bool {
	parents := make(map[gitstore.Hash][]gitstore.Hash, len(rest))
	for _, c := range rest {
		parents[c.Hash] = c.Parents
	}
	seen := make(map[gitstore.Hash]bool)
	stack := []gitstore.Hash{head}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ps, inRest := parents[c]
		if seen[c] || !inRest {
			continue
		}
		seen[c] = true
		if op, ok := changes[c][id]; ok {
			if agree(c, op) {
				return true
			}
			continue // this line's last change of it: what is below does not count
		}
		stack = append(stack, ps...)
	}
	return false
}
