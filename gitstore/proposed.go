package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd/gitstore/internal/odb"
)

// Review mode keeps changes waiting for a person on a branch of their own,
// on top of main, and a record of those a person turned down.
const (
	proposedRef = "refs/heads/proposed"
	rejectedRef = "refs/memd/rejected"
	// baseRef is main as it was when the proposals were last made on it:
	// the proposals are the commits on proposed after it. Commits main
	// had then and a person later dropped from it are not proposals.
	baseRef = "refs/memd/proposed-base"
)

// maxProposals bounds the proposals one shard holds; past it, new ones are
// refused until a person reviews some.
const maxProposals = 1000

// HasProposals reports whether the shard has a branch proposed. memd
// removes the branch once nothing waits on it.
func (sh *Shard) HasProposals() bool {
	h, err := readRef(sh.gitDir, proposedRef)
	return err == nil && !h.IsZero()
}

// Proposals returns the commits on the branch proposed after the main they
// were made on, oldest first, that main does not have, and main's head. A
// person's `git merge proposed` leaves none.
func (sh *Shard) Proposals() (main Hash, list []Commit, err error) {
	if main, err = readRef(sh.gitDir, mainRef); err != nil {
		return main, nil, err
	}
	tip, err := readRef(sh.gitDir, proposedRef)
	if err != nil || tip.IsZero() {
		return main, nil, err
	}
	base, err := readRef(sh.gitDir, baseRef)
	if err != nil {
		return main, nil, err
	}
	if base.IsZero() {
		base = main // a branch made before memd kept its base
	}
	list, _, err = sh.Range(base, tip, maxProposals+1)
	if errors.Is(err, ErrTooFar) {
		return main, nil, fmt.Errorf("shard %s: the branch proposed holds more than %d commits beyond main", sh.id, maxProposals)
	}
	if err != nil {
		return main, nil, fmt.Errorf("shard %s: read the proposals: %w", sh.id, err)
	}
	// Those main has taken in, by a merge or a fast-forward, are not
	// proposals any more: the newest of them and all before it.
	for i := len(list) - 1; i >= 0; i-- {
		if sh.isAncestor(list[i].Hash, main) {
			list = list[i+1:]
			break
		}
	}
	return main, list, nil
}

// isAncestor reports whether commit a is main or one of its ancestors
// within ancestryLimit commits (false past it).
func (sh *Shard) isAncestor(a, main Hash) bool {
	if a == main {
		return true
	}
	if main.IsZero() {
		return false
	}
	_, reached, err := sh.Range(a, main, ancestryLimit)
	return err == nil && reached
}

// Propose commits a change on the branch proposed, on top of the
// proposals already there (the branch starts at main). It neither moves
// main nor touches the working tree. A change main or an earlier proposal
// already makes commits nothing.
func (sh *Shard) Propose(c Change) (Result, error) {
	if err := validateChange(&c); err != nil {
		return Result{}, err
	}
	if c.Note != nil {
		return Result{}, errors.New("a note change cannot be proposed")
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err := sh.errIfClosed(); err != nil {
		return Result{}, err
	}
	main, list, err := sh.Proposals()
	if err != nil {
		return Result{}, err
	}
	if len(list) >= maxProposals {
		return Result{}, fmt.Errorf("shard %s holds %d proposals; review some first", sh.id, len(list))
	}
	base := main
	if len(list) > 0 {
		base = list[len(list)-1].Hash
	} else if err := sh.setBase(main); err != nil {
		return Result{}, err
	}
	old, _ := readRef(sh.gitDir, proposedRef)
	results, head, err := sh.commitOn(base, []Change{c})
	if err != nil || head == base {
		if err == nil {
			return *results[0], nil
		}
		return Result{}, err
	}
	if err := sh.moveRef(proposedRef, old, head); err != nil {
		return Result{}, err
	}
	return *results[0], nil
}

// RebuildProposals puts the proposals back on top of main as it is now:
// each one's change, as redo gives it (false drops the proposal), is made
// again there, as a new commit with the same author and message. A
// proposal that no longer changes anything (main has it now) is dropped,
// and so is one that changes no fact (a note a person committed on the
// branch by hand), with a warning in the log. It returns the proposals
// that were made again, by their commits before and after.
func (sh *Shard) RebuildProposals(redo func(Commit) (Change, bool, error)) (kept map[Hash]Hash, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err := sh.errIfClosed(); err != nil {
		return nil, err
	}
	main, list, err := sh.Proposals()
	if err != nil {
		return nil, err
	}
	old, err := readRef(sh.gitDir, proposedRef)
	if err != nil || old.IsZero() {
		return nil, err
	}
	var changes []Change
	var from []Hash
	for _, c := range list {
		ch, ok, err := redo(c)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if err := validateChange(&ch); err != nil {
			sh.store.log.Warn("dropped a proposal memd cannot make again on main", "shard", sh.id, "commit", short(c.Hash), "err", err)
			continue
		}
		changes = append(changes, ch)
		from = append(from, c.Hash)
	}
	kept = make(map[Hash]Hash)
	head := main
	if len(changes) > 0 {
		results, h, err := sh.commitOn(main, changes)
		if err != nil {
			return nil, err
		}
		head = h
		for i, r := range results {
			if !r.Commit.IsZero() {
				kept[from[i]] = r.Commit
			}
		}
	}
	if head == main {
		// Nothing waits: the branch goes, so that nothing main had can
		// come back through it.
		return kept, sh.removeRef(proposedRef, old)
	}
	// The base first: a crash before the branch moves leaves the old
	// proposals on an ancestor of the new base's main, listed as before.
	if err := sh.setBase(main); err != nil {
		return nil, err
	}
	if head == old {
		return kept, nil
	}
	return kept, sh.moveRef(proposedRef, old, head)
}

// setBase records the main the proposals are made on.
func (sh *Shard) setBase(main Hash) error {
	old, err := readRef(sh.gitDir, baseRef)
	if err != nil || old == main {
		return err
	}
	if main.IsZero() {
		return sh.removeRef(baseRef, old)
	}
	return sh.moveRef(baseRef, old, main)
}

// removeRef deletes a branch other than main if it still points at old,
// with git's lock protocol.
func (sh *Shard) removeRef(name string, old Hash) error {
	l, err := lockRef(sh.gitDir, name, old, Hash{})
	if err != nil {
		return err
	}
	defer l.release()
	if err := os.Remove(filepath.Join(sh.gitDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	if h, err := readPackedRef(sh.gitDir, name); err == nil && !h.IsZero() {
		// memd's refs are loose; one a person packed stays in packed-refs.
		sh.store.log.Warn("a review ref stays in packed-refs; remove it with git update-ref -d", "shard", sh.id, "ref", name)
	}
	return nil
}

// RecordRejected keeps a rejected proposal reachable, under
// refs/memd/rejected: a commit whose parents are the record before it and
// the proposal, with message saying who rejected it. `git log
// refs/memd/rejected` lists them.
func (sh *Shard) RecordRejected(proposal Commit, author Signature, message string) (Hash, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err := sh.errIfClosed(); err != nil {
		return Hash{}, err
	}
	prev, err := readRef(sh.gitDir, rejectedRef)
	if err != nil {
		return Hash{}, err
	}
	parents := []Hash{proposal.Hash}
	if !prev.IsZero() {
		parents = []Hash{prev, proposal.Hash}
	}
	b := odb.NewBuilder()
	tree := b.Add(plumbing.TreeObject, nil)
	when := sh.store.opts.Now()
	commit := b.Add(plumbing.CommitObject, encodeCommit(tree, parents, author, when, Committer(), when, message))
	if err := sh.writeObjects(b); err != nil {
		return Hash{}, err
	}
	return commit, sh.moveRef(rejectedRef, prev, commit)
}

// Rejections returns the records of rejected proposals, newest first, each
// with the proposal it rejected.
func (sh *Shard) Rejections(fn func(record, proposal Commit) error) error {
	h, err := readRef(sh.gitDir, rejectedRef)
	for err == nil && !h.IsZero() {
		var rec, prop Commit
		if rec, err = sh.ReadCommit(h); err != nil {
			break
		}
		if len(rec.Parents) == 0 {
			break
		}
		if prop, err = sh.ReadCommit(rec.Parents[len(rec.Parents)-1]); err != nil {
			break
		}
		if err = fn(rec, prop); err != nil {
			break
		}
		h = Hash{}
		if len(rec.Parents) == 2 {
			h = rec.Parents[0]
		}
	}
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// commitOn writes a chain of commits, one per change, on top of base,
// without moving any branch; it returns each change's result and the last
// commit (base when nothing changed). The caller holds sh.mu.
func (sh *Shard) commitOn(base Hash, changes []Change) ([]*Result, Hash, error) {
	// On main, the files the writer holds parsed already (the group reads
	// that state and changes none of it); on the proposals' tip, those
	// kept from the last proposal; elsewhere they are read.
	st := sh.cur.Load()
	own := false
	if st == nil || st.head != base {
		own = true
		if st = sh.proposed; st == nil || st.head != base {
			var err error
			if st, err = sh.load(nil, base); err != nil {
				return nil, base, fmt.Errorf("shard %s: read %s: %w", sh.id, short(base), err)
			}
		}
	}
	var err error
	g := newGroup(sh, st)
	results := make([]*Result, len(changes))
	for i, c := range changes {
		if results[i], err = g.add(c); err != nil {
			return nil, base, err
		}
	}
	if err := g.build(); err != nil {
		return nil, base, err
	}
	if g.b.Len() == 0 {
		return results, base, nil
	}
	if err := sh.writeObjects(g.b); err != nil {
		return nil, base, err
	}
	if own {
		sh.proposed = g.commitState() // st is memd's own copy: its index may change
	} else {
		sh.proposed = nil
	}
	return results, g.head, nil
}

// writeObjects puts a builder's objects on disk, durably unless the store
// has NoSync, for a branch other than main to point at (main's writer has
// its own order of steps, see publish).
func (sh *Shard) writeObjects(b *odb.Builder) error {
	sp, err := sh.db.StagePack(b)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if err := sp.Publish(); err != nil {
		sp.Abort()
		return err
	}
	defer sp.Close()
	if sh.store.opts.NoSync {
		return nil
	}
	// The pack's name in objects/pack too: the ref that names its commit
	// is synced next, and must not outlive it in a power cut.
	return durable(sp.Files(), filepath.Join(sh.gitDir, "objects", "pack", "x"))
}

// moveRef moves a branch other than main from old to next, with git's lock
// protocol; main has its own (advance), which also updates the working
// tree.
func (sh *Shard) moveRef(name string, old, next Hash) error {
	if err := os.MkdirAll(filepath.Dir(filepath.Join(sh.gitDir, name)), 0o755); err != nil {
		return err
	}
	l, err := lockRef(sh.gitDir, name, old, next)
	if err != nil {
		return err
	}
	if !sh.store.opts.NoSync {
		if err := durable([]*os.File{l.f}); err != nil {
			l.release()
			return err
		}
	}
	if err := l.commit(); err != nil {
		return err
	}
	if sh.store.opts.NoSync {
		return nil
	}
	return syncDirOf(filepath.Join(sh.gitDir, name))
}

// clearReviewLocks removes locks on the review refs that memd left when it
// stopped (naming a commit memd made, or one that never reached the disk),
// and any a minute old: what they were moving to is made again (a proposal
// by the learner, which retries; a rejection, which the reviewer repeats).
// A lock git holds now names a person's commit and is left alone.
func (sh *Shard) clearReviewLocks() {
	for _, name := range []string{proposedRef, rejectedRef, baseRef} {
		os.Remove(stagedLockPath(sh.gitDir, name))
		lock := filepath.Join(sh.gitDir, name+".lock")
		b, err := os.ReadFile(lock)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		_, ours := sh.ownLock(b)
		missing := IsHash(s) && !sh.db.Has(NewHash(s))
		st, serr := os.Stat(lock)
		old := serr == nil && time.Since(st.ModTime()) > time.Minute
		if ours || missing || old {
			os.Remove(lock)
		}
	}
}
