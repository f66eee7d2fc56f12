package gitstore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Reparsing a new version of a file gives the same facts as parsing it
// whole, and reports exactly the lines that went and came.
func TestReparse_MatchesAFullParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	line := func(i int) string { return fmt.Sprintf("- (2026-11-%02d) fact number %d\n", 1+i%28, i) }
	var lines []string
	lines = append(lines, "# Log 2026-11\n", "\n")
	for i := 0; i < 40; i++ {
		lines = append(lines, line(i))
	}
	next := 40
	old := &factFile{path: "log/2026-11.md", data: []byte(strings.Join(lines, ""))}
	old.facts = parseFactFile(old.path, old.data)
	for round := 0; round < 500; round++ {
		switch op := rng.IntN(4); {
		case op == 0 && len(lines) > 3: // remove a line
			i := 2 + rng.IntN(len(lines)-2)
			lines = slices.Delete(lines, i, i+1)
		case op == 1: // insert prose
			i := 2 + rng.IntN(len(lines)-1)
			lines = slices.Insert(lines, i, "some prose a person wrote\n")
		case op == 2 && len(lines) > 3: // edit a line
			i := 2 + rng.IntN(len(lines)-2)
			lines[i] = line(next)
			next++
		default: // append
			lines = append(lines, line(next))
			next++
		}
		data := []byte(strings.Join(lines, ""))
		got, gone, came := reparse(old.path, old, data)
		want := parseFactFile(old.path, data)
		if !reflect.DeepEqual(got.facts, want) {
			t.Fatalf("round %d: reparse differs from a full parse", round)
		}
		// Applying gone and came to the old IDs gives the new IDs.
		ids := map[string]int{}
		for _, lf := range old.facts {
			ids[lf.ID]++
		}
		for _, lf := range gone {
			ids[lf.ID]--
		}
		for _, lf := range came {
			ids[lf.ID]++
		}
		for _, lf := range want {
			ids[lf.ID]--
		}
		for id, n := range ids {
			if n != 0 {
				t.Fatalf("round %d: fact %s counted %d times off", round, id, n)
			}
		}
		old = got
	}
}

// The block-wise prefix and suffix agree with a byte-by-byte count.
func TestCommonPrefixAndSuffix(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		shared := make([]byte, rng.IntN(2000))
		for j := range shared {
			shared[j] = byte('a' + rng.IntN(3))
		}
		a := append(append([]byte{}, shared...), byte('x'+rng.IntN(2)))
		b := append(append([]byte{}, shared...), byte('x'+rng.IntN(2)))
		a = append(a, shared[:rng.IntN(len(shared)+1)]...)
		b = append(b, shared[:rng.IntN(len(shared)+1)]...)
		n := min(len(a), len(b))
		wantP := 0
		for wantP < n && a[wantP] == b[wantP] {
			wantP++
		}
		wantS := 0
		for wantS < n && a[len(a)-1-wantS] == b[len(b)-1-wantS] {
			wantS++
		}
		if p := commonPrefix(a[:n], b[:n]); p != wantP {
			t.Fatalf("commonPrefix = %d, want %d", p, wantP)
		}
		if s := commonSuffix(a, b); s != wantS {
			t.Fatalf("commonSuffix = %d, want %d", s, wantS)
		}
	}
}
