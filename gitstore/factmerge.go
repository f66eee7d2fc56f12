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
	vs := [3]factVersion{parsed(path, base), parsed(path, ours), parsed(path, theirs)}
	m := parsed(path, merged)
	want := factCounts(parseFactFile(path, byFacts))
	out, held, rewritten := finishFactMerge(m, vs, want)
	if !sameIDs(held, want) {
		return byFacts, true
	}
	return out, clash || rewritten || revives(vs, m)
}

// factVersion is a version of a fact file and its fact lines.
type factVersion struct {
	data  []byte
	facts []lineFact
}

func parsed(path string, data []byte) factVersion {
	return factVersion{data, parseFactFile(path, data)}
}

// prose is the version but its fact lines.
func (v factVersion) prose() []byte { return otherLines(v.data, v.facts, 0) }

// line is the i-th fact's line, without its line end.
func (v factVersion) line(i int) []byte {
	return bytes.TrimRight(v.data[v.facts[i].start:v.facts[i].end], "\r\n")
}

// linesByID returns each fact's line by ID, nil for a fact held on
// several lines (a text on two days: which is which cannot be told).
func (v factVersion) linesByID() map[string][]byte {
	lines := make(map[string][]byte, len(v.facts))
	for i, lf := range v.facts {
		if _, twice := lines[lf.ID]; twice {
			lines[lf.ID] = nil
		} else {
			lines[lf.ID] = v.line(i)
		}
	}
	return lines
}

// changesFactsAlone tells whether version 1 (ours in threeFiles' terms)
// differs from base only by fact lines it removed and fact lines it
// appended at its end, as memd writes: read without those, the two
// middles are the same bytes. A fact rewritten where it stands keeping
// its ID (its date, its tier, its case), a fact moved or put under a
// heading, a line of prose or a line end changed are more.
func (t threeFiles) changesFactsAlone() bool {
	inBase, inOurs := factIDs(t.mid[0]), factIDs(t.mid[1])
	mid := t.middle(1)
	added := 0 // bytes of the added lines
	for _, lf := range t.mid[1] {
		if !inBase[lf.ID] {
			added += lf.end - lf.start
		}
	}
	if added > 0 && t.tail > 0 {
		return false // lines follow what it added
	}
	kept := len(mid) - added // where the added lines must start
	for _, lf := range t.mid[1] {
		if !inBase[lf.ID] && lf.start-t.head < kept {
			return false
		}
	}
	// Each middle without the lines of the facts the other lacks.
	without := func(k int, other map[string]bool) []byte {
		piece := t.middle(k)
		var out []byte
		at := 0
		for _, lf := range t.mid[k] {
			if !other[lf.ID] {
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
// ours first, and clash says so.
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
	return merged, clash, nil
}

// revives tells whether a merge holds a line of prose that one side
// removed more often than the other side's own additions account for: a
// line one side deleted and the other moved, which a line merge brings
// back (git reads the move as a new line).
func revives(vs [3]factVersion, merged factVersion) bool {
	count := func(v factVersion) map[string]int {
		n := make(map[string]int)
		for line := range bytes.Lines(v.prose()) {
			if l := string(bytes.TrimSpace(line)); l != "" {
				n[l]++
			}
		}
		return n
	}
	b, o, t := count(vs[0]), count(vs[1]), count(vs[2])
	for line, m := range count(merged) {
		if m > o[line]+max(0, t[line]-b[line]) || m > t[line]+max(0, o[line]-b[line]) {
			return true
		}
	}
	return false
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

// settleHunk settles one conflict: the lines of the side that arranged
// them anew there (changed a line of prose, or moved a fact both kept;
// ours where neither did), but base's facts the other side took out of
// there, then the facts the other side added there that these lack; where both arranged them differently, all of both, ours
// first, and both is true. Facts either side removed are dropped later,
// with the file's (dropFactsBeyond).
func settleHunk(path string, hunk [3][]byte) (out []byte, both bool) {
	ours, base, theirs := hunk[0], hunk[1], hunk[2]
	facts := [3][]lineFact{appendFactLines(nil, path, ours), appendFactLines(nil, path, base), appendFactLines(nil, path, theirs)}
	kept := factIDs(facts[1]) // base's facts both sides kept here
	for _, k := range []int{0, 2} {
		in := factIDs(facts[k])
		for id := range kept {
			if !in[id] {
				delete(kept, id)
			}
		}
	}
	var plan [3][]byte // each side's lines but the facts not all three hold
	for k, piece := range hunk {
		plan[k] = linesBut(piece, facts[k], func(j int) bool { return !kept[facts[k][j].ID] })
	}
	oursMoved, theirsMoved := !bytes.Equal(plan[0], plan[1]), !bytes.Equal(plan[2], plan[1])
	if oursMoved && theirsMoved && !bytes.Equal(plan[0], plan[2]) {
		return append(withLineEnd(append(out, ours...)), withLineEnd(theirs)...), true
	}
	taken, other, otherFacts := ours, theirs, facts[2]
	if theirsMoved && !oursMoved {
		taken, other, otherFacts = theirs, ours, facts[0]
	}
	// Base's facts the other side took out of this place (removed, or
	// moved elsewhere) go from it.
	otherHas, inBase := factIDs(otherFacts), factIDs(facts[1])
	takenFacts := appendFactLines(nil, path, taken)
	out = withLineEnd(append(out, linesBut(taken, takenFacts, func(j int) bool {
		return inBase[takenFacts[j].ID] && !otherHas[takenFacts[j].ID]
	})...))
	have := factIDs(takenFacts)
	for _, lf := range otherFacts {
		if !have[lf.ID] && !inBase[lf.ID] {
			out = append(out, withLineEnd(other[lf.start:lf.end])...)
		}
	}
	return out, false
}

// linesBut returns a piece of a fact file without the lines of the facts
// given (at their places in it) that drop picks, by their place in facts.
func linesBut(piece []byte, facts []lineFact, drop func(j int) bool) []byte {
	var out []byte
	at := 0
	for j, lf := range facts {
		if drop(j) {
			out = append(out, piece[at:lf.start]...)
			at = lf.end
		}
	}
	return append(out, piece[at:]...)
}

// wroteBeyond tells whether theirs holds a line of prose, not blank, that
// neither base nor kept holds: one the other side wrote that a merge does
// not keep.
func wroteBeyond(theirs, base, kept []byte) bool {
	had := make(map[string]bool)
	for _, v := range [][]byte{base, kept} {
		for line := range bytes.Lines(v) {
			had[string(bytes.TrimSpace(line))] = true
		}
	}
	for line := range bytes.Lines(theirs) {
		if l := string(bytes.TrimSpace(line)); l != "" && !had[l] {
			return true
		}
	}
	return false
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

// factCounts counts facts by ID.
func factCounts(facts []lineFact) map[string]int {
	n := make(map[string]int)
	for _, lf := range facts {
		n[lf.ID]++
	}
	return n
}

// sameIDs says whether two counts hold the same IDs.
func sameIDs(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for id := range a {
		if b[id] == 0 {
			return false
		}
	}
	return true
}

// finishFactMerge brings a line merge's facts to the fact merge's, in one
// pass over its fact lines, and returns it with the facts it then holds:
//   - a fact it holds more often than want counts (or at all, where want
//     has none: a fact the fact merge removed) loses its extra lines; the
//     line as ours has it is kept first, so that a fact both sides added
//     stays where this side has it, then the first;
//   - a fact all three versions hold, once each, that one side rewrote
//     where it stands keeping its ID (its date, its tier) is taken as that
//     side wrote it: a line merge keeps such a rewrite only where the
//     other side left the place alone. Rewritten differently by both, ours
//     stays, and clash says so.
func finishFactMerge(m factVersion, vs [3]factVersion, want map[string]int) (out []byte, held map[string]int, clash bool) {
	var lines [3]map[string][]byte // base, ours, theirs
	for k, v := range vs {
		lines[k] = v.linesByID()
	}
	inMerged := factCounts(m.facts)
	room := make(map[string]int, len(want))
	for id, n := range want {
		room[id] = n
	}
	keep := make([]bool, len(m.facts))
	for j, lf := range m.facts { // ours' lines first
		if o := lines[1][lf.ID]; o != nil && inMerged[lf.ID] > want[lf.ID] && room[lf.ID] > 0 && bytes.Equal(m.line(j), o) {
			keep[j] = true
			room[lf.ID]--
		}
	}
	for j, lf := range m.facts {
		if !keep[j] && room[lf.ID] > 0 {
			keep[j] = true
			room[lf.ID]--
		}
	}
	held = make(map[string]int, len(want))
	at := 0
	for j, lf := range m.facts {
		if !keep[j] {
			out = append(out, m.data[at:lf.start]...)
			at = lf.end
			continue
		}
		held[lf.ID]++
		b, o, t := lines[0][lf.ID], lines[1][lf.ID], lines[2][lf.ID]
		if inMerged[lf.ID] != 1 || b == nil || o == nil || t == nil {
			continue
		}
		took := o
		switch {
		case bytes.Equal(o, b):
			took = t
		case !bytes.Equal(t, b) && !bytes.Equal(t, o):
			clash = true
		}
		if line := m.line(j); !bytes.Equal(line, took) {
			out = append(append(out, m.data[at:lf.start]...), took...)
			at = lf.start + len(line)
		}
	}
	return append(out, m.data[at:]...), held, clash
}
