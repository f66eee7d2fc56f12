package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"

	"github.com/memd/memd"
)

// Remotes. The git CLI does the transport, so a remote is anything git
// reaches: a bare repository's path, git://, http(s):// or ssh. What git
// answers is read from its machine-readable output and exit codes, never
// from the words it prints for people.

// ErrRemoteEmpty is a fetch from a remote that has no main branch yet.
var ErrRemoteEmpty = errors.New("the remote has no main branch")

// ErrPushRejected is a push the remote refused because it has commits the
// push lacks: fetch, integrate and push again.
var ErrPushRejected = errors.New("the remote has commits this push lacks")

// remoteTimeout bounds one git fetch, push or ls-remote.
const remoteTimeout = 2 * time.Minute

// remoteConfig is the remotes' URLs in a shard's .git/config as last
// parsed, with the file's stat data then.
type remoteConfig struct {
	modTime time.Time
	size    int64
	urls    map[string]string // remote name -> its first URL
}

// RemoteURL returns the first URL of the named remote in a shard's git
// config ("" if there is none), parsing the file again only when it
// changed. The shard need not be open.
func (s *Store) RemoteURL(id memd.ShardID, name string) (string, error) {
	path := filepath.Join(s.ShardDir(id), ".git", "config")
	fi, err := os.Stat(path)
	if err != nil {
		return "", nil
	}
	s.configMu.Lock()
	defer s.configMu.Unlock()
	if c, ok := s.configs[id]; ok && c.modTime.Equal(fi.ModTime()) && c.size == fi.Size() {
		return c.urls[name], nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil
	}
	cfg, err := config.ReadConfig(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("shard %s: read .git/config: %w", id, err)
	}
	c := remoteConfig{modTime: fi.ModTime(), size: fi.Size(), urls: make(map[string]string, len(cfg.Remotes))}
	for n, r := range cfg.Remotes {
		if len(r.URLs) > 0 {
			c.urls[n] = r.URLs[0]
		}
	}
	if s.configs == nil {
		s.configs = make(map[memd.ShardID]remoteConfig)
	}
	s.configs[id] = c
	return c.urls[name], nil
}

// Fetch fetches main from the remote at url into the ref named into, and
// returns the commit it names; ErrRemoteEmpty when the remote has no main.
// A remote that is a path on this machine and does not exist yet is made,
// as an empty bare repository.
func (sh *Shard) Fetch(ctx context.Context, url, into string) (Hash, error) {
	if err := sh.errIfClosed(); err != nil {
		return Hash{}, err
	}
	if err := prepareLocal(ctx, url); err != nil {
		return Hash{}, err
	}
	// Objects git's own checks refuse (a .gitmodules that would break
	// every clone's fetch, a malformed tree) never enter the shard. What
	// else another daemon's main holds, its people's commits among them,
	// is taken as its daemon took it: refusing it here would stop the two
	// from ever syncing again. Integrate checks what main will hold.
	if _, err := runGit(ctx, sh.dir, "-c", "fetch.fsckObjects=true", "fetch", "--no-tags", "--quiet", url, "+refs/heads/main:"+into); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Hash{}, err // unreachable: asking again would wait as long again
		}
		// Asked where the fetch ran: a relative URL, and the shard's own
		// git config, mean what they meant to it.
		if has, lerr := RemoteHasMain(ctx, sh.dir, url); lerr == nil && !has {
			return Hash{}, ErrRemoteEmpty
		}
		return Hash{}, err
	}
	return sh.Ref(into)
}

// Push sets the remote's main to commit; ErrPushRejected when the remote
// has commits that commit lacks.
func (sh *Shard) Push(ctx context.Context, url string, commit Hash) error {
	if err := prepareLocal(ctx, url); err != nil {
		return err
	}
	out, err := runGit(ctx, sh.dir, "push", "--porcelain", url, commit.String()+":refs/heads/main")
	if err != nil && pushRejected(out) {
		return fmt.Errorf("%w: %v", ErrPushRejected, err)
	}
	return err
}

// pushRejected reads git push --porcelain's report: a ref line flagged "!"
// whose summary is "[rejected]" is a push the remote's history refused
// (fetch first, or not a fast-forward), rather than a hook or a failure;
// so is "[remote rejected] (failed to update ref)", the remote's main
// moved by another push between the remote's check and its update
// ("cannot lock ref … is at … but expected …").
func pushRejected(out string) bool {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) >= 3 && f[0] == "!" && (strings.HasPrefix(f[2], "[rejected]") || f[2] == "[remote rejected] (failed to update ref)") {
			return true
		}
	}
	return false
}

// RemoteHasMain reports whether the remote at url, as git run in dir
// reaches it, has a main branch.
func RemoteHasMain(ctx context.Context, dir, url string) (bool, error) {
	_, err := runGit(ctx, dir, "ls-remote", "--exit-code", url, "refs/heads/main")
	if exit, ok := errors.AsType[*exec.ExitError](err); ok && exit.ExitCode() == 2 {
		return false, nil // git's exit code for "no such ref"
	}
	return err == nil, err
}

// runGit runs a git command in dir with no prompts and no housekeeping of
// its own (memd repacks shards itself), returning its output. The error
// wraps git's exit status and carries its output on one line.
func runGit(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	// Objects fetched are synced by git itself: memd acknowledges nothing
	// until main moves, but then the objects must be on disk.
	full := append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "fetch.writeCommitGraph=false", "-c", "core.fsync=objects"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	if os.Getenv("GIT_SSH_COMMAND") == "" {
		cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return string(out), fmt.Errorf("git %s: no answer in %v: %w", args[0], remoteTimeout, ctx.Err())
	}
	if err != nil {
		return string(out), fmt.Errorf("git %s: %w: %s", args[0], err, strings.Join(strings.Fields(string(out)), " "))
	}
	return string(out), nil
}

// prepareLocal makes a remote that is a path on this machine, as an empty
// bare repository, the first time memd pushes to or fetches from it. It
// is made beside the path and renamed into place, so that two daemons
// making it at once (sharing the remote) do not half-make it: the second
// rename fails, and the first's repository serves both.
func prepareLocal(ctx context.Context, url string) error {
	if !filepath.IsAbs(url) {
		return nil
	}
	if _, err := os.Stat(url); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(url), 0o755); err != nil {
		return fmt.Errorf("create the bare repository %s: %w", url, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(url), "."+filepath.Base(url)+".new-")
	if err != nil {
		return fmt.Errorf("create the bare repository %s: %w", url, err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	cmd := exec.CommandContext(ctx, "git", "init", "--quiet", "--bare", "--initial-branch=main", tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("create the bare repository %s: %w: %s", url, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp, url); err != nil {
		if _, serr := os.Stat(url); serr == nil {
			return nil // another made it meanwhile
		}
		return fmt.Errorf("create the bare repository %s: %w", url, err)
	}
	return nil
}
