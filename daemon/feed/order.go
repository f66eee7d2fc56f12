package feed

import (
	"slices"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// The order of the feed. The hub reads a shard's new commits in batches,
// from the head it published last to the new one, and sends each batch in
// the order of its history: the new head's first-parent chain, oldest
// first, each commit of it after the commits it brought in (a merge's
// other parents and theirs), those parents first. A replay goes by the
// same batches, from the heads the hub published, so a subscriber resuming
// from any commit it was sent, a merged branch's among them, or memd's own
// that a person's pull later made a merge's second parent, gets exactly
// what followed it. Commits from before the hub's start are replayed in
// the order of the history from there.

// inFeedOrder orders commits, all of them reachable from head and closed
// under "parent of, and not reachable from where the range started" (what
// Range returns), in the feed's order.
func inFeedOrder(commits []gitstore.Commit, head gitstore.Hash) []gitstore.Commit {
	if len(commits) < 2 {
		return commits
	}
	byHash := make(map[gitstore.Hash]gitstore.Commit, len(commits))
	for _, c := range commits {
		byHash[c.Hash] = c
	}
	chain := firstParents(byHash, head)
	out := make([]gitstore.Commit, 0, len(commits))
	sent := make(map[gitstore.Hash]bool, len(commits))
	type frame struct {
		c    gitstore.Commit
		next int // the next parent to look at
	}
	for i := len(chain) - 1; i >= 0; i-- {
		// The commits a chain commit brought in, parents first: a walk
		// down its other parents, each commit written once its parents
		// among the range are.
		stack := []frame{{c: chain[i], next: 1}}
		sent[chain[i].Hash] = true
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(top.c.Parents) {
				p, in := byHash[top.c.Parents[top.next]]
				top.next++
				if in && !sent[p.Hash] {
					sent[p.Hash] = true
					stack = append(stack, frame{c: p})
				}
				continue
			}
			out = append(out, top.c)
			stack = stack[:len(stack)-1]
		}
	}
	return out
}

// firstParents returns the chain of first parents from head down to the
// first that commits lacks, head first.
func firstParents(commits map[gitstore.Hash]gitstore.Commit, head gitstore.Hash) []gitstore.Commit {
	var chain []gitstore.Commit
	for c, ok := commits[head]; ok; {
		chain = append(chain, c)
		if len(c.Parents) == 0 {
			break
		}
		c, ok = commits[c.Parents[0]]
	}
	return chain
}

// replayAfter returns the commits the feed sent after since, given the
// heads it published this run (oldest first, the last where the replay
// ends) and those of earlier runs before them, in the order it sent them.
func replayAfter(sh *gitstore.Shard, since gitstore.Hash, sent, earlier []gitstore.Hash, limit int) ([]gitstore.Commit, error) {
	if len(sent) == 0 || since == sent[len(sent)-1] {
		return nil, nil
	}
	var later [][]gitstore.Commit // the batches after since's, newest first
	n := 0
	k := len(sent) - 1
	for {
		if k == 0 && len(earlier) > 0 {
			sent = append(slices.Clip(earlier), sent...)
			k, earlier = len(earlier), nil
		}
		if k == 0 {
			break
		}
		commits, reached, err := after(sh, sent[k-1], sent[k], limit-n)
		if err != nil || !reached {
			// Past the limit, or a head that does not lead here (a reset,
			// a file of heads changed by hand): the history's order from
			// the last head that does.
			break
		}
		batch := inFeedOrder(commits, sent[k])
		if sent[k-1] == since {
			return joinNewestLast(batch, later), nil
		}
		if i := slices.IndexFunc(batch, func(c gitstore.Commit) bool { return c.Hash == since }); i >= 0 {
			return joinNewestLast(batch[i+1:], later), nil
		}
		if n += len(batch); n >= limit {
			break
		}
		later = append(later, batch)
		k--
	}
	older, err := historyAfter(sh, since, sent[k], limit-n, true)
	if err != nil {
		return nil, err
	}
	return joinNewestLast(older, later), nil
}

// joinNewestLast returns first followed by the batches, given newest first.
func joinNewestLast(first []gitstore.Commit, batches [][]gitstore.Commit) []gitstore.Commit {
	out := slices.Clone(first)
	for i := len(batches) - 1; i >= 0; i-- {
		out = append(out, batches[i]...)
	}
	return out
}

// historyAfter returns the commits up to head that since does not hold,
// in the history's order; with joined, only those after since in the
// order of the history from where since joined main: after one main's
// chain passes through, the same; after one a merge brought in (a
// branch's commit), what follows it in the order of the history from
// where that branch left the chain.
func historyAfter(sh *gitstore.Shard, since, head gitstore.Hash, limit int, joined bool) ([]gitstore.Commit, error) {
	if since == head {
		return nil, nil
	}
	if head.IsZero() || limit <= 0 {
		return nil, errNotOnMain(sh, since)
	}
	commits, reached, err := after(sh, since, head, limit)
	if err != nil {
		return nil, err
	}
	if !reached {
		return nil, errNotOnMain(sh, since)
	}
	byHash := make(map[gitstore.Hash]gitstore.Commit, len(commits))
	for _, c := range commits {
		byHash[c.Hash] = c
	}
	chain := firstParents(byHash, head)
	var below gitstore.Hash // where the chain leaves the range
	if n := len(chain); n > 0 && len(chain[n-1].Parents) > 0 {
		below = chain[n-1].Parents[0]
	}
	if below == since || !joined {
		return inFeedOrder(commits, head), nil
	}
	// since came in through a merge: the chain left the range at one of
	// its ancestors, below. The history from there holds since.
	all, reached, err := after(sh, below, head, limit)
	if err != nil {
		return nil, err
	}
	if !reached {
		return nil, errNotOnMain(sh, since)
	}
	ordered := inFeedOrder(all, head)
	for i, c := range ordered {
		if c.Hash == since {
			return ordered[i+1:], nil
		}
	}
	return nil, errNotOnMain(sh, since)
}

// errNotOnMain is the refusal of a since the feed cannot replay from.
func errNotOnMain(sh *gitstore.Shard, since gitstore.Hash) *memd.Error {
	return memd.Errorf(memd.ENOTFOUND, "commit %s is not on the main branch of %s (or more than %d commits back); subscribe without since for %s to start from now", since, sh.ID(), maxReplay, sh.ID())
}
