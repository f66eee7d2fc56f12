package odb

import (
	"bufio"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// pack is one packfile with its index. The file is opened for each read
// (which costs microseconds), so a shard with a thousand packs waiting for
// a repack does not hold a thousand descriptors, and a pack a repack removed
// is noticed at once.
type pack struct {
	name Hash
	path string
	idx  *idxfile.MemoryIndex
}

func (p *pack) close() {}

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// read returns the object at off, resolving deltas. base looks up objects a
// REF_DELTA names, which may live anywhere in the repository.
func (p *pack) read(off int64, cache scope, base func(Hash) (Object, error)) (Object, error) {
	h, err := p.idx.FindHash(off)
	id := Hash(h)
	if err == nil {
		if obj, ok := cache.get(id); ok {
			return obj, nil
		}
	}
	f, err := os.Open(p.path)
	if err != nil {
		return Object{}, err
	}
	defer f.Close()
	return p.readFrom(f, off, id, cache, base)
}

func (p *pack) readFrom(f *os.File, off int64, id Hash, cache scope, base func(Hash) (Object, error)) (Object, error) {
	r := readers.Get().(*bufio.Reader)
	defer readers.Put(r)
	r.Reset(io.NewSectionReader(f, off, 1<<62))

	code, size, err := readPackHeader(r)
	if err != nil {
		return Object{}, fmt.Errorf("pack %s at %d: %w", p.name, off, err)
	}
	var obj Object
	switch code {
	case packCommit, packTree, packBlob, packTag:
		data, err := inflate(r, size)
		if err != nil {
			return Object{}, fmt.Errorf("pack %s at %d: %w", p.name, off, err)
		}
		obj = Object{Type: objectType(code), Data: data}
	case packOfsDelta, packRefDelta:
		var b Object
		if code == packOfsDelta {
			dist, err := readOfs(r)
			if err != nil || dist <= 0 || dist > off {
				return Object{}, fmt.Errorf("pack %s at %d: bad delta base offset", p.name, off)
			}
			delta, err := inflate(r, size)
			if err != nil {
				return Object{}, fmt.Errorf("pack %s at %d: %w", p.name, off, err)
			}
			h, _ := p.idx.FindHash(off - dist)
			baseID := Hash(h)
			if cached, ok := cache.get(baseID); ok && !baseID.IsZero() {
				b = cached
			} else if b, err = p.readFrom(f, off-dist, baseID, cache, base); err != nil {
				return Object{}, err
			}
			obj, err = patchObject(b, delta)
			if err != nil {
				return Object{}, fmt.Errorf("pack %s at %d: %w", p.name, off, err)
			}
		} else {
			var ref Hash
			if _, err := io.ReadFull(r, ref[:]); err != nil {
				return Object{}, fmt.Errorf("pack %s at %d: %w", p.name, off, err)
			}
			delta, err := inflate(r, size)
			if err != nil {
				return Object{}, fmt.Errorf("pack %s at %d: %w", p.name, off, err)
			}
			if b, err = base(ref); err != nil {
				return Object{}, fmt.Errorf("pack %s at %d: delta base %s: %w", p.name, off, ref, err)
			}
			obj, err = patchObject(b, delta)
			if err != nil {
				return Object{}, fmt.Errorf("pack %s at %d: %w", p.name, off, err)
			}
		}
	default:
		return Object{}, fmt.Errorf("pack %s at %d: unknown object type %d", p.name, off, code)
	}
	if !id.IsZero() {
		cache.put(id, obj)
	}
	return obj, nil
}

func patchObject(base Object, delta []byte) (Object, error) {
	data, err := Patch(base.Data, delta)
	if err != nil {
		return Object{}, err
	}
	return Object{Type: base.Type, Data: data}, nil
}

func readPackHeader(r io.ByteReader) (code byte, size int, err error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	code = (c >> 4) & 7
	size = int(c & 0x0f)
	shift := 4
	for c&0x80 != 0 {
		if c, err = r.ReadByte(); err != nil {
			return 0, 0, err
		}
		size |= int(c&0x7f) << shift
		shift += 7
		if shift > 60 {
			return 0, 0, errors.New("object size overflows")
		}
	}
	return code, size, nil
}

func readOfs(r io.ByteReader) (int64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	off := int64(c & 0x7f)
	for c&0x80 != 0 {
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		off = ((off + 1) << 7) | int64(c&0x7f)
		if off < 0 {
			return 0, errors.New("delta offset overflows")
		}
	}
	return off, nil
}

var inflaters sync.Pool

// inflate reads one zlib stream that must hold exactly size bytes.
func inflate(r io.Reader, size int) ([]byte, error) {
	var z io.ReadCloser
	if v := inflaters.Get(); v != nil {
		z = v.(io.ReadCloser)
		if err := z.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, err
		}
	} else {
		var err error
		if z, err = zlib.NewReader(r); err != nil {
			return nil, err
		}
	}
	defer inflaters.Put(z)
	data := make([]byte, size)
	if _, err := io.ReadFull(z, data); err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	return data, nil
}
