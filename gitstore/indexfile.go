package gitstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// The .git/index, written with every commit so that git status stays
// clean. go-git's encoder writes each field through reflection, and
// decoding the file again before the next commit cost as much: at a
// million facts a shard's index holds hundreds of entries, and the two
// took a third of a commit's time. memd encodes it directly, byte for byte
// as go-git does, and keeps the index it wrote for as long as the file is
// the one it wrote.

// writtenIndex is the index memd last wrote, the file that holds it, and
// the file's closing checksum.
type writtenIndex struct {
	idx  *index.Index
	file os.FileInfo
	sum  [sha1.Size]byte
}

// wrote records index idx, encoded as data, as written to file.
func wrote(idx *index.Index, data []byte, file os.FileInfo) *writtenIndex {
	return &writtenIndex{idx: idx, file: file, sum: [sha1.Size]byte(data[len(data)-sha1.Size:])}
}

// holds reports whether f, stated fi, is still the file memd wrote: the
// same file (git, like memd, writes a new one and renames it in), of the
// same size and modification time, and ending in the same checksum, read
// from the file: a clock that ticks coarsely and a new file given a
// removed one's inode could match the rest.
func (w *writtenIndex) holds(f *os.File, fi os.FileInfo) bool {
	if w == nil || !os.SameFile(w.file, fi) || fi.Size() != w.file.Size() || !fi.ModTime().Equal(w.file.ModTime()) || fi.Size() < sha1.Size {
		return false
	}
	var sum [sha1.Size]byte
	_, err := f.ReadAt(sum[:], fi.Size()-sha1.Size)
	return err == nil && sum == w.sum
}

// Entry layout of index versions 2 and 3: ten 32-bit fields, the object
// name, 16 bits of flags, then the name, padded with 1 to 8 NULs to a
// multiple of 8 bytes.
const (
	indexEntryFixed = 62
	indexNameMask   = 0xfff
)

// encodeIndex returns idx as go-git's encoder writes it (sorting its
// entries by name, as that does). An index of another version, or with
// entries in conflict or carrying extended flags (memd writes none; a
// person's git may have), is written by go-git's encoder.
func encodeIndex(idx *index.Index) ([]byte, error) {
	unusual := func(e *index.Entry) bool { return e.Stage != 0 || e.IntentToAdd || e.SkipWorktree }
	if idx.Version != 2 && idx.Version != 3 || slices.ContainsFunc(idx.Entries, unusual) {
		var buf bytes.Buffer
		err := index.NewEncoder(&buf).Encode(idx)
		return buf.Bytes(), err
	}
	// The same sort as go-git's: names alike (only in a broken index)
	// then end in the same order.
	sort.Sort(entriesByName(idx.Entries))
	size := 12 + sha1.Size
	for _, e := range idx.Entries {
		size += indexEntryFixed + len(e.Name) + 8
	}
	b := make([]byte, 0, size)
	b = append(b, "DIRC"...)
	b = binary.BigEndian.AppendUint32(b, idx.Version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(idx.Entries)))
	var zeros [8]byte
	for _, e := range idx.Entries {
		csec, cnsec, err := indexTime(e.CreatedAt)
		if err != nil {
			return nil, err
		}
		msec, mnsec, err := indexTime(e.ModifiedAt)
		if err != nil {
			return nil, err
		}
		for _, v := range [...]uint32{csec, cnsec, msec, mnsec, e.Dev, e.Inode, uint32(e.Mode), e.UID, e.GID, e.Size} {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		b = append(b, e.Hash[:]...)
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(e.Name), indexNameMask)))
		b = append(b, e.Name...)
		b = append(b, zeros[:8-(indexEntryFixed+len(e.Name))%8]...)
	}
	sum := sha1.Sum(b)
	return append(b, sum[:]...), nil
}

// indexTime is a time as an index entry holds it, as go-git writes it.
func indexTime(t time.Time) (sec, nsec uint32, err error) {
	if t.IsZero() {
		return 0, 0, nil
	}
	if t.Unix() < 0 || t.UnixNano() < 0 {
		return 0, 0, index.ErrInvalidTimestamp
	}
	return uint32(t.Unix()), uint32(t.Nanosecond()), nil
}

type entriesByName []*index.Entry

func (l entriesByName) Len() int           { return len(l) }
func (l entriesByName) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l entriesByName) Less(i, j int) bool { return l[i].Name < l[j].Name }
