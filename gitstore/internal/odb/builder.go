package odb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// pack object type codes.
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

// Builder assembles a pack in memory. Objects are added in order; a delta
// may only name an object added before it, so the pack is self-contained.
type Builder struct {
	buf     *bytes.Buffer
	entries []idxfile.Entry
	objects map[Hash]int64 // offset of each object in the pack
}

// packBuffers keeps the buffers of packs written, for the next ones. A
// commit to a large monthly log packs megabytes; a new buffer each time
// costs more in zeroing and faulting in fresh pages than writing it out.
var packBuffers sync.Pool

// maxPooledPack is the largest buffer kept for reuse.
const maxPooledPack = 64 << 20

// NewBuilder returns an empty pack builder.
func NewBuilder() *Builder {
	b := &Builder{objects: make(map[Hash]int64)}
	if buf, ok := packBuffers.Get().(*bytes.Buffer); ok {
		buf.Reset()
		b.buf = buf
	} else {
		b.buf = new(bytes.Buffer)
	}
	b.buf.Write(make([]byte, 12)) // header, filled in by Finish
	return b
}

// recycle gives the builder's buffer back once its pack is written; the
// builder and what Finish returned must not be used after.
func (b *Builder) recycle() {
	if b.buf != nil && b.buf.Cap() <= maxPooledPack {
		packBuffers.Put(b.buf)
	}
	b.buf = nil
}

// Len returns the number of objects added.
func (b *Builder) Len() int { return len(b.entries) }

// Offset returns the offset of an object already in the pack.
func (b *Builder) Offset(h Hash) (int64, bool) {
	off, ok := b.objects[h]
	return off, ok
}

// Add adds a whole object and returns its ID. Adding an object twice keeps
// the first copy.
func (b *Builder) Add(t plumbing.ObjectType, content []byte) Hash {
	return b.AddHashed(t, HashObject(t, content), content)
}

// AddHashed is Add for content whose ID the caller computed already.
func (b *Builder) AddHashed(t plumbing.ObjectType, h Hash, content []byte) Hash {
	if _, ok := b.objects[h]; ok {
		return h
	}
	start := int64(b.buf.Len())
	b.writeHeader(typeCode(t), len(content))
	b.compress(content)
	b.finishObject(h, start)
	return h
}

// Entry is an object encoded as a pack holds it, compressed: written once,
// it goes into any number of packs as it is.
type Entry struct {
	ID    Hash
	bytes []byte // type and size header, then the zlib stream
}

// Size returns how many bytes the entry takes in a pack.
func (e *Entry) Size() int { return len(e.bytes) }

// Compressed encodes an object of type t whose ID the caller has hashed
// (as for AddHashed) as a compressed pack entry. It costs about ten
// nanoseconds a byte: worth it for an object that many packs will carry,
// not for one (see compress).
func Compressed(t plumbing.ObjectType, h Hash, content []byte) (*Entry, error) {
	var buf bytes.Buffer
	buf.Grow(len(content)/3 + 64)
	writeHeader(&buf, typeCode(t), len(content))
	z, err := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := z.Write(content); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return &Entry{ID: h, bytes: bytes.Clone(buf.Bytes())}, nil
}

// AddEntry adds an object encoded by Compressed, unless the pack holds it.
func (b *Builder) AddEntry(e *Entry) {
	if _, ok := b.objects[e.ID]; ok {
		return
	}
	start := int64(b.buf.Len())
	b.buf.Write(e.bytes)
	b.finishObject(e.ID, start)
}

// AddDelta adds target, an object of type t, as a delta against base, which
// must already be in the pack, and returns target's ID.
func (b *Builder) AddDelta(t plumbing.ObjectType, base Hash, delta, target []byte) Hash {
	return b.AddDeltaHashed(t, base, delta, HashObject(t, target), target)
}

// AddDeltaHashed is AddDelta for a target whose ID the caller computed.
func (b *Builder) AddDeltaHashed(t plumbing.ObjectType, base Hash, delta []byte, h Hash, target []byte) Hash {
	if _, ok := b.objects[h]; ok {
		return h
	}
	baseOff, ok := b.objects[base]
	if !ok || len(target) == 0 {
		// git reads a delta's result size of 0 as an error: an empty
		// object goes whole.
		return b.AddHashed(t, h, target)
	}
	start := int64(b.buf.Len())
	b.writeHeader(packOfsDelta, len(delta))
	b.buf.Write(encodeOfs(start - baseOff))
	b.compress(delta)
	b.finishObject(h, start)
	return h
}

func (b *Builder) finishObject(h Hash, start int64) {
	crc := crc32.ChecksumIEEE(b.buf.Bytes()[start:])
	b.entries = append(b.entries, idxfile.Entry{Hash: plumbing.Hash(h), CRC32: crc, Offset: uint64(start)})
	b.objects[h] = start
}

func (b *Builder) writeHeader(code byte, size int) { writeHeader(b.buf, code, size) }

// writeHeader writes a pack entry's type and size.
func writeHeader(buf *bytes.Buffer, code byte, size int) {
	c := code<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	buf.WriteByte(c)
}

// compress writes data as a zlib stream of stored (uncompressed) blocks.
// Compressing costs far more than the disk it saves on the write path (tens
// of milliseconds for a large monthly log); git's background repack
// compresses everything later.
func (b *Builder) compress(data []byte) {
	b.buf.Grow(len(data) + len(data)/65535*5 + 16)
	b.buf.Write([]byte{0x78, 0x01}) // zlib header: deflate, no dictionary
	rest := data
	for {
		n := min(len(rest), 65535)
		final := byte(0)
		if n == len(rest) {
			final = 1
		}
		b.buf.Write([]byte{final, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		b.buf.Write(rest[:n])
		rest = rest[n:]
		if final == 1 {
			break
		}
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	b.buf.Write(sum[:])
}

// encodeOfs encodes the distance back to a delta's base as git does: big
// endian groups of seven bits, each continuation adding one.
func encodeOfs(off int64) []byte {
	var buf [10]byte
	i := len(buf) - 1
	buf[i] = byte(off & 0x7f)
	for off >>= 7; off > 0; off >>= 7 {
		off--
		i--
		buf[i] = 0x80 | byte(off&0x7f)
	}
	return buf[i:]
}

// Finish completes the pack and returns its bytes, its checksum (which names
// it) and its index.
func (b *Builder) Finish() (pack []byte, sum Hash, idx *idxfile.MemoryIndex, err error) {
	data := b.buf.Bytes()
	copy(data[0:4], "PACK")
	binary.BigEndian.PutUint32(data[4:8], 2)
	binary.BigEndian.PutUint32(data[8:12], uint32(len(b.entries)))
	s := sha1.Sum(data)
	copy(sum[:], s[:])
	b.buf.Write(s[:])

	w := new(idxfile.Writer)
	w.OnHeader(uint32(len(b.entries)))
	for _, e := range b.entries {
		w.Add(e.Hash, e.Offset, e.CRC32)
	}
	if err := w.OnFooter(plumbing.Hash(sum)); err != nil {
		return nil, sum, nil, err
	}
	idx, err = w.Index()
	return b.buf.Bytes(), sum, idx, err
}

func typeCode(t plumbing.ObjectType) byte {
	switch t {
	case plumbing.CommitObject:
		return packCommit
	case plumbing.TreeObject:
		return packTree
	case plumbing.BlobObject:
		return packBlob
	case plumbing.TagObject:
		return packTag
	}
	panic("odb: cannot pack object type " + t.String())
}

func objectType(code byte) plumbing.ObjectType {
	switch code {
	case packCommit:
		return plumbing.CommitObject
	case packTree:
		return plumbing.TreeObject
	case packBlob:
		return plumbing.BlobObject
	case packTag:
		return plumbing.TagObject
	}
	return plumbing.InvalidObject
}
