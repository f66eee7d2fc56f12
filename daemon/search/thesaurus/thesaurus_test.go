package thesaurus

import (
	"slices"
	"testing"
)

// The embedded table loads, every line parses, and its keys are in the
// order Lookup's binary search needs.
func TestTable_LoadsSortedAndWhole(t *testing.T) {
	tab, err := table()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.starts) < 50000 {
		t.Fatalf("the table holds %d terms; WordNet gives about 60,000", len(tab.starts))
	}
	prev := ""
	for i := range tab.starts {
		key, e, err := parseLine(tab.line(i))
		if err != nil {
			t.Fatal(err)
		}
		if key <= prev {
			t.Fatalf("line %d: key %q after %q", i+1, key, prev)
		}
		if e.Empty() {
			t.Fatalf("line %d: %q relates to nothing", i+1, key)
		}
		prev = key
	}
}

// Lookup finds relatives by the stemmed terms a search uses.
func TestLookup(t *testing.T) {
	for _, c := range []struct {
		term string
		kind Kind
		want string
	}{
		{"plane", Synonym, "airplan"},
		{"puppi", Broader, "dog"},
		{"dog", Narrower, "puppi"},
		{"marri", Derived, "marriag"},
		{"bought", Base, "buy"},
		{"rais", Synonym, "salari"}, // from the phrase "salary increase"
	} {
		e := Lookup(c.term)
		if e == nil {
			t.Errorf("Lookup(%q) = nil", c.term)
			continue
		}
		if got := e.ByKind()[c.kind]; !slices.Contains(got, c.want) {
			t.Errorf("Lookup(%q)[%d] = %q, want it to hold %q", c.term, c.kind, got, c.want)
		}
	}
	for _, missing := range []string{"", "zzzz", "lisbon2026", "\xff"} {
		if e := Lookup(missing); e != nil {
			t.Errorf("Lookup(%q) = %+v, want nil", missing, e)
		}
	}
}

// Clean keeps each relative once, in the closest relation, and never the
// term itself.
func TestEntry_Clean(t *testing.T) {
	e := &Entry{Synonyms: []string{"b", "a", "key", "a"}, Broader: []string{"a", "c"}, Narrower: []string{"key"}}
	e.Clean("key")
	if want := (Entry{Synonyms: []string{"a", "b"}, Broader: []string{"c"}}); !slices.Equal(e.Synonyms, want.Synonyms) || !slices.Equal(e.Broader, want.Broader) || e.Narrower != nil {
		t.Errorf("Clean = %+v, want %+v", e, want)
	}
	if !(&Entry{}).Empty() || e.Empty() {
		t.Error("Empty is wrong")
	}
}

func BenchmarkLookup(b *testing.B) {
	if _, err := table(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Lookup("ticket")
	}
}

// BenchmarkLoad is what the first lookup of a process pays.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := load(compressed); err != nil {
			b.Fatal(err)
		}
	}
}
