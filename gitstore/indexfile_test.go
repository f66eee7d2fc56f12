package gitstore

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// memd's index encoder writes what go-git's does, byte for byte, for
// every index: long names, zero and far times, conflicts and extended
// flags (which go to go-git's encoder), versions 2 to 4.
func TestEncodeIndex_AsGoGitDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	names := func() string {
		parts := []string{"log", "2026", "11", "03.md", "profile.md", "notes", "runbooks", "deploy.md", "ä", "a b"}
		var b strings.Builder
		for j := range 1 + rng.IntN(4) {
			if j > 0 {
				b.WriteByte('/')
			}
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		if rng.IntN(40) == 0 {
			b.WriteString(strings.Repeat("x", 4090+rng.IntN(20))) // past the 12 bits of length
		}
		return b.String()
	}
	when := func() time.Time {
		switch rng.IntN(6) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(0, 1)
		default:
			return time.Unix(1_700_000_000+rng.Int64N(100_000_000), rng.Int64N(1e9))
		}
	}
	for n := range 400 {
		idx := &index.Index{Version: uint32(2 + n%3)}
		seen := map[string]bool{}
		for range rng.IntN(60) {
			name := names()
			if seen[name] {
				continue
			}
			seen[name] = true
			e := &index.Entry{Name: name, CreatedAt: when(), ModifiedAt: when(), Dev: rng.Uint32(), Inode: rng.Uint32(),
				Mode: filemode.Regular, UID: rng.Uint32(), GID: rng.Uint32(), Size: rng.Uint32()}
			for i := range e.Hash {
				e.Hash[i] = byte(rng.IntN(256))
			}
			switch rng.IntN(30) {
			case 0:
				e.Stage = index.OurMode
			case 1:
				e.IntentToAdd = true
			case 2:
				e.SkipWorktree = true
			}
			idx.Entries = append(idx.Entries, e)
		}
		// Each encoder sorts the entries it is given: each gets its own.
		theirs := &index.Index{Version: idx.Version, Entries: append([]*index.Entry(nil), idx.Entries...)}
		var want bytes.Buffer
		wantErr := index.NewEncoder(&want).Encode(theirs)
		got, err := encodeIndex(idx)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("index %d: error %v, go-git's %v", n, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("index %d (version %d, %d entries): %d bytes differ from go-git's %d", n, idx.Version, len(idx.Entries), len(got), want.Len())
		}
	}
	// A time before 1970 is refused, as go-git refuses it.
	bad := &index.Index{Version: 2, Entries: []*index.Entry{{Name: "a.md", ModifiedAt: time.Unix(-5, 0)}}}
	if _, err := encodeIndex(bad); err == nil {
		t.Error("an entry dated before 1970 was encoded")
	}
}

// The index memd wrote is known again only while the file holds it:
// another index of the same size, written in its place at the same
// modification time (a coarse clock, an inode taken again), is not it.
func TestWrittenIndex_HeldOnlyByTheFileMemdWrote(t *testing.T) {
	idx := &index.Index{Version: 2, Entries: []*index.Entry{{Name: "log/2026-11.md", Mode: filemode.Regular, Size: 10}}}
	ours, err := encodeIndex(idx)
	if err != nil {
		t.Fatal(err)
	}
	other := &index.Index{Version: 2, Entries: []*index.Entry{{Name: "log/2026-12.md", Mode: filemode.Regular, Size: 10}}}
	theirs, err := encodeIndex(other)
	if err != nil || len(theirs) != len(ours) {
		t.Fatalf("another index of the same size: %d bytes, %v", len(theirs), err)
	}
	path := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(path, ours, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	w := wrote(idx, ours, fi)
	check := func(data []byte, want bool) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o644); err != nil { // in place: the same inode
			t.Fatal(err)
		}
		os.Chtimes(path, fi.ModTime(), fi.ModTime())
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		now, _ := f.Stat()
		if got := w.holds(f, now); got != want {
			t.Errorf("holds = %v, want %v", got, want)
		}
	}
	check(ours, true)
	check(theirs, false)
}
