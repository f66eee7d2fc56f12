// Package vectors finds facts by meaning: each fact text's embedding from
// an OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp), kept
// quantized in a file beside the index (its sign bits in memory), computed in the
// background as facts arrive (Filler), and searched for the facts nearest
// a query among the shards a caller may read (Set.Nearest). Without an
// endpoint memd never calls one and recall stays fully local.
package vectors

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"sync"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// Set holds one model's vectors of fact texts by shard and fact ID, each
// as 8-bit codes with a scale (for ranking) and its signs as bits (for a
// first cut), and appends each new one to its file. Only the signs, the
// scale and where the vector's record is in the file stay in memory: d/8
// + 12 bytes for a vector of d dimensions, and its fact ID. A search reads
// the records of the few hundred vectors its first cut keeps from the
// file (which the system's page cache holds while memory allows).
type Set struct {
	mu     sync.RWMutex
	path   string
	end    int64 // where the file's last whole record ends
	model  string
	dim    int
	shards map[memd.ShardID]*shardVectors
	n      int
	f      *os.File // appended to at end, read at each vector's place
}

type shardVectors struct {
	shard memd.ShardID
	ids   []string
	index map[string]int32
	scale []float32
	at    []int64  // where each vector's record starts in the file, or unwritten
	signs []uint64 // (dim+63)/64 per vector
	// held keeps the codes the file failed to take, by slot: searched
	// until memd stops, and embedded again after.
	held map[int32][]int8
}

// unwritten marks a vector whose codes are in held, not in the file.
const unwritten = -1

// ErrChanged is a vector whose record in the file is not the one memd
// wrote there: the file was changed by something else.
var ErrChanged = errors.New("the vectors file changed under memd")

// maxName bounds a shard's name and a fact ID in the file.
const maxName = 1 << 12

// fileMagic starts a vector file; the model's name follows it.
const fileMagic = "memd-vectors 1\n"

// Open reads the vectors of model kept at path, creating the file if it is
// missing. A file of another model is started over (a model change embeds
// everything again), and a record torn by a crash is cut off: vectors are
// derived data, computed again when missing.
func Open(path, model string) (*Set, error) {
	s := &Set{model: model, shards: map[memd.ShardID]*shardVectors{}}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open vectors: %w", err)
	}
	good, records, err := s.read(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read vectors %s: %w", path, err)
	}
	s.path = path
	if good == 0 || records > 2*s.n+1024 {
		// New, another model's, or mostly vectors of facts gone: written
		// anew with what it holds. Failing that, a file in use is kept.
		if err = s.rewrite(f); err == nil {
			return s, nil
		}
		if good == 0 {
			f.Close()
			return nil, fmt.Errorf("write vectors %s: %w", path, err)
		}
	}
	err = f.Truncate(good) // appends are written at end: no seek
	s.f, s.end = f, good
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write vectors %s: %w", path, err)
	}
	return s, nil
}

// rewrite writes the set's vectors to a new file and puts it in place of
// old, which it closes; on an error the old file stays as it was, in use.
// The set in memory is compacted as the file is: slots of removed vectors
// go.
func (s *Set) rewrite(old *os.File) error {
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	header := fileMagic + s.model + "\n"
	w.WriteString(header)
	at := int64(len(header))
	compacted := map[memd.ShardID]*shardVectors{}
	var buf []byte
	r := newCodeReader(old, s.dim)
each:
	for id, sv := range s.shards {
		for i, fid := range sv.ids {
			if fid == "" {
				continue // removed
			}
			var codes []int8
			if codes, err = r.read(sv, int32(i)); err != nil {
				break each
			}
			buf = appendRecord(buf[:0], sv.shard, fid, sv.scale[i], codes)
			w.Write(buf)
			c := compacted[id]
			if c == nil {
				c = &shardVectors{shard: id, index: map[string]int32{}}
				compacted[id] = c
			}
			c.index[fid] = int32(len(c.ids))
			c.ids = append(c.ids, fid)
			c.scale = append(c.scale, sv.scale[i])
			c.at = append(c.at, at)
			c.signs = append(c.signs, sv.signs[i*words(s.dim):(i+1)*words(s.dim)]...)
			at += int64(len(buf))
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if old != nil {
		old.Close()
	}
	s.f, s.end, s.shards = f, at, compacted
	return nil
}

// write appends records to the file, at the end of its last whole
// record: what a failed write left there is written over by the next, or
// cut off at the next start, and never hides the records after it. On an
// error it also tries to cut the file back, for a disk left full.
func (s *Set) write(records []byte) error {
	if _, err := s.f.WriteAt(records, s.end); err != nil {
		s.f.Truncate(s.end)
		return fmt.Errorf("write vectors: %w", err)
	}
	s.end += int64(len(records))
	return nil
}

// read loads the records of f and returns where the last whole one ends
// (0 when the file is new or holds another model's vectors) and how many
// records it read.
func (s *Set) read(f *os.File) (end int64, records int, err error) {
	r := bufio.NewReaderSize(f, 1<<20)
	header := fileMagic + s.model + "\n"
	got := make([]byte, len(header))
	if _, err := io.ReadFull(r, got); err != nil || string(got) != header {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, 0, err
		}
		return 0, 0, nil
	}
	end = int64(len(header))
	rr := &recordReader{r: r}
	var signs []uint64
	for {
		shard, id, scale, codes, n, err := rr.read()
		if err != nil {
			// The end, or a torn or damaged record: what follows is
			// computed again.
			return end, records, nil
		}
		records++
		switch {
		case len(codes) == 0:
			s.remove(shard, id)
		case s.dim == 0 || len(codes) == s.dim:
			s.dim = len(codes)
			signs = appendSigns(signs[:0], codes)
			s.add(shard, id, scale, signs, end, nil)
		}
		end += int64(n)
	}
}

// A record: shard and ID (each a uvarint length and bytes), dimensions
// (uvarint), scale (float32), codes, and a CRC-32 of all before it.
//
// recordReader reads them with buffers kept from one to the next: a start
// reads a million.
type recordReader struct {
	r          *bufio.Reader
	body, name []byte
	codes      []int8
	last       memd.ShardID // the shard of the last record, most often the next's
	lastName   string
}

func (rr *recordReader) read() (memd.ShardID, string, float32, []int8, int, error) {
	fail := func(err error) (memd.ShardID, string, float32, []int8, int, error) {
		return memd.ShardID{}, "", 0, nil, 0, err
	}
	rr.body = rr.body[:0]
	field := func() ([]byte, error) {
		n, err := binary.ReadUvarint(rr.r)
		if err != nil || n > maxName {
			return nil, errors.Join(err, errors.New("bad length"))
		}
		rr.body = binary.AppendUvarint(rr.body, n)
		start := len(rr.body)
		rr.body = append(rr.body, make([]byte, n)...)
		if _, err := io.ReadFull(rr.r, rr.body[start:]); err != nil {
			return nil, err
		}
		return rr.body[start:], nil
	}
	name, err := field()
	if err != nil {
		return fail(err)
	}
	rr.name = append(rr.name[:0], name...)
	idb, err := field()
	if err != nil {
		return fail(err)
	}
	id := string(idb)
	dim, err := binary.ReadUvarint(rr.r)
	if err != nil || dim > 1<<16 {
		return fail(errors.New("bad dimensions"))
	}
	rr.body = binary.AppendUvarint(rr.body, dim)
	start := len(rr.body)
	rr.body = append(rr.body, make([]byte, 4+dim+4)...)
	if _, err := io.ReadFull(rr.r, rr.body[start:]); err != nil {
		return fail(err)
	}
	rest := rr.body[start:]
	if crc32.ChecksumIEEE(rr.body[:len(rr.body)-4]) != binary.LittleEndian.Uint32(rest[4+dim:]) {
		return fail(errors.New("checksum"))
	}
	if string(rr.name) != rr.lastName {
		shard, err := memd.ParseShardID(string(rr.name))
		if err != nil {
			return fail(err)
		}
		rr.last, rr.lastName = shard, string(rr.name)
	}
	rr.codes = slices.Grow(rr.codes[:0], int(dim))[:dim]
	for i := range rr.codes {
		rr.codes[i] = int8(rest[4+i])
	}
	return rr.last, id, math.Float32frombits(binary.LittleEndian.Uint32(rest)), rr.codes, len(rr.body), nil
}

// appendNames appends a record's first fields: its shard, fact ID and
// dimensions.
func appendNames(b []byte, shard, id string, dim int) []byte {
	b = binary.AppendUvarint(b, uint64(len(shard)))
	b = append(b, shard...)
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	return binary.AppendUvarint(b, uint64(dim))
}

func appendRecord(b []byte, shard memd.ShardID, id string, scale float32, codes []int8) []byte {
	start := len(b)
	b = appendNames(b, shard.String(), id, len(codes))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(scale))
	for _, c := range codes {
		b = append(b, byte(c))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// quantize scales a vector to unit length and then to 8-bit codes: the
// dot product of two such vectors, times their scales, is their cosine.
func quantize(v []float32) (float32, []int8) {
	var norm, most float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	codes := make([]int8, len(v))
	if norm == 0 {
		return 0, codes
	}
	for _, x := range v {
		most = math.Max(most, math.Abs(float64(x)/norm))
	}
	scale := most / 127
	for i, x := range v {
		codes[i] = int8(math.Round(float64(x) / norm / scale))
	}
	return float32(scale), codes
}

// remove forgets a fact's vector. Its slot stays, its ID emptied, until
// the file is next written anew.
func (s *Set) remove(shard memd.ShardID, id string) {
	sv := s.shards[shard]
	if sv == nil {
		return
	}
	i, ok := sv.index[id]
	if !ok {
		return
	}
	delete(sv.index, id)
	delete(sv.held, i)
	sv.ids[i] = ""
	sv.scale[i] = 0
	sv.at[i] = unwritten
	clear(sv.signs[int(i)*words(s.dim) : int(i+1)*words(s.dim)])
	s.n--
}

// add keeps a fact's vector: its codes are in the file at at, or, when
// at is unwritten, held.
func (s *Set) add(shard memd.ShardID, id string, scale float32, signs []uint64, at int64, held []int8) {
	sv := s.shards[shard]
	if sv == nil {
		sv = &shardVectors{shard: shard, index: map[string]int32{}}
		s.shards[shard] = sv
	}
	i, ok := sv.index[id]
	if !ok {
		i = int32(len(sv.ids))
		sv.index[id] = i
		sv.ids = append(sv.ids, id)
		sv.scale = append(sv.scale, 0)
		sv.at = append(sv.at, 0)
		sv.signs = append(sv.signs, signs...)
		s.n++
	}
	sv.scale[i] = scale
	sv.at[i] = at
	copy(sv.signs[int(i)*words(s.dim):], signs)
	delete(sv.held, i)
	if at == unwritten {
		if sv.held == nil {
			sv.held = map[int32][]int8{}
		}
		sv.held[i] = held
	}
}

// codeReader reads vectors' codes from a set's file, or from those held,
// into buffers it keeps from one vector to the next.
type codeReader struct {
	f              *os.File
	dim            int
	record, fields []byte
	codes          []int8
}

func newCodeReader(f *os.File, dim int) *codeReader {
	return &codeReader{f: f, dim: dim, codes: make([]int8, dim)}
}

// read returns the codes of a shard's i'th vector, valid until the next
// read. The record they are read from is checked whole (its checksum,
// shard and fact ID), so that a file changed by something else is never
// ranked by: ErrChanged.
func (r *codeReader) read(sv *shardVectors, i int32) ([]int8, error) {
	if sv.at[i] == unwritten {
		return sv.held[i], nil
	}
	r.fields = appendNames(r.fields[:0], sv.shard.String(), sv.ids[i], r.dim)
	size := len(r.fields) + 4 + r.dim + 4
	r.record = slices.Grow(r.record[:0], size)[:size]
	if _, err := r.f.ReadAt(r.record, sv.at[i]); err != nil {
		return nil, fmt.Errorf("read a vector of %s: %w", sv.shard, err)
	}
	body, sum := r.record[:size-4], binary.LittleEndian.Uint32(r.record[size-4:])
	if !bytes.HasPrefix(body, r.fields) || crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("read the vector of %s %s: %w", sv.shard, sv.ids[i], ErrChanged)
	}
	for j, b := range body[size-4-r.dim:] {
		r.codes[j] = int8(b)
	}
	return r.codes, nil
}

func words(dim int) int { return (dim + 63) / 64 }

func signsOf(codes []int8) []uint64 { return appendSigns(nil, codes) }

// appendSigns appends the sign bits of codes to signs.
func appendSigns(signs []uint64, codes []int8) []uint64 {
	start := len(signs)
	signs = append(signs, make([]uint64, words(len(codes)))...)
	for i, c := range codes {
		if c > 0 {
			signs[start+i/64] |= 1 << (i % 64)
		}
	}
	return signs
}

// Model names the model the set's vectors come from.
func (s *Set) Model() string { return s.model }

// Len counts the vectors held.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.n
}

// ShardLen counts the vectors held of a shard's facts.
func (s *Set) ShardLen(shard memd.ShardID) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if sv := s.shards[shard]; sv != nil {
		return len(sv.index)
	}
	return 0
}

// Has reports whether a fact's vector is held.
func (s *Set) Has(shard memd.ShardID, id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sv := s.shards[shard]
	if sv == nil {
		return false
	}
	_, ok := sv.index[id]
	return ok
}

// ErrDimensions is a vector of other dimensions than the set's.
var ErrDimensions = errors.New("vectors of other dimensions")

// Dim returns the dimensions of the set's vectors, 0 before the first.
func (s *Set) Dim() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dim
}

// Put keeps facts' vectors, in memory and at the end of the file. All
// vectors of a set have the dimensions of the first (else ErrDimensions,
// and none is kept).
func (s *Set) Put(vs []Vector) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		if len(v.V) == 0 || s.dim != 0 && len(v.V) != s.dim || len(v.V) != len(vs[0].V) {
			return fmt.Errorf("model %s: a vector of %d dimensions among vectors of %d: %w", s.model, len(v.V), max(s.dim, len(vs[0].V)), ErrDimensions)
		}
		if len(v.ID) > maxName || len(v.Shard.String()) > maxName {
			return fmt.Errorf("vectors: fact ID or shard longer than %d bytes", maxName)
		}
	}
	if len(vs) == 0 {
		return nil
	}
	var buf []byte
	scales := make([]float32, len(vs))
	codes := make([][]int8, len(vs))
	ats := make([]int64, len(vs))
	for i, v := range vs {
		scales[i], codes[i] = quantize(v.V)
		ats[i] = s.end + int64(len(buf))
		buf = appendRecord(buf, v.Shard, v.ID, scales[i], codes[i])
	}
	s.dim = len(vs[0].V)
	// Held in memory if the file fails them: derived data, searched until
	// memd stops and computed again at the next start.
	err := s.write(buf)
	for i, v := range vs {
		at, held := ats[i], []int8(nil)
		if err != nil {
			at, held = unwritten, codes[i]
		}
		s.add(v.Shard, v.ID, scales[i], signsOf(codes[i]), at, held)
	}
	return err
}

// Prune forgets the vectors of a shard's facts that keep returns false
// for (forgotten, or edited into another text).
func (s *Set) Prune(shard memd.ShardID, keep func(id string) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := s.shards[shard]
	if sv == nil {
		return nil
	}
	var buf []byte
	for _, id := range sv.ids {
		if id == "" || keep(id) {
			continue
		}
		s.remove(shard, id)
		buf = appendRecord(buf, shard, id, 0, nil)
	}
	if len(buf) == 0 {
		return nil
	}
	return s.write(buf)
}

// Remove forgets the vectors of some of a shard's facts.
func (s *Set) Remove(shard memd.ShardID, ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf []byte
	for _, id := range ids {
		if sv := s.shards[shard]; sv != nil {
			if _, ok := sv.index[id]; ok {
				s.remove(shard, id)
				buf = appendRecord(buf, shard, id, 0, nil)
			}
		}
	}
	if len(buf) == 0 {
		return nil
	}
	return s.write(buf)
}

// Reset forgets every vector, for vectors of other dimensions from the
// same model name.
func (s *Set) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	shards, n, dim := s.shards, s.n, s.dim
	s.shards, s.n, s.dim = map[memd.ShardID]*shardVectors{}, 0, 0
	if err := s.rewrite(s.f); err != nil {
		s.shards, s.n, s.dim = shards, n, dim
		return err
	}
	return nil
}

// Close closes the set's file.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Close()
}

// Cosine returns the cosine of q and a fact's vector, if the set holds it,
// or why its vector could not be read.
func (s *Set) Cosine(q []float32, shard memd.ShardID, id string) (float64, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sv := s.shards[shard]
	if sv == nil || len(q) != s.dim {
		return 0, false, nil
	}
	i, ok := sv.index[id]
	if !ok {
		return 0, false, nil
	}
	codes, err := newCodeReader(s.f, s.dim).read(sv, i)
	if err != nil {
		return 0, false, err
	}
	var dot, norm float64
	for j, c := range codes {
		dot += float64(q[j]) * float64(c)
		norm += float64(q[j]) * float64(q[j])
	}
	if norm == 0 {
		return 0, true, nil
	}
	return dot * float64(sv.scale[i]) / math.Sqrt(norm), true, nil
}

// Vector is a fact's embedding.
type Vector struct {
	Shard memd.ShardID
	ID    string
	V     []float32
}

// Match is a fact near a query, with the cosine of their vectors: what
// search.Engine.Fuse joins to the hits of words.
type Match = search.Similar

// firstCut is how many candidates per wanted match the sign bits keep for
// ranking by the codes: the bits' Hamming distance follows the angle
// closely enough that the nearest are among the first few hundred.
const firstCut = 20

// distances keeps the arrays Nearest counts sign-bit distances in.
var distances = sync.Pool{New: func() any { return new([]uint16) }}

// Nearest returns the n facts of the shards whose vectors are nearest q,
// nearest first, or why the codes to rank them by could not be read.
// Over many vectors it ranks only those whose sign bits are nearest q's,
// then those by their codes.
func (s *Set) Nearest(q []float32, shards []memd.ShardID, n int) ([]Match, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(q) != s.dim || s.dim == 0 || n <= 0 {
		return nil, nil
	}
	qScale, qCodes := quantize(q)
	readable := distinct(shards)
	total := 0
	for _, id := range readable {
		if sv := s.shards[id]; sv != nil {
			total += len(sv.index)
		}
	}
	var cands []candidate
	if keep := max(n*firstCut, 256); total > keep {
		cands = s.nearestSigns(readable, qCodes, total, keep)
	} else {
		s.eachLive(readable, func(sv *shardVectors, i int) { cands = append(cands, candidate{sv: sv, i: int32(i)}) })
	}
	out, err := s.rankByCodes(cands, qScale, qCodes)
	if err != nil {
		return nil, err
	}
	return out[:min(n, len(out))], nil
}

// candidate is a vector Nearest ranks by its codes: vector i of sv.
type candidate struct {
	sv *shardVectors
	i  int32
}

// nearestSigns returns about keep of the total vectors of the shards,
// those whose sign bits are nearest the query's codes'.
func (s *Set) nearestSigns(shards []memd.ShardID, qCodes []int8, total, keep int) []candidate {
	// Two passes over the sign bits, the distances kept in a reused array,
	// so that a search allocates little: at 50,000 facts a candidate list
	// of each would cost a megabyte a query, and the collections it brings
	// set the slowest recalls.
	qSigns := signsOf(qCodes)
	w := words(s.dim)
	dp := distances.Get().(*[]uint16)
	defer distances.Put(dp)
	dists := slices.Grow((*dp)[:0], total)[:0]
	count := make([]int, s.dim+1)
	s.eachLive(shards, func(sv *shardVectors, i int) {
		d := 0
		for j, b := range sv.signs[i*w : i*w+w] {
			d += bits.OnesCount64(b ^ qSigns[j])
		}
		dists = append(dists, uint16(d))
		count[d]++
	})
	*dp = dists
	// Distances are at most dim: counting them finds the cut.
	cut, kept := 0, 0
	for cut < len(count) && kept+count[cut] < keep {
		kept += count[cut]
		cut++
	}
	cands := make([]candidate, 0, kept+count[min(cut, s.dim)])
	k := 0
	s.eachLive(shards, func(sv *shardVectors, i int) {
		if int(dists[k]) <= cut {
			cands = append(cands, candidate{sv, int32(i)})
		}
		k++
	})
	return cands
}

// rankByCodes reads the candidates' codes and returns them as matches,
// nearest the query first.
func (s *Set) rankByCodes(cands []candidate, qScale float32, qCodes []int8) ([]Match, error) {
	qf := make([]float32, s.dim)
	for i, c := range qCodes {
		qf[i] = float32(c) * qScale
	}
	// Read in the file's order, which the page cache and the disk prefer.
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(a.sv.at[a.i], b.sv.at[b.i]) })
	out := make([]Match, 0, len(cands))
	r := newCodeReader(s.f, s.dim)
	for _, c := range cands {
		codes, err := r.read(c.sv, c.i)
		if err != nil {
			return nil, err
		}
		var dot float32
		for j, x := range codes {
			dot += qf[j] * float32(x)
		}
		out = append(out, Match{Shard: c.sv.shard, ID: c.sv.ids[c.i], Cosine: float64(dot * c.sv.scale[c.i])})
	}
	slices.SortFunc(out, func(a, b Match) int {
		if a.Cosine != b.Cosine {
			if a.Cosine > b.Cosine {
				return -1
			}
			return 1
		}
		if c := cmpShard(a.Shard, b.Shard); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// eachLive calls fn with each vector of the shards not removed, in the
// same order every time.
func (s *Set) eachLive(shards []memd.ShardID, fn func(sv *shardVectors, i int)) {
	for _, id := range shards {
		sv := s.shards[id]
		if sv == nil {
			continue
		}
		for i, fid := range sv.ids {
			if fid != "" {
				fn(sv, i)
			}
		}
	}
}

func distinct(shards []memd.ShardID) []memd.ShardID {
	seen := make(map[memd.ShardID]bool, len(shards))
	var out []memd.ShardID
	for _, id := range shards {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func cmpShard(a, b memd.ShardID) int { return cmp.Compare(a.String(), b.String()) }
