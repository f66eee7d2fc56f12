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

func ids(qs []memd.Quote) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.ID+"@"+q.Chat+"="+q.Text)
	}
	return out
}

func TestStore_KeepsQuotesExcerptsAndSweeps(t *testing.T) {
	c := &clock{time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "messages.db")
	s := open(t, path, c)
	ex := memd.Exchange{Agent: "alice", Chat: "c1", User: "pat", Time: c.t, Messages: []memd.Message{
		{ID: "1", Role: "user", Text: "hello there"}, {ID: "2", Role: "agent", Text: "hi pat"}}}
	if err := s.Keep(ex); err != nil {
		t.Fatal(err)
	}
	// Another chat reuses message ID 1.
	if err := s.Keep(memd.Exchange{Agent: "bob", Chat: "c2", Time: c.t, Messages: []memd.Message{{ID: "1", Role: "user", Text: "other chat"}}}); err != nil {
		t.Fatal(err)
	}
	// An excerpt never overwrites a message's own text.
	if err := s.KeepExcerpt("alice", memd.Source{Messages: []string{"2", "9"}, Chat: "c1"}, "quoted"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path, c) // kept across a restart
	qs, err := s.Quotes([]string{"1", "2", "9"}, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(qs), []string{"1@c1=hello there", "2@c1=hi pat", "9@c1=quoted"}; !slices.Equal(got, want) {
		t.Errorf("quotes %q, want %q", got, want)
	}
	if qs, _ := s.Quotes([]string{"1"}, ""); len(qs) != 2 {
		t.Errorf("without a chat, both messages 1: %q", ids(qs))
	}

	// A week on, texts no fact cites go; cited ones stay.
	c.t = c.t.Add(6 * 24 * time.Hour)
	cited := func(id string) bool { return id == "2" }
	if n, err := s.Sweep(cited, 7*24*time.Hour, 0); err != nil || n != 0 {
		t.Errorf("within the grace: dropped %d, %v", n, err)
	}
	c.t = c.t.Add(2 * 24 * time.Hour)
	if n, err := s.Sweep(cited, 7*24*time.Hour, 0); err != nil || n != 3 {
		t.Errorf("after the grace: dropped %d (want 3), %v", n, err)
	}
	if n, _ := s.Count(); n != 1 {
		t.Errorf("%d kept, want 1", n)
	}
	// A retention drops even a cited text.
	if n, err := s.Sweep(cited, 7*24*time.Hour, 5*24*time.Hour); err != nil || n != 1 {
		t.Errorf("past the retention: dropped %d, %v", n, err)
	}
}

func TestStore_PurgeDropsTheWholeExchange(t *testing.T) {
	c := &clock{time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, filepath.Join(t.TempDir(), "messages.db"), c)
	s.Keep(memd.Exchange{Agent: "alice", Chat: "c1", Messages: []memd.Message{{ID: "a", Role: "user", Text: "x"}, {ID: "b", Role: "agent", Text: "y"}}})
	s.Keep(memd.Exchange{Agent: "alice", Chat: "c1", Messages: []memd.Message{{ID: "c", Role: "user", Text: "z"}}})
	got, err := s.Purge("b")
	if slices.Sort(got); err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("purge: %q, %v", got, err)
	}
	if n, _ := s.Count(); n != 1 {
		t.Errorf("%d kept after the purge, want 1", n)
	}
	if _, err := s.Purge("b"); memd.ErrorCode(err) != memd.ENOTFOUND {
		t.Errorf("purging again: %v", err)
	}
}

func TestCheckExcerpt(t *testing.T) {
	for _, tc := range []struct {
		src  memd.Source
		text string
		ok   bool
	}{
		{memd.Source{Messages: []string{"m"}}, "said this", true},
		{memd.Source{}, "", true},
		{memd.Source{}, "said this", false},
		{memd.Source{Messages: []string{"m"}}, " \n ", false},
		{memd.Source{Messages: []string{"m"}}, string(make([]rune, transcript.MaxExcerpt+1)), false},
	} {
		if err := transcript.CheckExcerpt(tc.src, tc.text); (err == nil) != tc.ok {
			t.Errorf("CheckExcerpt(%+v, %.20q) = %v", tc.src, tc.text, err)
		}
	}
}
