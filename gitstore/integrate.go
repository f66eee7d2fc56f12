package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore/internal/odb"
)

// Integration is what integrating another line of history did.
type Integration struct {
	Kind      string   // IntegrateNone, IntegrateFastForward or IntegrateMerge
	Head      Hash     // main afterwards
	Commits   int      // commits brought in
	Conflicts []string // paths the merge could not settle: kept with conflict markers, or with ours
}

// Kinds of Integration.
const (
	IntegrateNone        = "up-to-date"
	IntegrateFastForward = "fast-forward"
	IntegrateMerge       = "merge"
)

// IntegrateOptions says where commits come from and what a merge may do.
type IntegrateOptions struct {
	From string // names theirs in a merge commit's subject and markers
	// RefuseConflicts makes a merge that would keep conflict markers fail
	// with ECONFLICT instead, as for a push whose author can merge.
	RefuseConflicts bool
	// ForwardOnly moves main only where theirs is ahead of it, and
	// merges nothing: main that moved meanwhile is left as it is.
	ForwardOnly bool
}

// maxIntegrate bounds the commits one integration walks.
const maxIntegrate = 1 << 20

// Integrate brings the commits of theirs (a commit already in the shard's
// objects, as after git fetch) into main. When main is an ancestor of
// theirs, main moves there. Otherwise memd commits a merge: each fact file
// takes the fact changes of both sides since their common ancestor (a fact
// added on either side is kept, one removed on either side is removed, so
// no fact is lost), and other files (notes) are merged line by line, keeping
// both versions between conflict markers where the sides disagree.
// The working tree and index follow, as for memd's own commits.
func (sh *Shard) Integrate(theirs Hash, opts IntegrateOptions) (Integration, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err := sh.errIfClosed(); err != nil {
		return Integration{}, err
	}
	if err := sh.restoreAbortedRebase(); err != nil {
		return Integration{}, fmt.Errorf("shard %s: integrate %s: %w", sh.id, short(theirs), err)
	}
	return sh.integrate(theirs, opts)
}

// integrate is Integrate, with sh.mu held.
func (sh *Shard) integrate(theirs Hash, opts IntegrateOptions) (Integration, error) {
	if !theirs.IsZero() && !sh.db.Has(theirs) {
		return Integration{}, fmt.Errorf("shard %s: integrate %s: commit not in the shard", sh.id, short(theirs))
	}
	refused := 0 // moves refused because a person kept changing a working file
	for attempt := 0; ; attempt++ {
		in, err := sh.tryIntegrate(theirs, opts)
		if errors.Is(err, errMoveRefused) && !memd.DiskFull(err) && refused < 2 { // see commitGroup
			refused++
			continue
		}
		if !errors.Is(err, errRefMoved) || attempt == 9 {
			if err != nil {
				err = fmt.Errorf("shard %s: integrate %s: %w", sh.id, short(theirs), unavailableIfRefused(err))
			}
			return in, err
		}
	}
}

func (sh *Shard) tryIntegrate(theirs Hash, opts IntegrateOptions) (Integration, error) {
	head, err := readRef(sh.gitDir, mainRef)
	if err != nil {
		return Integration{}, err
	}
	st, err := sh.catchUp(head)
	if err != nil {
		return Integration{}, err
	}
	// The catch-up may have committed a restore of what a stale index
	// dropped: theirs is judged against that, or moving main to theirs
	// would leave it behind.
	head = st.head
	in := Integration{Kind: IntegrateNone, Head: head}
	if theirs.IsZero() || theirs == head {
		return in, nil
	}
	newer, ahead, err := sh.Range(head, theirs, maxIntegrate)
	if err != nil {
		return in, err
	}
	if len(newer) == 0 {
		return in, nil // theirs is in main already
	}
	in.Commits = len(newer)
	tc, err := sh.readCommit(theirs)
	if err != nil {
		return in, err
	}
	if path, what, err := (&trees{db: sh.db}).unfit(st.root, tc.tree); err != nil || path != "" {
		if err == nil {
			err = memd.Errorf(memd.EINVALID, "%s in commit %s is %s; memd shards hold regular files of facts and notes only", path, short(theirs), what)
		}
		return in, err
	}
	if ahead || head.IsZero() {
		touched, next, err := sh.fileChanges(st.root, tc.tree)
		if err != nil {
			return in, err
		}
		if err := sh.moveMain(st, theirs, nil, touched, next, "memd: fast-forward to what "+opts.From+" brought"); err != nil {
			return in, err
		}
		in.Kind, in.Head = IntegrateFastForward, theirs
		return in, nil
	}
	if opts.ForwardOnly {
		return in, nil
	}
	m, err := sh.merge(st, theirs, newer, opts.From)
	if err != nil {
		return in, err
	}
	if len(m.conflicts) > 0 && opts.RefuseConflicts {
		m.pack.Abort()
		if len(m.binary) > 0 {
			return in, memd.Errorf(memd.ECONFLICT, "%s changed both here and in %s, and a version holds a NUL byte, which makes it binary to git: its lines cannot be merged; fetch, merge by hand and try again", strings.Join(m.binary, ", "), opts.From)
		}
		return in, memd.Errorf(memd.ECONFLICT, "%s changed both here and in %s, in the same lines; fetch, merge and try again", strings.Join(m.conflicts, ", "), opts.From)
	}
	if err := sh.moveMain(st, m.commit, m.pack, m.touched, m.next, "memd: merge of what "+opts.From+" brought"); err != nil {
		return in, err
	}
	in.Kind, in.Head, in.Conflicts = IntegrateMerge, m.commit, m.conflicts
	return in, nil
}

// modeName says what a tree entry's mode makes it.
func modeName(mode string) string {
	switch mode {
	case modeExec:
		return "an executable file"
	case "120000":
		return "a symbolic link"
	case "160000":
		return "a submodule"
	}
	return "a file of mode " + mode
}

// moveMain publishes a commit that is not a group's (a fast-forward or a
// merge) the way publish does: pack, lock, durable, working tree, ref.
func (sh *Shard) moveMain(st *state, next Hash, sp *odb.StagedPack, touched, files map[string]*factFile, why string) error {
	if sp != nil {
		if err := sp.Publish(); err != nil {
			sp.Abort()
			return err
		}
		defer sp.Close()
	}
	// The lock on main will name a commit memd may not have made (a
	// fast-forward to a push): say that the lock is memd's, so that a start
	// after a crash can tell it from one a git command holds.
	marker := filepath.Join(sh.gitDir, movingMarker)
	if err := os.WriteFile(marker, []byte(next.String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("mark the move of main: %w", err)
	}
	defer os.Remove(marker)
	var staged []*os.File // the objects git fetch or index-pack wrote, git synced itself
	if sp != nil {
		staged = sp.Files()
	}
	defer sh.moving.Store(nil)
	if err := sh.advance(st.head, next, staged, touched, files, why); err != nil {
		return err
	}
	// Given up if it fails, and rebuilt at the next read.
	sh.replaceState(func() (*state, error) { return sh.load(st, next) })
	if sh.store.opts.Restore != nil {
		sh.markJudged(next) // commits memd took in from a remote or a push: not a stale index's
	}
	if f := sh.store.opts.OnCommit; f != nil {
		f(sh.id)
	}
	return nil
}

// movingMarker names, in the git directory, the file holding the commit
// memd is moving main to when the lock's content alone cannot say the lock
// is memd's (see ownLock).
const movingMarker = "memd-moving-main"

// fileChanges lists the files that differ between two trees, as the
// working tree sync wants them: path -> version in from (nil if absent), and
// path -> version in to (absent if removed).
func (sh *Shard) fileChanges(from, to Hash) (touched, next map[string]*factFile, err error) {
	touched, next = make(map[string]*factFile), make(map[string]*factFile)
	t := &trees{db: sh.db}
	err = t.diffFiles(from, to, "", everyPath, func(path string, a, b Hash) error {
		touched[path] = nil
		if !a.IsZero() {
			ff, err := sh.fileVersion(path, a)
			if err != nil {
				return err
			}
			touched[path] = ff
		}
		if !b.IsZero() {
			ff, err := sh.fileVersion(path, b)
			if err != nil {
				return err
			}
			next[path] = ff
		}
		return nil
	})
	return touched, next, err
}

func everyPath(string) bool { return true }

func (sh *Shard) fileVersion(path string, blob Hash) (*factFile, error) {
	obj, err := sh.db.Get(blob)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &factFile{path: path, blob: blob, data: obj.Data}, nil
}

// keepOnce drops from the merged versions of fact files the lines of facts
// main holds in another file that keeps them: the same fact remembered on
// both sides may land in a month's log on one and in a day's on the other,
// and is kept once, where main has it.
func keepOnce(st *state, b *odb.Builder, finals map[string]*factFile) {
	merged := make(map[string]map[string]bool) // path -> the fact IDs of its merged version
	holds := func(path, id string) bool {
		final, changed := finals[path]
		if !changed {
			return true // main's version stays
		}
		if final == nil {
			return false
		}
		if merged[path] == nil {
			merged[path] = factIDs(parseFactFile(path, final.data))
		}
		return merged[path][id]
	}
	for path, final := range finals {
		if final == nil || !IsFactFile(path) {
			continue
		}
		var drop []odb.Edit
		for _, lf := range parseFactFile(path, final.data) {
			where := st.where.get(lf.ID)
			if len(where) == 0 || slices.Contains(where, path) {
				continue
			}
			if slices.ContainsFunc(where, func(other string) bool { return holds(other, lf.ID) }) {
				drop = append(drop, odb.Edit{Pos: lf.start, Del: lf.end - lf.start})
			}
		}
		if len(drop) == 0 {
			continue
		}
		data := odb.Apply(final.data, drop)
		finals[path] = &factFile{path: path, blob: b.Add(plumbing.BlobObject, data), data: data}
	}
}

// merged is a merge commit built and staged, not yet published.
type merged struct {
	commit    Hash
	pack      *odb.StagedPack
	conflicts []string
	binary    []string // those of conflicts a version of which git takes for binary
	// The files the merge changes against main, for the working tree: their
	// versions in main (nil if new) and after (absent if removed).
	touched, next map[string]*factFile
}

// merge builds the merge commit of main (st) and theirs into a staged pack.
//
// It is long because it is one pass over the files both sides changed,
// building the tree and the commit as it goes.
func (sh *Shard) merge(st *state, theirs Hash, newer []Commit, from string) (*merged, error) {
	base, err := sh.mergeBase(newer)
	if err != nil {
		return nil, err
	}
	var baseRoot Hash
	if !base.IsZero() {
		bc, err := sh.readCommit(base)
		if err != nil {
			return nil, err
		}
		baseRoot = bc.tree
	}
	tc, err := sh.readCommit(theirs)
	if err != nil {
		return nil, err
	}
	t := &trees{db: sh.db}
	ours := make(map[string]Hash) // path -> our blob, for paths we changed since base
	err = t.diffFiles(baseRoot, st.root, "", everyPath, func(path string, _, to Hash) error {
		ours[path] = to
		return nil
	})
	if err != nil {
		return nil, err
	}
	type side struct {
		path               string
		base, ours, theirs Hash
	}
	var both []side
	err = t.diffFiles(baseRoot, tc.tree, "", everyPath, func(path string, b, to Hash) error {
		o, changed := ours[path]
		if !changed {
			o = b
		}
		if o != to {
			both = append(both, side{path, b, o, to})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b := odb.NewBuilder()
	root := st.root
	m := &merged{touched: make(map[string]*factFile), next: make(map[string]*factFile)}
	finals := make(map[string]*factFile, len(both)) // nil: the file goes
	for _, s := range both {
		var final *factFile
		if s.ours == s.base {
			// Only their side changed the file.
			if !s.theirs.IsZero() {
				if final, err = sh.fileVersion(s.path, s.theirs); err != nil {
					return nil, err
				}
			}
		} else {
			data, conflict, binary, err := sh.mergeFile(s.path, s.base, s.ours, s.theirs, from)
			if err != nil {
				return nil, err
			}
			if conflict {
				m.conflicts = append(m.conflicts, s.path)
			}
			if binary {
				m.binary = append(m.binary, s.path)
			}
			if data != nil {
				final = &factFile{path: s.path, blob: b.Add(plumbing.BlobObject, data), data: data}
			}
		}
		finals[s.path] = final
	}
	keepOnce(st, b, finals)
	for _, s := range both {
		final := finals[s.path]
		var blob Hash
		if final != nil {
			blob = final.blob
		}
		if blob == s.ours {
			continue // the merge kept our version
		}
		m.touched[s.path] = nil
		if !s.ours.IsZero() {
			if m.touched[s.path], err = sh.fileVersion(s.path, s.ours); err != nil {
				return nil, err
			}
		}
		if final != nil {
			m.next[s.path] = final
		}
		if root, err = t.set(b, root, s.path, blob); err != nil {
			return nil, err
		}
	}
	if root.IsZero() {
		root = b.Add(plumbing.TreeObject, nil)
	}
	when := sh.store.opts.Now()
	stamp := fmt.Sprintf("%d %s", when.Unix(), when.Format("-0700"))
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "tree %s\nparent %s\nparent %s\n", root, st.head, theirs)
	me := Committer()
	fmt.Fprintf(&msg, "author %s <%s> %s\n", me.Name, me.Email, stamp)
	fmt.Fprintf(&msg, "committer %s <%s> %s\n\n", me.Name, me.Email, stamp)
	msg.WriteString(sh.store.opts.Merge(len(newer), from, theirs, m.conflicts))
	m.commit = b.Add(plumbing.CommitObject, msg.Bytes())
	if m.pack, err = sh.db.StagePack(b); err != nil {
		return nil, fmt.Errorf("write pack: %w", err)
	}
	return m, nil
}

// MergeMessage formats the message of a merge commit memd makes: commits
// is how many commits of theirs main lacked, from where they came from,
// and conflicts the files it could not settle.
type MergeMessage func(commits int, from string, theirs Hash, conflicts []string) string

// plainMergeMessage is a merge's message when the store was given none:
// a subject alone.
func plainMergeMessage(commits int, from string, _ Hash, _ []string) string {
	return fmt.Sprintf("%s: %d commit(s) from %s\n", memd.OpMerge, commits, from)
}

// mergeFile merges one file both sides changed. A fact file takes their
// fact changes on top of ours, and their other lines by a line merge
// (mergeFactFiles); any other file is merged line by line by
// git merge-file, and a note git takes for binary is kept whole both ways,
// between conflict markers. nil data removes the file.
func (sh *Shard) mergeFile(path string, base, ours, theirs Hash, from string) (data []byte, conflict, binary bool, err error) {
	read := func(h Hash) ([]byte, error) { return sh.fileBlob(path, h) }
	var b, o, t []byte
	if b, err = read(base); err != nil {
		return
	}
	if o, err = read(ours); err != nil {
		return
	}
	if t, err = read(theirs); err != nil {
		return
	}
	if IsFactFile(path) && !base.IsZero() && !ours.IsZero() && !theirs.IsZero() {
		data, conflict = mergeFactFiles(path, b, o, t)
		return data, conflict, false, nil
	}
	if IsFactFile(path) {
		// Created on both sides, or removed on one: by facts alone.
		out := splitThree(path, [3][]byte{b, t, o}, nil).mergeFactLines()
		facts := len(parseFactFile(path, out)) > 0
		switch {
		case theirs.IsZero() && !facts:
			// They removed it, and it holds no fact of ours: it goes.
			return nil, wroteBeyond(path, proseOf(path, o), proseOf(path, b), nil), false, nil
		case theirs.IsZero():
			// It stays for the facts we added, with lines they removed.
			return out, true, false, nil
		case ours.IsZero() && facts:
			out = append([]byte(header(path)), out...) // we had removed the file
		}
		// What else they wrote in it is not kept: named.
		conflict = wroteBeyond(path, proseOf(path, t), proseOf(path, b), proseOf(path, out))
		if len(out) == 0 {
			return nil, conflict, false, nil
		}
		return out, conflict, false, nil
	}
	if ours.IsZero() || theirs.IsZero() {
		// Removed on one side, changed on the other: keep the change.
		if ours.IsZero() {
			return t, true, false, nil
		}
		return o, true, false, nil
	}
	data, conflict, err = mergeLines(o, b, t, from)
	if !errors.Is(err, errBinary) {
		return data, conflict, false, err
	}
	// No lines to merge. A note keeps each version whole, as one
	// conflict, so that neither side's edit leaves it unseen: written as
	// text a note may hold (a NUL byte, or bytes that are not UTF-8, as
	// U+FFFD), or memd could neither edit it nor push it to a peer; where
	// both do not fit in one note, ours stays. Any other file keeps ours,
	// as git merge does with a binary file.
	if IsNoteFile(path) {
		if both := wholeConflict(asNoteText(o), asNoteText(t), from); memd.CheckNoteText(string(both)) == nil {
			return both, true, true, nil
		}
	}
	return o, true, true, nil
}

// wholeConflict is a conflict of two versions of a file kept whole, with
// git merge-file's markers: ours (memd's side) first, then theirs.
func wholeConflict(ours, theirs []byte, from string) []byte {
	var b bytes.Buffer
	b.WriteString("<<<<<<< memd\n")
	b.Write(ours)
	if !endsLine(ours) {
		b.WriteByte('\n')
	}
	b.WriteString("=======\n")
	b.Write(theirs)
	if !endsLine(theirs) {
		b.WriteByte('\n')
	}
	b.WriteString(">>>>>>> " + from + "\n")
	return b.Bytes()
}

// asNoteText is data as a note may hold it: a NUL byte, and bytes that
// are not UTF-8, each as U+FFFD.
func asNoteText(data []byte) []byte {
	return []byte(strings.ReplaceAll(strings.ToValidUTF8(string(data), "\uFFFD"), "\x00", "\uFFFD"))
}

// errBinary is mergeLines' error for a version git takes for binary.
var errBinary = errors.New("a version holds a NUL byte, which makes it binary to git: its lines cannot be merged")

// binaryToGit reports whether git takes data for binary: a NUL in its
// first 8,000 bytes.
func binaryToGit(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// mergeLines is a three-way line merge (git merge-file), with conflicts
// kept between markers naming memd's side and from; errBinary where a
// version is binary to git.
func mergeLines(ours, base, theirs []byte, from string) ([]byte, bool, error) {
	return gitMergeFile(ours, base, theirs, "-L", "memd", "-L", "base", "-L", from)
}

// gitMergeFile runs git merge-file on three versions with the options given,
// and returns the merge and whether it holds conflicts.
func gitMergeFile(ours, base, theirs []byte, options ...string) ([]byte, bool, error) {
	if binaryToGit(ours) || binaryToGit(base) || binaryToGit(theirs) {
		return nil, false, errBinary
	}
	dir, err := os.MkdirTemp("", mergeDirPrefix)
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(dir)
	names := []string{"ours", "base", "theirs"}
	for i, data := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), data, 0o600); err != nil {
			return nil, false, err
		}
	}
	cmd := exec.Command("git", append(append([]string{"merge-file", "-p"}, options...), "ours", "base", "theirs")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, false, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		return out, true, nil // the exit code counts the conflicts
	default:
		return nil, false, fmt.Errorf("git merge-file: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
}

// Ref returns the commit a ref of the shard's repository points at (zero if
// it does not exist), such as the remote-tracking ref git fetch writes.
func (sh *Shard) Ref(name string) (Hash, error) {
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
		return Hash{}, memd.Errorf(memd.EINVALID, "%q is not a ref name", name)
	}
	return readRef(sh.gitDir, name)
}
