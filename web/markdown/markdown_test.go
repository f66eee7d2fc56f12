package markdown_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/memd/memd/web/markdown"
)

func TestRenderMarkdown(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
		not       []string
	}{
		{"ordered list after a 1b. line", "1. first\n1b. an aside\n2. second\n3. third\n",
			[]string{"<ol>", "<li>first\n1b. an aside</li>", "<li>second</li>", "<li>third</li>"}, nil},
		{"a list starting at 2", "2. two\n3. three\n", []string{`<ol start="2">`}, nil},
		{"a table", "| host | port |\n| --- | ---: |\n| db | 5432 |\n",
			[]string{"<table>", "<th>host</th>", `<td align="right">5432</td>`}, []string{"| host"}},
		{"script and handlers", "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))",
			nil, []string{"<script", "onerror", "javascript:"}},
		{"links", "[docs](https://example.com/a)", []string{`href="https://example.com/a"`, `rel="nofollow noreferrer noopener"`, `target="_blank"`}, nil},
	}
	for _, c := range cases {
		out, err := markdown.Render([]byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: lacks %q:\n%s", c.name, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(string(out), n) {
				t.Errorf("%s: holds %q:\n%s", c.name, n, out)
			}
		}
	}
}

// unsafeHTML finds what could run script in rendered HTML: a script or
// frame tag, an event handler attribute, a javascript: URL.
var unsafeHTML = regexp.MustCompile(`(?i)<(script|iframe|object|embed)|<[^>]*\son[a-z]+\s*=|(href|src)\s*=\s*["']?\s*javascript:`)

func FuzzRender(f *testing.F) {
	f.Add("# t\n\n| a | b |\n|---|---|\n| <script>x</script> | [l](javascript:x) |\n")
	f.Add("1. a\n1b. b\n2. c\n")
	f.Fuzz(func(t *testing.T, src string) {
		out, err := markdown.Render([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if unsafeHTML.Match(out) {
			t.Fatalf("rendered %q to %q", src, out)
		}
	})
}

func TestRender_NoRelativeURLs(t *testing.T) {
	out, err := markdown.Render([]byte("[admin](/v1/agents) ![x](/v1/status) [ok](https://example.com)"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "/v1/") || !strings.Contains(string(out), "https://example.com") {
		t.Errorf("rendered: %s", out)
	}
}
