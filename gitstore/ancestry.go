package gitstore

import (
	"container/heap"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"time"
)

// ErrTooFar means a walk went past its limit of commits.
var ErrTooFar = errors.New("too many commits to walk")

// Range returns the commits reachable from to but not from from (git's
// from..to), parents before children. reached reports whether from is an
// ancestor of to; with a zero from, it is true. Past limit commits it
// returns ErrTooFar.
//
// The walk goes newest first from both ends. Its cost is the commits in
// the range, plus, when they include merges or do not lead to from, the
// ancestors of from as recent as the oldest of them: a commit can only be
// known not to be an ancestor of from once the walk down from from has
// passed its time. Commits of one group share a commit time, and another
// machine's clock may be off, so a few more are walked than times suggest.
//
// It is long because the two walks advance together in one loop.
func (sh *Shard) Range(from, to Hash, limit int) (commits []Commit, reached bool, err error) {
	if to.IsZero() || to == from {
		return nil, true, nil
	}
	hidden := make(map[Hash]bool) // ancestors of from seen so far
	seen := make(map[Hash]bool)
	q := &commitQueue{}
	push := func(h Hash) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		c, err := sh.ReadCommit(h)
		if err != nil {
			return err
		}
		heap.Push(q, queued{c, !hidden[h]})
		return nil
	}
	// An unknown from (a rewritten branch, a pruned commit) hides nothing:
	// the walk then reports it did not reach it.
	if !from.IsZero() && sh.db.Has(from) {
		hidden[from] = true
		if err := push(from); err != nil {
			return nil, false, err
		}
	}
	if err := push(to); err != nil {
		return nil, false, err
	}
	var popped []Commit
	taken := make(map[Hash]Commit) // commits popped as not hidden
	var oldest time.Time           // of the commits taken
	linear := true                 // every commit taken has one parent
	// hide marks a commit as an ancestor of from, and with it the parents
	// of every commit taken already.
	hide := func(h Hash) error {
		stack := []Hash{h}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if hidden[h] {
				continue
			}
			hidden[h] = true
			if c, ok := taken[h]; ok {
				stack = append(stack, c.Parents...)
			} else if err := push(h); err != nil {
				return err
			}
		}
		return nil
	}
	const slop = 8 // hidden commits walked past the time that says stop
	extra := 0
	for q.Len() > 0 {
		if !anyShown(*q, hidden) {
			if linear && reached {
				break // a chain down to from: nothing taken can be hidden
			}
			if (*q)[0].Time.Before(oldest) {
				if extra++; extra > slop {
					break
				}
			}
		}
		c := heap.Pop(q).(queued).Commit
		if hidden[c.Hash] {
			for _, p := range c.Parents {
				if err := hide(p); err != nil {
					return nil, false, err
				}
			}
			continue
		}
		if len(popped) == limit {
			return nil, false, ErrTooFar
		}
		popped = append(popped, c)
		taken[c.Hash] = c
		if oldest.IsZero() || c.Time.Before(oldest) {
			oldest = c.Time
		}
		linear = linear && len(c.Parents) <= 1
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
func anyShown(q commitQueue, hidden map[Hash]bool) bool {
	for _, e := range q {
		if !hidden[e.Hash] {
			return true
		}
	}
	return false
}

// queued is a commit in a walk's queue; shown says, in Range, it was not
// known to be an ancestor of from when queued.
type queued struct {
	Commit
	shown bool
}

// commitQueue orders newest first (by committer time) and, among commits of
// one time (a group), shown ones first, so that Range's walk down from to
// does not wander down from's side.
type commitQueue []queued

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	if !q[i].Time.Equal(q[j].Time) {
		return q[i].Time.After(q[j].Time)
	}
	return q[i].shown && !q[j].shown
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *commitQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// parentsFirst orders commits given newest first so that every commit comes
// after those of its parents that are among them. Commits of one group
// share a commit time, so time alone does not order them.
func parentsFirst(newestFirst []Commit) []Commit {
	byHash := make(map[Hash]int, len(newestFirst))
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

// mergeBase returns the best common ancestor of main and theirs, given
// the commits theirs has that main lacks (newer): one of the commits those
// stand on that is not an ancestor of another; zero when the histories are
// unrelated.
func (sh *Shard) mergeBase(newer []Commit) (Hash, error) {
	in := make(map[Hash]bool, len(newer))
	for _, c := range newer {
		in[c.Hash] = true
	}
	var bases []Hash
	for _, c := range newer {
		for _, p := range c.Parents {
			if !in[p] && !slices.Contains(bases, p) {
				bases = append(bases, p)
			}
		}
	}
	// Drop each base that is an ancestor of another.
	best := bases[:0]
	for i, b := range bases {
		below := false
		for j, other := range bases {
			if i == j {
				continue
			}
			_, reached, err := sh.Range(b, other, maxIntegrate)
			if err != nil {
				return Hash{}, err
			}
			if reached {
				below = true
				break
			}
		}
		if !below {
			best = append(best, b)
		}
	}
	if len(best) == 0 {
		return Hash{}, nil
	}
	// Criss-cross histories have several; any of them keeps every fact
	// both sides hold, and the newest knows the most removals.
	newest, at := best[0], time.Time{}
	for _, b := range best {
		c, err := sh.ReadCommit(b)
		if err != nil {
			return Hash{}, err
		}
		if c.Time.After(at) {
			newest, at = b, c.Time
		}
	}
	return newest, nil
}

// IsAncestor reports whether commit a is an ancestor of commit b (or b
// itself), asking git, whose walk reads a long history far faster than
// Range: for when Range went past its limit. A commit the shard does not
// hold is an error.
func (sh *Shard) IsAncestor(a, b Hash) (bool, error) {
	err := exec.Command("git", "-C", sh.dir, "merge-base", "--is-ancestor", a.String(), b.String()).Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false, nil
	}
	return false, fmt.Errorf("shard %s: is %s an ancestor of %s: %w", sh.id, short(a), short(b), err)
}
