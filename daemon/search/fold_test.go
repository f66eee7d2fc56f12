package search

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// The index keeps no folded copy of a plain ASCII text and folds it again
// when a phrase or substring is looked for: that must be the folded text
// analyze gives.
func FuzzFoldASCII(f *testing.F) {
	for _, s := range []string{"Booked a flight to Lisbon", "  ref #4242, Q3--budget!! ", "", "...", "NYC/SQL\tServer\n2026-11-03", "Migrated 3Flights", "Café", "ends in Q4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, got, ok := appendTermsASCII(nil, nil, s)
		if ok != isASCII(s) {
			t.Fatalf("appendTermsASCII(%q) took it for ASCII: %v", s, ok)
		}
		if !ok {
			return
		}
		// Read at a start in one pass, the terms a search looks up.
		if want := terms(fold(s)); !slices.Equal(got, want) {
			t.Fatalf("appendTermsASCII(%q) = %q, terms of the folded text %q", s, got, want)
		}
		if got, want := words(s), strings.FieldsFunc(s, notInWord); !slices.Equal(got, want) {
			t.Fatalf("words(%q) = %q, read rune by rune %q", s, got, want)
		}
		want, _ := analyze(s)
		if got := string(foldASCII(nil, s)); got != want {
			t.Fatalf("foldASCII(%q) = %q, analyze folds it to %q", s, got, want)
		}
	})
}

// A word, or words joined by single spaces (a phrase), is found in an
// ASCII text, in any case, exactly where it is found in the text's folded
// words.
func FuzzContainsFold(f *testing.F) {
	f.Add("Booked a flight to LISBON", "lisb")
	f.Add("ref #4242, Q3", "q3")
	f.Add("abc", "bcd")
	f.Add("The billing--Service was down", "billing service")
	f.Add("prebilling serviced", "billing service")
	f.Add("billing  x service", "billing service")
	f.Add("a b", "a b c")
	f.Fuzz(func(t *testing.T, s, n string) {
		if !isASCII(s) {
			return
		}
		w := words(fold(n))
		if len(w) == 0 {
			return
		}
		phrase := strings.Join(w, " ")
		folded, _ := analyze(s)
		if got, want := containsFold(s, phrase), strings.Contains(folded, phrase); got != want {
			t.Fatalf("containsFold(%q, %q) = %v; the folded words %q hold it: %v", s, phrase, got, folded, want)
		}
		// Random phrases are seldom in the text: a piece of its folded
		// words, where n's length says, always is.
		if folded == "" {
			return
		}
		from := len(n) % len(folded)
		piece := strings.Trim(folded[from:min(len(folded), from+1+len(n))], " ")
		if piece != "" && !containsFold(s, piece) {
			t.Fatalf("containsFold(%q, %q) = false; the folded words %q hold it", s, piece, folded)
		}
	})
}

// A word stems as Snowball stems it, cached or not, when more words than
// the cache holds push each other out of it.
func TestStem_SameWhateverTheCacheHolds(t *testing.T) {
	words := []string{"flights", "migrated", "auditors", "allergies", "generously"}
	for i := range 3 * len(stemSlots) {
		w := []byte("query")
		for n := i; n > 0; n /= 26 {
			w = append(w, byte('a'+n%26)) // letters only: words with digits are not cached
		}
		words = append(words, string(w))
	}
	for round := range 2 {
		for _, w := range words {
			want := cmp.Or(english.Stem(w, true), w)
			if got := stem(w); got != want {
				t.Fatalf("round %d: stem(%q) = %q, Snowball says %q", round, w, got, want)
			}
		}
	}
	held := 0
	for j := range stemSlots {
		if stemSlots[j].Load() != nil {
			held++
		}
	}
	if held < len(stemSlots)/2 {
		t.Errorf("the cache holds %d of %d words after %d were stemmed", held, len(stemSlots), len(words))
	}
}

// BenchmarkContainsFold times finding a phrase in facts' texts as they
// stand, as the phrase boost does for each strong candidate: among them a
// text full of the phrase's first letter in lower case and none in upper,
// where each try used to search the rest of the text for the capital.
//
//	go test -run X -bench ContainsFold ./daemon/search
func BenchmarkContainsFold(b *testing.B) {
	texts := []string{
		"Yara documented the billing service in London, ref 26174",
		"Marta approved the Q3 budget for the travel policy after the design review was rejected twice",
		strings.Repeat("the test that the team ran at the start of it, ", 8),
	}
	for _, phrase := range []string{"billing service", "travel policy", "the team wrote"} {
		b.Run(phrase, func(b *testing.B) {
			for range b.N {
				for _, s := range texts {
					containsFold(s, phrase)
				}
			}
		})
	}
}

// BenchmarkAnalyzeAll times analysing a batch of facts as a start reads
// them: ten thousand short ASCII facts.
func BenchmarkAnalyzeAll(b *testing.B) {
	names := strings.Fields("Alice Farid Marta Priya Omar Lena")
	things := []string{"the Postgres cluster", "the rooftop venue", "the Q3 budget", "the flight to Lisbon", "the vendor contract"}
	docs := make([]Doc, 10000)
	for i := range docs {
		docs[i].Text = names[i%len(names)] + " reviewed " + things[i%len(things)] + " in Berlin, ref " + strconv.Itoa(i)
	}
	for b.Loop() {
		analyzeAll(docs)
	}
}

// otherScripts are ten thousand facts as teams outside the English-speaking
// world write them: Chinese, Japanese, Korean, Russian and accented Latin.
func otherScripts() []Doc {
	texts := []string{"王伟在上海批准了第三季度预算，编号", "田中さんは来月大阪に転勤します、番号", "서울 사무실의 임대 계약은 12월에 끝납니다 번호",
		"Ольга отвечает за бюджет петербургского офиса, номер", "La réunion annuelle aura lieu à Lyon en novembre, réf"}
	docs := make([]Doc, 10000)
	for i := range docs {
		docs[i].Text = texts[i%len(texts)] + strconv.Itoa(i)
	}
	return docs
}

// BenchmarkFoldedOnly times what a start does for each fact not in ASCII
// whose terms a snapshot holds: its folded text, kept for phrases.
func BenchmarkFoldedOnly(b *testing.B) {
	docs := otherScripts()
	lengths := make([]int, len(docs))
	for b.Loop() {
		foldedOnly(docs, lengths)
	}
}

// BenchmarkAnalyzeAll_OtherScripts is BenchmarkAnalyzeAll for them.
func BenchmarkAnalyzeAll_OtherScripts(b *testing.B) {
	docs := otherScripts()
	for b.Loop() {
		analyzeAll(docs)
	}
}

// A batch's facts share the arrays their terms are in: each fact's terms
// are its own still, whether it is ASCII or not, on one processor or
// several, and a fact's terms grown do not reach the next fact's.
func TestAnalyzeAll_EachFactItsOwnTerms(t *testing.T) {
	texts := []string{"Booked the flight to Lisbon, ref 4242", "Café crème in São Paulo", "", "...",
		"Q3 budget APPROVED", strings.Repeat("supercalifragilistic", 30) + " end", "naïve résumé", "x"}
	for _, n := range []int{len(texts), 999, 1000, 2501} {
		docs := make([]Doc, n)
		for i := range docs {
			docs[i].Text = texts[i%len(texts)] + " " + strconv.Itoa(i%7)
		}
		got := analyzeAll(docs)
		for i := range got {
			got[i].terms = append(got[i].terms, "grown")
		}
		for i, d := range docs {
			want := analyzeDoc(d)
			if g := got[i]; !slices.Equal(g.terms[:len(g.terms)-1], want.terms) || g.length != want.length || g.folded != want.folded {
				t.Fatalf("%d facts, fact %d %q: %q (%d, %q), alone %q (%d, %q)", n, i, d.Text, g.terms, g.length, g.folded, want.terms, want.length, want.folded)
			}
		}
	}
}

// Words of scripts written without spaces are read in pairs of
// neighbouring characters; other words, and the pieces of a word in
// other scripts, whole; however the text was typed (composed or not).
func TestWords_PairsCJK(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"我们决定把年会放在东京举办", []string{"我", "我们", "们", "们决", "决", "决定", "定", "定把", "把", "把年", "年", "年会", "会", "会放", "放", "放在", "在", "在东", "东", "东京", "京", "京举", "举", "举办", "办"}},
		{"北京团队把Postgres升级到16版", []string{"北", "北京", "京", "京团", "团", "团队", "队", "队把", "把", "postgres", "升", "升级", "级", "级到", "到", "16", "版"}},
		{"李娜喜欢喝绿茶，不喝咖啡", []string{"李", "李娜", "娜", "娜喜", "喜", "喜欢", "欢", "欢喝", "喝", "喝绿", "绿", "绿茶", "茶", "不", "不喝", "喝", "喝咖", "咖", "咖啡", "啡"}},
		{"東", []string{"東"}},
		{"Q3の予算", []string{"q3", "の", "の予", "予", "予算", "算"}},
		{"アップグレードはPMの承認", []string{"ア", "アッ", "ッ", "ップ", "プ", "プグ", "グ", "グレ", "レ", "レー", "ー", "ード", "ド", "ドは", "は", "pm", "の", "の承", "承", "承認", "認"}},
		{"서울에서 회의가", []string{"서", "서울", "울", "울에", "에", "에서", "서", "회", "회의", "의", "의가", "가"}},
		{"\u1109\u1165\u110b\u116e\u11af", []string{"서", "서울", "울"}}, // 서울 decomposed (NFD)
		{"가\u0301\u11a8", []string{"각"}},                             // an accent between a syllable and its last letter
		{"Мы перенесли конференцию в Москве", []string{"мы", "перенесли", "конференцию", "в", "москве"}},
		{"Й\u0418\u0306 ёлка", []string{"йй", "елка"}},
		{"Café naïve", []string{"cafe", "naive"}},
		{"हिन्दी भाषा", []string{"हिन्दी", "भाषा"}}, // vowel signs and the virama are of the word
		{"ข้าว ขาว", []string{"ข้าว", "ขาว"}},       // rice is not white
		{"Step 1\ufe0f\u20e3 done", []string{"step", "1", "done"}},
		{"二〇二四年に〆切", []string{"二", "二〇", "〇", "〇二", "二", "二四", "四", "四年", "年", "年に", "に", "に〆", "〆", "〆切", "切"}},
		{"ｶﾞｽ代 ガス", []string{"ガ", "ガス", "ス", "ス代", "代", "ガ", "ガス", "ス"}},
	} {
		if got := words(fold(c.text)); !slices.Equal(got, c.want) {
			t.Errorf("words(fold(%q)) = %q, want %q", c.text, got, c.want)
		}
	}
}

// Terms match by prefix on their first five letters, not bytes:
// Cyrillic's stems of three letters ("кот", of "кота") are not the start
// of every word sharing them ("который"). CJK characters are terms of
// their own and match by none.
func TestPrefixOf(t *testing.T) {
	for _, c := range []struct {
		term, want string
	}{
		{"flight", "fligh"},
		{"fligh", "fligh"},
		{"flig", ""},
		{"postgres16", "postg"},
		{"кот", ""},
		{"котор", "котор"},
		{"конференц", "конфе"},
		{"东京", ""},
		{"东", ""},
	} {
		if got, _ := prefixOf(c.term); got != c.want {
			t.Errorf("prefixOf(%q) = %q, want %q", c.term, got, c.want)
		}
	}
}

// Russian words stem by Russian's rules: the cases of a noun, the forms
// of an adjective, meet.
func TestStem_Russian(t *testing.T) {
	for _, forms := range [][]string{
		{"москва", "москве", "москву"},
		{"конференция", "конференцию", "конференции"},
		{"красный", "красного", "красным"},
		{"сертификаты", "сертификатов"},
	} {
		for _, w := range forms[1:] {
			if stem(w) != stem(forms[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", w, stem(w), forms[0], stem(forms[0]))
			}
		}
	}
}

// A fact's folded text is read again as words (its surface words, see
// substrings.go): they must be the words its text gave, whatever the
// text, and folding again changes nothing.
func FuzzWords_SameFromFolded(f *testing.F) {
	for _, s := range []string{"北京团队把Postgres升级到16版", "서울에서 회의가", "Й\u0418\u0306 ёлка", "हिन्दी भाषा", "Café naïve", "a東b", "ー", "ｶﾀｶﾅ ＡＢＣ", "가\u0301\u11a8", "1\ufe0f\u20e3", "ㅅㅓㅇㅜㄹ", "王伟在上海批准了预算，编号１２３。　ＡＢＣ「京」", "ОЛЬГА Москве ЙОД", "コーヒー・ゝゞ々〆〇ヽヾ", "Alice\u2019s “flight” — booked\u00a0today", "Zoé a réservé l’hôtel à Genève — réf. 12…", "Jürgen hat die Überprüfung in Köln genehmigt", "Всё ещё ёлка № 5 — «Ёж»", "Ωμέγα ΆΛΦΑ ς", "İstanbul’da ŞİŞLİ ofisi ½ ™ €", "Tiếng Việt: Hà Nội", "か\u3099ン\u309a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		folded, ws := foldWords(s)
		if again := words(folded); !slices.Equal(again, ws) {
			t.Fatalf("words of %q: %q; of its folded text %q: %q", s, ws, folded, again)
		}
		// The folded text typed as a query finds the fact.
		if again := words(fold(folded)); !slices.Equal(again, ws) {
			t.Fatalf("words of %q: %q; of its folded text %q read as a query: %q", s, ws, folded, again)
		}
		if again := fold(fold(s)); again != fold(s) {
			t.Fatalf("fold(%q) = %q, folded again %q", s, fold(s), again)
		}
		if alone := foldedText(s); alone != folded {
			t.Fatalf("folded text of %q: %q, made alone %q", s, folded, alone)
		}
		if byTables := foldByTables(s); fold(s) != byTables && !isASCII(s) {
			t.Fatalf("fold(%q) = %q, by Unicode's tables %q", s, fold(s), byTables)
		}
	})
}

// Each rune fold writes without Unicode's tables (plainRune) is written
// as the tables have it, and is in a word exactly where notInWord says.
func TestPlainRune_AsTheTablesHaveIt(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r < 0x80 {
			if inWord(r) == notInWord(r) {
				t.Fatalf("inWord(%q) = %v, as notInWord", r, inWord(r))
			}
			continue
		}
		lower, ok := plainRune(r)
		if !ok {
			continue
		}
		n++
		if got, want := string(lower), foldByTables(string(r)); got != want {
			t.Fatalf("plainRune(%U) = %q, by the tables %q", r, got, want)
		}
		if inWord(r) == notInWord(r) {
			t.Fatalf("inWord(%U) = %v, as notInWord", r, inWord(r))
		}
	}
	if n < 30000 {
		t.Fatalf("%d runes are plain; the ranges lost some", n)
	}
}

// A rune foldedAlone knows folds the same beside any other rune a text
// folded without the tables may hold, on either side: each is tried
// beside ASCII, the letters and marks of its neighbourhood that join
// (where they are known), runes of plainRune and a sample of the others.
func TestFoldedAlone_SameBesideAnyPlainRune(t *testing.T) {
	alone := foldedAlone()
	var known []rune
	for r := rune(0x80); r < aloneEnd; r++ {
		if _, ok := alone.lookUp(r); ok {
			known = append(known, r)
		}
	}
	if len(known) < 8000 {
		t.Fatalf("foldedAlone knows %d runes; the rule lost some", len(known))
	}
	neighbours := []rune{'a', 'Z', '7', ' ', 'e', 'o', 'u', '中', 'ア', 'か', '가', '１', 'Ａ', '、'}
	for i := 0; i < len(known); i += len(known) / 31 {
		neighbours = append(neighbours, known[i])
	}
	for _, r := range []rune{'é', 'É', 'ё', 'Ё', 'й', 'ı', 'İ', 'ß', 'ẞ', 'ǅ', 'ŉ', 'Å', 'Ω', 'ΐ', 'ά', 'ᾳ', 'ו', 'ב', 'ا', 'آ', 'क', 'ष', 'ো', 'ก', 'ᄀ', 'ᅡ', 'ᆨ', '…', '№', '™', '½', '€', ' ', ' '} {
		if _, ok := alone.lookUp(r); ok {
			neighbours = append(neighbours, r)
		}
	}
	for _, r := range known {
		f, _ := alone.lookUp(r)
		for _, o := range neighbours {
			of := fold(string(o))
			if got, want := f+of, foldByTables(string(r)+string(o)); got != want {
				t.Fatalf("%U before %U: folded alone %q, together %q", r, o, got, want)
			}
			if got, want := of+f, foldByTables(string(o)+string(r)); got != want {
				t.Fatalf("%U after %U: folded alone %q, together %q", r, o, got, want)
			}
		}
	}
}

// No rune folded a rune at a time starts with anything Unicode's normal
// forms join to the rune before it: the first rune of its compatibility
// decomposition is a starter that is the second half of no composition
// (a Hangul vowel or final jamo among them). This is what norm's
// BoundaryBefore, on which foldedAlone rests, promises; a new version of
// Unicode's tables must keep it.
func TestPlainRunes_JoinNothingOnTheirLeft(t *testing.T) {
	seconds := map[rune]bool{}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if d := []rune(norm.NFD.String(string(r))); len(d) == 2 && norm.NFC.String(string(d)) == string(r) {
			seconds[d[1]] = true // r is a primary composite
		}
	}
	for r := rune(0x1161); r <= 0x11C2; r++ {
		seconds[r] = true // a syllable's vowel or final consonant
	}
	alone := foldedAlone()
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		_, plain := plainRune(r)
		if r < aloneEnd {
			_, plain = alone.lookUp(r)
		}
		if !plain {
			continue
		}
		first, _ := utf8.DecodeRuneInString(norm.NFKD.String(string(r)))
		if p := norm.NFD.PropertiesString(string(first)); p.CCC() != 0 || seconds[first] {
			t.Errorf("%U is folded alone, but its first rune %U (class %d) joins the rune before it", r, first, p.CCC())
		}
	}
}
