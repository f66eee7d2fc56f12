package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A person's write that lands while memd replaces a working file, just
// before the rename or on the file the rename replaces, is kept: memd
// merges its change into it instead of writing over it.
func TestRewriteWorking_KeepsAWriteThatRacesTheRename(t *testing.T) {
	const path = "log/2026-11.md"
	head := "# Log 2026-11\n\n- (2026-11-03) Booked a flight to Lisbon\n"
	mine := head + "- (2026-11-03) Packed a raincoat\n"
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
				testHookBeforeRename, testHookAfterRename = nil, nil
				if held != nil {
					held.Close()
				}
			})
			fired := false
			testHookBeforeRename = func(string) {
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
			}
			testHookAfterRename = func(string) {
				if fired || moment != "after the rename" {
					return
				}
				fired = true
				held.WriteString(person) // to the file memd just replaced
			}
			w, err := rewriteWorking(full, merge)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(full)
			if !strings.Contains(string(got), person) || !strings.Contains(string(got), "Packed a raincoat") {
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
