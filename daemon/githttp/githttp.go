// Package githttp serves shards over git's smart HTTP protocol, so that
// `git clone`, `git fetch` and `git push` work against a running memd with
// the same tokens and rules of access as the API: every request opens its
// shard through memd.Service.Git, which access.Guard checks like any other
// call. Reading is git's own http-backend, memd authenticating and mapping
// the URL; pushes memd receives itself (see receive.go).
package githttp

import (
	"net/http"
	"strings"

	"github.com/memd/memd"
	"github.com/memd/memd/gitstore"
)

// Prefix is where shards are served: /git/<kind>/<name>.git.
const Prefix = "/git/"

// Handler serves shards under Prefix, opening each through svc (a guarded
// service). The caller must be in the request's context (see
// httpapi.Server.MountGit); errors are written by fail, in the API's
// format.
func Handler(svc memd.Service, fail func(http.ResponseWriter, error)) http.Handler {
	return &handler{svc: svc, fail: fail}
}

type handler struct {
	svc  memd.Service
	fail func(http.ResponseWriter, error)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, rest, err := parsePath(strings.TrimPrefix(r.URL.Path, Prefix))
	if err != nil {
		h.fail(w, err)
		return
	}
	push := rest == "git-receive-pack" || rest == "info/refs" && r.URL.Query().Get("service") == "git-receive-pack"
	if rest != "info/refs" && rest != "git-upload-pack" && rest != "HEAD" && !push {
		h.fail(w, memd.Errorf(memd.ENOTFOUND, "no %s in %s over git's smart HTTP", rest, id))
		return
	}
	repo, err := h.svc.Git(r.Context(), id, push)
	if err == nil {
		err = gitstore.CanServe()
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	if push {
		err = h.push(w, r, repo, rest)
	} else {
		err = h.fetch(w, r, repo, rest)
	}
	if err != nil {
		h.fail(w, err)
	}
}

// fetch answers git fetch and git clone.
func (h *handler) fetch(w http.ResponseWriter, r *http.Request, repo memd.GitRepo, rest string) error {
	sh, err := openShard(repo, false)
	if err != nil {
		return err
	}
	return sh.ServeFetch(w, r, rest, repo.Caller)
}

// push answers git push: the refs on offer, then the push itself. A shard
// memd lacks is offered as empty, and made when the push comes.
func (h *handler) push(w http.ResponseWriter, r *http.Request, repo memd.GitRepo, rest string) error {
	sh, err := openShard(repo, false)
	missing := memd.ErrorCode(err) == memd.ENOTFOUND
	if err != nil && !missing {
		return err
	}
	if rest == "info/refs" {
		var head gitstore.Hash
		if !missing {
			if head, err = sh.Head(); err != nil {
				return err
			}
		}
		return advertiseReceive(w, head)
	}
	if r.Method != http.MethodPost {
		return memd.Errorf(memd.EINVALID, "git-receive-pack takes POST")
	}
	if missing {
		if sh, err = openShard(repo, true); err != nil {
			return err
		}
	}
	return receive(w, r, sh, repo.Caller)
}

// openShard returns the store's shard behind a repo Service.Git opened.
func openShard(repo memd.GitRepo, create bool) (*gitstore.Shard, error) {
	v, err := repo.Open(create)
	if err != nil {
		return nil, err
	}
	sh, ok := v.(*gitstore.Shard)
	if !ok {
		return nil, memd.Errorf(memd.EINTERNAL, "shard %s is not a git repository here", repo.Shard)
	}
	return sh, nil
}

// parsePath splits "<kind>/<name>.git/<rest>" into a shard and the rest.
func parsePath(p string) (memd.ShardID, string, error) {
	kind, after, ok := strings.Cut(p, "/")
	name, rest, ok2 := strings.Cut(after, ".git/")
	if !ok || !ok2 {
		return memd.ShardID{}, "", memd.Errorf(memd.ENOTFOUND, "shards are served at /git/<kind>/<name>.git")
	}
	id, err := memd.ParseShardID(kind + "/" + name)
	if err != nil {
		return memd.ShardID{}, "", err
	}
	return id, rest, nil
}
