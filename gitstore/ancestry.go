package gitstore

import (
	"container/heap"

	"github.com/go-git/go-git/v5/plumbing"
)

// Range returns the commits reachable from to but not from from (git's
// from..to), parents before children. reached reports whether from is an
// ancestor of to; with a zero from, whether the walk got to the root. At
// most limit commits are collected; past that, reached is false.
//
// The walk goes newest first from both ends and stops once every commit
// still queued is an ancestor of from, so its cost is the number of commits
// in the range, not the length of the history.
func (sh *Shard) Range(from, to plumbing.Hash, limit int) (commits []Commit, reached bool, err error) {
	if to.IsZero() || to == from {
		return nil, true, nil
	}
	hidden := make(map[plumbing.Hash]bool) // ancestors of from seen so far
	seen := make(map[plumbing.Hash]bool)
	q := &commitQueue{}
	push := func(h plumbing.Hash) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		c, err := sh.ReadCommit(h)
		if err != nil {
			return err
		}
		heap.Push(q, c)
		return nil
	}
	if !from.IsZero() {
		// An unknown from (a rewritten branch, a pruned commit) hides
		// nothing: the walk then reports it did not reach it.
		if sh.db.Has(from) {
			hidden[from] = true
			if err := push(from); err != nil {
				return nil, false, err
			}
		}
	}
	if err := push(to); err != nil {
		return nil, false, err
	}
	var popped []Commit
	for q.Len() > 0 && sh.anyShown(*q, hidden) {
		c := heap.Pop(q).(Commit)
		if hidden[c.Hash] {
			for _, p := range c.Parents {
				hidden[p] = true
				if err := push(p); err != nil {
					return nil, false, err
				}
			}
			continue
		}
		if len(popped) == limit {
			return nil, false, nil
		}
		popped = append(popped, c)
		for _, p := range c.Parents {
			if p == from {
				reached = true
			}
			if err := push(p); err != nil {
				return nil, false, err
			}
		}
	}
	if from.IsZero() {
		reached = true
	}
	// A clock skewed commit may have been taken before the walk learnt it
	// is an ancestor of from.
	kept := popped[:0]
	for _, c := range popped {
		if !hidden[c.Hash] {
			kept = append(kept, c)
		}
	}
	return parentsFirst(kept), reached, nil
}

// anyShown reports whether a queued commit is not (yet) known to be an
// ancestor of from.
func (sh *Shard) anyShown(q commitQueue, hidden map[plumbing.Hash]bool) bool {
	for _, c := range q {
		if !hidden[c.Hash] {
			return true
		}
	}
	return false
}

// parentsFirst orders commits given newest first so that every commit comes
// after those of its parents that are among them. Commits of one group
// share a commit time, so time alone does not order them.
func parentsFirst(newestFirst []Commit) []Commit {
	byHash := make(map[plumbing.Hash]int, len(newestFirst))
	for i, c := range newestFirst {
		byHash[c.Hash] = i
	}
	out := make([]Commit, 0, len(newestFirst))
	done := make([]bool, len(newestFirst))
	type frame struct{ i, next int } // commit index, next parent to look at
	for start := len(newestFirst) - 1; start >= 0; start-- {
		if done[start] {
			continue
		}
		stack := []frame{{i: start}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			parents := newestFirst[top.i].Parents
			if top.next < len(parents) {
				p, in := byHash[parents[top.next]]
				top.next++
				if in && !done[p] {
					done[p] = true // claimed: no other path pushes it again
					stack = append(stack, frame{i: p})
				}
				continue
			}
			done[top.i] = true
			out = append(out, newestFirst[top.i])
			stack = stack[:len(stack)-1]
		}
	}
	return out
}

// mergeBase returns the newest common ancestor of a and b, or the zero hash
// when their histories are unrelated.
func (sh *Shard) mergeBase(a, b plumbing.Hash) (plumbing.Hash, error) {
	const fromA, fromB = 1, 2
	flags := map[plumbing.Hash]uint8{a: fromA}
	flags[b] |= fromB
	done := make(map[plumbing.Hash]uint8)
	q := &commitQueue{}
	for _, h := range []plumbing.Hash{a, b} {
		c, err := sh.ReadCommit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		heap.Push(q, c)
	}
	for q.Len() > 0 {
		c := heap.Pop(q).(Commit)
		f := flags[c.Hash]
		if f == fromA|fromB {
			return c.Hash, nil
		}
		if done[c.Hash] == f {
			continue // queued twice
		}
		done[c.Hash] = f
		for _, p := range c.Parents {
			if flags[p]|f == flags[p] {
				continue
			}
			flags[p] |= f
			pc, err := sh.ReadCommit(p)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			heap.Push(q, pc)
		}
	}
	return plumbing.ZeroHash, nil
}
