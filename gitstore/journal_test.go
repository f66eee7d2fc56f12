package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// git allows any byte but NUL in a file name, and a push may bring one
// with a newline: the journal memd writes must read back whole.
func TestJournal_OddPathsReadBack(t *testing.T) {
	sh := &Shard{gitDir: t.TempDir()}
	blob := NewHash("1111111111111111111111111111111111111111")
	from := map[string]*factFile{
		"notes/plan.md":     {blob: blob},
		"odd\nname.txt":     {blob: blob},
		"trailing\r":        {blob: blob},
		"with space/and\"q": nil,
	}
	if err := sh.writeJournal(blob, from, from); err != nil {
		t.Fatal(err)
	}
	j, err := sh.readJournal()
	if err != nil {
		t.Fatalf("the journal memd wrote does not read back: %v", err)
	}
	for path, ff := range from {
		if got, ok := j.from[path]; !ok || got != blobOf(ff) {
			t.Errorf("%q: read back %v %v", path, got, ok)
		}
	}
}

// The journal is appended to: the last complete record holds, whatever a
// crash cut short after it, and a record appended after a cut one is read.
func TestJournal_LastCompleteRecordHolds(t *testing.T) {
	dir := t.TempDir()
	sh := &Shard{gitDir: dir, store: &Store{log: slog.New(slog.DiscardHandler)}}
	a, b, c := NewHash(strings.Repeat("a", 40)), NewHash(strings.Repeat("b", 40)), NewHash(strings.Repeat("c", 40))
	write := func(commit Hash) {
		t.Helper()
		if err := sh.writeJournal(commit, map[string]*factFile{"log/2026-11.md": {blob: commit}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	read := func() Hash {
		t.Helper()
		j, err := sh.readJournal()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if j == nil {
			return Hash{}
		}
		return j.commit
	}
	write(a)
	withA, _ := os.ReadFile(sh.journalPath())
	write(b)
	whole, _ := os.ReadFile(sh.journalPath())
	// (A record whose "end" is there but not the newline after it is whole.)
	for cut := len(withA); cut < len(whole)-1; cut++ {
		os.WriteFile(sh.journalPath(), whole[:cut], 0o644)
		if got := read(); got != a {
			t.Fatalf("cut %d bytes into the second record: read %s, want the first", cut-len(withA), short(got))
		}
		write(c)
		if got := read(); got != c {
			t.Fatalf("a record after one cut %d bytes in: read %s, want it", cut-len(withA), short(got))
		}
	}
	os.WriteFile(sh.journalPath(), whole, 0o644)
	if got := read(); got != b {
		t.Fatalf("read %s, want the last record", short(got))
	}
	sh.dropJournal()
	if got := read(); !got.IsZero() {
		t.Fatalf("a cleared journal reads %s", short(got))
	}
	// Never cleared (git held the index lock through many writes), it is
	// replaced by its last record once past the limit.
	var last Hash
	for i := 0; ; i++ {
		last = NewHash(fmt.Sprintf("%040x", i+1))
		write(last)
		if got := read(); got != last {
			t.Fatalf("record %d: read %s", i, short(got))
		}
		if fi, _ := os.Stat(sh.journalPath()); fi.Size() > journalLimit+4096 {
			t.Fatalf("an uncleared journal grew to %d bytes", fi.Size())
		}
		if i > 2*journalLimit/100 {
			break
		}
	}
	os.Remove(sh.journalPath())
	for i := 0; ; i++ { // appended to until cleared past the limit: then gone
		write(a)
		fi, err := os.Stat(sh.journalPath())
		if err != nil {
			t.Fatal(err)
		}
		sh.dropJournal()
		if fi.Size() > journalLimit {
			if _, err := os.Stat(sh.journalPath()); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a journal of %d bytes is not removed when cleared", fi.Size())
			}
			break
		}
		if got := read(); !got.IsZero() {
			t.Fatalf("record %d: a cleared journal reads %s", i, short(got))
		}
	}
}

// A journal an older memd left (one record, rewritten whole) is read at
// start and taken into the current one.
func TestJournal_TakesAnOlderMemdsJournal(t *testing.T) {
	dir := t.TempDir()
	sh := &Shard{gitDir: dir, store: &Store{log: slog.New(slog.DiscardHandler)}}
	commit := strings.Repeat("d", 40)
	legacy := filepath.Join(dir, legacyJournalName)
	os.WriteFile(legacy, []byte(journalHeader+"\ncommit "+commit+"\n"+commit+" \"log/2026-11.md\"\nend\n"), 0o644)
	for range 2 {
		j, err := sh.readJournal()
		if err != nil || j == nil || j.commit.String() != commit || j.from["log/2026-11.md"].String() != commit {
			t.Fatalf("read %+v, %v; want the older memd's journal", j, err)
		}
		if _, err := os.Stat(legacy); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("the older journal is still there")
		}
	}
}

func FuzzJournal_Read(f *testing.F) {
	f.Add([]byte("\n" + journalHeader + "\ncommit " + strings.Repeat("a", 40) + "\n" + strings.Repeat("b", 40) + " \"x\"\nend\n" + clearRecord))
	f.Add([]byte(journalHeader + "\ncommit " + strings.Repeat("a", 40) + "\nalso " + strings.Repeat("b", 40) + " \"x\"\nend\n\n" + journalHeader + "\ncom"))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := lastRecord(b)
		if err != nil || j == nil {
			return
		}
		// What reads back is what memd would write for it, and reads
		// back the same.
		sh := &Shard{gitDir: t.TempDir()}
		if err := sh.saveJournal(j); err != nil {
			t.Fatal(err)
		}
		again, err := sh.readJournal()
		if err != nil || again == nil || again.commit != j.commit || len(again.from) != len(j.from) {
			t.Fatalf("%+v read back as %+v (%v)", j, again, err)
		}
	})
}
