package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
)

// A shard's snapshot is what the index holds for it at one commit — every
// fact with the commit that introduced it, every note, and the search
// index's postings for the facts — in one binary file, written aside and
// renamed into place. A start reads the snapshots
// and catches each shard up from its snapshot's commit by reading the
// commits since, so nothing is written for a fact as it is learned. A
// snapshot whose checksum does not match is dropped, and its shard read
// from HEAD again.

// snapshotMagic starts every snapshot; the digit is the format. A
// snapshot holds the search index's postings, which depend on how texts
// are analysed: a change there changes the format.
const (
	snapshotFormat = 2
	snapshotPrefix = "memd shard index "
)

var snapshotMagic = snapshotPrefix + strconv.Itoa(snapshotFormat) + "\n"

// snapshot is the index of one shard at one commit.
type snapshot struct {
	head     gitstore.Hash
	facts    []search.Doc
	notes    map[string]*noteRecord // by path under notes/
	postings string                 // the facts' postings, as search.ExportShard gave them
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// origin is where a fact came from; the facts of one commit share it.
type origin struct {
	commit, chat string
	when         int64
	messages     []string
}

func originOf(d *search.Doc) origin { return origin{d.Commit, d.Chat, d.When, d.Messages} }

func (o origin) known() bool {
	return o.commit != "" || o.chat != "" || o.when != 0 || len(o.messages) > 0
}

// encodeSnapshot writes to w a snapshot of shard at head, with the facts
// walk gives (after their number, which begin is given first), the
// postings it returns, and the notes. Facts come first, each naming its
// origin and file by number; the tables of origins and files follow, so
// facts are written as they are walked, without holding them all or the
// snapshot itself (a million facts' snapshot is 125 MB); the postings come
// last. It returns the bytes written.
//
// It is long because the format is written in one place, in the order it is
// read.
func encodeSnapshot(w io.Writer, shard memd.ShardID, head gitstore.Hash, walk func(begin func(facts int), fn func(search.Doc)) []byte, notes map[string]*noteRecord) (int64, error) {
	type key struct {
		commit, chat string
		when         int64
	}
	origins := make(map[key]int)
	var originTable []origin
	files := make(map[string]int)
	var fileTable []string
	out := &checksummed{w: w}
	b := append([]byte(nil), snapshotMagic...)
	b = appendString(b, shard.String())
	b = append(b, head[:]...)
	counted := false
	postings := walk(func(facts int) {
		b = binary.LittleEndian.AppendUint64(b, uint64(facts))
		b = out.write(b)
		counted = true
	}, func(d search.Doc) {
		b = appendString(b, d.ID)
		b = appendString(b, d.Text)
		b = appendString(b, string(d.Tier))
		b = binary.AppendVarint(b, dateCode(d.Date))
		f, ok := files[d.File]
		if !ok {
			f = len(fileTable)
			files[d.File] = f
			fileTable = append(fileTable, d.File)
		}
		b = binary.AppendUvarint(b, uint64(f))
		b = binary.AppendUvarint(b, uint64(d.Offset))
		o := originOf(&d)
		at := -1
		if o.known() {
			k := key{o.commit, o.chat, o.when}
			var seen bool
			if at, seen = origins[k]; !seen {
				at = len(originTable)
				origins[k] = at
				originTable = append(originTable, o)
			} else if !slices.Equal(originTable[at].messages, o.messages) {
				// The facts of a commit share its messages; one that
				// does not (never, from memd) is kept unattributed.
				at = -1
			}
		}
		b = binary.AppendUvarint(b, uint64(at+1))
		b = out.write(b)
	})
	if !counted {
		return out.n, errors.New("encode snapshot: the facts were not counted before they were walked")
	}
	b = binary.AppendUvarint(b, uint64(len(originTable)))
	for _, o := range originTable {
		b = appendString(b, o.commit)
		b = appendString(b, o.chat)
		b = binary.AppendVarint(b, o.when)
		b = binary.AppendUvarint(b, uint64(len(o.messages)))
		for _, m := range o.messages {
			b = appendString(b, m)
		}
		b = out.write(b)
	}
	b = binary.AppendUvarint(b, uint64(len(fileTable)))
	for _, f := range fileTable {
		b = appendString(b, f)
	}
	paths := make([]string, 0, len(notes))
	for p, r := range notes {
		if r != nil {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		r := notes[p]
		b = appendString(b, p)
		b = appendString(b, r.Date)
		b = appendString(b, r.Commit)
		b = appendString(b, r.Text)
		b = out.write(b)
	}
	out.write(b)
	// The postings, then their length: a reader keeps the facts' part of
	// the file and lets the postings go once read.
	out.write(postings)
	b = out.write(binary.LittleEndian.AppendUint64(b[:0], uint64(len(postings))))
	out.write(binary.LittleEndian.AppendUint32(b, out.crc))
	return out.n, out.err
}

// checksummed writes to w, keeping the checksum of what it wrote and the
// first error.
type checksummed struct {
	w   io.Writer
	crc uint32
	n   int64
	err error
}

// write writes b and returns it emptied, for the next record.
func (c *checksummed) write(b []byte) []byte {
	if c.err == nil && len(b) > 0 {
		c.crc = crc32.Update(c.crc, crcTable, b)
		var n int
		n, c.err = c.w.Write(b)
		c.n += int64(n)
	}
	return b[:0]
}

var (
	errBadSnapshot = errors.New("not a whole snapshot of this shard")
	errOldSnapshot = errors.New("a snapshot in an older format")
	errUnreadable  = errors.New("the snapshot's file could not be read")
)

// unreadable marks an error reading a snapshot's file: the file is kept.
func unreadable(err error) error { return fmt.Errorf("%w: %w", errUnreadable, err) }

// snapshotTail ends a snapshot: the postings' length, then the checksum
// of all that comes before it.
const snapshotTail = 8 + 4

// postingsLen returns the length of the postings a snapshot's tail gives,
// and whether the before bytes that precede the tail can hold them.
func postingsLen(tail []byte, before int64) (int64, bool) {
	held := binary.LittleEndian.Uint64(tail)
	return int64(held), held <= uint64(before)
}

// snapshotWindow is how much of a snapshot's main section a reader holds
// at a time.
const snapshotWindow = 1 << 20

// snapshotParts reads a snapshot's facts a part at a time: its head,
// notes and postings, and the tables its facts name, are read first.
type snapshotParts struct {
	shard    memd.ShardID
	head     gitstore.Hash
	n        int    // facts
	facts    reader // at the first fact
	origins  []origin
	files    []string
	notes    map[string]*noteRecord // by path under notes/
	postings string                 // the facts' postings, as search.ExportShard gave them
}

// openSnapshot checks the snapshot src holds (size bytes long) and reads
// all but its facts, which each reads after, from src again. The main
// section (facts, then the tables they name) is read a window at a time,
// three times: for its checksum, while it is read to reach the tables;
// and for the facts. A million facts' main section is 85 MB, never held
// whole while the index grows. An error reading src is errUnreadable; a
// snapshot that is not whole is errBadSnapshot, whatever else is wrong
// with it.
func openSnapshot(shard memd.ShardID, src io.ReaderAt, size int64, window int) (*snapshotParts, error) {
	start := make([]byte, min(size, int64(len(snapshotPrefix)+8)))
	if _, err := src.ReadAt(start, 0); err != nil {
		return nil, unreadable(err)
	}
	if !bytes.HasPrefix(start, []byte(snapshotMagic)) {
		if older(start) {
			return nil, errOldSnapshot
		}
		return nil, errBadSnapshot
	}
	if size < int64(len(snapshotMagic))+snapshotTail {
		return nil, errBadSnapshot
	}
	tail := make([]byte, snapshotTail)
	if _, err := src.ReadAt(tail, size-snapshotTail); err != nil {
		return nil, unreadable(err)
	}
	held, ok := postingsLen(tail, size-snapshotTail-int64(len(snapshotMagic)))
	if !ok {
		return nil, errBadSnapshot
	}
	mainLen := size - snapshotTail - held
	postings := make([]byte, held)
	if _, err := src.ReadAt(postings, mainLen); err != nil {
		return nil, unreadable(err)
	}
	// The checksum is read while the facts are passed over to reach the
	// tables, which are decoded only once it matches: a damaged count
	// could make room for far more than the file holds.
	checked := make(chan error, 1)
	go func() {
		sum := crc32.New(crcTable)
		if _, err := io.Copy(sum, io.NewSectionReader(src, 0, mainLen)); err != nil {
			checked <- unreadable(err)
			return
		}
		crc := crc32.Update(crc32.Update(sum.Sum32(), crcTable, postings), crcTable, tail[:8])
		if crc != binary.LittleEndian.Uint32(tail[8:]) {
			checked <- errBadSnapshot
			return
		}
		checked <- nil
	}()
	verified := sync.OnceValue(func() error { return <-checked })
	s, err := openTables(shard, src, mainLen, window, verified)
	if cerr := verified(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	s.postings = unsafe.String(unsafe.SliceData(postings), len(postings))
	return s, nil
}

// openTables reads the main section of a snapshot up to its facts, passes
// over them, and once verified says the snapshot is whole, reads the
// tables after them.
func openTables(shard memd.ShardID, src io.ReaderAt, mainLen int64, window int, verified func() error) (*snapshotParts, error) {
	section := func(from int64) reader {
		return reader{src: io.NewSectionReader(src, from, mainLen-from), left: mainLen - from, window: window}
	}
	r := section(int64(len(snapshotMagic)))
	name := r.string()
	s := &snapshotParts{shard: shard}
	copy(s.head[:], r.bytes(len(s.head)))
	n := binary.LittleEndian.Uint64([]byte(r.bytes(8)))
	if r.err != nil {
		return nil, r.err
	}
	if name != shard.String() || n > uint64(r.remaining()) {
		return nil, errBadSnapshot
	}
	s.n = int(n)
	factsAt := mainLen - r.remaining()
	for range s.n { // passed over, to the tables after them
		r.string()
		r.string()
		r.string()
		r.varint()
		r.uvarint()
		r.uvarint()
		r.uvarint()
	}
	if err := verified(); err != nil {
		return nil, err
	}
	s.origins = make([]origin, r.count())
	for i := range s.origins {
		o := &s.origins[i]
		o.commit, o.chat, o.when = r.string(), r.string(), r.varint()
		if m := r.count(); m > 0 {
			o.messages = make([]string, m)
			for j := range o.messages {
				o.messages[j] = r.string()
			}
		}
	}
	s.files = make([]string, r.count())
	for i := range s.files {
		s.files[i] = r.string()
	}
	s.notes = make(map[string]*noteRecord)
	for m := r.count(); m > 0; m-- {
		// Copies: a piece of a window would keep all of it in memory.
		path := strings.Clone(r.string())
		s.notes[path] = &noteRecord{Date: strings.Clone(r.string()), Commit: strings.Clone(r.string()), Text: strings.Clone(r.string())}
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.remaining() != 0 {
		return nil, errBadSnapshot
	}
	s.facts = section(factsAt)
	return s, nil
}

// each calls fn with the snapshot's facts, size at a time. The next part
// is decoded while fn takes one: a start puts a large shard's facts while
// its next ones are read. The two buffers go back and forth.
func (s *snapshotParts) each(size int, fn func([]search.Doc) error) error {
	type part struct {
		docs []search.Doc
		err  error
	}
	size = max(size, 1)
	full := make(chan part)
	free := make(chan []search.Doc, 2)
	for range 2 {
		free <- make([]search.Doc, 0, min(size, s.n))
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	r := s.facts
	go func() {
		defer close(stopped)
		for from := 0; from < s.n; {
			var buf []search.Doc
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			buf, err := s.decode(&r, buf[:0], min(size, s.n-from))
			from += len(buf)
			select {
			case full <- part{buf, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
		close(full)
	}()
	// The decoder is done with the reader before each returns.
	defer func() { close(stop); <-stopped }()
	for p := range full {
		if p.err != nil {
			return p.err
		}
		if err := fn(p.docs); err != nil {
			return err
		}
		free <- p.docs
	}
	return nil
}

// decode appends the next n facts r reads to buf.
func (s *snapshotParts) decode(r *reader, buf []search.Doc, n int) ([]search.Doc, error) {
	for range n {
		d := search.Doc{Fact: memd.Fact{Shard: s.shard}}
		d.ID, d.Text, d.Tier = r.string(), r.string(), tierOf(r.string())
		d.Date = dateOfCode(r.varint())
		f := r.uvarint()
		d.Offset = int(r.uvarint())
		o := r.uvarint()
		if r.err != nil {
			return buf, r.err
		}
		if f >= uint64(len(s.files)) || o > uint64(len(s.origins)) {
			return buf, errBadSnapshot
		}
		d.File = s.files[f]
		if o > 0 {
			or := s.origins[o-1]
			d.Commit, d.Chat, d.When, d.Messages = or.commit, or.chat, or.when, or.messages
		}
		buf = append(buf, d)
	}
	return buf, nil
}

// older reports whether b starts as a snapshot in an earlier format does.
func older(b []byte) bool {
	rest, ok := bytes.CutPrefix(b, []byte(snapshotPrefix))
	if !ok {
		return false
	}
	digits, _, ok := bytes.Cut(rest, []byte("\n"))
	format, err := strconv.Atoi(string(digits))
	return ok && err == nil && format >= 1 && format < snapshotFormat
}

// dateCode keeps a date, set or not, in one number.
func dateCode(d memd.Date) int64 {
	if d.IsZero() {
		return 0
	}
	return int64(d.Days())*2 + 1
}

func dateOfCode(v int64) memd.Date {
	if v&1 == 0 {
		return memd.Date{}
	}
	return memd.DateFromDays(int(v >> 1))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// tierOf returns a tier's name without holding the file it was read from.
func tierOf(s string) memd.Tier {
	for _, t := range []memd.Tier{memd.TierProfile, memd.TierLog, memd.TierNote, memd.TierEpisode} {
		if string(t) == s {
			return t
		}
	}
	return memd.Tier(s)
}

// reader reads what encodeSnapshot wrote; the first error sticks. With a
// source, it reads it from there a window at a time, each window in memory
// of its own: the strings read stay valid while nothing holds them all.
type reader struct {
	b   string
	err error
	// src holds left bytes more, read window bytes at a time.
	src    io.Reader
	left   int64
	window int
}

// remaining is how many bytes are left to read.
func (r *reader) remaining() int64 { return int64(len(r.b)) + r.left }

// more reads from the source until n bytes are at hand, or all there are.
func (r *reader) more(n int) {
	if r.left == 0 || r.err != nil {
		return
	}
	size := int64(max(r.window, n))
	buf := make([]byte, len(r.b), min(size, r.remaining()))
	copy(buf, r.b)
	got, err := io.ReadFull(r.src, buf[len(buf):cap(buf)])
	if err != nil {
		r.err, r.b, r.left = unreadable(err), "", 0
		return
	}
	buf = buf[:len(buf)+got]
	r.left -= int64(got)
	r.b = unsafe.String(unsafe.SliceData(buf), len(buf))
}

// uvarint reads a number as binary.Uvarint does.
func (r *reader) uvarint() uint64 {
	if len(r.b) < binary.MaxVarintLen64 {
		r.more(binary.MaxVarintLen64)
	}
	var v uint64
	for i := 0; i < len(r.b) && i < binary.MaxVarintLen64; i++ {
		c := r.b[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			r.b = r.b[i+1:]
			return v | uint64(c)<<(7*i)
		}
		v |= uint64(c&0x7f) << (7 * i)
	}
	r.fail()
	return 0
}

// fail makes what is read bad, unless reading failed first.
func (r *reader) fail() {
	if r.err == nil {
		r.err = errBadSnapshot
	}
	r.b, r.left = "", 0
}

// varint reads a signed number as binary.Varint does.
func (r *reader) varint() int64 {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// count reads a number of items, each at least a byte long.
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(r.remaining()) {
		r.fail()
		return 0
	}
	return int(n)
}

// bytes reads n bytes; short, it reads n zero bytes and fails.
func (r *reader) bytes(n int) string {
	if n > len(r.b) {
		r.more(n)
	}
	if n > len(r.b) {
		r.fail()
		return string(make([]byte, n))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) string() string { return r.bytes(r.count()) }

// snapshotPath is where a shard's snapshot lives.
func (x *Index) snapshotPath(shard memd.ShardID) string {
	return filepath.Join(x.dir, string(shard.Kind), shard.Name+".snap")
}

// writeSnapshot writes a shard's snapshot aside and renames it into
// place. It is not fsynced: a snapshot lost to a power cut is read again
// from git.
func (x *Index) writeSnapshot(shard memd.ShardID, encode func(w io.Writer) (int64, error)) (int64, error) {
	path := x.snapshotPath(shard)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("write index snapshot: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := encode(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return n, fmt.Errorf("write index snapshot: %w", err)
	}
	return n, nil
}

// Snapshots are written once a shard has been indexed past its snapshot
// for saveAfter, or for a hundred times as long as the last snapshot took
// to write if that is longer: a large shard written to all the time is
// not written out again and again. A memd stopped before then reads the
// commits since the snapshot at its next start.
const (
	saveAfter  = 10 * time.Second
	saveFactor = 100
	saveTick   = 2 * time.Second
)

// markDirty notes that a shard's index moved past its snapshot. The
// caller holds x.mu.
func (x *Index) markDirty(id memd.ShardID) {
	if _, ok := x.dirty[id]; !ok {
		x.dirty[id] = time.Now()
	}
}

// saver writes the snapshots of shards indexed past theirs, until the
// index closes.
func (x *Index) saver() {
	defer close(x.saverDone)
	t := time.NewTicker(saveTick)
	defer t.Stop()
	for {
		select {
		case <-x.ctx.Done():
			return
		case <-t.C:
			if err := x.saveDirty(false); err != nil {
				x.log.Warn("writing index snapshots", "err", err)
			}
		}
	}
}

// saveDirty writes the snapshot of each shard indexed past its own: all
// of them with all, else those that have waited long enough.
func (x *Index) saveDirty(all bool) error {
	x.mu.Lock()
	var due []memd.ShardID
	for id, since := range x.dirty {
		if all || time.Since(since) >= max(saveAfter, saveFactor*x.saveCost[id]) {
			due = append(due, id)
		}
	}
	x.mu.Unlock()
	var errs []error
	for _, id := range due {
		if err := x.saveShard(id); err != nil {
			errs = append(errs, fmt.Errorf("shard %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// largeSnapshot is the size from which writing a snapshot hands the
// memory it took back to the system: a shard of about 250,000 facts.
const largeSnapshot = 32 << 20

// saveShard writes a shard's snapshot: what the index holds for it now,
// read under the shard's lock so that facts, notes and commit agree.
func (x *Index) saveShard(id memd.ShardID) error {
	x.saveMu.Lock()
	defer x.saveMu.Unlock()
	unlock := x.lock(id)
	start := time.Now()
	x.mu.Lock()
	head := x.heads[id]
	notes := x.notes[id]
	delete(x.dirty, id)
	x.mu.Unlock()
	// Written as it is encoded, under the shard's lock and the search
	// engine's read lock: a large shard's snapshot is never held whole in
	// memory, and an engine write waits for the file's writes (into the
	// page cache: a tenth of a second for a million facts).
	size, err := x.writeSnapshot(id, func(w io.Writer) (int64, error) {
		return encodeSnapshot(w, id, head, func(begin func(int), fn func(search.Doc)) []byte {
			return x.search.ExportShard(id, begin, fn)
		}, notes)
	})
	unlock()
	if size >= largeSnapshot {
		// Writing it left garbage the size of its postings and more, and a
		// daemon idle after a write allocates nothing that would have it
		// collected: its memory would stay that much larger.
		debug.FreeOSMemory()
	}
	cost := time.Since(start)
	if memd.DiskFull(err) {
		// Each try writes until the disk is full, and a write of memd's or
		// a person's landing then fails though it had room: try again in
		// ten minutes, not ten seconds (a stop still tries).
		cost = max(cost, fullDiskSaveWait/saveFactor)
	}
	x.mu.Lock()
	if err != nil {
		x.markDirty(id)
	}
	x.saveCost[id] = cost
	x.mu.Unlock()
	return err
}

// fullDiskSaveWait is how long a snapshot waits after one found the disk
// full.
const fullDiskSaveWait = 10 * time.Minute
