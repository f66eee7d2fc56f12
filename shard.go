package memd

import (
	"strings"
)

// Kind is whose memory a shard holds.
type Kind string

const (
	KindAgent   Kind = "agent"   // a bot's own memory
	KindUser    Kind = "user"    // what every bot should know about a person
	KindProject Kind = "project" // a project's decisions, for its member agents
)

// ShardID names one shard: "agent/<name>", "user/<id>" or "project/<slug>".
type ShardID struct {
	Kind Kind
	Name string
}

// AgentShard returns the shard of an agent's own memory.
func AgentShard(name string) ShardID { return ShardID{KindAgent, name} }

// UserShard returns the shard of a person's memory.
func UserShard(id string) ShardID { return ShardID{KindUser, id} }

// ProjectShard returns the shard of a project's memory.
func ProjectShard(slug string) ShardID { return ShardID{KindProject, slug} }

func (s ShardID) String() string { return string(s.Kind) + "/" + s.Name }

// IsZero reports whether s names no shard.
func (s ShardID) IsZero() bool { return s.Kind == "" && s.Name == "" }

// ParseShardID parses "agent/<name>", "user/<id>" or "project/<slug>".
func ParseShardID(s string) (ShardID, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok {
		return ShardID{}, Errorf(EINVALID, "shard %q: want agent/<name>, user/<id> or project/<slug>", s)
	}
	switch Kind(kind) {
	case KindAgent, KindUser, KindProject:
	default:
		return ShardID{}, Errorf(EINVALID, "shard %q: kind must be agent, user or project", s)
	}
	if err := ValidateName(name); err != nil {
		return ShardID{}, Errorf(EINVALID, "shard %q: %s", s, ErrorMessage(err))
	}
	return ShardID{Kind(kind), name}, nil
}

// MarshalText renders the shard as "kind/name", and no shard as "".
func (s ShardID) MarshalText() ([]byte, error) {
	if s.IsZero() {
		return nil, nil
	}
	return []byte(s.String()), nil
}

// UnmarshalText parses "kind/name"; "" is no shard.
func (s *ShardID) UnmarshalText(b []byte) error { return unmarshalText(s, b, ParseShardID) }

// ValidateName checks an agent name, user ID or project slug:
// lowercase [a-z0-9][a-z0-9._-]{0,63}. Names never become paths otherwise.
func ValidateName(name string) error {
	if name == "" {
		return Errorf(EINVALID, "name is empty")
	}
	if len(name) > 64 {
		return Errorf(EINVALID, "name %q is longer than 64 characters", Shorten(name, 70))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return Errorf(EINVALID, "name %q: use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit", Shorten(name, 70))
		}
	}
	return nil
}

// ValidateNotePath checks a note path: "/"-separated names ending in ".md",
// each segment a valid name.
func ValidateNotePath(p string) error {
	if !strings.HasSuffix(p, ".md") {
		return Errorf(EINVALID, "note path %q must end in .md", Shorten(p, 200))
	}
	if len(p) > 255 {
		return Errorf(EINVALID, "note path is longer than 255 characters")
	}
	for _, seg := range strings.Split(p, "/") {
		if err := ValidateName(seg); err != nil {
			return Errorf(EINVALID, "note path %q: %s", Shorten(p, 200), ErrorMessage(err))
		}
	}
	return nil
}

// Shorten cuts s to its first n characters (runes, so never inside one),
// marking the cut with "…", for use in a message.
func Shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
