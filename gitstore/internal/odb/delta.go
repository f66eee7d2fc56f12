package odb

import (
	"errors"
	"fmt"
)

// maxCopy is the largest span one delta copy instruction can name.
const maxCopy = 0xFFFFFF

// Edit replaces Del bytes at Pos with Ins.
type Edit struct {
	Pos, Del int
	Ins      []byte
}

// Delta returns a git delta for edits, which must be in order and must not
// overlap, against a base of baseLen bytes.
func Delta(baseLen int, edits []Edit) []byte {
	target := baseLen
	insLen := 0
	for _, e := range edits {
		target += len(e.Ins) - e.Del
		insLen += len(e.Ins)
	}
	d := make([]byte, 0, 32+8*len(edits)+insLen+insLen/127)
	d = appendSize(d, baseLen)
	d = appendSize(d, target)
	at := 0
	for _, e := range edits {
		d = appendCopy(d, at, e.Pos-at)
		for rest := e.Ins; len(rest) > 0; {
			n := min(len(rest), 127)
			d = append(d, byte(n))
			d = append(d, rest[:n]...)
			rest = rest[n:]
		}
		at = e.Pos + e.Del
	}
	return appendCopy(d, at, baseLen-at)
}

// Apply returns base with edits applied (the target of Delta).
func Apply(base []byte, edits []Edit) []byte {
	n := len(base)
	for _, e := range edits {
		n += len(e.Ins) - e.Del
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		out = append(out, base[at:e.Pos]...)
		out = append(out, e.Ins...)
		at = e.Pos + e.Del
	}
	return append(out, base[at:]...)
}

func appendSize(d []byte, n int) []byte {
	for n >= 0x80 {
		d = append(d, byte(n)|0x80)
		n >>= 7
	}
	return append(d, byte(n))
}

// appendCopy appends copy instructions for base[off:off+n].
func appendCopy(d []byte, off, n int) []byte {
	for n > 0 {
		size := min(n, maxCopy)
		op := byte(0x80)
		var args [7]byte
		k := 0
		for i := 0; i < 4; i++ {
			if b := byte(off >> (8 * i)); b != 0 {
				op |= 1 << i
				args[k] = b
				k++
			}
		}
		for i := 0; i < 3; i++ {
			if b := byte(size >> (8 * i)); b != 0 {
				op |= 1 << (4 + i)
				args[k] = b
				k++
			}
		}
		d = append(d, op)
		d = append(d, args[:k]...)
		off += size
		n -= size
	}
	return d
}

var errBadDelta = errors.New("malformed delta")

// Patch applies a git delta to base.
func Patch(base, delta []byte) ([]byte, error) {
	srcLen, delta, err := readSize(delta)
	if err != nil {
		return nil, err
	}
	if srcLen != len(base) {
		return nil, fmt.Errorf("%w: base is %d bytes, delta expects %d", errBadDelta, len(base), srcLen)
	}
	dstLen, delta, err := readSize(delta)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, dstLen)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, size int
			for i := 0; i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errBadDelta
					}
					off |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := 0; i < 3; i++ {
				if op&(1<<(4+i)) != 0 {
					if len(delta) == 0 {
						return nil, errBadDelta
					}
					size |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > len(base) || off+size < off {
				return nil, errBadDelta
			}
			out = append(out, base[off:off+size]...)
		case op != 0:
			n := int(op)
			if n > len(delta) {
				return nil, errBadDelta
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, errBadDelta
		}
	}
	if len(out) != dstLen {
		return nil, fmt.Errorf("%w: produced %d bytes, expected %d", errBadDelta, len(out), dstLen)
	}
	return out, nil
}

func readSize(d []byte) (int, []byte, error) {
	var n, shift int
	for i, b := range d {
		n |= int(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			return n, d[i+1:], nil
		}
		if shift > 56 {
			break
		}
	}
	return 0, nil, errBadDelta
}
