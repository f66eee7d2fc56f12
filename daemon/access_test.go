package daemon_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
)

// The rules of the README's "Who may do what", written out again for the test: an agent
// reads and writes its own shard, user memory only in a direct chat, and
// the projects it is a member of; an admin everything.
func wantAccess(role string, s memd.ShardID, kind memd.ChatKind) (ok bool, rule string) {
	member := map[string][]string{"alice": {"apollo"}, "bob": {"zeus"}}
	switch {
	case role == "admin":
		return true, ""
	case s.Kind == memd.KindAgent && s.Name == role:
		return true, ""
	case s.Kind == memd.KindAgent:
		return false, "agent-own-shard"
	case s.Kind == memd.KindUser && kind == memd.ChatDirect:
		return true, ""
	case s.Kind == memd.KindUser:
		return false, "user-memory-direct-chat"
	}
	for _, p := range member[role] {
		if p == s.Name {
			return true, ""
		}
	}
	return false, "project-member"
}

// Every (role × shard × chat kind × operation) cell: allowed calls are not
// refused, refused ones are 403 naming the rule that refused them.
func TestAccessMatrix(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	clients := map[string]*client.Client{"admin": e.admin, "alice": e.agent(t, "alice", "apollo"), "bob": e.agent(t, "bob", "zeus")}
	shards := []memd.ShardID{memd.AgentShard("alice"), memd.AgentShard("bob"), memd.UserShard("pat"), memd.ProjectShard("apollo"), memd.ProjectShard("zeus")}
	seed := map[memd.ShardID]memd.RememberResult{}
	for _, s := range shards {
		r, err := e.admin.Remember(ctx, memd.RememberRequest{Shard: s, Text: "Seed fact of " + s.String()})
		if err != nil {
			t.Fatal(err)
		}
		seed[s] = r
		if _, err := e.admin.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: "seed.md", Text: "# Seed\n"}); err != nil {
			t.Fatal(err)
		}
	}
	kinds := []memd.ChatKind{"", memd.ChatDirect, memd.ChatGroup, memd.ChatRoutine, memd.ChatAPI}
	type op struct {
		name string
		call func(c *client.Client, s memd.ShardID, n int) error
	}
	ops := []op{
		{"facts", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.Facts(ctx, memd.FactsQuery{Shard: s})
			return err
		}},
		{"trace", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.Trace(ctx, s, seed[s].Fact.ID)
			return err
		}},
		{"log", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.Log(ctx, memd.LogQuery{Shard: s})
			return err
		}},
		{"list notes", func(c *client.Client, s memd.ShardID, _ int) error { _, err := c.ListNotes(ctx, s); return err }},
		{"read note", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.ReadNote(ctx, s, "seed.md", "")
			return err
		}},
		{"remember", func(c *client.Client, s memd.ShardID, n int) error {
			_, err := c.Remember(ctx, memd.RememberRequest{Shard: s, Text: fmt.Sprintf("Matrix fact %d", n)})
			return err
		}},
		{"forget", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.Forget(ctx, memd.ForgetRequest{Shard: s, ID: "000000000000"})
			return err
		}},
		{"edit fact", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.EditFact(ctx, memd.EditFactRequest{Shard: s, ID: "000000000000", Text: "x"})
			return err
		}},
		{"create note", func(c *client.Client, s memd.ShardID, n int) error {
			_, err := c.CreateNote(ctx, memd.CreateNoteRequest{Shard: s, Path: fmt.Sprintf("m%d.md", n), Text: "x"})
			return err
		}},
		{"edit note", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.EditNote(ctx, memd.EditNoteRequest{Shard: s, Path: "seed.md", Edits: []memd.NoteEdit{{Op: "replace", Find: "Seed", Replace: "Seed"}}})
			return err
		}},
		{"delete note", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.DeleteNote(ctx, memd.DeleteNoteRequest{Shard: s, Path: "absent.md"})
			return err
		}},
		{"revert", func(c *client.Client, s memd.ShardID, _ int) error {
			_, err := c.Revert(ctx, memd.RevertRequest{Shard: s, Commit: seed[s].Commit, DryRun: true})
			return err
		}},
	}
	cells, refused := 0, 0
	n := 0
	for _, role := range []string{"admin", "alice", "bob"} {
		for _, s := range shards {
			for _, kind := range kinds {
				c := *clients[role]
				c.ChatKind = kind
				for _, o := range ops {
					n++
					cells++
					err := o.call(&c, s, n)
					ok, rule := wantAccess(role, s, kind)
					got := memd.ErrorCode(err)
					switch {
					case ok && got == memd.EFORBIDDEN:
						t.Errorf("%s %s %s (chat %q): refused, want allowed: %v", role, o.name, s, kind, err)
					case !ok && (got != memd.EFORBIDDEN || memd.ErrorRule(err) != rule):
						t.Errorf("%s %s %s (chat %q): %v (rule %q), want forbidden by %s", role, o.name, s, kind, err, memd.ErrorRule(err), rule)
					case !ok:
						refused++
					case got != "" && got != memd.ENOTFOUND && got != memd.ECONFLICT:
						t.Errorf("%s %s %s (chat %q): %v", role, o.name, s, kind, err)
					}
				}
			}
		}
	}
	t.Logf("access matrix: %d cells (3 roles × %d shards × %d chat kinds × %d operations), %d refused", cells, len(shards), len(kinds), len(ops), refused)
}
