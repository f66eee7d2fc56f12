package gitstore

// A person edits a fact file by hand (reorders, deletes, duplicates or
// re-dates lines, adds prose, turns it to CRLF), memd writes to it, and
// the person commits with git: HEAD holds memd's change and the person's
// lines. The log cases of recurring entries (a revert's RestoreLine and
// RemoveLine after a reorder, a re-date or a duplicate) failed before
// the fact merge went line by line of a fact.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/internal/memdtest"
)

// personEditCase is one: the shard's facts, the person's edit, memd's
// edits, and what HEAD must hold after the person's commit.
type personEditCase struct {
	name   string
	path   string
	setup  []Edit
	edit   func(string) string
	memd   []Edit
	want   []string // substrings HEAD must hold
	unwant []string // substrings HEAD must not hold
	staged bool
}

// commitAfterMemd runs a case: the person edits (and stages, if staged),
// memd applies its edits, the person runs git commit -a.
func commitAfterMemd(t *testing.T, c personEditCase) {
	t.Helper()
	_, sh := aliceShard(t)
	applyAsAlice(t, sh, c.setup...)
	full := filepath.Join(sh.Dir(), filepath.FromSlash(c.path))
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	mine := c.edit(string(b))
	if mine == string(b) {
		t.Fatalf("edit changed nothing:\n%s", b)
	}
	if err := os.WriteFile(full, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.staged {
		asPat(t, sh.Dir(), "add", c.path)
	}
	applyAsAlice(t, sh, c.memd...)
	work, _ := os.ReadFile(full)
	memdHead := memdtest.Git(t, sh.Dir(), "show", "HEAD:"+c.path)
	asPat(t, sh.Dir(), "commit", "--allow-empty", "-qam", "hand edit")
	head := memdtest.Git(t, sh.Dir(), "show", "HEAD:"+c.path)
	for _, w := range c.want {
		if !strings.Contains(head, w) {
			t.Errorf("HEAD lacks %q", w)
		}
	}
	for _, w := range c.unwant {
		if strings.Contains(head, w) {
			t.Errorf("HEAD holds %q", w)
		}
	}
	if t.Failed() {
		t.Logf("memd HEAD:\n%q\nbase:\n%q\nperson's:\n%q\nworking after memd:\n%q\nHEAD:\n%q", memdHead, b, mine, work, head)
	}
}

var threeProfileFacts = []Edit{
	rememberEdit("Lives in Lisbon", memd.TierProfile, "2026-11-03"),
	rememberEdit("Prefers tea", memd.TierProfile, "2026-11-03"),
	rememberEdit("Reads sci-fi", memd.TierProfile, "2026-11-04"),
}

func TestShard_APersonsCommitAfterMemdWritesTheProfile(t *testing.T) {
	lisbon, tea, scifi := "- (2026-11-03) Lives in Lisbon\n", "- (2026-11-03) Prefers tea\n", "- (2026-11-04) Reads sci-fi\n"
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	cases := []personEditCase{
		{name: "reword after reorder", edit: func(s string) string {
			s = strings.Replace(s, tea, "", 1)
			return strings.Replace(s, lisbon, tea+lisbon, 1)
		}, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "Lives in Lisbon", "Reads sci-fi"}, unwant: []string{"Prefers tea"}},
		{name: "reword with prose after line", edit: func(s string) string {
			return strings.Replace(s, tea, tea+"Only in the morning.\n", 1)
		}, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "Only in the morning.", "Reads sci-fi"}, unwant: []string{"Prefers tea"}},
		{name: "reword with neighbour deleted", edit: func(s string) string {
			return strings.Replace(s, scifi, "", 1)
		}, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "Lives in Lisbon"}, unwant: []string{"Prefers tea", "Reads sci-fi"}},
		{name: "reword CRLF", edit: crlf, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "Lives in Lisbon", "Reads sci-fi"}, unwant: []string{"Prefers tea"}},
		{name: "forget CRLF", edit: crlf, memd: []Edit{forgetEdit("Prefers tea")},
			want: []string{"Lives in Lisbon", "Reads sci-fi"}, unwant: []string{"Prefers tea"}},
		{name: "add CRLF", edit: crlf, memd: []Edit{rememberEdit("Owns a cat", memd.TierProfile, "2026-11-05")},
			want: []string{"Owns a cat", "Prefers tea", "Lives in Lisbon", "Reads sci-fi"}},
		{name: "reword last no final newline", edit: func(s string) string { return strings.TrimSuffix(s, "\n") },
			memd: []Edit{rewordEdit("Reads sci-fi", "Reads fantasy")},
			want: []string{"Reads fantasy", "Prefers tea"}, unwant: []string{"Reads sci-fi"}},
		{name: "forget last no final newline", edit: func(s string) string { return strings.TrimSuffix(s, "\n") },
			memd: []Edit{forgetEdit("Reads sci-fi")}, want: []string{"Prefers tea"}, unwant: []string{"Reads sci-fi"}},
		{name: "add no final newline", edit: func(s string) string { return strings.TrimSuffix(s, "\n") + " and poetry" },
			memd: []Edit{rememberEdit("Owns a cat", memd.TierProfile, "2026-11-05")}, want: []string{"Owns a cat", "Reads sci-fi and poetry"}},
		{name: "reword duplicated line", edit: func(s string) string { return s + tea },
			memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "Reads sci-fi"}, unwant: []string{"Prefers tea"}},
		{name: "reword line duplicated on another day", edit: func(s string) string { return s + "- (2026-11-09) Prefers tea\n" },
			memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "Reads sci-fi"}, unwant: []string{"Prefers tea"}},
		{name: "reword of tagged by person", edit: func(s string) string {
			return strings.Replace(s, tea, "- (2026-11-03) [note] Prefers tea\n", 1)
		}, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea"}, unwant: []string{"Prefers tea"}},
		{name: "reword two facts at once prose between", edit: func(s string) string {
			return strings.Replace(s, lisbon, lisbon+"<!-- between -->\n", 1)
		}, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea"), rewordEdit("Lives in Lisbon", "Lives in Porto")},
			want: []string{"Prefers green tea", "Lives in Porto", "<!-- between -->"}, unwant: []string{"Prefers tea", "Lisbon"}},
		{name: "reword and forget reorder", edit: func(s string) string {
			s = strings.Replace(s, scifi, "", 1)
			return strings.Replace(s, lisbon, scifi+lisbon, 1)
		}, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea"), forgetEdit("Lives in Lisbon")},
			want: []string{"Prefers green tea", "Reads sci-fi"}, unwant: []string{"Prefers tea", "Lisbon"}},
		{name: "reword then add", edit: func(s string) string { return s + "Extra prose.\n" },
			memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea"), rememberEdit("Owns a cat", memd.TierProfile, "2026-11-05")},
			want: []string{"Prefers green tea", "Owns a cat", "Extra prose."}, unwant: []string{"Prefers tea"}},
		{name: "person redated neighbour, reword", edit: func(s string) string {
			return strings.Replace(s, lisbon, "- (2026-11-01) Lives in Lisbon\n", 1)
		}, memd: []Edit{rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "- (2026-11-01) Lives in Lisbon"}, unwant: []string{"Prefers tea", "- (2026-11-03) Lives in Lisbon"}},
		{name: "reword swap order prose", edit: func(s string) string {
			s = strings.Replace(s, scifi, "", 1)
			return strings.Replace(s, tea, scifi+"Some prose\n"+tea, 1)
		}, memd: []Edit{rewordEdit("Reads sci-fi", "Reads fantasy"), rewordEdit("Prefers tea", "Prefers green tea")},
			want: []string{"Prefers green tea", "Reads fantasy", "Some prose"}, unwant: []string{"Prefers tea", "sci-fi"}},
	}
	for _, staged := range []bool{false, true} {
		for _, c := range cases {
			c.path, c.setup, c.staged = ProfileFile, threeProfileFacts, staged
			name := c.name
			if staged {
				name += " staged"
			}
			t.Run(name, func(t *testing.T) { commitAfterMemd(t, c) })
		}
	}
}

func logFactEdit(text, day string) Edit { return rememberEdit(text, memd.TierLog, "2026-11-"+day) }

func TestShard_APersonsCommitAfterMemdWritesTheLog(t *testing.T) {
	run := "Went running by the river"
	setup := []Edit{logFactEdit(run, "05"), logFactEdit("Read Dune", "07"), restoreDayEdit(run, "13")}
	r05, r13, dune := runLine("05"), runLine("13"), "- (2026-11-07) Read Dune\n"
	cases := []personEditCase{
		{name: "add run day after reorder", edit: func(s string) string {
			s = strings.Replace(s, r13, "", 1)
			return strings.Replace(s, r05, r13+r05, 1)
		}, memd: []Edit{restoreDayEdit(run, "20")}, want: []string{runLine("20"), r13, r05, dune}},
		{name: "add run day after person redated one", edit: func(s string) string {
			return strings.Replace(s, r13, runLine("12"), 1)
		}, memd: []Edit{restoreDayEdit(run, "20")}, want: []string{runLine("20"), runLine("12"), r05, dune}, unwant: []string{r13}},
		{name: "remove line after reorder and prose", edit: func(s string) string {
			s = strings.Replace(s, r13, "", 1)
			return strings.Replace(s, r05, r13+"Rainy.\n"+r05, 1)
		}, memd: []Edit{takeBackDayEdit(run, "05")}, want: []string{r13, "Rainy.", dune}, unwant: []string{r05}},
		{name: "restore line after person added prose", edit: func(s string) string {
			return s + "Rainy week.\n"
		}, memd: []Edit{takeBackDayEdit(run, "05"), restoreDayEdit(run, "05")}, want: []string{r13, r05, "Rainy week.", dune}},
		{name: "reword recurring after person redated one", edit: func(s string) string {
			return strings.Replace(s, r13, runLine("12"), 1)
		}, memd: []Edit{rewordEdit(run, "Ran along the river")}, want: []string{"Ran along the river", dune}, unwant: []string{run}},
		{name: "forget recurring after dup", edit: func(s string) string {
			return s + r05
		}, memd: []Edit{forgetEdit(run)}, want: []string{dune}, unwant: []string{run}},
		{name: "remove line 13 person dup 05", edit: func(s string) string {
			return s + "x\n" + r05
		}, memd: []Edit{takeBackDayEdit(run, "13")}, want: []string{dune, r05, "x\n"}, unwant: []string{r13}},
		{name: "add new fact crlf", edit: func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
			memd: []Edit{logFactEdit("Flew to Porto", "09")}, want: []string{"Flew to Porto", dune[:len(dune)-1], r05[:len(r05)-1], r13[:len(r13)-1]}},
		{name: "remove line crlf", edit: func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") + "note\r\n" },
			memd: []Edit{takeBackDayEdit(run, "13")}, want: []string{dune[:len(dune)-1], r05[:len(r05)-1], "note"}, unwant: []string{r13[:len(r13)-1]}},
	}
	for _, staged := range []bool{false, true} {
		for _, c := range cases {
			c.path, c.setup, c.staged = "log/2026-11.md", setup, staged
			name := c.name
			if staged {
				name += " staged"
			}
			t.Run(name, func(t *testing.T) { commitAfterMemd(t, c) })
		}
	}
}
