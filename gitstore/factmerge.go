package gitstore

import (
	"bytes"
	"fmt"
	"strings"
)

// mergeFactFiles merges a fact file both sides changed since base. Their
// fact changes go onto ours, by fact (a fact added on either side is kept
// once, one removed on either is removed): mergeFactLines. Where they
// changed more than which facts the file holds (a line of prose, a
// heading, a fact reworded or moved where it stands, their line ends), the
// file is merged line by line instead (lineMergeFacts), so that what a
// person wrote on the other side stays; the facts it holds are then
// brought to those of the fact merge. Where that cannot be done (a
// version binary to git, git not running), the fact merge stands and
// conflict names the file, their version being in the history; conflict
// also says where both sides changed the same lines other than facts.
func mergeFactFiles(path string, base, ours, theirs []byte) (data []byte, conflict bool) {
	t := splitThree(path, [3][]byte{base, theirs, ours}, nil)
	byFacts := t.mergeFactLines()
	if !t.rewrites() && t.changesFactsAlone() {
		return byFacts, false
	}
	merged, clash, err := lineMergeFacts(path, ours, base, theirs)
	if err != nil {
		return byFacts, true
	}
	want := factCounts(path, byFacts)
	if merged = dropFactsBeyond(path, merged, want); !sameCounts(factCounts(path, merged), want) {
		return byFacts, true
	}
	return merged, clash
}

// changesFactsAlone tells whether version 1 (ours in threeFiles' terms)
// differs from base only by whole fact lines it removed and added: read
// without those, the two middles are the same bytes. A fact rewritten
// where it stands keeping its ID (its date, its tier, its case), a fact
// moved, a line of prose or a line end changed are more.
func (t threeFiles) changesFactsAlone() bool {
	inBase, inOurs := factIDs(t.mid[0]), factIDs(t.mid[1])
	without := func(k int, dropped map[string]bool) []byte {
		piece := t.middle(k)
		var out []byte
		at := 0
		for _, lf := range t.mid[k] {
			if !dropped[lf.ID] {
				out = append(out, piece[at:lf.start-t.head]...)
				at = lf.end - t.head
			}
		}
		return append(out, piece[at:]...)
	}
	return bytes.Equal(without(0, inOurs), without(1, inBase))
}

// markerSize is the length of the conflict markers lineMergeFacts asks
// git for: a line of prose that long and of one character is unlikely, and
// one within a conflict is read for what it is (the markers are read in
// the order git writes them), or the merge is given up.
const markerSize = 100

// lineMergeFacts merges three versions of a fact file line by line (git
// merge-file). Where both sides changed the same place, the side that
// changed its lines of prose there is taken, with the facts the other
// side added; where both did, differently, both sides' lines are kept,
// ours first, and clash says so. A fact both sides hold that one side
// rewrote where it stands, keeping its ID, is taken as that side wrote
// it; rewritten differently by both, ours stands and clash says so.
func lineMergeFacts(path string, ours, base, theirs []byte) (out []byte, clash bool, err error) {
	merged, conflicted, err := gitMergeFile(ours, base, theirs, "--diff3", fmt.Sprintf("--marker-size=%d", markerSize), "-L", "ours", "-L", "base", "-L", "theirs")
	if err != nil {
		return nil, false, err
	}
	if conflicted {
		if merged, clash, err = settleHunks(path, merged); err != nil {
			return nil, false, err
		}
	}
	out, rewritten := takeRewrites(path, merged, [3][]byte{base, ours, theirs})
	return out, clash || rewritten, nil
}

// settleHunks settles each conflict of a --diff3 merge of fact files (see
// lineMergeFacts).
func settleHunks(path string, merged []byte) (out []byte, clash bool, err error) {
	markers := [4]string{strings.Repeat("<", markerSize) + " ours", strings.Repeat("|", markerSize) + " base",
		strings.Repeat("=", markerSize), strings.Repeat(">", markerSize) + " theirs"}
	var hunk [3][]byte // ours, base, theirs
	at := -1           // the part of a hunk being read: 0 ours, 1 base, 2 theirs; -1 outside
	for _, line := range bytes.SplitAfter(merged, []byte("\n")) {
		next := at + 1 // the marker that ends this part, or starts a hunk
		if next < len(markers) && string(bytes.TrimRight(line, "\r\n")) == markers[next] {
			if at = next; at == 3 {
				settled, both := settleHunk(path, hunk)
				out, clash = append(out, settled...), clash || both
				hunk, at = [3][]byte{}, -1
			}
			continue
		}
		if at < 0 {
			out = append(out, line...)
		} else {
			hunk[at] = append(hunk[at], line...)
		}
	}
	if at >= 0 {
		return nil, false, fmt.Errorf("merge %s: a conflict git left open", path)
	}
	return out, clash, nil
}

// settleHunk settles one conflict: the lines of the side that changed its
// prose there (ours where neither did), then the facts the other side
// added there that these lack; where both changed prose differently, all
// of both, ours first, and both is true.
func settleHunk(path string, hunk [3][]byte) (out []byte, both bool) {
	ours, base, theirs := hunk[0], hunk[1], hunk[2]
	pOurs, pBase, pTheirs := proseOf(path, ours), proseOf(path, base), proseOf(path, theirs)
	oursWrote, theirsWrote := !bytes.Equal(pOurs, pBase), !bytes.Equal(pTheirs, pBase)
	if oursWrote && theirsWrote && !bytes.Equal(pOurs, pTheirs) {
		return append(withLineEnd(append(out, ours...)), withLineEnd(theirs)...), true
	}
	taken, other := ours, theirs
	if theirsWrote && !oursWrote {
		taken, other = theirs, ours
	}
	out = withLineEnd(append(out, taken...))
	have := factIDs(appendFactLines(nil, path, taken))
	inBase := factIDs(appendFactLines(nil, path, base))
	for _, lf := range appendFactLines(nil, path, other) {
		if !have[lf.ID] && !inBase[lf.ID] {
			out = append(out, withLineEnd(other[lf.start:lf.end])...)
		}
	}
	return out, false
}

// proseOf returns a piece of a fact file but its fact lines.
func proseOf(path string, piece []byte) []byte {
	return otherLines(piece, appendFactLines(nil, path, piece), 0)
}

// withLineEnd returns data ending in a line end, if it holds anything.
func withLineEnd(data []byte) []byte {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return append(data, '\n')
	}
	return data
}

// takeRewrites rewrites each fact line of merged that all three versions
// hold (by ID) and that one side rewrote where it stands as that side
// wrote it: a line merge keeps a side's rewrite only where the other side
// left the place alone. Rewritten differently by both, ours stays, and
// clash says so.
func takeRewrites(path string, merged []byte, versions [3][]byte) (out []byte, clash bool) {
	var lines [3]map[string][]byte // base, ours, theirs: each fact's line, by ID
	for k, v := range versions {
		lines[k] = make(map[string][]byte)
		for _, lf := range parseFactFile(path, v) {
			lines[k][lf.ID] = bytes.TrimRight(v[lf.start:lf.end], "\r\n")
		}
	}
	at := 0
	for _, lf := range parseFactFile(path, merged) {
		b, inBase := lines[0][lf.ID]
		o, inOurs := lines[1][lf.ID]
		th, inTheirs := lines[2][lf.ID]
		if !inBase || !inOurs || !inTheirs {
			continue
		}
		line := bytes.TrimRight(merged[lf.start:lf.end], "\r\n")
		want := o
		switch {
		case bytes.Equal(o, b):
			want = th
		case !bytes.Equal(th, b) && !bytes.Equal(th, o):
			clash = true
		}
		if !bytes.Equal(line, want) {
			out = append(append(out, merged[at:lf.start]...), want...)
			at = lf.start + len(line)
		}
	}
	if at == 0 {
		return merged, clash
	}
	return append(out, merged[at:]...), clash
}

// factCounts counts the facts of a fact file by ID.
func factCounts(path string, data []byte) map[string]int {
	n := make(map[string]int)
	for _, lf := range parseFactFile(path, data) {
		n[lf.ID]++
	}
	return n
}

// sameCounts says whether two counts agree.
func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for id, n := range a {
		if b[id] != n {
			return false
		}
	}
	return true
}

// dropFactsBeyond removes from a fact file the lines of facts it holds
// more often than want counts (or at all, where want has none: a fact
// the fact merge removed), keeping the first of each.
func dropFactsBeyond(path string, data []byte, want map[string]int) []byte {
	room := make(map[string]int, len(want))
	for id, n := range want {
		room[id] = n
	}
	var out []byte
	at := 0
	for _, lf := range parseFactFile(path, data) {
		if room[lf.ID]--; room[lf.ID] < 0 {
			out = append(out, data[at:lf.start]...)
			at = lf.end
		}
	}
	if at == 0 {
		return data
	}
	return append(out, data[at:]...)
}
