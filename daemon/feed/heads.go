package feed

import (
	"errors"
	"slices"
	"sync"

	"github.com/memd/memd/gitstore"
)

// shardFeed is what the hub has published of one shard.
//
// The heads it published are kept, past a restart, in the shard's file of
// heads (gitstore's FeedHeads): each head is written before its batch goes
// out, and the head the hub started at ends a batch of its own, the
// commits made while memd was down. A start reads the file's end alone
// (the whole file only to cut it back or mend a last line cut short), a
// resume reads it for the heads of earlier runs while it registers
// (earlierHeads), and a shard holds in memory this run's heads alone.
type shardFeed struct {
	mu   sync.Mutex
	head gitstore.Hash // the last commit published
	// sent holds the heads published this run, oldest first, ending
	// with head: each batch the hub read is the commits between two of
	// them, in the feed's order, and a replay from a commit of one goes
	// on from there (see replayAfter). It starts at the hub's start (the
	// zero hash for a shard first seen after it) or at a reset, and lets
	// go of its older half past maxSent.
	sent []gitstore.Hash
	// fresh marks a shard first seen after the hub's start: its history
	// is news, and a file of heads in it is not its feed's.
	fresh bool
	// started is set once the file is brought up to the start; inFile
	// is about how many heads it holds (it is cut back when long), -1
	// while it cannot be read; warned, that a failure to keep it was
	// logged.
	started bool
	inFile  int
	warned  bool
}

// maxSent bounds the heads a shard's feed keeps, in memory (about 100
// KB) and in its file (170 KB): past it the oldest half goes, and a replay
// from a commit older than those left is read in the history's order.
const maxSent = 4096

// published records head as published: after a batch that followed the
// last, or, reset, as the start of what follows.
func (f *shardFeed) published(head gitstore.Hash, reset bool) {
	if reset {
		f.sent = f.sent[:0]
	}
	if len(f.sent) > maxSent {
		f.sent = slices.Clone(f.sent[len(f.sent)-maxSent/2:]) // let go of the oldest half at once
	}
	f.head, f.sent = head, append(f.sent, head)
}

// startFile brings the shard's file of heads up to the hub's start, at the
// feed's first use of the shard: the head it started at is added unless it
// is the last. A last line cut short (a crash while writing it) has the
// file written again. A file that cannot be read is left as it is, and
// not kept this run.
func (f *shardFeed) startFile(sh *gitstore.Shard) error {
	if f.started {
		return nil
	}
	f.started = true
	if f.fresh {
		f.inFile = len(f.sent)
		return sh.SetFeedHeads(f.sent)
	}
	last, n, whole, err := sh.FeedHeadsEnd()
	switch {
	case err != nil:
		f.inFile = -1
		return err
	case whole && n > 0 && last == f.head:
		f.inFile = n
		return nil
	case whole:
		f.inFile = n
		return f.keepHead(sh, f.head, false)
	}
	heads, _, err := sh.FeedHeads()
	if err != nil {
		f.inFile = -1
		return err
	}
	if len(heads) == 0 || heads[len(heads)-1] != f.head {
		heads = append(heads, f.head)
	}
	return f.setFile(sh, heads)
}

// keepHead writes head to the shard's file of heads, as published next, or
// after a reset as the first; a file grown to maxSent is written anew with
// its newest heads, head the last of maxSent/2.
func (f *shardFeed) keepHead(sh *gitstore.Shard, head gitstore.Hash, reset bool) error {
	switch {
	case f.inFile < 0:
		return nil
	case reset:
		return f.setFile(sh, []gitstore.Hash{head})
	case f.inFile < maxSent:
		f.inFile++
		return sh.AddFeedHead(head)
	}
	heads, _, err := sh.FeedHeads()
	if err != nil {
		f.inFile = 0 // cut back once it has grown by maxSent more
		return errors.Join(err, sh.AddFeedHead(head))
	}
	return f.setFile(sh, append(heads, head))
}

// setFile writes the shard's file of heads anew, with the newest maxSent/2
// of heads at most.
func (f *shardFeed) setFile(sh *gitstore.Shard, heads []gitstore.Hash) error {
	if len(heads) > maxSent/2 {
		heads = heads[len(heads)-maxSent/2:]
	}
	f.inFile = len(heads)
	return sh.SetFeedHeads(heads)
}

// earlierHeads returns the heads the shard's file holds before sent[0],
// the oldest head the feed holds in memory, for a replay reaching back past
// it: the file's heads up to where sent's begin (sent[0], then sent[1]).
// None when the file does not hold sent's start (a shard first seen after
// the start, a file cut back or written anew since, or one that could not
// be written). The caller holds the shard's feed: a publisher may cut the
// file back as soon as it is let go.
func earlierHeads(sh *gitstore.Shard, sent []gitstore.Hash) ([]gitstore.Hash, error) {
	if len(sent) == 0 || sent[0].IsZero() {
		return nil, nil
	}
	heads, _, err := sh.FeedHeads()
	if err != nil {
		return nil, err
	}
	for i := len(heads) - 1; i >= 0; i-- {
		if heads[i] == sent[0] && (len(sent) == 1 || i+1 == len(heads) || heads[i+1] == sent[1]) {
			return heads[:i], nil
		}
	}
	return nil, nil
}
