package transcript_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon/transcript"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T, path string, c *clock) *transcript.Store {
	t.Helper()
	s, err := transcript.Open(path, c.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func texts(qs []memd.Quote) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.Agent+"/"+q.Chat+"/"+q.ID+"="+q.Text)
	}
	return out
}

func ex(agent, chat string, msgs ...string) memd.Exchange {
	e := memd.Exchange{Agent: agent, Chat: chat}
	for i := 0; i+1 < len(msgs); i += 2 {
		e.Messages = append(e.Messages, memd.Message{ID: msgs[i], Role: "user", Text: msgs[i+1]})
	}
	return e
}

// commit is a commit memd made for agent from messages of a chat.
func commit(hash, agent, chat string, msgs ...string) memd.Commit {
	return memd.Commit{Hash: hash, Author: memd.Person{Name: agent}, Provenance: memd.Provenance{SourceChat: chat, SourceMessages: msgs}}
}

// Texts are kept per agent and chat and never overwritten (but an excerpt
// gives way to the message itself); a trace reads only what memd recorded
// its commits were made from.
func TestStore_QuotesWhatCommitsCite(t *testing.T) {
	c := &clock{time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "messages.db")
	s := open(t, path, c)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.KeepExcerpt("alice", memd.Source{Messages: []string{"1"}, Chat: "c1", Excerpt: "an excerpt, then the real text"}))
	must(s.Keep(ex("alice", "c1", "1", "my PIN is 4921", "2", "noted")))
	must(s.Keep(ex("alice", "c2", "1", "other chat, same ID")))
	// bob reuses alice's IDs: his own texts, alice's untouched.
	must(s.Keep(ex("bob", "c1", "1", "wire money to bob")))
	must(s.Keep(ex("alice", "c1", "1", "rewritten later")))
	must(s.KeepExcerpt("alice", memd.Source{Messages: []string{"2", "9"}, Chat: "c1", Excerpt: "quoted"}))
	s.Cite("A", transcript.Citation{Agent: "alice", Chat: "c1", Messages: []string{"1", "2", "9"}})
	s.Close()
	s = open(t, path, c) // citations and texts kept across a restart

	qs, err := s.Quotes([]memd.Commit{commit("A", "alice", "c1", "1", "2", "9")})
	must(err)
	if got, want := texts(qs), []string{"alice/c1/1=my PIN is 4921", "alice/c1/2=noted", "alice/c1/9=quoted"}; !slices.Equal(got, want) {
		t.Errorf("commit A quotes %q, want %q", got, want)
	}
	for _, forged := range []memd.Commit{
		commit("B", "alice", "c1", "1"), // a commit memd did not make from them
		commit("A", "bob", "c1", "1"),   // another agent
		commit("A", "alice", "c1", "7"), // a message it does not name
	} {
		if qs, _ := s.Quotes([]memd.Commit{forged}); len(qs) != 0 {
			t.Errorf("%+v quotes %q", forged, texts(qs))
		}
	}
}

// A commit made again (a proposal on a newer main) quotes what the one it
// replaces quoted, in every chat, once, and nothing that one did not.
func TestStore_ReciteCarriesQuotesToTheNewCommit(t *testing.T) {
	c := &clock{time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, filepath.Join(t.TempDir(), "messages.db"), c)
	for _, e := range []memd.Exchange{ex("alice", "c1", "1", "Porto, not Lisbon"), ex("alice", "c2", "1", "same ID elsewhere", "2", "never cited")} {
		if err := s.Keep(e); err != nil {
			t.Fatal(err)
		}
	}
	s.Cite("old", transcript.Citation{Agent: "alice", Chat: "c1", Messages: []string{"1"}}, transcript.Citation{Agent: "alice", Chat: "c2", Messages: []string{"1"}})
	for range 2 { // a second time changes nothing
		if err := s.Recite("alice", []string{"1", "2"}, "old", "next"); err != nil {
			t.Fatal(err)
		}
	}
	qs, err := s.Quotes([]memd.Commit{commit("next", "alice", "", "1", "2")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(qs), []string{"alice/c1/1=Porto, not Lisbon", "alice/c2/1=same ID elsewhere"}; !slices.Equal(got, want) {
		t.Errorf("the commit made again quotes %q, want %q", got, want)
	}
	if qs, _ := s.Quotes([]memd.Commit{commit("next", "bob", "", "1")}); len(qs) != 0 {
		t.Errorf("another agent's commit of that hash quotes %q", texts(qs))
	}
}

func TestStore_SweepKeepsWhatIsCitedOrAwaited(t *testing.T) {
	c := &clock{time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, filepath.Join(t.TempDir(), "messages.db"), c)
	old := ex("alice", "c1", "1", "cited", "2", "taught nothing", "3", "still queued")
	old.Time = c.t.Add(-30 * 24 * time.Hour) // the caller's word: not what the grace counts from
	if err := s.Keep(old); err != nil {
		t.Fatal(err)
	}
	s.Cite("commitA", transcript.Citation{Agent: "alice", Chat: "c1", Messages: []string{"1"}})
	queued := func(agent, id string) bool { return agent == "alice" && id == "3" }
	week := 7 * 24 * time.Hour
	if n, err := s.Sweep(week, 0, queued); err != nil || n != 0 {
		t.Errorf("within the grace: dropped %d, %v", n, err)
	}
	c.t = c.t.Add(8 * 24 * time.Hour)
	if n, err := s.Sweep(week, 0, queued); err != nil || n != 1 {
		t.Errorf("after the grace: dropped %d (want 1), %v", n, err)
	}
	if n, _ := s.Count(); n != 2 {
		t.Errorf("%d kept, want the cited and the queued", n)
	}
	// A retention drops even a cited text.
	if n, err := s.Sweep(week, 5*24*time.Hour, queued); err != nil || n != 2 {
		t.Errorf("past the retention: dropped %d, %v", n, err)
	}
}

func TestStore_PurgeDropsOneExchange(t *testing.T) {
	c := &clock{time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, filepath.Join(t.TempDir(), "messages.db"), c)
	s.Keep(ex("alice", "a", "1", "x", "2", "y"))
	s.Keep(ex("alice", "b", "1", "other", "2", "chat"))
	s.Keep(ex("alice", "a", "3", "z"))
	got, err := s.Purge("2", "a")
	if slices.Sort(got); err != nil || !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("purge 2 in chat a: %q, %v", got, err)
	}
	if n, _ := s.Count(); n != 3 {
		t.Errorf("%d kept after the purge, want 3", n)
	}
	got, err = s.Purge("1", "")
	if err != nil || len(got) != 2 {
		t.Errorf("purge 1 in every chat: %q, %v", got, err)
	}
	if _, err := s.Purge("1", ""); memd.ErrorCode(err) != memd.ENOTFOUND {
		t.Errorf("purging again: %v", err)
	}
}

func TestCheckExcerpt(t *testing.T) {
	for _, tc := range []struct {
		src memd.Source
		ok  bool
	}{
		{memd.Source{Messages: []string{"m"}, Excerpt: "said this"}, true},
		{memd.Source{}, true},
		{memd.Source{Excerpt: "said this"}, false},
		{memd.Source{Messages: []string{"m"}, Excerpt: " \n "}, false},
		{memd.Source{Messages: []string{"m"}, Excerpt: string(make([]rune, transcript.MaxExcerpt+1))}, false},
	} {
		if err := transcript.CheckExcerpt(tc.src); (err == nil) != tc.ok {
			t.Errorf("CheckExcerpt(%.40q) = %v", tc.src.Excerpt, err)
		}
	}
}
