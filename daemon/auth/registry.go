// Package auth keeps memd's agents and tokens. Tokens are random, shown
// once, and stored only as SHA-256 hashes; the admin token is also written
// to a file readable only by its owner, so the CLI on the same machine can
// find it.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memd/memd"
)

// Files in the data directory.
const (
	AdminTokenFile = "admin.token"
	agentsFile     = "agents.json"
)

// tokenPrefix marks memd tokens, so a leaked one is easy to recognise.
const tokenPrefix = "memd_"

// Registry is the store's agents and token hashes.
type Registry struct {
	dir string
	now func() time.Time

	mu   sync.RWMutex
	data registryFile
}

type registryFile struct {
	AdminTokenHash string        `json:"admin_token_sha256"`
	Agents         []agentRecord `json:"agents"`
}

type agentRecord struct {
	memd.Agent
	TokenHash string `json:"token_sha256"`
}

// Open loads the registry in dir, creating it and the admin token on first
// start. created reports whether a new admin token was made.
func Open(dir string, now func() time.Time) (r *Registry, created bool, err error) {
	if now == nil {
		now = time.Now
	}
	r = &Registry{dir: dir, now: now}
	b, err := os.ReadFile(filepath.Join(dir, agentsFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, false, fmt.Errorf("read agents: %w", err)
	default:
		if err := json.Unmarshal(b, &r.data); err != nil {
			return nil, false, fmt.Errorf("read agents: %s: %w", filepath.Join(dir, agentsFile), err)
		}
	}
	if r.data.AdminTokenHash == "" || !fileExists(filepath.Join(dir, AdminTokenFile)) {
		token := newToken()
		if err := writePrivate(filepath.Join(dir, AdminTokenFile), []byte(token+"\n")); err != nil {
			return nil, false, fmt.Errorf("write admin token: %w", err)
		}
		r.data.AdminTokenHash = hashToken(token)
		if err := r.save(); err != nil {
			return nil, false, err
		}
		created = true
	}
	return r, created, nil
}

// ReadAdminToken returns the admin token stored in a data directory.
func ReadAdminToken(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, AdminTokenFile))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return tokenPrefix + hex.EncodeToString(b)
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// Authenticate returns the caller a token names; EUNAUTHORIZED otherwise.
func (r *Registry) Authenticate(token string) (memd.Caller, error) {
	if token == "" {
		return memd.Caller{}, memd.Errorf(memd.EUNAUTHORIZED, "missing token: send Authorization: Bearer <token>")
	}
	h := hashToken(token)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if h == r.data.AdminTokenHash {
		return memd.Caller{Admin: true}, nil
	}
	for _, a := range r.data.Agents {
		if a.TokenHash == h {
			return memd.Caller{Agent: a.Name}, nil
		}
	}
	return memd.Caller{}, memd.Errorf(memd.EUNAUTHORIZED, "unknown token")
}

// reserved are the names an agent may not take: the authors of the
// admin's commits and of memd's own, which an agent of the name would
// pass for (and share the admin's kept chat texts, filed by author).
var reserved = map[string]bool{"admin": true, "memd": true}

// CanAdd says why Add would refuse an agent of this name and projects,
// writing nothing: a caller that makes the agent's shard first makes none
// for an agent it could not add.
func (r *Registry) CanAdd(name string, projects []string) error {
	if _, err := checkAgent(name, projects); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.absent(name)
}

// checkAgent checks an agent's name and projects, and returns the
// projects sorted, each once.
func checkAgent(name string, projects []string) ([]string, error) {
	if err := memd.ValidateName(name); err != nil {
		return nil, err
	}
	if reserved[name] {
		return nil, memd.Errorf(memd.EINVALID, "agent name %s is memd's own: commits and kept chat texts name the admin and memd so; choose another", name)
	}
	projects = slices.Clone(projects)
	for _, p := range projects {
		if err := memd.ValidateName(p); err != nil {
			return nil, memd.Errorf(memd.EINVALID, "project %s", memd.ErrorMessage(err))
		}
	}
	slices.Sort(projects)
	projects = slices.Compact(projects)
	if projects == nil {
		projects = []string{}
	}
	return projects, nil
}

// absent refuses a name an agent has. The caller holds r.mu.
func (r *Registry) absent(name string) error {
	if r.find(name) >= 0 {
		return memd.Errorf(memd.ECONFLICT, "agent %s exists; remove it first to issue a new token", name)
	}
	return nil
}

// Add registers an agent and returns it with its new token.
func (r *Registry) Add(name string, projects []string) (memd.NewAgent, error) {
	projects, err := checkAgent(name, projects)
	if err != nil {
		return memd.NewAgent{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.absent(name); err != nil {
		return memd.NewAgent{}, err
	}
	token := newToken()
	a := memd.Agent{Name: name, Projects: projects, Created: r.now().UTC().Truncate(time.Second)}
	r.data.Agents = append(r.data.Agents, agentRecord{Agent: a, TokenHash: hashToken(token)})
	if err := r.save(); err != nil {
		r.data.Agents = r.data.Agents[:len(r.data.Agents)-1]
		return memd.NewAgent{}, err
	}
	return memd.NewAgent{Agent: a, Token: token}, nil
}

// Remove deletes an agent, revoking its token.
func (r *Registry) Remove(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.find(name)
	if i < 0 {
		return memd.Errorf(memd.ENOTFOUND, "no agent %s", name)
	}
	old := r.data.Agents
	r.data.Agents = slices.Delete(slices.Clone(old), i, i+1)
	if err := r.save(); err != nil {
		r.data.Agents = old
		return err
	}
	return nil
}

// SetReview turns review mode on or off for an agent.
func (r *Registry) SetReview(name string, on bool) (memd.Agent, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.find(name)
	if i < 0 {
		return memd.Agent{}, memd.Errorf(memd.ENOTFOUND, "no agent %s", name)
	}
	was := r.data.Agents[i].Review
	r.data.Agents[i].Review = on
	if err := r.save(); err != nil {
		r.data.Agents[i].Review = was
		return memd.Agent{}, err
	}
	return r.data.Agents[i].Agent, nil
}

// InReview reports whether an agent is in review mode.
func (r *Registry) InReview(name string) bool {
	a, ok := r.Agent(name)
	return ok && a.Review
}

// List returns the agents, sorted by name.
func (r *Registry) List() []memd.Agent {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]memd.Agent, 0, len(r.data.Agents))
	for _, a := range r.data.Agents {
		out = append(out, a.Agent)
	}
	slices.SortFunc(out, func(a, b memd.Agent) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Agent returns one agent; ok is false if it is not registered.
func (r *Registry) Agent(name string) (memd.Agent, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if i := r.find(name); i >= 0 {
		return r.data.Agents[i].Agent, true
	}
	return memd.Agent{}, false
}

// IsMember reports whether an agent is a member of a project.
func (r *Registry) IsMember(agent, project string) bool {
	a, ok := r.Agent(agent)
	return ok && slices.Contains(a.Projects, project)
}

// Projects lists the projects an agent is a member of.
func (r *Registry) Projects(agent string) []string {
	a, _ := r.Agent(agent)
	return a.Projects
}

func (r *Registry) find(name string) int {
	return slices.IndexFunc(r.data.Agents, func(a agentRecord) bool { return a.Name == name })
}

func (r *Registry) save() error {
	b, err := json.MarshalIndent(r.data, "", "  ")
	if err != nil {
		return err
	}
	if err := writePrivate(filepath.Join(r.dir, agentsFile), append(b, '\n')); err != nil {
		return fmt.Errorf("save agents: %w", err)
	}
	return nil
}

// writePrivate writes a file readable only by its owner, atomically.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	// One err throughout: a failed write must stop the rename, or a
	// short file would replace the good one.
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
