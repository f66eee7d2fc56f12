package gitstore

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// mergeFactFiles merges a fact file both sides changed since base. Their
// fact changes go onto ours, line by line of a fact (mergeFacts). Where
// they changed more than memd's own writes change (changesFactsAlone: a
// line of prose, a heading, a fact moved or put under a heading, a tier
// tag, their line ends), the file is merged line by line instead
// (lineMergeFacts), so that what a person wrote on the other side stays;
// the fact lines it holds are then brought to those of the fact merge.
// Where that cannot be done (a version binary to git, git not running),
// the fact merge stands and conflict names the file, their version being
// in the history. conflict also says where both sides changed the same
// lines other than facts, or the lines of one fact.
func mergeFactFiles(path string, base, ours, theirs []byte) (data []byte, conflict bool) {
	t := splitThree(path, [3][]byte{base, theirs, ours}, nil)
	byFacts, clash := t.mergeFacts()
	if t.changesFactsAlone() {
		return byFacts, clash
	}
	merged, lineClash, err := lineMergeFacts(path, ours, base, theirs)
	if err != nil {
		return byFacts, true
	}
	clash = clash || lineClash
	vs := [3]factVersion{parsed(path, base), parsed(path, ours), parsed(path, theirs)}
	m := parsed(path, merged)
	want := keyCounts(parseFactFile(path, byFacts))
	out, held, rewritten := finishFactMerge(m, vs, want)
	if !sameKeys(held, want) {
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

// onceByID returns the place in facts of each fact's line by ID, -1 for a
// fact held on several lines (a text on several days).
func (v factVersion) onceByID() map[string]int {
	at := make(map[string]int, len(v.facts))
	for i, lf := range v.facts {
		if _, twice := at[lf.ID]; twice {
			at[lf.ID] = -1
		} else {
			at[lf.ID] = i
		}
	}
	return at
}

// changesFactsAlone tells whether version 1 (ours in threeFiles' terms)
// differs from base only as memd's own writes make it differ: fact lines
// removed, fact lines appended at its end, and fact lines put where
// removed ones stood (a fact rewritten in place). Read without those, the
// two middles are the same bytes (but a line end memd adds before its
// first append to a file that lacked one). A fact's date corrected in
// place is one line put where another stood. A line of prose or a line
// end changed, a fact moved or put under a heading, a tier tag added are
// more.
func (t threeFiles) changesFactsAlone() bool {
	inBase, inOurs := lineKeys(t.mid[0]), lineKeys(t.mid[1])
	base, removedAt := t.skeleton(0, inOurs)
	ours, addedAt := t.skeleton(1, inBase)
	if !bytes.Equal(withLineEnd(base), withLineEnd(ours)) {
		return false
	}
	for _, at := range addedAt {
		if at == len(ours) && t.tail == 0 || slices.Contains(removedAt, at) {
			continue
		}
		return false // put where memd would not put it
	}
	return true
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
// them anew there (changed a line of prose, or moved a fact line both
// kept; ours where neither did), but base's fact lines the other side took
// out of there, then the fact lines the other side added there that these
// lack; where both arranged them differently, all of both, ours first, and
// both is true. Fact lines either side removed elsewhere are dropped
// later, with the file's (finishFactMerge).
func settleHunk(path string, hunk [3][]byte) (out []byte, both bool) {
	ours, base, theirs := hunk[0], hunk[1], hunk[2]
	facts := [3][]lineFact{appendFactLines(nil, path, ours), appendFactLines(nil, path, base), appendFactLines(nil, path, theirs)}
	inBase := lineKeys(facts[1])
	kept := maps.Clone(inBase) // base's fact lines both sides kept here
	for _, k := range []int{0, 2} {
		in := lineKeys(facts[k])
		for key := range kept {
			if !in[key] {
				delete(kept, key)
			}
		}
	}
	var plan [3][]byte // each side's lines but the fact lines not all three hold
	for k, piece := range hunk {
		plan[k] = linesBut(piece, facts[k], func(j int) bool { return !kept[keyOf(facts[k][j])] })
	}
	oursMoved, theirsMoved := !bytes.Equal(plan[0], plan[1]), !bytes.Equal(plan[2], plan[1])
	if oursMoved && theirsMoved && !bytes.Equal(plan[0], plan[2]) {
		return append(withLineEnd(append(out, ours...)), withLineEnd(theirs)...), true
	}
	taken, takenFacts, other, otherFacts := ours, facts[0], theirs, facts[2]
	if theirsMoved && !oursMoved {
		taken, takenFacts, other, otherFacts = theirs, facts[2], ours, facts[0]
	}
	otherHas, have := lineKeys(otherFacts), lineKeys(takenFacts)
	out = withLineEnd(append(out, linesBut(taken, takenFacts, func(j int) bool {
		k := keyOf(takenFacts[j])
		return inBase[k] && !otherHas[k] // the other side took it out of here
	})...))
	for _, lf := range otherFacts {
		if k := keyOf(lf); !have[k] && !inBase[k] {
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
// neither base nor kept holds, nor memd's own header of the file: one a
// person on the other side wrote that a merge does not keep.
func wroteBeyond(path string, theirs, base, kept []byte) bool {
	had := make(map[string]bool)
	for _, v := range [][]byte{base, kept, []byte(header(path))} {
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

// keyCounts counts fact lines by lineKey.
func keyCounts(facts []lineFact) map[lineKey]int {
	n := make(map[lineKey]int)
	for _, lf := range facts {
		n[keyOf(lf)]++
	}
	return n
}

// sameKeys says whether two counts hold the same lines.
func sameKeys(a, b map[lineKey]int) bool {
	if len(a) != len(b) {
		return false
	}
	for key := range a {
		if b[key] == 0 {
			return false
		}
	}
	return true
}

// finishFactMerge brings a line merge's fact lines to the fact merge's
// (want counts them by lineKey), in one pass over them, and returns it with
// the lines it then holds:
//   - a fact held once in all three versions, and once in the merge, that
//     one side rewrote where it stands keeping its ID (its date, its tier)
//     is taken as that side wrote it: a line merge keeps such a rewrite
//     only where the other side left the place alone. Rewritten
//     differently by both, ours stays, and clash says so;
//   - a line it holds more often than want counts (or at all, where want
//     has none: one the fact merge removed) goes; of a line held too
//     often, the one as ours has it stays first, so that a fact both sides
//     added stays where this side has it, then the first.
func finishFactMerge(m factVersion, vs [3]factVersion, want map[lineKey]int) (out []byte, held map[lineKey]int, clash bool) {
	var once [3]map[string]int // base, ours, theirs
	for k, v := range vs {
		once[k] = v.onceByID()
	}
	inMerged := factCounts(m.facts)
	type final struct {
		line []byte
		key  lineKey
	}
	finals := make([]final, len(m.facts))
	for j, lf := range m.facts {
		finals[j] = final{m.line(j), keyOf(lf)}
		b, inBase := once[0][lf.ID]
		o, inOurs := once[1][lf.ID]
		t, inTheirs := once[2][lf.ID]
		if inMerged[lf.ID] != 1 || !inBase || !inOurs || !inTheirs || b < 0 || o < 0 || t < 0 {
			continue
		}
		pick, at := 1, o
		bl, ol, tl := vs[0].line(b), vs[1].line(o), vs[2].line(t)
		switch {
		case bytes.Equal(ol, bl):
			pick, at = 2, t
		case !bytes.Equal(tl, bl) && !bytes.Equal(tl, ol):
			clash = true
		}
		finals[j] = final{vs[pick].line(at), keyOf(vs[pick].facts[at])}
	}
	oursLine := make(map[lineKey][]byte)
	for i, lf := range vs[1].facts {
		k := keyOf(lf)
		if _, twice := oursLine[k]; twice {
			oursLine[k] = nil
		} else {
			oursLine[k] = vs[1].line(i)
		}
	}
	room := maps.Clone(want)
	keep := make([]bool, len(finals))
	for j, f := range finals { // ours' lines first
		if o := oursLine[f.key]; o != nil && room[f.key] > 0 && bytes.Equal(f.line, o) {
			keep[j] = true
			room[f.key]--
		}
	}
	for j, f := range finals {
		if !keep[j] && room[f.key] > 0 {
			keep[j] = true
			room[f.key]--
		}
	}
	held = make(map[lineKey]int, len(want))
	at := 0
	for j, lf := range m.facts {
		if !keep[j] {
			out = append(out, m.data[at:lf.start]...)
			at = lf.end
			continue
		}
		held[finals[j].key]++
		if line := m.line(j); !bytes.Equal(line, finals[j].line) {
			out = append(append(out, m.data[at:lf.start]...), finals[j].line...)
			at = lf.start + len(line)
		}
	}
	return append(out, m.data[at:]...), held, clash
}
