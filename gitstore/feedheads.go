package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// feedHeadsName is the file in a shard's .git where memd's feed keeps the
// heads it published, one a line, oldest first, so that a replay after a
// restart goes by the batches subscribers were sent. Git does not read it.
const feedHeadsName = "memd-feed-heads"

// FeedHeads returns the heads the feed kept (AddFeedHead, SetFeedHeads),
// oldest first, and whether the file ends as written: a line that is not
// a hash, as a write cut short by a crash leaves, is passed over, and the
// file is then best written again before it is added to. No file is no
// heads.
func (sh *Shard) FeedHeads() (heads []Hash, whole bool, err error) {
	b, err := os.ReadFile(filepath.Join(sh.gitDir, feedHeadsName))
	if os.IsNotExist(err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the feed's heads of %s: %w", sh.id, err)
	}
	whole = len(b) == 0 || b[len(b)-1] == '\n'
	for line := range bytes.Lines(b) {
		h := string(bytes.TrimSpace(line))
		if !IsHash(h) {
			whole = false
			continue
		}
		heads = append(heads, NewHash(h))
	}
	return heads, whole, nil
}

// AddFeedHead adds a head to the feed's heads. It is not synced: a head a
// crash loses only merges two of the feed's batches in a later replay.
func (sh *Shard) AddFeedHead(h Hash) error {
	f, err := os.OpenFile(filepath.Join(sh.gitDir, feedHeadsName), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("keeping the feed's head of %s: %w", sh.id, err)
	}
	_, err = f.WriteString(h.String() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keeping the feed's head of %s: %w", sh.id, err)
	}
	return nil
}

// SetFeedHeads replaces the feed's heads, at once: a crash leaves the old
// ones or these.
func (sh *Shard) SetFeedHeads(heads []Hash) error {
	var b bytes.Buffer
	for _, h := range heads {
		b.WriteString(h.String() + "\n")
	}
	path := filepath.Join(sh.gitDir, feedHeadsName)
	if err := os.WriteFile(path+".new", b.Bytes(), 0o644); err != nil {
		os.Remove(path + ".new")
		return fmt.Errorf("keeping the feed's heads of %s: %w", sh.id, err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		return fmt.Errorf("keeping the feed's heads of %s: %w", sh.id, err)
	}
	return nil
}
