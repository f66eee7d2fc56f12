package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/internal/memdtest"
	"github.com/memd/memd/provenance"
)

func walkOf(docs []search.Doc, postings string) func(func(int), func(search.Doc)) []byte {
	return func(begin func(int), fn func(search.Doc)) []byte {
		begin(len(docs))
		for _, d := range docs {
			fn(d)
		}
		return []byte(postings)
	}
}

// encoded is a snapshot's bytes.
func encoded(t testing.TB, shard memd.ShardID, head gitstore.Hash, walk func(func(int), func(search.Doc)) []byte, notes map[string]*noteRecord) []byte {
	var b bytes.Buffer
	n, err := encodeSnapshot(&b, shard, head, walk, notes)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("encode: %d of %d bytes, %v", n, b.Len(), err)
	}
	return b.Bytes()
}

// A snapshot reads back as it was written, for any text a hand edit could
// hold; a damaged one, cut short or changed anywhere, reads as damaged and
// never as other facts.
func FuzzSnapshot(f *testing.F) {
	for _, s := range []string{"Lives in Lisbon", `quote " and \ backslash`, "tab\tnew\nline\r\x00\x1f", "naïve café 東京 \u2028", "\xff\xfe broken"} {
		f.Add(s, "log/2026-11.md", "msg_1", "", int64(1780000000), 42, uint(7))
	}
	shard := memd.AgentShard("alice")
	head := gitstore.NewHash("0123456789abcdef0123456789abcdef01234567")
	f.Fuzz(func(t *testing.T, text, file, msg, chat string, when int64, offset int, flip uint) {
		date, _ := memd.ParseDate("2026-11-03")
		docs := []search.Doc{
			{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: date, Tier: memd.TierLog, Text: text, File: file},
				Offset: max(offset, 0), Commit: head.String(), Messages: []string{msg}, Chat: chat, When: when},
			{Fact: memd.Fact{ID: "b" + memd.FactID(text)[1:], Shard: shard, Tier: memd.TierProfile, Text: text + " again", File: "profile.md"}},
			{Fact: memd.Fact{ID: "c" + memd.FactID(text)[1:], Shard: shard, Date: date, Tier: memd.TierLog, Text: "later", File: file},
				Offset: 3, Commit: head.String(), Messages: []string{msg}, Chat: chat, When: when},
		}
		notes := map[string]*noteRecord{"plan.md": {Date: "2026-11-03", Commit: head.String(), Text: text}}
		postings := chat + msg // any bytes: what they mean is search's business
		b := encoded(t, shard, head, walkOf(docs, postings), notes)
		got, err := decodeSnapshot(shard, b)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if got.head != head || !reflect.DeepEqual(got.facts, docs) || !reflect.DeepEqual(got.notes, notes) || got.postings != postings {
			t.Fatalf("read back\n%+v\n%+v\n%q\nwrote\n%+v\n%+v\n%q", got.facts, got.notes, got.postings, docs, notes, postings)
		}
		if _, err := decodeSnapshot(memd.AgentShard("bob"), b); err == nil {
			t.Fatal("alice's snapshot read as bob's")
		}
		cut := b[:int(flip%uint(len(b)))]
		if _, err := decodeSnapshot(shard, cut); err == nil {
			t.Fatalf("a snapshot cut to %d of %d bytes read back", len(cut), len(b))
		}
		changed := bytes.Clone(b)
		changed[int(flip%uint(len(b)))] ^= 0x5a
		if _, err := decodeSnapshot(shard, changed); err == nil {
			t.Fatalf("a snapshot with byte %d changed read back", flip%uint(len(b)))
		}
	})
}

// Bytes that are not a snapshot never crash the reader.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add([]byte(snapshotMagic + "junk"))
	f.Add(encoded(f, memd.AgentShard("alice"), gitstore.Hash{}, walkOf(nil, ""), nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeSnapshot(memd.AgentShard("alice"), b)
	})
}

func openStoreAt(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	s, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func learn(t *testing.T, sh *gitstore.Shard, msg string, texts ...string) {
	t.Helper()
	date, _ := memd.ParseDate("2026-11-03")
	var edits []gitstore.Edit
	for _, text := range texts {
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: text, Date: date, Tier: memd.TierLog}})
	}
	m := provenance.Message("learn", memd.Provenance{SourceMessages: []string{msg}, SourceChat: "chat-1", LearnedBy: "learner"})
	if _, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "alice", Email: "alice@agents.memd"}, Message: m, Edits: edits}); err != nil {
		t.Fatal(err)
	}
}

// recalled returns each indexed fact of a shard with the message it was
// learned from.
func recalled(x *Index, id memd.ShardID) map[string]string {
	out := make(map[string]string)
	x.Engine().Walk(id, false, func(d search.Doc) bool {
		out[d.Text] = strings.Join(d.Messages, ",")
		return true
	})
	return out
}

// indexedAlice makes a store in data whose shard agent/alice holds two
// facts learned from message m1, indexes it and closes the index, and
// returns the store, the shard, the closed index and the index's path.
func indexedAlice(t *testing.T, data string) (*gitstore.Store, *gitstore.Shard, *Index, string) {
	t.Helper()
	store := openStoreAt(t, data)
	sh, err := store.CreateShard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	learn(t, sh, "m1", "Booked a flight to Lisbon", "Paid the hotel")
	path := filepath.Join(data, "index.db")
	x, err := Open(path, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.CatchUpAll(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	return store, sh, x, path
}

// The index a memd stopped with is read back at the next start, and what
// was committed after its snapshot — by memd before a kill -9, or by a
// person with git — is caught up from the commits since, with where each
// fact came from; a damaged snapshot is read again from HEAD.
func TestIndex_SnapshotsSurviveRestartsAndStops(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	alice := memd.AgentShard("alice")
	store, sh, _, path := indexedAlice(t, data)
	want := map[string]string{"Booked a flight to Lisbon": "m1", "Paid the hotel": "m1"}

	// A clean restart reads the snapshot when the shard is first asked
	// for, and has nothing to catch up; a file that is not memd's beside
	// the snapshots is left alone.
	if err := os.WriteFile(filepath.Join(data, "index.shards", ".DS_Store"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := Open(path, store, logger)
	if err != nil {
		t.Fatal(err)
	}
	caughtUp := 0
	x.OnCatchUp = func(memd.ShardID, time.Duration, bool) { caughtUp++ }
	if err := x.CatchUp(alice); err != nil {
		t.Fatal(err)
	}
	if got := recalled(x, alice); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a restart the index holds %v, want %v", got, want)
	}
	if caughtUp != 0 {
		t.Errorf("a clean restart caught up %d shards", caughtUp)
	}

	// Stopped without closing: the facts learned since the snapshot, and
	// a person's line, are read from the commits.
	learn(t, sh, "m2", "Renewed the office lease")
	if err := x.CatchUpAll(); err != nil {
		t.Fatal(err)
	}
	x.cancel() // the process dies: nothing more is written
	<-x.saverDone
	x.db.Close()
	f, err := os.OpenFile(filepath.Join(sh.Dir(), "log", "2026-11.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- (2026-11-03) Adopted a puppy named Rex\n")
	f.Close()
	commitByHand(t, sh)
	want["Renewed the office lease"] = "m2"
	want["Adopted a puppy named Rex"] = ""
	x, err = Open(path, store, logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.CatchUpAll(); err != nil {
		t.Fatal(err)
	}
	if got := recalled(x, alice); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a stop the index holds %v, want %v", got, want)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	// A damaged snapshot is dropped and its shard read from HEAD.
	snap := x.snapshotPath(alice)
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(snap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	x, err = Open(path, store, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.CatchUp(alice); err != nil {
		t.Fatal(err)
	}
	if got := recalled(x, alice); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a damaged snapshot the index holds %v, want %v", got, want)
	}
	if _, err := os.Stat(snap); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the damaged snapshot is still there (%v)", err)
	}
	store.Close()
}

// A start on a store no memd has indexed reads each shard's files for the
// index and gives them up once indexed: holding every shard's at once is
// what a first start's memory peaked on. A shard whose files were already
// in use keeps them.
func TestIndex_FirstIndexingGivesUpTheFilesItParsed(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	writer := openStoreAt(t, data)
	for _, name := range []string{"alice", "bob"} {
		sh, err := writer.CreateShard(memd.AgentShard(name))
		if err != nil {
			t.Fatal(err)
		}
		learn(t, sh, "m1", "Booked a flight to Lisbon", "Paid the hotel")
	}
	writer.Close()

	store := openStoreAt(t, data)
	defer store.Close()
	bob, err := store.Shard(memd.AgentShard("bob"))
	if err != nil {
		t.Fatal(err)
	}
	learn(t, bob, "m2", "Renewed the office lease") // bob's files are in use
	x, err := Open(filepath.Join(data, "index.db"), store, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.CatchUpAll(); err != nil {
		t.Fatal(err)
	}
	alice, err := store.Shard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if got := recalled(x, memd.AgentShard("alice")); len(got) != 2 {
		t.Fatalf("alice's shard indexed as %v", got)
	}
	if alice.Parsed() {
		t.Error("alice's files are still held after her shard was indexed")
	}
	if !bob.Parsed() {
		t.Error("bob's files, in use before the index read them, were given up")
	}
}

// A snapshot whose postings another analysis made (an older memd, another
// stemmer) is read by analysing the texts, and written again.
func TestIndex_SnapshotOfAnotherAnalysisIsWrittenAgain(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	alice := memd.AgentShard("alice")
	store, _, x, path := indexedAlice(t, data)
	defer store.Close()
	snapPath := x.snapshotPath(alice)
	read := func() snapshot {
		t.Helper()
		b, err := os.ReadFile(snapPath)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := decodeSnapshot(alice, b)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	snap := read()
	const foreign = "postings of another analysis"
	if err := os.WriteFile(snapPath, encoded(t, alice, snap.head, walkOf(snap.facts, foreign), snap.notes), 0o644); err != nil {
		t.Fatal(err)
	}

	x, err := Open(path, store, logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.CatchUp(alice); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Booked a flight to Lisbon": "m1", "Paid the hotel": "m1"}
	if got := recalled(x, alice); !reflect.DeepEqual(got, want) {
		t.Errorf("read back %v, want %v", got, want)
	}
	hits := x.Engine().Search(search.Query{Text: "flight", Shards: []memd.ShardID{alice}, K: 5, Explain: true}).Hits
	if len(hits) == 0 || hits[0].Text != "Booked a flight to Lisbon" || len(hits[0].Explain.Terms) == 0 {
		t.Errorf("flight is not found as a word: %+v", hits)
	}
	x.Close()
	if got := read(); got.postings == foreign || got.postings == "" {
		t.Errorf("the snapshot was not written again: postings %q", got.postings)
	}
}

// A snapshot an older memd wrote reads as older, to be read from HEAD
// again without a warning; one of a later or unknown format as damaged.
func TestDecodeSnapshot_TellsOlderFormatsFromDamage(t *testing.T) {
	alice := memd.AgentShard("alice")
	for _, c := range []struct {
		file string
		want error
	}{
		{"memd shard index 1\n\x05alice junk that was a format 1 body", errOldSnapshot},
		{"memd shard index 3\n\x05alice a format from a later memd....", errBadSnapshot},
		{"memd shard index x\n\x05alice not a format at all............", errBadSnapshot},
		{"memd shard ind", errBadSnapshot},
	} {
		if _, err := decodeSnapshot(alice, []byte(c.file)); !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.file, err, c.want)
		}
	}
}

// decodeSnapshot, for tests, reads a snapshot of shard written by
// encodeSnapshot, in windows of a few bytes: a string or number is as
// likely to lie across two as not.
func decodeSnapshot(shard memd.ShardID, b []byte) (snapshot, error) {
	return decodeSnapshotIn(shard, b, 7)
}

// decodeSnapshotIn reads a snapshot whole, in windows of the size given.
func decodeSnapshotIn(shard memd.ShardID, b []byte, window int) (snapshot, error) {
	p, err := openSnapshot(shard, bytes.NewReader(b), int64(len(b)), window)
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{head: p.head, notes: p.notes, postings: p.postings}
	err = p.each(1024, func(docs []search.Doc) error {
		s.facts = append(s.facts, docs...)
		return nil
	})
	if s.facts == nil {
		s.facts = []search.Doc{}
	}
	return s, err
}

// A shard too large to follow from its first commit is read from HEAD and
// searched at once; its facts are then attributed in the background to
// the same commits, messages and chats as following its history gives.
func TestIndex_FirstIndexingOfALargeShardReadsHEAD(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := openStoreAt(t, data)
	defer store.Close()
	id := memd.AgentShard("alice")
	sh, err := store.CreateShard(id)
	if err != nil {
		t.Fatal(err)
	}
	for m := range 4 {
		var texts []string
		for n := range 5 {
			texts = append(texts, fmt.Sprintf("Fact %d of message %d", n, m))
		}
		learn(t, sh, fmt.Sprintf("m%d", m), texts...)
	}
	// A person's commit, which only a diff attributes.
	f, err := os.OpenFile(filepath.Join(sh.Dir(), "log", "2026-11.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- (2026-11-04) Written by hand\n")
	f.Close()
	commitByHand(t, sh)

	indexed := func(followUpTo int) (*Index, map[string]search.Doc) {
		x, err := Open(filepath.Join(t.TempDir(), "index.db"), store, logger)
		if err != nil {
			t.Fatal(err)
		}
		x.followUpTo = followUpTo
		t.Cleanup(func() { x.Close() })
		fromHead := false
		x.OnCatchUp = func(_ memd.ShardID, _ time.Duration, full bool) { fromHead = full }
		if err := x.CatchUp(id); err != nil {
			t.Fatal(err)
		}
		if want := followUpTo < 21; fromHead != want {
			t.Fatalf("with %d facts to follow at most, read from HEAD: %v", followUpTo, fromHead)
		}
		docs := map[string]search.Doc{}
		x.Engine().Walk(id, false, func(d search.Doc) bool { docs[d.Text] = d; return true })
		return x, docs
	}
	_, followed := indexed(followUpTo)
	x, read := indexed(10)
	if len(read) != 21 || len(followed) != 21 {
		t.Fatalf("read from HEAD: %d facts, followed: %d, want 21 each", len(read), len(followed))
	}
	x.bg.Wait() // the attribution
	if n := x.Attributing(nil); n != 0 {
		t.Errorf("%d shards still attributing once attributed", n)
	}
	x.Engine().Walk(id, false, func(d search.Doc) bool { read[d.Text] = d; return true })
	for text, want := range followed {
		got := read[text]
		if want.Commit == "" || got.Commit != want.Commit || got.Chat != want.Chat || strings.Join(got.Messages, ",") != strings.Join(want.Messages, ",") {
			t.Errorf("%q attributed to %s %v %q, want %s %v %q as following gives", text, got.Commit, got.Messages, got.Chat, want.Commit, want.Messages, want.Chat)
		}
	}
}

// Read from HEAD in parts, a fact a person wrote twice is indexed once, as
// its newer line (the first of two of a day), whichever parts hold them,
// and found by its words there.
func TestIndex_ReadInPartsKeepsTheLineHEADKeeps(t *testing.T) {
	store, sh := aliceStore(t)
	id := sh.ID()
	var texts []string
	for n := range 12 {
		texts = append(texts, fmt.Sprintf("Fact %d", n))
	}
	learn(t, sh, "m1", texts...)
	// By hand: fact 1 again in the profile, older; fact 2 newer; fact 3 the
	// same day; and fact 5 twice more in a log of its own.
	files := map[string]string{
		"profile.md":     "- (2026-10-01) Fact 1\n- (2026-12-01) Fact 2\n- (2026-11-03) Fact 3\n",
		"log/2026-12.md": "- (2026-12-02) Fact 5\n- (2026-12-01) Fact 5\n",
	}
	for name, text := range files {
		f, err := os.OpenFile(filepath.Join(sh.Dir(), name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	commitByHand(t, sh)
	lines, _, err := sh.Lines()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range lines {
		want[l.ID] = fmt.Sprintf("%s %s %s @%d", l.Date, l.File, l.Text, l.Offset)
	}
	for _, batch := range []int{1, 2, 5, 100} {
		x, err := Open(filepath.Join(t.TempDir(), "index.db"), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		x.followUpTo, x.readBatch = 1, batch
		if err := x.CatchUp(id); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		x.Engine().Walk(id, false, func(d search.Doc) bool {
			got[d.ID] = fmt.Sprintf("%s %s %s @%d", d.Date, d.File, d.Text, d.Offset)
			return true
		})
		x.Engine().Walk(id, true, func(d search.Doc) bool {
			got[d.ID] = fmt.Sprintf("%s %s %s @%d", d.Date, d.File, d.Text, d.Offset)
			return true
		})
		// And each is found by its words, at the line kept.
		for _, l := range lines {
			hits := x.Engine().Search(search.Query{Text: l.Text, Shards: []memd.ShardID{id}, K: 1, Literal: true, Explain: true}).Hits
			if len(hits) == 0 || hits[0].ID != l.ID || hits[0].Date != l.Date || len(hits[0].Explain.Terms) == 0 {
				t.Errorf("read %d at a time, %q searched finds %v, want the line of %s found by its words", batch, l.Text, hits, l.Date)
			}
		}
		x.Close()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read %d at a time:\n%v\nwant HEAD's lines\n%v", batch, got, want)
		}
	}
}

// A read from HEAD in parts that fails after putting facts leaves nothing
// of the shard, and tried again indexes every fact: whether what fails is
// a note's blob (read after every fact) or a fact file's (read while the
// facts of the files before it are being put).
func TestIndex_ReadInPartsTriedAgainKeepsEveryFact(t *testing.T) {
	for _, away := range []string{"notes/trip.md", "log/2026-10.md"} {
		t.Run(away, func(t *testing.T) {
			store, sh := aliceStore(t)
			id := sh.ID()
			learn(t, sh, "m1", "Fact one", "Fact two", "Fact three")
			// Files read before and after the one made unreadable.
			os.MkdirAll(filepath.Join(sh.Dir(), "notes"), 0o755)
			os.WriteFile(filepath.Join(sh.Dir(), "notes", "trip.md"), []byte("# Trip\n\nA note about the trip to Lisbon.\n"), 0o644)
			for month, text := range map[string]string{"2026-09": "Fact of September", "2026-10": "Fact of October", "2027-01": "Fact of January"} {
				os.WriteFile(filepath.Join(sh.Dir(), "log", month+".md"), []byte("- ("+month+"-05) "+text+"\n"), 0o644)
			}
			git := func(args ...string) string { return strings.TrimSpace(memdtest.Git(t, sh.Dir(), args...)) }
			git("add", "-A")
			git("commit", "-qm", "by hand")
			blob := git("rev-parse", "HEAD:"+away)
			gitDir := git("rev-parse", "--absolute-git-dir")
			obj := filepath.Join(gitDir, "objects", blob[:2], blob[2:])
			if err := os.Rename(obj, obj+".away"); err != nil {
				t.Fatal(err)
			}
			x, err := Open(filepath.Join(t.TempDir(), "index.db"), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			x.followUpTo, x.readBatch = 1, 1
			if err := x.CatchUp(id); err == nil {
				t.Fatalf("catch-up with %s's blob missing succeeded", away)
			}
			if n := x.Engine().Facts(id); n != 0 {
				t.Errorf("after the failed read: %d facts indexed, want none", n)
			}
			if err := os.Rename(obj+".away", obj); err != nil {
				t.Fatal(err)
			}
			if err := x.CatchUp(id); err != nil {
				t.Fatal(err)
			}
			n := 0
			x.Engine().Walk(id, false, func(search.Doc) bool { n++; return true })
			if n != 6 || x.Head(id).IsZero() {
				t.Fatalf("after a retry: %d facts indexed at %v, want 6", n, x.Head(id))
			}
		})
	}
}

// memd reindex over a store holding a shard with no commit yet.
func TestIndex_ReindexWithAShardOfNoCommit(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	store := openStoreAt(t, data)
	defer store.Close()
	sh, err := store.CreateShard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	learn(t, sh, "m1", "Fact one")
	empty, err := store.CreateShard(memd.AgentShard("bob"))
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := empty.Head(); !h.IsZero() {
		t.Fatalf("bob's shard has a commit: %v", h)
	}
	x, err := Open(filepath.Join(t.TempDir(), "index.db"), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.CatchUpAll(); err != nil {
		t.Fatalf("catch-up: %v", err)
	}
	if err := x.Reload(nil); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

// commitByHand commits everything in a shard's working tree with the git
// CLI, as a person does.
func commitByHand(t *testing.T, sh *gitstore.Shard) {
	t.Helper()
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=pat", "-c", "user.email=pat@example.com", "commit", "-qm", "by hand"}} {
		if out, err := exec.Command("git", append([]string{"-C", sh.Dir()}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// aliceStore opens a store, closed after the test, with agent/alice in it.
func aliceStore(t *testing.T) (*gitstore.Store, *gitstore.Shard) {
	t.Helper()
	store := openStoreAt(t, filepath.Join(t.TempDir(), "data"))
	t.Cleanup(func() { store.Close() })
	sh, err := store.CreateShard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	return store, sh
}

// Commits memd made and told the index of are in the snapshots a stop
// writes, though nothing read the shard after them: the next start has
// nothing to catch up, where catching up would read every file of the
// shard. Told before the shard's snapshot was read, and after.
func TestIndex_CommitsMemdMadeAreInTheSnapshotAStopWrites(t *testing.T) {
	for _, readFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot read first %v", readFirst), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			alice := memd.AgentShard("alice")
			store, sh, _, path := indexedAlice(t, data)
			x, err := Open(path, store, logger)
			if err != nil {
				t.Fatal(err)
			}
			if readFirst {
				if err := x.CatchUp(alice); err != nil {
					t.Fatal(err)
				}
			}
			learn(t, sh, "m2", "Renewed the office lease")
			x.Committed(alice)
			learn(t, sh, "m3", "Adopted a puppy named Rex")
			x.Committed(alice)
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}

			x, err = Open(path, store, logger)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			caughtUp := 0
			x.OnCatchUp = func(memd.ShardID, time.Duration, bool) { caughtUp++ }
			if err := x.CatchUp(alice); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"Booked a flight to Lisbon": "m1", "Paid the hotel": "m1", "Renewed the office lease": "m2", "Adopted a puppy named Rex": "m3"}
			if got := recalled(x, alice); !reflect.DeepEqual(got, want) {
				t.Errorf("after the restart the index holds %v, want %v", got, want)
			}
			if caughtUp != 0 {
				t.Errorf("the restart caught up %d shards from their commits; want the snapshot at HEAD", caughtUp)
			}
		})
	}
}

// The index follows memd's commits by itself, with no read and no stop:
// once a burst of writes pauses, it is at HEAD, having read only what the
// commits changed. A burst of writes, each told as it lands, is followed
// without reading the shard whole again.
func TestIndex_FollowsCommitsMemdMadeInTheBackground(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	alice := memd.AgentShard("alice")
	store, sh, _, path := indexedAlice(t, data)
	x := openCaughtUp(t, path, store, alice)
	defer x.Close()
	type caughtUp struct{ full bool }
	caught := make(chan caughtUp, 1000)
	x.OnCatchUp = func(_ memd.ShardID, _ time.Duration, full bool) { caught <- caughtUp{full} }
	for i := range 40 {
		learn(t, sh, fmt.Sprint("b", i), fmt.Sprintf("Burst fact number %d", i))
		x.Committed(alice)
	}
	head, err := sh.Head()
	if err != nil {
		t.Fatal(err)
	}
	for x.Head(alice) != head {
		select {
		case c := <-caught:
			if c.full {
				t.Fatal("following a burst of writes read the shard whole")
			}
		case <-time.After(time.Minute): // a guard: the follower waits 0.2 s after the last commit
			t.Fatalf("the index is at %s a minute after the burst, HEAD at %s", x.Head(alice), head)
		}
	}
	if got := recalled(x, alice); got["Burst fact number 39"] != "b39" || len(got) != 42 {
		t.Errorf("after the burst the index holds %d facts: %v", len(got), got)
	}
}

// numberedFacts returns n facts of shard, "fact number 0" on, of one
// commit.
func numberedFacts(shard memd.ShardID, n int) []search.Doc {
	date, _ := memd.ParseDate("2026-11-03")
	var docs []search.Doc
	for i := range n {
		text := fmt.Sprintf("fact number %d", i)
		docs = append(docs, search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: date, Tier: memd.TierLog, Text: text, File: "log/2026-11.md"}, Commit: "c", Messages: []string{"m"}})
	}
	return docs
}

// failingWriter takes room bytes, then fails.
type failingWriter struct{ room int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.room {
		n := w.room
		w.room = 0
		return n, errors.New("no space left on device")
	}
	w.room -= len(b)
	return len(b), nil
}

// A snapshot is written as it is encoded: a write that fails anywhere
// fails the snapshot, with what was written counted.
func TestEncodeSnapshot_FailsWithItsWriter(t *testing.T) {
	shard := memd.AgentShard("alice")
	docs := numberedFacts(shard, 50)
	notes := map[string]*noteRecord{"plan.md": {Date: "2026-11-03", Commit: "c", Text: "the plan"}}
	whole := encoded(t, shard, gitstore.Hash{}, walkOf(docs, "postings"), notes)
	for _, room := range []int{0, 10, len(whole) / 2, len(whole) - 13, len(whole) - 1} {
		n, err := encodeSnapshot(&failingWriter{room: room}, shard, gitstore.Hash{}, walkOf(docs, "postings"), notes)
		if err == nil || n != int64(room) {
			t.Errorf("a writer failing after %d of %d bytes: %d written, %v", room, len(whole), n, err)
		}
	}
}

// A snapshot reads back the same in windows of any size, the strings and
// numbers of its facts and tables lying across windows or not.
func TestOpenSnapshot_ReadsTheSameInAnyWindow(t *testing.T) {
	shard := memd.AgentShard("alice")
	date, _ := memd.ParseDate("2026-11-03")
	var docs []search.Doc
	for i := range 300 {
		text := fmt.Sprintf("fact number %d %s", i, strings.Repeat("é", i%40))
		docs = append(docs, search.Doc{Fact: memd.Fact{ID: memd.FactID(text), Shard: shard, Date: date, Tier: memd.TierLog, Text: text, File: fmt.Sprintf("log/2026-%02d.md", 1+i%12)},
			Offset: i * 30, Commit: fmt.Sprintf("%040d", i/3), Messages: []string{fmt.Sprintf("msg_%d", i/3)}, Chat: "chat-1", When: int64(1780000000 + i)})
	}
	notes := map[string]*noteRecord{"plan.md": {Date: "2026-11-03", Commit: "c", Text: "the plan"}}
	b := encoded(t, shard, gitstore.NewHash("0123456789abcdef0123456789abcdef01234567"), walkOf(docs, "the postings"), notes)
	for _, window := range []int{1, 2, 9, 100, 4096, len(b), 1 << 20} {
		got, err := decodeSnapshotIn(shard, b, window)
		if err != nil {
			t.Fatalf("window %d: %v", window, err)
		}
		if !reflect.DeepEqual(got.facts, docs) || !reflect.DeepEqual(got.notes, notes) || got.postings != "the postings" {
			t.Fatalf("window %d: read back other facts", window)
		}
	}
}

// failingReaderAt reads as its bytes do for its first reads, then fails.
// Like a file, it may be read from several goroutines at once.
type failingReaderAt struct {
	b     []byte
	reads *atomic.Int64
}

func (r failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if r.reads.Add(-1) < 0 {
		return 0, errors.New("input/output error")
	}
	return copy(p, r.b[off:]), nil
}

// A snapshot whose file fails to read, at any read (checking it, or
// reading its facts after), fails the read with that error: never fewer
// facts, nor other ones.
func TestOpenSnapshot_FailsWhereItsFileFails(t *testing.T) {
	shard := memd.AgentShard("alice")
	docs := numberedFacts(shard, 100)
	b := encoded(t, shard, gitstore.Hash{}, walkOf(docs, "postings"), nil)
	read := func(reads int) (n int, err error) {
		left := new(atomic.Int64)
		left.Store(int64(reads))
		p, err := openSnapshot(shard, failingReaderAt{b, left}, int64(len(b)), 64)
		if err != nil {
			return 0, err
		}
		err = p.each(10, func(part []search.Doc) error { n += len(part); return nil })
		return n, err
	}
	for reads := 0; ; reads++ {
		n, err := read(reads)
		if err == nil {
			if n != len(docs) || reads < 2*len(b)/64 {
				t.Fatalf("read whole after %d reads of the file: %d facts of %d", reads, n, len(docs))
			}
			break
		}
		if !errors.Is(err, errUnreadable) || !strings.Contains(err.Error(), "input/output error") {
			t.Fatalf("a file failing after %d reads: %v", reads, err)
		}
	}
}

// A snapshot whose file cannot be read (here a directory stands where it
// was) is kept, and its shard read from HEAD: a fault that passes costs a
// read of HEAD, not the snapshot.
func TestIndex_AnUnreadableSnapshotIsKeptAndHEADRead(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	alice := memd.AgentShard("alice")
	store, _, _, path := indexedAlice(t, data)
	snap := filepath.Join(data, "index.shards", "agent", "alice.snap")
	if err := os.Remove(snap); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	x, err := Open(path, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.CatchUp(alice); err != nil {
		t.Fatalf("catching up a shard whose snapshot cannot be read: %v", err)
	}
	if got, want := recalled(x, alice), map[string]string{"Booked a flight to Lisbon": "m1", "Paid the hotel": "m1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the index holds %v, want %v", got, want)
	}
	if info, err := os.Stat(snap); err != nil || !info.IsDir() {
		t.Fatalf("what stood for the snapshot was not kept: %v", err)
	}
}

// Recall answers the same after a restart as on the first start. The
// first start indexes a shard's files oldest first and a restart reads
// its snapshot; with more facts tied on score than the phrase is weighed
// for, the order once chose which of them the phrase lifted, and the
// first start answered with the oldest.
func TestIndex_ARestartRecallsWhatTheFirstStartDid(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	store := openStoreAt(t, data)
	alice := memd.AgentShard("alice")
	sh, err := store.CreateShard(alice)
	if err != nil {
		t.Fatal(err)
	}
	first := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	var edits []gitstore.Edit
	for i := range 900 {
		date := memd.DateOf(first.AddDate(0, 0, i/3))
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: fmt.Sprintf("Invoice paid for vendor %03d", i), Date: date, Tier: memd.TierLog}})
	}
	if _, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "import", Email: "import@memd"}, Message: "import", Edits: edits}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "index.db")
	recall := func() []string {
		x := openCaughtUp(t, path, store, alice)
		defer x.Close()
		var got []string
		for _, h := range x.Engine().Search(search.Query{Text: "invoice paid", Shards: []memd.ShardID{alice}, K: 5}).Hits {
			got = append(got, h.Date.String()+" "+h.Text)
		}
		return got
	}
	onFirstStart := recall()
	newest := memd.DateOf(first.AddDate(0, 0, 299)).String()
	if len(onFirstStart) != 5 || !strings.HasPrefix(onFirstStart[0], newest) {
		t.Fatalf("first start: %v, want the facts of %s first", onFirstStart, newest)
	}
	if afterRestart := recall(); !slices.Equal(afterRestart, onFirstStart) {
		t.Fatalf("after a restart: %v, on the first start: %v", afterRestart, onFirstStart)
	}
}

// openCaughtUp opens the index at path over store, caught up with shard.
func openCaughtUp(t *testing.T, path string, store *gitstore.Store, shard memd.ShardID) *Index {
	t.Helper()
	x, err := Open(path, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.CatchUp(shard); err != nil {
		x.Close()
		t.Fatalf("catching up %s: %v", shard, err)
	}
	return x
}

// Writes that keep landing while a catch-up reads the facts it follows do
// not send it back to read the shard whole: it follows them too. Each
// fact keeps the commit that last touched it, and a fact forgotten during
// the catch-up goes.
func TestIndex_FollowsCommitsThatLandWhileItReads(t *testing.T) {
	x, sh, full := aliceToFollow(t)
	alice := sh.ID()
	learn(t, sh, "w0", "Written before the catch-up")
	landed := 0
	testHookBeforeLookup = func() {
		// More commits than the catch-up ever tried again before.
		switch {
		case landed == 1: // read in the first round, gone in the second
			forget(t, sh, "Written before the catch-up")
		case landed == 2: // and back in the third, from another message
			learn(t, sh, "again", "Written before the catch-up")
		case landed == 7:
			forget(t, sh, "Paid the hotel")
		case landed < 16:
			learn(t, sh, fmt.Sprint("w", landed+1), fmt.Sprintf("Written during the catch-up, number %d", landed))
		default:
			return
		}
		landed++
	}
	t.Cleanup(func() { testHookBeforeLookup = nil })
	if err := x.CatchUp(alice); err != nil {
		t.Fatal(err)
	}
	if *full {
		t.Error("commits landing during the catch-up sent it back to read the shard whole")
	}
	head, _ := sh.Head()
	if x.Head(alice) != head {
		t.Errorf("the index is at %s, HEAD at %s", x.Head(alice), head)
	}
	got := recalled(x, alice)
	_, paid := got["Paid the hotel"]
	if len(got) != 2+1+13-1 || paid || got["Written before the catch-up"] != "again" || got["Written during the catch-up, number 15"] != "w16" {
		t.Errorf("after the catch-up the index holds %d facts: %v", len(got), got)
	}
}

// A person who moves HEAD back while a catch-up reads (a reset, an amend)
// does not send it to read the shard whole: it follows again from the
// commit it had indexed.
func TestIndex_FollowsAgainWhenHEADGoesBackWhileItReads(t *testing.T) {
	x, sh, full := aliceToFollow(t)
	alice := sh.ID()
	learn(t, sh, "k", "Kept")
	learn(t, sh, "d", "Dropped by a reset")
	reset := false
	testHookBeforeLookup = func() {
		if !reset {
			reset = true
			memdtest.Git(t, sh.Dir(), "reset", "-q", "--hard", "HEAD~1")
		}
	}
	t.Cleanup(func() { testHookBeforeLookup = nil })
	if err := x.CatchUp(alice); err != nil {
		t.Fatal(err)
	}
	if *full {
		t.Error("HEAD going back during the catch-up sent it to read the shard whole")
	}
	got := recalled(x, alice)
	if _, dropped := got["Dropped by a reset"]; len(got) != 3 || got["Kept"] != "k" || dropped {
		t.Errorf("after the catch-up the index holds %v", got)
	}
}

// aliceToFollow returns an index caught up with agent/alice, closed after
// the test, and whether any catch-up since read the shard whole.
func aliceToFollow(t *testing.T) (*Index, *gitstore.Shard, *bool) {
	store, sh, _, path := indexedAlice(t, filepath.Join(t.TempDir(), "data"))
	x := openCaughtUp(t, path, store, sh.ID())
	t.Cleanup(func() { x.Close() })
	full := new(bool)
	x.OnCatchUp = func(_ memd.ShardID, _ time.Duration, f bool) { *full = *full || f }
	return x, sh, full
}

func forget(t *testing.T, sh *gitstore.Shard, text string) {
	t.Helper()
	m := provenance.Message("forget", memd.Provenance{SourceMessages: []string{"f"}})
	edit := gitstore.Edit{Op: gitstore.RemoveFact, Fact: memd.Fact{ID: memd.FactID(text)}}
	if _, err := sh.Apply(gitstore.Change{Author: gitstore.Committer(), Message: m, Edits: []gitstore.Edit{edit}}); err != nil {
		t.Fatal(err)
	}
}

// How far the background reading is after a start is told of the shards
// asked about: an agent's status counts its own, the admin's all.
func TestIndex_BacklogCountsTheShardsAskedAbout(t *testing.T) {
	data := t.TempDir()
	store := openStoreAt(t, data)
	for _, id := range []memd.ShardID{memd.AgentShard("alice"), memd.AgentShard("bob"), memd.ProjectShard("apollo")} {
		sh, err := store.CreateShard(id)
		if err != nil {
			t.Fatal(err)
		}
		learn(t, sh, "m1", "Booked a flight to Lisbon")
	}
	x, err := Open(filepath.Join(data, "index.db"), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.cancel() // the background pass stops before it reads a shard
	x.ReadAll()
	x.bg.Wait()
	alices := func(id memd.ShardID) bool { return id == memd.AgentShard("alice") || id == memd.ProjectShard("apollo") }
	if all, hers := x.Backlog(nil), x.Backlog(alices); all != 3 || hers != 2 {
		t.Errorf("shards left to read: %d in all and %d of alice's, want 3 and 2", all, hers)
	}
	if none := x.Backlog(func(memd.ShardID) bool { return false }); none != 0 {
		t.Errorf("%d shards left to read of none asked about", none)
	}
	// A recall reads its caller's shards first: they are read then.
	if err := x.CatchUp(memd.AgentShard("alice")); err != nil {
		t.Fatal(err)
	}
	if all, hers := x.Backlog(nil), x.Backlog(alices); all != 2 || hers != 1 {
		t.Errorf("once alice's own shard is read: %d in all and %d of alice's left, want 2 and 1", all, hers)
	}
}

// A snapshot that found the disk full is not tried again ten seconds
// later: each try writes until the disk is full, and a write landing in
// that moment fails though it had room. It waits ten minutes; a stop
// still tries.
func TestIndex_ASnapshotThatFindsNoRoomWaits(t *testing.T) {
	disk := memdtest.SmallDisk(t, "8m")
	store := openStoreAt(t, disk)
	defer store.Close()
	sh, err := store.CreateShard(memd.AgentShard("alice"))
	if err != nil {
		t.Fatal(err)
	}
	learn(t, sh, "m1", "Booked a flight to Lisbon", "Paid the hotel")
	x, err := Open(filepath.Join(disk, "index.db"), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.CatchUpAll(); err != nil {
		t.Fatal(err)
	}
	free := memdtest.FillDisk(t, disk)
	defer free()
	id := memd.AgentShard("alice")
	x.mu.Lock()
	x.markDirty(id)
	x.mu.Unlock()
	if err := x.saveDirty(true); !memd.DiskFull(err) {
		t.Fatalf("a snapshot on a full disk: %v", err)
	}
	// Eleven seconds later, as the saver would see it.
	x.mu.Lock()
	x.dirty[id] = time.Now().Add(-11 * time.Second)
	x.mu.Unlock()
	if err := x.saveDirty(false); err != nil {
		t.Errorf("the snapshot was tried again eleven seconds after it found no room: %v", err)
	}
}
