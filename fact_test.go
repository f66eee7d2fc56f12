package memd_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memd/memd"
)

func TestFactID_Normalizes(t *testing.T) {
	same := []string{
		"Lives in Lisbon",
		"lives in lisbon",
		"  Lives   in\tLisbon ",
		"LIVES IN LISBON",
	}
	want := memd.FactID(same[0])
	for _, s := range same {
		if got := memd.FactID(s); got != want {
			t.Errorf("FactID(%q) = %s, want %s", s, got, want)
		}
	}
	// NFC and NFD spellings of the same text are one fact.
	if nfc, nfd := memd.FactID("Caf\u00e9 on the corner"), memd.FactID("Cafe\u0301 on the corner"); nfc != nfd {
		t.Errorf("NFC %s != NFD %s", nfc, nfd)
	}
	if memd.FactID("Lives in Lisbon") == memd.FactID("Lives in Porto") {
		t.Error("different texts share an ID")
	}
	if id := memd.FactID("x"); !memd.ValidFactID(id) {
		t.Errorf("FactID returned %q, which ValidFactID refuses", id)
	}
}

func TestCleanFactText(t *testing.T) {
	cases := []struct {
		in   string
		want string // "" means refused
	}{
		{"  Moved to NYC  ", "Moved to NYC"},
		{strings.Repeat("é", 500), strings.Repeat("é", 500)},
		{strings.Repeat("x", 501), ""},
		{"two\nlines", ""},
		{"carriage\rreturn", ""},
		{"tab\there", ""},
		{"nul\x00byte", ""},
		{"", ""},
		{"   ", ""},
		{"\xff\xfe invalid", ""},
		{"[note] tagged", ""},
		{"[episode] tagged", ""},
		{"a [note] inside is fine", "a [note] inside is fine"},
		{"\u200b", ""},
		{"\ufeff \u200b\u00a0", ""},
		{"zero\u200bwidth inside", "zero\u200bwidth inside"},
	}
	for _, c := range cases {
		got, err := memd.CleanFactText(c.in)
		if c.want == "" {
			if memd.ErrorCode(err) != memd.EINVALID {
				t.Errorf("CleanFactText(%q) = %q, %v; want an invalid error", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("CleanFactText(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	_, err := memd.CleanFactText(strings.Repeat("x", 501))
	if !strings.Contains(memd.ErrorMessage(err), "500") {
		t.Errorf("the error for a long fact should say the limit: %v", err)
	}
}

func TestParseDate(t *testing.T) {
	for in, ok := range map[string]bool{
		"2026-11-30": true, "2024-02-29": true, "2026-02-30": false, "2025-02-29": false,
		"2026-13-01": false, "2026-1-5": false, "30/11/2026": false, "": false, "2026-11-30T00:00:00Z": false,
	} {
		_, err := memd.ParseDate(in)
		if (err == nil) != ok {
			t.Errorf("ParseDate(%q): err %v, want ok=%v", in, err, ok)
		}
	}
}

// ParseDate, written by hand, takes the strings time.Parse takes, each
// to its day, and no other.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-11-30", "2024-02-29", "2026-02-30", "2100-02-29", "2000-02-29", "0000-01-01", "0000-03-01",
		"9999-12-31", "1969-12-31", "2026-00-10", "2026-12-00", "2026-1-05", "+026-01-05", "2026/01/05", "20é-01-05", "2026-01-0\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := memd.ParseDate(s)
		want, werr := time.Parse(time.DateOnly, s)
		if (err == nil) != (werr == nil) {
			t.Fatalf("ParseDate(%q): err %v, time.Parse's %v", s, err, werr)
		}
		if err == nil && d != memd.DateOf(want) {
			t.Errorf("ParseDate(%q) = %v (%d days), time.Parse gives %v", s, d, d.Days(), want)
		}
	})
}

func TestParseShardID(t *testing.T) {
	for in, ok := range map[string]bool{
		"agent/alice": true, "user/u-42": true, "project/apollo.v2": true, "agent/a_b": true,
		"agent/../x": false, "agent/Alice": false, "a/b": false, "agent/": false, "agent": false,
		"agent/.hidden": false, "agent/" + strings.Repeat("a", 65): false, "agent/a/b": false, "user/ spaced": false,
	} {
		_, err := memd.ParseShardID(in)
		if (err == nil) != ok {
			t.Errorf("ParseShardID(%q): err %v, want ok=%v", in, err, ok)
		}
		if err != nil && memd.ErrorCode(err) != memd.EINVALID {
			t.Errorf("ParseShardID(%q): code %s", in, memd.ErrorCode(err))
		}
	}
}

func TestValidateNotePath(t *testing.T) {
	for in, ok := range map[string]bool{
		"deploy-runbook.md": true, "team/ops/deploy.md": true,
		"../x.md": false, "a//b.md": false, "/abs.md": false, "notes.txt": false, "A.md": false, "a/../b.md": false,
	} {
		if err := memd.ValidateNotePath(in); (err == nil) != ok {
			t.Errorf("ValidateNotePath(%q): err %v, want ok=%v", in, err, ok)
		}
	}
}

// Shorten cuts at a character, never inside one: a message keeps valid
// UTF-8 whatever language the text is in.
func TestShorten(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"flight", 10, "flight"},
		{"flight to Lisbon", 6, "flight…"},
		{"café crème", 4, "café…"},
		{"日本語のメモ", 3, "日本語…"},
	} {
		got := memd.Shorten(c.in, c.n)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// The identity of an ASCII text, worked out without copies, is the one
// the general form gives: IDs are in every commit's trailers.
func FuzzFactID_ASCIIAsTheGeneralForm(f *testing.F) {
	for _, s := range []string{"Lives in Lisbon", "  Two  spaces\tand a TAB\r\n", "MiXeD cAsE 42", "\x00\x1f\x7f ctrl\v\fform", "", " ", "Café", "a\u0085b", "a\u00a0b",
		strings.Repeat("Longer THAN the buffer  ", 12), strings.Repeat("é", 130)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sum := sha256.Sum256([]byte(memd.NormalizeFactText(s)))
		if want, got := hex.EncodeToString(sum[:6]), memd.FactID(s); got != want {
			t.Errorf("FactID(%q) = %s, the general form gives %s", s, got, want)
		}
		if got, want := fmt.Sprintf("%012x", memd.FactKey(s)), hex.EncodeToString(sum[:6]); got != want {
			t.Errorf("FactKey(%q) = %s, the general form gives %s", s, got, want)
		}
	})
}

// BenchmarkFactID times identifying a fact line's text: a start reads
// and identifies every fact of every shard.
func BenchmarkFactID(b *testing.B) {
	text := "Farid audited the rooftop venue in Lisbon, ref 15367"
	for b.Loop() {
		memd.FactID(text)
	}
}

// BenchmarkParseDate times reading a fact line's date.
func BenchmarkParseDate(b *testing.B) {
	for b.Loop() {
		if _, err := memd.ParseDate("2026-03-14"); err != nil {
			b.Fatal(err)
		}
	}
}
