package memd_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
	"unicode"
)

// The rules of docs/architecture.md, "What may never import what", checked
// on the imports `go list` reports for every package of the module.

const module = "github.com/memd/memd"

// importRule forbids packages matching who to import what, except where
// exempt says.
type importRule struct {
	rule   string
	who    func(pkg string) bool
	what   func(imp string) bool
	exempt func(pkg string) bool
}

// under matches packages (module-relative; "." is the root package alone)
// and every package below them.
func under(dirs ...string) func(string) bool {
	return func(p string) bool {
		for _, d := range dirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
}

func every(string) bool { return true }
func none(string) bool  { return false }

// ours reports whether imp is one of memd's packages.
func ours(imp string) bool { return imp == module || strings.HasPrefix(imp, module+"/") }

func rel(imp string) string {
	if imp == module {
		return "."
	}
	return strings.TrimPrefix(imp, module+"/")
}

var benches = under("internal/writebench", "internal/readbench", "internal/loadbench", "internal/scalebench")

var importRules = []importRule{
	{"1. only gitstore imports go-git", every,
		func(imp string) bool { return strings.HasPrefix(imp, "github.com/go-git/") }, under("gitstore")},
	{"2. only gitstore runs programs", every,
		func(imp string) bool { return imp == "os/exec" },
		func(p string) bool { return under("gitstore", "internal/memdtest")(p) || benches(p) }},
	{"3. the root package imports nothing of memd's", under("."),
		func(imp string) bool { return ours(imp) }, none},
	{"4. gitstore imports nothing of memd's above it", under("gitstore"),
		func(imp string) bool { return ours(imp) && !under(".", "gitstore")(rel(imp)) }, none},
	{"5. provenance imports only the root package and gitstore", under("provenance"),
		func(imp string) bool { return ours(imp) && rel(imp) != "." && !under("gitstore")(rel(imp)) }, none},
	{"6. the surfaces speak memd.Service alone", under("client", "daemon/httpapi", "daemon/mcpserver", "daemon/access", "web"),
		func(imp string) bool { return ours(imp) && rel(imp) != "." && !under("web")(rel(imp)) }, none},
	{"7. the learner never imports the daemon", under("learn"),
		func(imp string) bool { return ours(imp) && under("daemon")(rel(imp)) }, none},
	{"8. only cmd/memd imports the benchmarks", every,
		func(imp string) bool { return ours(imp) && benches(rel(imp)) },
		func(p string) bool { return p == "cmd/memd" || benches(p) }},
}

func TestArchitecture_NoForbiddenImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := rel(f[0])
		checked++
		for _, imp := range f[1:] {
			for _, r := range importRules {
				if r.who(pkg) && r.what(imp) && !r.exempt(pkg) {
					t.Errorf("%s imports %s: breaks rule %s (docs/architecture.md)", pkg, imp, r.rule)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("go list reported %d packages; the check saw too little to mean anything", checked)
	}
}

// TestReadme_LayoutNamesEveryPackage keeps the README's layout whole: each
// package of the module is named there, by its folder's name at least.
func TestReadme_LayoutNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "### Layout\n\n```\n")
	layout, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatal("README.md has no layout block under \"### Layout\"")
	}
	named := map[string]bool{}
	for _, w := range strings.FieldsFunc(layout, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		named[w] = true
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if p := rel(pkg); p != "." && !named[path.Base(p)] {
			t.Errorf("the README's layout does not name package %s", p)
		}
	}
}
