package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFeedHeads_ReadBackWhatWasKept(t *testing.T) {
	_, sh := aliceShard(t)
	a, b := NewHash("1111111111111111111111111111111111111111"), NewHash("2222222222222222222222222222222222222222")
	path := filepath.Join(sh.gitDir, feedHeadsName)
	for _, tc := range []struct {
		name  string
		file  string // "" for no file
		want  []Hash
		whole bool
		// What FeedHeadsEnd reads of it: the last head, and whether the
		// last line is whole.
		last      Hash
		wholeLast bool
	}{
		{"no file", "", nil, true, Hash{}, true},
		{"empty", "\n", nil, false, Hash{}, false},
		{"two heads", a.String() + "\n" + b.String() + "\n", []Hash{a, b}, true, b, true},
		{"the last cut short", a.String() + "\n" + b.String()[:17], []Hash{a}, false, Hash{}, false},
		{"the last without its line end", a.String() + "\n" + b.String(), []Hash{a, b}, false, Hash{}, false},
		{"a line of something else", a.String() + "\nnot a head\n" + b.String() + "\n", []Hash{a, b}, false, b, true},
		{"two cut writes run together", a.String()[:9] + b.String() + "\n", nil, false, Hash{}, false},
		{"line ends of another system", a.String() + "\r\n" + b.String() + "\r\n", []Hash{a, b}, true, b, true},
		{"a long last line", a.String() + "\n" + strings.Repeat(b.String(), 3) + "\n", []Hash{a}, false, Hash{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(path)
			if tc.file != "" {
				if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, whole, err := sh.FeedHeads()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || whole != tc.whole {
				t.Errorf("FeedHeads() = %v, %v; want %v, %v", got, whole, tc.want, tc.whole)
			}
			last, n, wholeLast, err := sh.FeedHeadsEnd()
			if err != nil {
				t.Fatal(err)
			}
			if last != tc.last || wholeLast != tc.wholeLast || n != len(tc.file)/headLine {
				t.Errorf("FeedHeadsEnd() = %v, %d, %v; want %v, %d, %v", last, n, wholeLast, tc.last, len(tc.file)/headLine, tc.wholeLast)
			}
		})
	}
}

func TestFeedHeads_AddedAndSetAreReadBack(t *testing.T) {
	_, sh := aliceShard(t)
	a, b, c := NewHash("1111111111111111111111111111111111111111"), NewHash("2222222222222222222222222222222222222222"), NewHash("3333333333333333333333333333333333333333")
	for _, h := range []Hash{{}, a, b} {
		if err := sh.AddFeedHead(h); err != nil {
			t.Fatal(err)
		}
	}
	if got, whole, err := sh.FeedHeads(); err != nil || !whole || !slices.Equal(got, []Hash{{}, a, b}) {
		t.Fatalf("after three added: %v, %v, %v", got, whole, err)
	}
	if err := sh.SetFeedHeads([]Hash{b, c}); err != nil {
		t.Fatal(err)
	}
	if got, whole, err := sh.FeedHeads(); err != nil || !whole || !slices.Equal(got, []Hash{b, c}) {
		t.Fatalf("after set: %v, %v, %v", got, whole, err)
	}
}
