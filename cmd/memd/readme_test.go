package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's walkthrough, run from the README's own text: every command
// of every block in order, as a person pastes them into a shell, each
// exiting 0 and printing something (and nothing "found" empty).
func TestREADME_Walkthrough(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "## A walkthrough")
	if start < 0 {
		t.Fatal("the README has no walkthrough")
	}
	section := text[start:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) < 4 || !strings.Contains(blocks[0][1], "./memd serve") {
		t.Fatalf("the walkthrough's first block does not start memd serve: %q", blocks)
	}

	// memd serve as the first block says, but on a free port, which the
	// commands after it find in MEMD_ADDR.
	url, home := docDaemon(t)
	work := t.TempDir()
	if err := os.Symlink(memdBin, filepath.Join(work, "memd")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "MEMD_ADDR="+url,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_PAGER=cat", "PAGER=cat")

	dir, prev := work, work
	for _, b := range blocks[1:] {
		for _, cmd := range strings.Split(strings.ReplaceAll(b[1], "\\\n", " "), "\n") {
			cmd = strings.TrimSpace(cmd)
			switch {
			case cmd == "" || strings.HasPrefix(cmd, "#"):
				continue
			case cmd == "cd -":
				dir, prev = prev, dir
				continue
			case strings.HasPrefix(cmd, "cd "):
				dir, prev = strings.Replace(strings.TrimPrefix(cmd, "cd "), "~", home, 1), dir
				continue
			}
			c := exec.Command("bash", "-c", cmd)
			c.Dir, c.Env = dir, env
			got, err := c.CombinedOutput()
			if err != nil || len(strings.TrimSpace(string(got))) == 0 || strings.Contains(string(got), "nothing found") {
				t.Errorf("%s\n  in %s: %v\n%s", cmd, dir, err, got)
			}
		}
	}
}
