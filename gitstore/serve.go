package gitstore

import (
	"net/http"
	"net/http/cgi"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/memd/memd"
)

// gitPath is the git CLI, looked up once.
var gitPath = sync.OnceValues(func() (string, error) { return exec.LookPath("git") })

// ServeFetch answers a request of git's smart HTTP protocol that reads the
// shard (info/refs for a fetch, git-upload-pack, HEAD) with git's own
// http-backend; rest is the request's path after the repository's, and
// user who asks, as git's hooks and logs see it. Whether they may read the
// shard is the caller's to check first.
func (sh *Shard) ServeFetch(w http.ResponseWriter, r *http.Request, rest, user string) error {
	if err := CanServe(); err != nil {
		return err
	}
	git, _ := gitPath()
	root := filepath.Dir(filepath.Dir(sh.dir)) // the shards directory: <kind>/<name>/.git under it
	backend := &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Dir:  sh.dir,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER=" + user,
		},
		InheritEnv: []string{"PATH", "HOME"},
	}
	// http-backend finds the repository from the path.
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + string(sh.id.Kind) + "/" + sh.id.Name + "/" + rest
	backend.ServeHTTP(w, r2)
	return nil
}

// CanServe reports why shards cannot be served over git's smart HTTP
// protocol here (the git CLI is missing), or nil.
func CanServe() error {
	if _, err := gitPath(); err != nil {
		return memd.Errorf(memd.EUNAVAILABLE, "serving shards over git needs the git CLI: %v", err)
	}
	return nil
}
