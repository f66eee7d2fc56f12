package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// A person's write that lands while memd replaces a working file, just
// before the rename or on the file the rename replaces, is kept: memd
// merges its change into it instead of writing over it.
func TestRewriteWorking_KeepsAWriteThatRacesTheRename(t *testing.T) {
	const path = "log/2026-11.md"
	// memd's change takes a fact out, so the file is replaced, not
	// appended to.
	head := "# Log 2026-11\n\n- (2026-11-03) Booked a flight to Lisbon\n"
	mine := "# Log 2026-11\n\n- (2026-11-03) Packed a raincoat\n"
	person := "- (2026-11-03) Written by hand\n"
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	merge := func(cur []byte, exists bool) ([]byte, bool) { return mergeWorking(path, old, next, cur, exists) }

	for _, moment := range []string{"before the rename", "after the rename"} {
		t.Run(moment, func(t *testing.T) {
			full := filepath.Join(t.TempDir(), "2026-11.md")
			if err := os.WriteFile(full, []byte(head), 0o644); err != nil {
				t.Fatal(err)
			}
			var held *os.File // the person's editor, open on the file
			t.Cleanup(func() {
				setHook(&testHookBeforeRename, nil)
				setHook(&testHookAfterRename, nil)
				if held != nil {
					held.Close()
				}
			})
			fired := false
			setHook(&testHookBeforeRename, func(string) {
				if fired {
					return
				}
				var err error
				if held, err = os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0); err != nil {
					t.Fatal(err)
				}
				if moment == "before the rename" {
					fired = true
					held.WriteString(person)
				}
			})
			setHook(&testHookAfterRename, func(string) {
				if fired || moment != "after the rename" {
					return
				}
				fired = true
				held.WriteString(person) // to the file memd just replaced
			})
			w, err := rewriteWorking(full, merge)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(full)
			if !strings.Contains(string(got), person) || !strings.Contains(string(got), "Packed a raincoat") || strings.Contains(string(got), "Lisbon") {
				t.Fatalf("the file lost a write:\n%s", got)
			}
			if string(w.data) != string(got) {
				t.Errorf("memd thinks the file holds\n%s\nbut it holds\n%s", w.data, got)
			}
			if w.stat != nil && w.stat.Size() != int64(len(got)) {
				t.Errorf("stat data of %d bytes recorded for a file of %d", w.stat.Size(), len(got))
			}
		})
	}
}

// memd's own append, cut short by a crash, is completed, not mistaken for
// a person's line.
func TestMergeWorking_CompletesACutShortAppend(t *testing.T) {
	const path = "log/2026-11.md"
	head := "# Log 2026-11\n\n- (2026-11-03) Booked a flight to Lisbon\n"
	mine := head + "- (2026-11-03) Packed a raincoat\n"
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	got, remove := mergeWorking(path, old, next, []byte(head+"- (2026-11-03) Pack"), true)
	if remove || string(got) != mine {
		t.Errorf("got %q (remove %v), want %q", got, remove, mine)
	}
}

// memd's change that only adds facts is appended in place: a person's
// append under way (opened before, written after) lands beside it.
func TestRewriteWorking_AppendsInPlace(t *testing.T) {
	const path = "log/2026-11.md"
	head := "# Log 2026-11\n\n- (2026-11-03) Booked a flight to Lisbon\n"
	edited := head + "- (2026-11-03) Written by hand\n" // the person's uncommitted line
	mine := head + "- (2026-11-03) Packed a raincoat\n"
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	full := filepath.Join(t.TempDir(), "2026-11.md")
	if err := os.WriteFile(full, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	held, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0) // the person's echo >>, opened
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	w, err := rewriteWorking(full, func(cur []byte, exists bool) ([]byte, bool) { return mergeWorking(path, old, next, cur, exists) })
	if err != nil {
		t.Fatal(err)
	}
	held.WriteString("- (2026-11-03) Also by hand\n") // and written after memd's write
	got, _ := os.ReadFile(full)
	for _, want := range []string{"Written by hand", "Packed a raincoat", "Also by hand"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the file lost %q:\n%s", want, got)
		}
	}
	if w.stat == nil || w.stat.Size() != int64(len(edited)+len("- (2026-11-03) Packed a raincoat\n")) {
		t.Errorf("stat data %v for memd's write", w.stat)
	}
}

// A person's echo >> that opened the file before memd replaced it and
// writes after memd's last look still lands: memd only adds lines here, so
// it appends in place.
func TestRewriteWorking_AppendOpenedBeforeAndWrittenAfter(t *testing.T) {
	const path = "log/2026-11.md"
	head := "# Log 2026-11\n\n- (2026-11-03) Booked a flight to Lisbon\n"
	mine := head + "- (2026-11-03) Packed a raincoat\n"
	cur := head + "- (2026-11-03) Earlier hand line\n" // the person's uncommitted edit
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	full := filepath.Join(t.TempDir(), "2026-11.md")
	os.WriteFile(full, []byte(cur), 0o644)
	held, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0) // the shell's open for >>
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rewriteWorking(full, func(c []byte, e bool) ([]byte, bool) { return mergeWorking(path, old, next, c, e) }); err != nil {
		t.Fatal(err)
	}
	held.WriteString("- (2026-11-03) Written by hand\n") // echo's write()
	held.Close()
	got, _ := os.ReadFile(full)
	for _, want := range []string{"Earlier hand line", "Written by hand", "Packed a raincoat"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("%q lost; the file holds:\n%s", want, got)
		}
	}
}

// Two quick appends by a person while memd replaces the file: the first
// reaches the file memd replaced, the second memd's new file. Both stay.
func TestRewriteWorking_TwoAppendsAcrossTheRename(t *testing.T) {
	const path = "log/2026-11.md"
	head := "# Log 2026-11\n\n- (2026-11-03) Booked a flight to Lisbon\n"
	mine := "# Log 2026-11\n\n- (2026-11-03) Packed a raincoat\n" // takes a fact out: a rename
	cur := head + "- (2026-11-03) Earlier hand line\n"
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	full := filepath.Join(t.TempDir(), "2026-11.md")
	os.WriteFile(full, []byte(cur), 0o644)
	var held *os.File
	setHook(&testHookBeforeRename, func(string) {
		if held == nil {
			held, _ = os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
		}
	})
	fired := false
	setHook(&testHookAfterRename, func(string) {
		if fired {
			return
		}
		fired = true
		held.WriteString("- (2026-11-03) Hand line a\n") // to the replaced file
		f, _ := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString("- (2026-11-03) Hand line b\n") // to memd's new file
		f.Close()
	})
	t.Cleanup(func() {
		setHook(&testHookBeforeRename, nil)
		setHook(&testHookAfterRename, nil)
		if held != nil {
			held.Close()
		}
	})
	if _, err := rewriteWorking(full, func(c []byte, e bool) ([]byte, bool) { return mergeWorking(path, old, next, c, e) }); err != nil {
		t.Fatal(err)
	}
	if !fired {
		t.Fatal("memd did not replace the file, so this test shows nothing")
	}
	got, _ := os.ReadFile(full)
	for _, want := range []string{"Earlier hand line", "Hand line a", "Hand line b", "Packed a raincoat"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("%q lost; the file holds:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "Lisbon") {
		t.Errorf("memd's removal did not happen:\n%s", got)
	}
}

// A person's echo >> that opened the file before memd replaced it, and
// writes only after memd's last look, still reaches the working file: memd
// watches the file it replaced for a moment.
func TestRewriteWorking_WriteLandingAfterTheLastLook(t *testing.T) {
	const path = "log/2026-11.md"
	head := "# Log 2026-11\n\n- (2026-11-03) Booked a flight to Lisbon\n"
	mine := "# Log 2026-11\n\n- (2026-11-03) Packed a raincoat\n" // takes a fact out: a rename
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	full := filepath.Join(t.TempDir(), "2026-11.md")
	os.WriteFile(full, []byte(head), 0o644)
	var held *os.File
	setHook(&testHookBeforeRename, func(string) {
		if held == nil {
			held, _ = os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
		}
	})
	// The watches earlier tests started end first: one still watching
	// would signal done, and all 64 at once would leave none for this.
	if err := watchSlots.Acquire(context.Background(), 64); err != nil {
		t.Fatal(err)
	}
	watchSlots.Release(64)
	done := make(chan struct{}, 1)
	hook := func() { done <- struct{}{} }
	testHookWatchDone.Store(&hook)
	t.Cleanup(func() {
		setHook(&testHookBeforeRename, nil)
		testHookWatchDone.Store(nil)
		if held != nil {
			held.Close()
		}
	})
	if _, err := rewriteWorking(full, func(c []byte, e bool) ([]byte, bool) { return mergeWorking(path, old, next, c, e) }); err != nil {
		t.Fatal(err)
	}
	if held == nil {
		t.Fatal("memd did not replace the file, so this test shows nothing")
	}
	held.WriteString("- (2026-11-03) Written by hand\n") // lands in the replaced file
	<-done
	got, _ := os.ReadFile(full)
	if !strings.Contains(string(got), "Written by hand") || !strings.Contains(string(got), "Packed a raincoat") {
		t.Errorf("the file after the watch:\n%s", got)
	}
}

// setHook sets or (with nil) clears a hook of the working-file writes.
func setHook(h *atomic.Pointer[func(string)], fn func(string)) {
	if fn == nil {
		h.Store(nil)
		return
	}
	h.Store(&fn)
}

// personWrites stands in for a person writing to a working file at the
// moment memd is about to write it, every time: write gets the file's path
// and how many times it has been called.
func personWrites(t *testing.T, write func(full string, n int)) {
	var n atomic.Int64 // a retry timer may write too
	hook := func(full string) { write(full, int(n.Add(1))) }
	setHook(&testHookBeforeAppend, hook)
	setHook(&testHookBeforeRename, hook)
	t.Cleanup(func() { setHook(&testHookBeforeAppend, nil); setHook(&testHookBeforeRename, nil) })
}

func addFact(sh *Shard, text string) (Result, error) {
	date, _ := memd.ParseDate("2026-11-03")
	return sh.Apply(Change{Author: Signature{Name: "alice", Email: "alice@agents.memd"}, Message: "remember",
		Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: date, Tier: memd.TierLog}}}})
}

// A person appending lines as fast as memd writes (a script, an editor
// saving in a burst) does not keep memd's fact out of the working file
// while main moves on: the person's git commit -a would then commit it
// away. memd's line goes after theirs.
func TestShard_WritesAWorkingFileAPersonKeepsAppendingTo(t *testing.T) {
	_, sh := aliceShard(t)
	if _, err := addFact(sh, "Booked a flight to Lisbon"); err != nil {
		t.Fatal(err)
	}
	var hand []string
	personWrites(t, func(full string, n int) {
		line := fmt.Sprintf("- (2026-11-03) Written by hand %d\n", n)
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
		hand = append(hand, line)
	})
	if _, err := addFact(sh, "Packed a raincoat"); err != nil {
		t.Fatal(err)
	}
	if len(hand) == 0 {
		t.Fatal("the person never wrote, so this test shows nothing")
	}
	got, err := os.ReadFile(filepath.Join(sh.Dir(), "log", "2026-11.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append(hand, "- (2026-11-03) Packed a raincoat\n") {
		if !strings.Contains(string(got), want) {
			t.Errorf("the working file lacks %q:\n%s", want, got)
		}
	}
}

// draft is what a person saving a file over and over writes the n-th
// time: each save replaces the last, and differs in size too.
func draft(head []byte, n int) string {
	return "Draft " + strings.Repeat("x", n) + "\n" + string(head)
}

// A working file a person keeps rewriting, so that memd cannot write its
// change into it, stops the write: main does not move to a commit the
// file does not show, and the caller hears to try again. So too while a
// git command holds .git/index.lock (a git commit -a reading the files).
func TestShard_RefusesAWriteAPersonKeepsOutOfTheWorkingFile(t *testing.T) {
	for _, gitHoldsIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("git holds the index %v", gitHoldsIndex), func(t *testing.T) {
			_, sh := aliceShard(t)
			first, err := addFact(sh, "Booked a flight to Lisbon")
			if err != nil {
				t.Fatal(err)
			}
			lock := filepath.Join(sh.Dir(), ".git", "index.lock")
			if gitHoldsIndex {
				if err := os.WriteFile(lock, []byte("DIRC"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			full := filepath.Join(sh.Dir(), "log", "2026-11.md")
			head, _ := os.ReadFile(full)
			var theirs string
			personWrites(t, func(full string, n int) {
				theirs = draft(head, n)
				if err := os.WriteFile(full, []byte(theirs), 0o644); err != nil {
					t.Fatal(err)
				}
			})
			_, err = addFact(sh, "Packed a raincoat")
			if memd.ErrorCode(err) != memd.EUNAVAILABLE || !strings.Contains(err.Error(), "log/2026-11.md") {
				t.Fatalf("a write the working file could not take: err %v, want %s naming the file", err, memd.EUNAVAILABLE)
			}
			if h, err := sh.Head(); err != nil || h != first.Commit {
				t.Errorf("main moved to %s (err %v) though the working file lacks the fact", h, err)
			}
			if got, _ := os.ReadFile(full); string(got) != theirs {
				t.Errorf("the person's file became\n%s\nwant\n%s", got, theirs)
			}
			if j, err := sh.readJournal(); err != nil || j != nil {
				t.Errorf("the working-tree journal names the refused move: %+v (%v)", j, err)
			}

			// Once the person stops, the write goes through beside their draft.
			setHook(&testHookBeforeAppend, nil)
			setHook(&testHookBeforeRename, nil)
			os.Remove(lock)
			if _, err := addFact(sh, "Packed a raincoat"); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(full)
			if !strings.Contains(string(got), "Packed a raincoat") || !strings.HasPrefix(string(got), theirs) {
				t.Errorf("the working file after the write:\n%s", got)
			}
		})
	}
}

// Once memd has written one working file of a move, refusing the move
// would leave that file ahead of main for a git commit to take: main
// moves, and the file the person keeps changing catches up once they stop.
// Meanwhile it holds up no other write.
func TestShard_AMoveHalfWrittenGoesAhead(t *testing.T) {
	_, sh := aliceShard(t)
	if _, err := addFact(sh, "Booked a flight to Lisbon"); err != nil {
		t.Fatal(err)
	}
	busy := filepath.Join(sh.Dir(), "log", "2026-11.md") // sorted after 2026-10.md
	head, _ := os.ReadFile(busy)
	personWrites(t, func(full string, n int) {
		if full == busy {
			os.WriteFile(full, []byte(draft(head, n)), 0o644)
		}
	})
	oct, _ := memd.ParseDate("2026-10-20")
	nov, _ := memd.ParseDate("2026-11-03")
	res, err := sh.Apply(Change{Author: Signature{Name: "alice", Email: "alice@agents.memd"}, Message: "remember",
		Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: "Renewed the passport", Date: oct, Tier: memd.TierLog}},
			{Op: AddFact, Fact: memd.Fact{Text: "Packed a raincoat", Date: nov, Tier: memd.TierLog}}}})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := sh.Head(); h != res.Commit {
		t.Fatalf("main is at %s, want the write's %s", h, res.Commit)
	}
	if got, _ := os.ReadFile(filepath.Join(sh.Dir(), "log", "2026-10.md")); !strings.Contains(string(got), "Renewed the passport") {
		t.Errorf("the file written first:\n%s", got)
	}

	// While the busy file waits, the next move, to another file, is
	// written and indexed in full, not held up behind it.
	dec, _ := memd.ParseDate("2026-12-01")
	res, err = sh.Apply(Change{Author: Signature{Name: "alice", Email: "alice@agents.memd"}, Message: "remember",
		Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: "Bought winter tyres", Date: dec, Tier: memd.TierLog}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(sh.Dir(), "log", "2026-12.md")); !strings.Contains(string(got), "Bought winter tyres") {
		t.Errorf("the next move's file:\n%s", got)
	}
	gitOut := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", sh.Dir()}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if st := gitOut("status", "--porcelain", "log/2026-12.md", "log/2026-10.md"); st != "" {
		t.Errorf("git status of the files memd wrote:\n%s", st)
	}

	setHook(&testHookBeforeAppend, nil)
	setHook(&testHookBeforeRename, nil)
	if !sh.SyncWorktree(time.Second) {
		t.Fatal("the working tree did not catch up")
	}
	if got, _ := os.ReadFile(busy); !strings.Contains(string(got), "Packed a raincoat") || !strings.HasPrefix(string(got), "Draft") {
		t.Errorf("the busy file once the person stopped:\n%s", got)
	}
}

// A working file memd cannot write for another reason than a person's
// saves (a directory where the file should be) does not refuse writes:
// main moves, as it does while git holds the index, and writes to the
// shard's other files go on.
func TestShard_AnUnwritableWorkingFileDoesNotStopWrites(t *testing.T) {
	_, sh := aliceShard(t)
	nov := filepath.Join(sh.Dir(), "log", "2026-11.md")
	if err := os.MkdirAll(nov, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := addFact(sh, "Booked a flight to Lisbon"); err != nil {
		t.Fatalf("write to the month whose file is a directory: %v", err)
	}
	oct, _ := memd.ParseDate("2026-10-20")
	for _, text := range []string{"Renewed the passport", "Paid the deposit"} {
		_, err := sh.Apply(Change{Author: Signature{Name: "alice", Email: "alice@agents.memd"}, Message: "remember",
			Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: text, Date: oct, Tier: memd.TierLog}}}})
		if err != nil {
			t.Fatalf("write to another month: %v", err)
		}
	}
}

// Three versions of a fact file parsed with the lines they share read once
// give each version's lines as parsing it whole does: the same facts at
// the same places, whatever the versions share (nothing, all, a piece of
// a line, a last line with no line end, CRLF). Their fact-level merge,
// which reads the middles alone, is the merge of the whole files.
func FuzzSplitThree(f *testing.F) {
	base := "# Profile\n- (2026-11-01) Lives in Lisbon\n\n- (2026-11-02) Has a dog\r\n- (2026-11-03) Likes tea"
	f.Add([]byte(base), []byte("- (2026-12-01) New\n"), []byte("x"), uint16(0), uint16(200), uint16(3))
	f.Add([]byte(base), []byte(""), []byte("- (2026-12-02) Other\n"), uint16(40), uint16(40), uint16(0))
	f.Add([]byte(base), []byte("\n"), []byte("ives"), uint16(12), uint16(13), uint16(70))
	f.Add([]byte(base), []byte("- (2026-11-01) Lives in Lisbon\n"), []byte("- (2026-11-03) Likes tea\n"), uint16(100), uint16(10), uint16(500))
	// ours drops a copy of a fact the shared lines hold; theirs puts a line beside it.
	dup := "- (2026-11-01) A\n- (2026-11-02) B\n- (2026-11-01) A\n- (2026-11-03) C\n"
	f.Add([]byte(dup), []byte(""), []byte("x\n"), uint16(34), uint16(34), uint16(2129))
	// ours writes again a fact the shared lines hold.
	f.Add([]byte("- (2026-11-01) A\n- (2026-11-02) B\n"), []byte("- (2026-11-01) A\n"), []byte("x\n"), uint16(34), uint16(34), uint16(1664))
	f.Fuzz(func(t *testing.T, base, a, b []byte, at, bt, cut uint16) {
		// Each of the others puts a piece in, the second in place of
		// some of base's bytes.
		replace := func(s, piece []byte, at uint16, n int) []byte {
			i := int(at) % (len(s) + 1)
			j := min(len(s), i+n)
			return append(append(append([]byte{}, s[:i]...), piece...), s[j:]...)
		}
		third := replace(base, b, bt, 0)
		vs := [3][]byte{base, replace(base, a, at, int(cut%64)), third[:int(cut)%(len(third)+1)]} // the third cut short
		for _, baseFacts := range [][]lineFact{nil, parseFactFile("profile.md", base)} {
			three := splitThree("profile.md", vs, baseFacts)
			for k, v := range vs {
				got, want := three.lines(k), parseFactFile("profile.md", v)
				if !slices.EqualFunc(got, want, func(x, y lineFact) bool { return x == y }) {
					t.Fatalf("version %d, %q:\nparsed with the others %+v\nparsed whole %+v", k, v, got, want)
				}
			}
			if got, want := three.mergeFactLines(), mergeWholeFacts("profile.md", vs); !bytes.Equal(got, want) {
				t.Fatalf("merged %q:\n%q\nmerged whole:\n%q", vs, got, want)
			}
		}
	})
}

// mergeWholeFacts is the fact-level merge of base, ours and theirs, each
// version read whole, as if they shared no line at their start or end.
func mergeWholeFacts(path string, vs [3][]byte) []byte {
	t := threeFiles{vs: vs}
	for k, v := range vs {
		t.mid[k] = parseFactFile(path, v)
	}
	return t.mergeFactLines()
}

// memd's edit of a fact, merged into a person's uncommitted edit of the
// same file, rewrites the line where it stands, as it does at HEAD, and
// keeps the person's edit. Where the two touch adjacent lines (a
// conflict to git), the edit goes by facts, in the place of the line it
// rewrites; where the person rewrote that line too, both stay, memd's at
// the end.
func TestMergeFactFile_AnEditStaysWhereTheLineStood(t *testing.T) {
	const (
		base = "# Profile\n\n- (2026-11-01) Lives in Lisbon\n- (2026-11-05) Reads a lot\n- (2026-11-02) Has a dog\n- (2026-11-03) Likes tea\n"
		ours = "# Profile\n\n- (2026-11-01) Lives in Lisbon\n- (2026-11-05) Reads a lot\n- (2026-11-02) Has two dogs\n- (2026-11-03) Likes tea\n"
	)
	for _, c := range []struct{ name, theirs, want string }{
		{"the heading reworded", strings.Replace(base, "# Profile", "# Profile of Carol", 1),
			strings.Replace(ours, "# Profile", "# Profile of Carol", 1)},
		{"a fact added at the end", base + "- (2026-11-04) Plays the oboe\n", ours + "- (2026-11-04) Plays the oboe\n"},
		{"a fact two lines above rewritten", strings.Replace(base, "Lives in Lisbon", "Lives in Porto", 1),
			strings.Replace(ours, "Lives in Lisbon", "Lives in Porto", 1)},
		{"the line below rewritten", strings.Replace(base, "Likes tea", "Likes green tea", 1),
			strings.Replace(ours, "Likes tea", "Likes green tea", 1)},
		{"the same line rewritten", strings.Replace(base, "Has a dog", "Has a cat", 1),
			strings.Replace(base, "Has a dog", "Has a cat", 1) + "- (2026-11-02) Has two dogs\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, baseFacts := range [][]lineFact{nil, parseFactFile(ProfileFile, []byte(base))} {
				if got := mergeFactFile(ProfileFile, []byte(base), []byte(ours), []byte(c.theirs), baseFacts); string(got) != c.want {
					t.Errorf("merged:\n%s\nwant:\n%s", got, c.want)
				}
			}
		})
	}
}

// memd's append to a working file that runs out of room leaves none of
// its line there: half a line would read as a fact of its own, and a
// person's git commit -a would take it in.
func TestRewriteWorking_AnAppendThatRunsOutOfRoomLeavesNothing(t *testing.T) {
	disk := memdtest.SmallDisk(t, "64k")
	const path = "log/2026-11.md"
	// A file whose last page has room for part of memd's line only.
	head := "# Log 2026-11\n\n" + strings.Repeat("- (2026-11-03) Booked a flight to Lisbon\n", 4096/41) + "- (2026-11-03) x\n"
	for len(head)%4096 > 4096-20 || len(head)%4096 < 4096-60 {
		head += "- (2026-11-03) y\n"
	}
	mine := head + "- (2026-11-03) Packed a raincoat for the trip to Lisbon in March\n"
	old := &factFile{path: path, data: []byte(head)}
	next := &factFile{path: path, data: []byte(mine)}
	full := filepath.Join(disk, "2026-11.md")
	if err := os.WriteFile(full, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	free := memdtest.FillDisk(t, disk)
	_, err := rewriteWorking(full, func(cur []byte, exists bool) ([]byte, bool) { return mergeWorking(path, old, next, cur, exists) })
	if err == nil {
		t.Fatal("the append to a full disk did not fail; the test did not fill it")
	}
	if got, _ := os.ReadFile(full); string(got) != head {
		t.Errorf("after a failed append the file ends %q, want it as it was (ending %q)", got[max(0, len(got)-80):], head[len(head)-40:])
	}
	free()
	if _, err := rewriteWorking(full, func(cur []byte, exists bool) ([]byte, bool) { return mergeWorking(path, old, next, cur, exists) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(full); string(got) != mine {
		t.Errorf("with room again the file ends %q", got[max(0, len(got)-80):])
	}
}

// A move is refused for a full disk only while nothing of it reached the
// working tree. Here the working file of a fact file the person has
// staged a version of already holds memd's forget when the disk fills:
// the blob merging it into the staged version finds no room. Refused, the
// person's git commit -a would have taken a forget memd said it had not
// made; instead the move goes ahead, and the index catches up later.
func TestShard_ARefusalForAFullDiskAfterTheWorkingFileWasWritten(t *testing.T) {
	disk := memdtest.SmallDisk(t, "8m")
	sh, who, d := aliceOn(t, disk)
	res, err := sh.Apply(Change{Author: who, Message: "remember", Edits: []Edit{
		{Op: AddFact, Fact: memd.Fact{Text: "Lives in Austin", Date: d, Tier: memd.TierProfile}},
		{Op: AddFact, Fact: memd.Fact{Text: "Works at Acme", Date: d, Tier: memd.TierProfile}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	austin := res.Facts[0].ID
	// The person adds a fact by hand and stages it (git add), uncommitted.
	profile := filepath.Join(sh.Dir(), "profile.md")
	b, _ := os.ReadFile(profile)
	os.WriteFile(profile, append(b, "- (2026-11-04) Has a cat\n"...), 0o644)
	memdtest.Git(t, sh.Dir(), "add", "profile.md")
	head := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")

	// The disk fills the moment memd's working file is in place.
	var free func()
	t.Cleanup(func() {
		setHook(&testHookAfterRename, nil)
		if free != nil {
			free()
		}
	})
	setHook(&testHookAfterRename, func(string) {
		if free == nil {
			free = memdtest.FillDisk(t, disk)
		}
	})
	_, err = sh.Apply(Change{Author: who, Message: "forget", Edits: []Edit{{Op: RemoveFact, Fact: memd.Fact{ID: austin}}}})
	setHook(&testHookAfterRename, nil)
	if free == nil {
		t.Fatalf("the working file was never replaced; the test shows nothing (err %v)", err)
	}
	// What the caller was told holds once the person commits with git:
	// a forget refused leaves the fact, one acknowledged takes it away.
	refused := err != nil
	if now := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD"); (now != head) == refused {
		t.Fatalf("the forget answered %v, and main moved: %v", err, now != head)
	}
	free()
	free = nil
	// memd catches up once there is room (on its own a moment later; here
	// at once, so that the person's git does not meet memd's index lock).
	if !sh.SyncWorktree(5 * time.Second) {
		t.Fatal("the working tree and index did not catch up once there was room")
	}
	memdtest.Git(t, sh.Dir(), "-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qam", "my cat")
	if _, ferr := sh.Fact(austin); (ferr == nil) != refused {
		t.Errorf("the forget answered %v; after the person's git commit -a the fact is there: %v\n%s", err, ferr == nil, memdtest.Git(t, sh.Dir(), "show", "HEAD:profile.md"))
	}
	if show := memdtest.Git(t, sh.Dir(), "show", "HEAD:profile.md"); !strings.Contains(show, "Has a cat") {
		t.Errorf("the person's staged line is gone:\n%s", show)
	}
}

// A read of a shard whose main has not moved does not wait for the writer
// (follow's lock-free path). With a restore owed and its retry not due, it
// should not either: reads would queue behind every group commit for as
// long as the disk stays full.
func TestShard_ReadsDoNotWaitForTheWriterWhileARestoreIsOwed(t *testing.T) {
	_, sh := aliceShard(t)
	date, _ := memd.ParseDate("2026-11-03")
	if _, err := sh.Apply(Change{Author: Signature{Name: "alice", Email: "alice@agents.memd"}, Message: "remember",
		Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: "Booked a flight", Date: date, Tier: memd.TierLog}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.refresh(); err != nil {
		t.Fatal(err)
	}
	head := sh.cur.Load().head
	sh.mu.Lock()
	sh.owed.Store(&head)
	sh.owedSaved = true
	sh.owedRetry.Store(time.Now().Add(time.Hour).UnixNano())
	sh.mu.Unlock()

	sh.mu.Lock() // a writer at work
	done := make(chan struct{})
	go func() { sh.refresh(); close(done) }()
	select {
	case <-done:
		sh.mu.Unlock()
	case <-time.After(300 * time.Millisecond):
		sh.mu.Unlock()
		<-done
		t.Errorf("a read of an unmoved main waited for the writer's lock because a restore is owed")
	}
}

// A change of two files on a disk with room for its pack and its first
// file (a line appended to a log) but not its second (a long profile,
// written again whole for a forget) is refused before either is written:
// main stays, and so does every working file. Gone ahead, the profile
// would lag behind main, and a person's git commit -a would take the
// forget back. Once there is room, the same change goes through.
//
// On ext4 too, where statfs counts as free some room nobody may write in,
// root included.
func TestShard_AChangeOfTwoFilesWhoseSecondFindsNoRoom(t *testing.T) {
	for name, disk := range map[string]func(t *testing.T) string{
		"tmpfs": func(t *testing.T) string { return memdtest.SmallDisk(t, "8m") },
		"ext4":  func(t *testing.T) string { return memdtest.Ext4Disk(t, "64M") },
	} {
		t.Run(name, func(t *testing.T) { changeOfTwoFilesOnAFullDisk(t, disk(t)) })
	}
}

// aliceOn opens a store on a disk with shard agent/alice, and returns it,
// alice's signature and a date to write facts at.
func aliceOn(t *testing.T, disk string) (*Shard, Signature, memd.Date) {
	t.Helper()
	s, err := Open(filepath.Join(disk, "data"), Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sid, _ := memd.ParseShardID("agent/alice")
	sh, err := s.CreateShard(sid)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := memd.ParseDate("2026-11-03")
	return sh, Signature{Name: "alice", Email: "alice@agents.memd"}, d
}

// longProfile gives the shard a profile of 3,000 facts (some 200 KB) and a
// line in the log, and returns the ID of the profile's first fact and of
// the log's.
func longProfile(t *testing.T, sh *Shard, who Signature, d memd.Date) (profileFact, logFact string) {
	t.Helper()
	var edits []Edit
	for i := range 3000 {
		edits = append(edits, Edit{Op: AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Prefers the window seat on flight number %d of the season", i), Date: d, Tier: memd.TierProfile}})
	}
	res, err := sh.Apply(Change{Author: who, Message: "remember", Edits: edits})
	if err != nil {
		t.Fatal(err)
	}
	profileFact = res.Facts[0].ID
	if res, err = sh.Apply(Change{Author: who, Message: "remember", Edits: []Edit{{Op: AddFact, Fact: memd.Fact{Text: "Booked a flight to Lisbon", Date: d, Tier: memd.TierLog}}}}); err != nil {
		t.Fatal(err)
	}
	return profileFact, res.Facts[0].ID
}

func changeOfTwoFilesOnAFullDisk(t *testing.T, disk string) {
	sh, who, d := aliceOn(t, disk)
	forgotten, _ := longProfile(t, sh, who, d)
	read := func() (head, log, profile string) {
		l, _ := os.ReadFile(filepath.Join(sh.Dir(), "log", "2026-11.md"))
		p, _ := os.ReadFile(filepath.Join(sh.Dir(), "profile.md"))
		return memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD"), string(l), string(p)
	}
	head, log, profile := read()
	if len(profile) < 200<<10 {
		t.Fatalf("the profile holds %d bytes; the test needs a long one", len(profile))
	}

	// Room for the pack (a compressed copy of the profile and a delta: see
	// packbase.go) and a log line, not for the profile written again
	// beside the old.
	free := memdtest.LeaveFree(t, disk, int64(len(profile))*3/5)
	change := Change{Author: who, Message: "forget and remember", Edits: []Edit{
		{Op: RemoveFact, Fact: memd.Fact{ID: forgotten}},
		{Op: AddFact, Fact: memd.Fact{Text: "Packed a raincoat", Date: d, Tier: memd.TierLog}},
	}}
	_, err := sh.Apply(change)
	if memd.ErrorCode(err) != memd.EUNAVAILABLE || !strings.Contains(memd.ErrorMessage(err), "profile.md") {
		t.Errorf("the change of two files on a full disk answered %v, want unavailable naming profile.md", err)
	}
	if h, l, p := read(); h != head || l != log || p != profile {
		t.Errorf("refused, yet main moved (%v) or a working file changed (log %v, profile %v)", h != head, l != log, p != profile)
	}
	if st := memdtest.Git(t, sh.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status on the full disk:\n%s", st)
	}

	free()
	if _, err := sh.Apply(change); err != nil {
		t.Fatalf("with room again: %v", err)
	}
	if _, err := sh.Fact(forgotten); err == nil {
		t.Errorf("the forget did not go through once there was room")
	}
	if st := memdtest.Git(t, sh.Dir(), "status", "--porcelain"); st != "" {
		t.Errorf("git status once there was room:\n%s", st)
	}
}

// A file a person is editing is written with memd's change merged into
// their version, which may be much larger than memd's: the room check
// counts the working file, so a change of two files (a log line, then a
// profile with 600 KB of the person's prose) is refused before the log
// line is written, not let through to find no room for the profile.
func TestShard_RoomForAFileAPersonIsEditing(t *testing.T) {
	disk := memdtest.SmallDisk(t, "8m")
	sh, who, d := aliceOn(t, disk)
	forgotten, _ := longProfile(t, sh, who, d)
	profilePath := filepath.Join(sh.Dir(), "profile.md")
	committed, _ := os.ReadFile(profilePath)
	// The person's uncommitted edit: 600 KB of prose at the end.
	var prose strings.Builder
	for i := 0; prose.Len() < 600<<10; i++ {
		fmt.Fprintf(&prose, "A paragraph the person is writing by hand, number %d, about seats.\n", i)
	}
	if err := os.WriteFile(profilePath, append(committed, prose.String()...), 0o644); err != nil {
		t.Fatal(err)
	}
	head := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")

	free := memdtest.LeaveFree(t, disk, 500<<10)
	defer free()
	_, err := sh.Apply(Change{Author: who, Message: "forget and remember", Edits: []Edit{
		{Op: RemoveFact, Fact: memd.Fact{ID: forgotten}},
		{Op: AddFact, Fact: memd.Fact{Text: "Packed a raincoat", Date: d, Tier: memd.TierLog}},
	}})
	now := memdtest.Git(t, sh.Dir(), "rev-parse", "HEAD")
	profile, _ := os.ReadFile(profilePath)
	forgottenText := "flight number 0 of the season"
	if now != head && strings.Contains(string(profile), forgottenText) {
		t.Errorf("main moved past the forget, but profile.md's working file still holds the forgotten fact (no room for it): a person's git commit -a takes the forget back")
	}
	if now == head && memd.ErrorCode(err) != memd.EUNAVAILABLE {
		t.Errorf("main stayed but the answer was %v", err)
	}
}

// A fetch that adds a line to each of 300 small notes: each append goes
// in place, into the block the note already has, so the working files
// need next to no room, and the fetch goes through on a disk with 600 KB
// free. Counting a block more for each file refused it.
func TestShard_RoomForManySmallAppends(t *testing.T) {
	disk := memdtest.SmallDisk(t, "16m")
	sh, _, _ := aliceOn(t, disk)
	dir := sh.Dir()
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	for i := range 300 {
		os.WriteFile(filepath.Join(dir, "notes", fmt.Sprintf("n%03d.md", i)), []byte(fmt.Sprintf("# Note %d\n\nfirst line\n", i)), 0o644)
	}
	asPat(t, dir, "add", "notes")
	asPat(t, dir, "commit", "-q", "-m", "notes by hand")
	theirs := fromPeer(t, sh, func(remote string) {
		for i := range 300 {
			p := filepath.Join(remote, "notes", fmt.Sprintf("n%03d.md", i))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, "second line\n"...), 0o644)
		}
		asPat(t, remote, "commit", "-q", "-a", "-m", "a line more in each")
	})
	free := memdtest.LeaveFree(t, disk, 600<<10)
	defer free()
	in, err := sh.Integrate(theirs, IntegrateOptions{From: "peer"})
	if err != nil {
		t.Errorf("a fast-forward appending one line to each of 300 notes, with 600 KB free: %v", err)
	}
	if in.Kind != IntegrateFastForward {
		t.Errorf("%+v, want a fast-forward", in)
	}
}

// A runbook a person's save races memd's write of: as memd read it, as
// memd writes it, and as the person's sed -i saves it.
const (
	runbookRead  = "# Runbook\n\nagent-end\n\n## Person\n\nperson-end\n"
	runbookMine  = "# Runbook\n\nagent step 1\nagent-end\n\n## Person\n\nperson-end\n"
	runbookSaved = "# Runbook\n\nagent-end\n\n## Person\n\nperson line 1\nperson-end\n"
)

// raceRunbookWrite writes runbookRead at dir/runbook.md and has memd write
// runbookMine over it, while a person's sed -i saves runbookSaved in the
// instant after memd's last look, just before memd puts its version in
// place; and then (nil: nothing), called with the name the file memd
// replaced is at as soon as memd swapped its own in.
func raceRunbookWrite(t *testing.T, dir string, then func(tmp, full string)) (full string, w workWrite, err error) {
	const path = "notes/runbook.md"
	full = filepath.Join(dir, "runbook.md")
	if err := os.WriteFile(full, []byte(runbookRead), 0o644); err != nil {
		t.Fatal(err)
	}
	saved, swapped := false, false
	setHook(&testHookAtRename, func(string) {
		if !saved {
			saved = true
			if err := os.WriteFile(full+".sed", []byte(runbookSaved), 0o644); err != nil {
				t.Error(err)
			}
			if err := os.Rename(full+".sed", full); err != nil {
				t.Error(err)
			}
		}
	})
	after := func(tmp, full string) {
		if !swapped {
			swapped = true
			if then != nil {
				then(tmp, full)
			}
		}
	}
	testHookAfterSwap.Store(&after)
	t.Cleanup(func() { setHook(&testHookAtRename, nil); testHookAfterSwap.Store(nil) })
	old, next := &factFile{path: path, data: []byte(runbookRead)}, &factFile{path: path, data: []byte(runbookMine)}
	w, err = rewriteWorking(full, func(c []byte, e bool) ([]byte, bool) { return mergeWorking(path, old, next, c, e) })
	if !saved || !swapped {
		t.Fatal("memd did not swap its file in, so this test shows nothing")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, worktreeTempPrefix+"*")); len(left) > 0 {
		t.Errorf("left at names memd sweeps away at its next start: %v", left)
	}
	return full, w, err
}

// A person's save that renames a file of its own over the working file
// (sed -i, an editor's safe write) in the instant after memd's last look,
// just before memd puts its version in place, is kept: memd sees that what
// it replaced was not the file it read, puts the person's back, and merges
// its change into it.
func TestRewriteWorking_KeepsASaveRenamedInAtTheRename(t *testing.T) {
	full, w, err := raceRunbookWrite(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(readFile(t, full))
	for _, want := range []string{"agent step 1", "person line 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lost; the file holds:\n%s", want, got)
		}
	}
	if string(w.data) != got {
		t.Errorf("memd thinks the file holds\n%s\nbut it holds\n%s", w.data, got)
	}
}

// While memd swaps a person's save back (above), whatever else the person
// does in that moment is kept: a line appended to memd's file, the file
// moved away, a second save.
func TestRewriteWorking_KeepsWhatComesAsASaveIsPutBack(t *testing.T) {
	for _, c := range []struct {
		name  string
		then  func(t *testing.T, full string) // as memd's file is in place
		check func(t *testing.T, dir, got string, err error)
	}{
		{"a line appended to memd's file", func(t *testing.T, full string) {
			f, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("appended by hand\n")
			f.Close()
		}, func(t *testing.T, dir, got string, err error) {
			if err != nil || !strings.Contains(got, "appended by hand") || !strings.Contains(got, "person line 1") {
				t.Errorf("err %v; the file holds:\n%s", err, got)
			}
		}},
		{"memd's file written over in place", func(t *testing.T, full string) {
			if err := os.WriteFile(full, []byte("# Runbook, rewritten in place\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, dir, got string, err error) {
			kept, _ := filepath.Glob(filepath.Join(dir, "runbook.md.kept-*"))
			if !strings.Contains(got, "person line 1") || len(kept) != 1 || !strings.Contains(string(readFile(t, kept[0])), "rewritten in place") || err == nil || !strings.Contains(err.Error(), kept[0]) {
				t.Errorf("the save is not in place, or the write in place not kept beside it, named in the error: kept %v, err %v; the file holds:\n%s", kept, err, got)
			}
		}},
		{"the file moved away", func(t *testing.T, full string) {
			if err := os.Rename(full, full+"~"); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, dir, got string, err error) {
			if !strings.Contains(got, "person line 1") {
				t.Errorf("err %v; the save is not in place:\n%s", err, got)
			}
		}},
		{"a second save", func(t *testing.T, full string) {
			if err := os.WriteFile(full+".2", append(readFile(t, full), "second save\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(full+".2", full); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, dir, got string, err error) {
			if !strings.Contains(got, "second save") {
				t.Errorf("the second save is not in place:\n%s", got)
			}
			kept, _ := filepath.Glob(filepath.Join(dir, "runbook.md.kept-*"))
			if len(kept) != 1 || !strings.Contains(string(readFile(t, kept[0])), "person line 1") || err == nil || !strings.Contains(err.Error(), kept[0]) {
				t.Errorf("the first save is not kept beside it, named in the error: kept %v, err %v", kept, err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			full, _, err := raceRunbookWrite(t, dir, func(_, full string) { c.then(t, full) })
			c.check(t, dir, string(readFile(t, full)), err)
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
