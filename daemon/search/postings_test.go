package search_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/search"
)

// postingsFixture is a shard as real ones are: lasting and dated facts,
// words repeated in a fact, accents, numbers and codes, and a note.
func postingsFixture() ([]search.Doc, map[string][]search.Doc) {
	rng := rand.New(rand.NewPCG(7, 11))
	people := []string{"Alice", "Bob", "Zoë", "Renée", "Priya", "Mårten"}
	verbs := []string{"booked", "paid", "reviewed", "migrated", "cancelled", "audited"}
	things := []string{"the flight to Lisbon", "the café in São Paulo", "invoice INV-4242", "the Q3 budget", "the flight and the flight back", "certificates for api.example.com"}
	var docs []search.Doc
	for i := 0; i < 600; i++ {
		text := fmt.Sprintf("%s %s %s, ref %d", people[rng.IntN(len(people))], verbs[rng.IntN(len(verbs))], things[rng.IntN(len(things))], rng.IntN(400))
		d := doc(alice, fmt.Sprintf("2026-%02d-%02d", 1+rng.IntN(11), 1+rng.IntN(28)), text, i*70)
		if i%25 == 0 {
			d.Tier, d.File = memd.TierProfile, "profile.md"
		}
		docs = append(docs, d)
	}
	note := []search.Doc{
		{Fact: memd.Fact{ID: "n1", Text: "Deploy runbook: book the flight window, then migrate"}},
		{Fact: memd.Fact{ID: "n2", Text: "Rollback: revert the café release"}},
	}
	return docs, map[string][]search.Doc{"runbooks/deploy.md": note}
}

var postingsQueries = []string{
	"flight Lisbon", "lisb", "café", "cafe", "Zoë", "zoe", "INV-4242", "4242", "ref 17", "ref 99999",
	"who migrated the budget", "flight back", "certificates api", "Mårten paid", "runbook rollback",
	"booked the flight to Lisbon", "March 2026", "what did Priya audit", "audit",
}

// A shard read back with the postings it was saved with answers every
// query as the same facts analysed afresh do: the same facts, scores and
// order; postings that do not match the facts are ignored.
func TestExportShard_ReadBackAnswersAsAnalysed(t *testing.T) {
	docs, notes := postingsFixture()
	saved := search.New()
	saved.Apply(search.Update{Shard: alice, Head: "h1", Replace: true, Put: docs, Notes: notes})
	saved.Delete(alice, docs[3].ID) // dead entries stay in postings until compaction
	var order []search.Doc
	postings := saved.ExportShard(alice, func(int) {}, func(d search.Doc) { order = append(order, d) })
	if len(order) != saved.Facts(alice) {
		t.Fatalf("exported %d facts, the shard holds %d", len(order), saved.Facts(alice))
	}

	build := func(postings string) (*search.Engine, bool) {
		x := search.New()
		x.Apply(search.Update{Shard: pat, Head: "p", Replace: true, Put: []search.Doc{doc(pat, "2026-10-01", "Pat booked the flight to Lisbon", 0)}})
		used := x.Apply(search.Update{Shard: alice, Head: "h1", Replace: true, Put: order, Notes: notes, Postings: postings})
		return x, used
	}
	analysed, _ := build("")
	other := []byte(string(postings))
	other[0] ^= 1
	for name, postings := range map[string]string{
		"postings":                  string(postings),
		"damaged postings":          string(postings[:len(postings)/2]),
		"postings cut after a term": string(postings[:len(postings)-2]),
		"another analysis's":        string(other),
		"foreign postings":          "\x03\x01\x01\x01",
	} {
		read, used := build(postings)
		if used != (name == "postings") {
			t.Errorf("%s: used %v", name, used)
		}
		for _, q := range postingsQueries {
			query := search.Query{Text: q, Shards: []memd.ShardID{alice, pat}, K: 12, Now: now, Explain: true}
			want, got := analysed.Search(query).Hits, read.Search(query).Hits
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %q:\n got %v\nwant %v", name, q, texts(got), texts(want))
			}
		}
	}
}

// Postings read back into a shard that held facts before extend what it
// held rather than leave words unfound.
func TestExportShard_ReadBackOverAShardThatHeldFacts(t *testing.T) {
	docs, notes := postingsFixture()
	saved := search.New()
	saved.Apply(search.Update{Shard: alice, Head: "h1", Replace: true, Put: docs, Notes: notes})
	var order []search.Doc
	postings := string(saved.ExportShard(alice, func(int) {}, func(d search.Doc) { order = append(order, d) }))

	x := search.New()
	x.Apply(search.Update{Shard: alice, Head: "h0", Replace: true, Put: docs[:50]})
	x.Apply(search.Update{Shard: alice, Head: "h1", Replace: true, Put: order, Notes: notes, Postings: postings})
	fresh := search.New()
	fresh.Apply(search.Update{Shard: alice, Head: "h1", Replace: true, Put: order, Notes: notes})
	for _, q := range postingsQueries {
		query := search.Query{Text: q, Shards: []memd.ShardID{alice}, K: 12, Now: now}
		if got, want := texts(x.Search(query).Hits), texts(fresh.Search(query).Hits); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", q, got, want)
		}
	}
}

// A fact read from git is a piece of its line, of the whole file it was
// diffed from, or of the whole snapshot: the index keeps its own copy of
// its strings, so those bytes are not held for as long as the fact is.
func TestApply_KeepsNoPieceOfTheFileItReadFrom(t *testing.T) {
	var file strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&file, "- (2026-11-30) A fact of the busy day, number %d\n", i)
	}
	data := file.String()
	line := data[strings.Index(data, "number 42\n")-40:]
	text := strings.TrimPrefix(line[:strings.Index(line, "\n")], "- (2026-11-30) ")
	d := doc(alice, "2026-11-30", text, 0)
	idAt := strings.Index(data, "busy")
	d.ID = data[idAt : idAt+4] // an ID, file and commit that are pieces of it too
	d.File, d.Commit = data[idAt:idAt+8], data[idAt+1:idAt+9]
	x := search.New()
	x.Apply(search.Update{Shard: alice, Head: "c1", Replace: true, Put: []search.Doc{d}})
	got, ok := x.Get(alice, d.ID)
	if !ok || got.Text != text {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(data)))
	if got.File != d.File || got.Commit != d.Commit {
		t.Fatalf("Get = %+v", got)
	}
	for _, s := range []string{got.Text, got.ID, got.File, got.Commit} {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= start && p < start+uintptr(len(data)) {
			t.Errorf("%q is still a piece of the file it was read from", s)
		}
	}
}

// A fact put again as it is, its line moved (a line above it was removed),
// keeps the strings the index holds rather than copies: copies would leave
// the old ones, dead, in memory that other facts keep alive.
func TestApply_PuttingAFactAgainKeepsItsStrings(t *testing.T) {
	x := search.New()
	d := doc(alice, "2026-11-30", "Booked a flight to Lisbon", 100)
	d.Commit, d.Chat, d.Messages = "c1", "chat_41", []string{"msg_1"}
	x.Apply(search.Update{Shard: alice, Head: "c1", Put: []search.Doc{d}})
	before, _ := x.Get(alice, d.ID)
	moved := before
	moved.Offset = 40
	x.Apply(search.Update{Shard: alice, Head: "c2", Put: []search.Doc{moved}})
	after, ok := x.Get(alice, d.ID)
	if !ok || after.Offset != 40 {
		t.Fatalf("Get after the move = %+v, %v", after, ok)
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	if !same(after.Text, before.Text) || !same(after.ID, before.ID) || !same(after.Commit, before.Commit) ||
		!same(after.File, before.File) || !same(after.Messages[0], before.Messages[0]) {
		t.Error("a fact put again holds new copies of its strings")
	}
}

// Where a fact came from (its commit, the messages that commit names, its
// chat) comes back as it was put or set, whatever of it is known.
func TestGet_GivesBackWhereAFactCameFrom(t *testing.T) {
	const head = "9c1b3ad2e5f60718293a4b5c6d7e8f9012345678"
	for _, tc := range []struct {
		name     string
		commit   string
		messages []string
		chat     string
	}{
		{name: "nothing known"},
		{name: "a commit alone", commit: head},
		{name: "messages alone", messages: []string{"msg_1", "msg_2"}},
		{name: "a commit, its message and chat", commit: head, messages: []string{"msg_1"}, chat: "chat_41"},
		{name: "an empty message among others", commit: "c", messages: []string{"", strings.Repeat("m", 300)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := doc(alice, "2026-11-30", "Booked a flight to Lisbon", 0)
			d.Commit, d.Messages, d.Chat, d.When = tc.commit, tc.messages, tc.chat, 1764500000
			x := search.New()
			x.Apply(search.Update{Shard: alice, Head: "c1", Put: []search.Doc{d}})
			got, _ := x.Get(alice, d.ID)
			if got.Commit != tc.commit || !slices.Equal(got.Messages, tc.messages) || got.Chat != tc.chat || got.When != d.When {
				t.Fatalf("put: Get = commit %q messages %q chat %q when %d", got.Commit, got.Messages, got.Chat, got.When)
			}
			x.SetProvenance(alice, d.ID, tc.commit+"0", append(slices.Clone(tc.messages), "later"), "chat_42", 7)
			got, _ = x.Get(alice, d.ID)
			if got.Commit != tc.commit+"0" || !slices.Equal(got.Messages, append(slices.Clone(tc.messages), "later")) || got.Chat != "chat_42" || got.When != 7 {
				t.Fatalf("set: Get = commit %q messages %q chat %q when %d", got.Commit, got.Messages, got.Chat, got.When)
			}
		})
	}
}
