package gitstore

// ApplyTogether commits changes in one group, as the writer does with
// changes queued while it was busy, and returns each one's error.
func (sh *Shard) ApplyTogether(cs ...Change) []error {
	errs := make([]error, len(cs))
	var batch []*request
	for i := range cs {
		if errs[i] = validateChange(&cs[i]); errs[i] == nil {
			batch = append(batch, &request{change: cs[i], done: make(chan struct{})})
		}
	}
	sh.commitGroup(batch)
	k := 0
	for i := range cs {
		if errs[i] == nil {
			errs[i] = batch[k].err
			k++
		}
	}
	return errs
}

// OwedRetryAfter is how long an owed restore waits on a main that has not
// moved; tests shorten it.
var OwedRetryAfter = &owedRetryAfter

// HandCommitWaited is told each time a write waits for a commit made by
// hand.
var HandCommitWaited = &handCommitWaited

// HandCommitMark is the file the hooks leave while git makes a commit.
const HandCommitMark = handCommitName

// StepsKeptFor is how long after memd's write a checkout is taken to have
// raced it.
var StepsKeptFor = &stepsKeptFor

// AwayBaseMark is the file naming where main was when memd first moved it
// with HEAD away.
const AwayBaseMark = awayBaseName

// PackedBases returns how many files of the shard hold a packed base.
func (sh *Shard) PackedBases() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return len(sh.bases)
}

// PackedBaseBytes returns the memory the store's packed bases take.
func (s *Store) PackedBaseBytes() int64 { return s.baseBytes.Load() }

// MaxPackedBases is how many files of a shard may hold a base.
const MaxPackedBases = maxPackedBases
