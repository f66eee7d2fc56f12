package gitstore

// Workloads on small disks for the room check's tests (falserefusal_test.go):
// each sets up a shard and returns the write to make once the disk is
// nearly full.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

type probeShape struct {
	name  string
	disk  func(t *testing.T) string
	setup func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error
}

func tmpfs(size string) func(t *testing.T) string {
	return func(t *testing.T) string { return memdtest.SmallDisk(t, size) }
}

func ext4(size string) func(t *testing.T) string {
	return func(t *testing.T) string { return memdtest.Ext4Disk(t, size) }
}

// ext4With mounts an ext4 file system made with mkfs.ext4's own defaults
// and the extra arguments (no -m 0, no -b).
func ext4With(size string, args ...string) func(t *testing.T) string {
	return func(t *testing.T) string { return memdtest.Ext4Disk(t, size, args...) }
}

func addLog(sh *Shard, who Signature, d memd.Date, text string) error {
	_, err := sh.Apply(Change{Author: who, Message: "remember", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: d, Tier: memd.TierLog}}}})
	return err
}

func manyLogFacts(t *testing.T, sh *Shard, who Signature, d memd.Date, n int) {
	var edits []Edit
	for i := range n {
		edits = append(edits, Edit{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Talked with the customer about ticket %d and the seat they asked for", i), Date: d, Tier: memd.TierLog}})
	}
	if _, err := sh.Apply(Change{Author: who, Message: "remember", Edits: edits}); err != nil {
		t.Fatal(err)
	}
}

func prose(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Step %d of the runbook, written out at some length for the on-call person.\n", i)
	}
	return b.String()
}

func noise(n int) string {
	rnd := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	buf := make([]byte, 48)
	for b.Len() < n {
		for i := range buf {
			buf[i] = byte(rnd.Uint32())
		}
		fmt.Fprintf(&b, "%x\n", buf)
	}
	return b.String()
}

func noteEdit(fn func(cur []byte) []byte) NoteUpdate {
	return func(cur []byte, _ bool) ([]byte, bool, error) { return fn(cur), false, nil }
}

func noteApply(sh *Shard, path string, u NoteUpdate) error {
	_, err := sh.Apply(Change{Author: Committer(), Message: "note-edit: x\n", Note: &NoteChange{Path: path, Update: u}})
	return err
}

// stagedProse: a log a person git-added 1 MB of prose to, and a fact
// remembered into it.
func stagedProse(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
	manyLogFacts(t, sh, who, d, 20)
	p := filepath.Join(sh.Dir(), "log", "2026-11.md")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, append(b, prose(1<<20)...), 0o644)
	asPat(t, sh.Dir(), "add", "log/2026-11.md")
	return func() error { return addLog(sh, who, d, "Packed a raincoat") }
}

var probeShapes = []probeShape{
	{"logAppendSmall", tmpfs("8m"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		manyLogFacts(t, sh, who, d, 20)
		return func() error { return addLog(sh, who, d, "Packed a raincoat") }
	}},
	{"logStagedProseAppend", tmpfs("16m"), stagedProse},
	{"noteStagedEdit", tmpfs("16m"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		noteByHand(t, sh, "runbook.md", prose(100<<10))
		p := filepath.Join(sh.Dir(), "notes", "runbook.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, append(b, prose(900<<10)...), 0o644)
		asPat(t, sh.Dir(), "add", "notes/runbook.md")
		return func() error {
			return noteApply(sh, "notes/runbook.md", noteEdit(func(cur []byte) []byte { return append([]byte("# Runbook\n"), cur...) }))
		}
	}},
	{"fetch300NotesOwnFolders", tmpfs("16m"), fetchNotes(300, true)},
	{"fetch300NotesExt4_1k", ext4With("64M", "-m", "0"), fetchNotes(300, false)},
	{"rootReserveLogAppend", ext4With("64M", "-b", "4096"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		manyLogFacts(t, sh, who, d, 20)
		return func() error { return addLog(sh, who, d, "Packed a raincoat") }
	}},
	{"ext4LogAppendSmall", ext4("64M"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		manyLogFacts(t, sh, who, d, 20)
		return func() error { return addLog(sh, who, d, "Packed a raincoat") }
	}},
	{"ext4LogStagedProseAppend", ext4("64M"), stagedProse},
	{"logStagedSmallAppend", tmpfs("16m"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		manyLogFacts(t, sh, who, d, 2000)
		p := filepath.Join(sh.Dir(), "log", "2026-11.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, append(b, "- a line of the person's\n"...), 0o644)
		asPat(t, sh.Dir(), "add", "log/2026-11.md")
		return func() error { return addLog(sh, who, d, "Packed a raincoat") }
	}},
	{"logStagedForget", tmpfs("16m"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		manyLogFacts(t, sh, who, d, 2000)
		p := filepath.Join(sh.Dir(), "log", "2026-11.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, append(b, "- a line of the person's\n"...), 0o644)
		asPat(t, sh.Dir(), "add", "log/2026-11.md")
		id := memd.FactID("Talked with the customer about ticket 5 and the seat they asked for")
		return func() error {
			_, err := sh.Apply(Change{Author: who, Message: "forget", Edits: []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: id}}}})
			return err
		}
	}},
	{"fetchNoteConflictPersonEdit", tmpfs("8m"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		noteByHand(t, sh, "runbook.md", prose(300<<10))
		theirs := fromPeer(t, sh, func(peer string) {
			p := filepath.Join(peer, "notes", "runbook.md")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append([]byte("Theirs first line.\n"), b[bytes.IndexByte(b, '\n')+1:]...), 0o644)
			asPat(t, peer, "commit", "-q", "-a", "-m", "peer edit")
		})
		p := filepath.Join(sh.Dir(), "notes", "runbook.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, append([]byte("Mine first line.\n"), b[bytes.IndexByte(b, '\n')+1:]...), 0o644)
		return func() error { _, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"}); return err }
	}},
	{"fetchNoteCRLF", tmpfs("8m"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		noteByHand(t, sh, "runbook.md", prose(300<<10))
		theirs := fromPeer(t, sh, func(peer string) {
			p := filepath.Join(peer, "notes", "runbook.md")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append([]byte("# Runbook\n"), b...), 0o644)
			asPat(t, peer, "commit", "-q", "-a", "-m", "peer edit")
		})
		p := filepath.Join(sh.Dir(), "notes", "runbook.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")), 0o644)
		return func() error { _, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"}); return err }
	}},
	{"fetchDeleteEditedAndAdd", tmpfs("8m"), func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		noteByHand(t, sh, "a.md", prose(300<<10))
		theirs := fromPeer(t, sh, func(peer string) {
			os.Remove(filepath.Join(peer, "notes", "a.md"))
			os.WriteFile(filepath.Join(peer, "notes", "b.md"), []byte(noise(300<<10)), 0o644)
			asPat(t, peer, "add", "-A", "notes")
			asPat(t, peer, "commit", "-q", "-m", "swap")
		})
		p := filepath.Join(sh.Dir(), "notes", "a.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, append(b, "my line\n"...), 0o644)
		return func() error { _, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"}); return err }
	}},
}

func fetchNotes(n int, own bool) func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
	return func(t *testing.T, sh *Shard, who Signature, d memd.Date) func() error {
		theirs := newNotesFromPeer(t, sh, n, own)
		return func() error { _, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"}); return err }
	}
}

// newNotesFromPeer has a peer add n small notes, each in a folder of its
// own with own, and returns the peer's commit, fetched into the shard.
func newNotesFromPeer(t *testing.T, sh *Shard, n int, own bool) Hash {
	noteByHand(t, sh, "start.md", "start\n")
	return fromPeer(t, sh, func(remote string) {
		for i := range n {
			p := filepath.Join(remote, "notes", fmt.Sprintf("n%03d.md", i))
			if own {
				p = filepath.Join(remote, "notes", fmt.Sprintf("t%03d", i), "n.md")
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(fmt.Sprintf("# Note %d\n\nfirst line\n", i)), 0o644)
		}
		asPat(t, remote, "add", "notes")
		asPat(t, remote, "commit", "-q", "-m", "new notes")
	})
}
