package gitstore

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// feedHeadsName is the file in a shard's .git where memd's feed keeps the
// heads it published, one a line, oldest first, so that a replay after a
// restart goes by the batches subscribers were sent. Git does not read it.
const feedHeadsName = "memd-feed-heads"

// FeedHeads returns the heads the feed kept (AddFeedHead, SetFeedHeads),
// oldest first, and whether the file is as written: a line that is not a
// hash, as a write cut short by a crash leaves, is passed over. No file is
// no heads.
func (sh *Shard) FeedHeads() (heads []Hash, whole bool, err error) {
	b, err := os.ReadFile(filepath.Join(sh.gitDir, feedHeadsName))
	if os.IsNotExist(err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the feed's heads of %s: %w", sh.id, err)
	}
	whole = len(b) == 0 || b[len(b)-1] == '\n'
	heads = make([]Hash, 0, len(b)/headLine)
	for line := range bytes.Lines(b) {
		h, ok := parseHead(line)
		if !ok {
			whole = false
			continue
		}
		heads = append(heads, h)
	}
	return heads, whole, nil
}

// parseHead reads a line of the feed's file: a hash as 40 hex digits,
// spaces around it allowed. It allocates nothing: a resume reads a few
// thousand of them while a shard's feed waits.
func parseHead(line []byte) (Hash, bool) {
	var h Hash
	line = bytes.TrimSpace(line)
	if len(line) != 2*len(h) {
		return h, false
	}
	_, err := hex.Decode(h[:], line)
	return h, err == nil
}

// FeedHeadsEnd returns, reading the end of the feed's file alone, its last
// head, about how many it holds, and whether its last line is whole (a
// write cut short by a crash is not: see FeedHeads).
func (sh *Shard) FeedHeadsEnd() (last Hash, heads int, whole bool, err error) {
	f, err := os.Open(filepath.Join(sh.gitDir, feedHeadsName))
	if os.IsNotExist(err) {
		return Hash{}, 0, true, nil
	}
	if err != nil {
		return Hash{}, 0, false, fmt.Errorf("reading the feed's heads of %s: %w", sh.id, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Hash{}, 0, false, fmt.Errorf("reading the feed's heads of %s: %w", sh.id, err)
	}
	size := st.Size()
	if size == 0 {
		return Hash{}, 0, true, nil
	}
	end := make([]byte, min(size, 2*headLine))
	if _, err := f.ReadAt(end, size-int64(len(end))); err != nil {
		return Hash{}, 0, false, fmt.Errorf("reading the feed's heads of %s: %w", sh.id, err)
	}
	heads = int(size / headLine)
	line, ok := bytes.CutSuffix(end, []byte("\n"))
	if !ok {
		return Hash{}, heads, false, nil
	}
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	h, ok := parseHead(line)
	if !ok {
		return Hash{}, heads, false, nil
	}
	return h, heads, true, nil
}

// headLine is the length of a line of the feed's file.
const headLine = 41

// AddFeedHead adds a head to the feed's heads. It is not synced: a kill
// loses nothing written, a power cut may lose the last heads.
func (sh *Shard) AddFeedHead(h Hash) error {
	if err := sh.errIfClosed(); err != nil {
		return err
	}
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

// SetFeedHeads replaces the feed's heads, at once: a crash, or a power
// cut, leaves the old ones or these.
func (sh *Shard) SetFeedHeads(heads []Hash) error {
	if err := sh.errIfClosed(); err != nil {
		return err
	}
	var b bytes.Buffer
	for _, h := range heads {
		b.WriteString(h.String() + "\n")
	}
	if err := replaceFile(filepath.Join(sh.gitDir, feedHeadsName), b.Bytes(), 0o644, true); err != nil {
		return fmt.Errorf("keeping the feed's heads of %s: %w", sh.id, err)
	}
	return nil
}
