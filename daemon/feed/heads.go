package feed

import (
	"slices"
	"sync"

	"github.com/memd/memd/gitstore"
)

// shardFeed is what the hub has published of one shard.
//
// The heads it published are kept, past a restart, in the shard's file of
// heads (gitstore's FeedHeads): each head is written before its batch goes
// out, and the head the hub started at ends a batch of its own, the
// commits made while memd was down. A start reads the file's end alone;
// the heads of earlier runs are read in when a subscriber first resumes
// the shard, so idle shards hold one head.
type shardFeed struct {
	mu   sync.Mutex
	head gitstore.Hash // the last commit published
	// sent holds the heads published, oldest first, ending with head:
	// each batch the hub read is the commits between two of them, in
	// the feed's order, and a replay from a commit of one goes on from
	// there (see replayAfter). It starts at the hub's start (the zero
	// hash for a shard first seen after it) or at a reset, and reaches
	// back into earlier runs once readOlder has read them.
	sent []gitstore.Hash
	// fresh marks a shard first seen after the hub's start: its history
	// is news, and a file of heads in it is not its feed's.
	fresh bool
	// started is set once the file is brought up to the start; older,
	// once its heads of earlier runs are in sent.
	started, older bool
	// inFile is about how many heads the file holds (it is cut back when
	// long), -1 while it cannot be kept; warned, that a failure to keep
	// it was logged.
	inFile int
	warned bool
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
	f.head, f.sent = head, append(lastHalf(f.sent), head)
}

// lastHalf returns heads, or the newer half of them when there are more
// than maxSent.
func lastHalf(heads []gitstore.Hash) []gitstore.Hash {
	if len(heads) > maxSent {
		return slices.Clone(heads[len(heads)-maxSent/2:]) // let go of the oldest half at once
	}
	return heads
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
		f.older, f.inFile = true, len(f.sent)
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
		f.inFile = n + 1
		return sh.AddFeedHead(f.head)
	}
	heads, _, err := sh.FeedHeads()
	if err != nil {
		f.inFile = -1
		return err
	}
	if len(heads) == 0 || heads[len(heads)-1] != f.head {
		heads = append(heads, f.head)
	}
	heads = lastHalf(heads)
	f.inFile = len(heads)
	return sh.SetFeedHeads(heads)
}

// keepHead writes head to the shard's file of heads, as published next, or
// after a reset as the first; a file grown past maxSent is cut back to
// its newer half first.
func (f *shardFeed) keepHead(sh *gitstore.Shard, head gitstore.Hash, reset bool) error {
	switch {
	case f.inFile < 0:
		return nil
	case reset:
		f.inFile, f.older = 1, true // nothing before a reset is replayed by batch
		return sh.SetFeedHeads([]gitstore.Hash{head})
	case f.inFile < maxSent:
		f.inFile++
		return sh.AddFeedHead(head)
	}
	heads, _, err := sh.FeedHeads()
	if err != nil {
		f.inFile = 0 // tried again once the file has grown by maxSent more
		return err
	}
	if len(heads) > maxSent/2 {
		heads = heads[len(heads)-maxSent/2:]
	}
	heads = append(heads, head)
	f.inFile = len(heads)
	return sh.SetFeedHeads(heads)
}

// readOlder puts the heads of earlier runs in sent, at the shard's first
// resume, from the file: it holds this run's heads too when every write
// of them went through (it then ends with head); if not, this run's are
// all there is.
func (f *shardFeed) readOlder(sh *gitstore.Shard) error {
	if f.older || f.inFile < 0 {
		return nil
	}
	f.older = true
	heads, _, err := sh.FeedHeads()
	if err != nil {
		return err
	}
	if len(heads) > len(f.sent) && heads[len(heads)-1] == f.head {
		f.sent = lastHalf(heads)
	}
	return nil
}
