// Package mcpserver serves memd's tools over the Model Context Protocol,
// with the official Go SDK: remember, forget, recall, memory_context,
// trace, history and the notes tools. Each tool calls one memd.Service
// method — the daemon's own (behind the rules of access) for /mcp, or a
// client of the running daemon for `memd mcp` over stdio — so MCP holds no
// memory logic of its own. A failure is a tool error whose text starts with
// memd's error code ("anchor_ambiguous: edit 2 (insert_after): ...").
package mcpserver

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memd/memd"
)

// Options configure a server.
type Options struct {
	// Bind, when set, prepares each call's context (the daemon puts the
	// authenticated caller in it).
	Bind func(context.Context) context.Context
	// Own returns the caller's own shard, the default of tools that take
	// a shard; an admin has none and must name one.
	Own func(context.Context) (memd.ShardID, error)
	// ChatKind is the chat kind the connection declared, if any.
	ChatKind memd.ChatKind
	// Cache, when set, is shared by servers made one per request.
	Cache *mcp.SchemaCache
}

// New returns an MCP server whose tools call svc.
func New(svc memd.Service, opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "memd", Title: "memd: git-backed memory", Version: memd.Version},
		&mcp.ServerOptions{SchemaCache: opts.Cache, Instructions: instructions})
	t := &tools{svc: svc, opts: opts}
	add(s, t, "remember", rememberDesc, adds(true), onShard(t, t.remember))
	add(s, t, "forget", forgetDesc, destroys(true), onShard(t, t.forget))
	add(s, t, "edit_fact", editFactDesc, destroys(true), onShard(t, t.editFact))
	add(s, t, "recall", recallDesc, reads(), t.recall)
	add(s, t, "memory_context", contextDesc, reads(), t.memoryContext)
	add(s, t, "trace", traceDesc, reads(), onShard(t, t.trace))
	add(s, t, "history", historyDesc, reads(), onShard(t, t.history))
	add(s, t, "list_shards", listShardsDesc, reads(), t.listShards)
	add(s, t, "list_notes", listNotesDesc, reads(), onShard(t, t.listNotes))
	add(s, t, "read_note", readNoteDesc, reads(), onShard(t, t.readNote))
	add(s, t, "create_note", createNoteDesc, adds(false), onShard(t, t.createNote))
	add(s, t, "edit_note", editNoteDesc, destroys(false), onShard(t, t.editNote))
	add(s, t, "delete_note", deleteNoteDesc, destroys(false), onShard(t, t.deleteNote))
	return s
}

// Tool annotations, so that clients can let reads through unasked and ask
// before what undoes memory. memd's world is closed: its own shards.
func reads() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
}

func adds(idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

func destroys(idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

// enums are the closed sets tools take, by argument name.
var enums = map[string][]any{
	"tier":      {"profile", "log", "note", "episode"},
	"chat_kind": {"direct", "group", "routine", "api"},
	"op":        {"remember", "forget", "edit", "note-edit", "revert", "import", "merge", "reject"},
}

// schemas holds each tool's input and output schema by type, made once:
// /mcp makes a server per request, and the SDK caches what it resolves by
// the schema itself.
var schemas sync.Map // reflect.Type -> *jsonschema.Schema

// asText are the types memd writes as JSON strings (their MarshalText).
var asText = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[memd.Date]():    {Type: "string", Description: "a day, YYYY-MM-DD"},
	reflect.TypeFor[memd.ShardID](): {Type: "string", Description: "a shard: agent/<name>, user/<id> or project/<slug>"},
}

// schemaFor returns T's schema, made once and adjusted by adjust.
func schemaFor[T any](adjust func(*jsonschema.Schema)) *jsonschema.Schema {
	key := reflect.TypeFor[T]()
	if s, ok := schemas.Load(key); ok {
		return s.(*jsonschema.Schema)
	}
	schema, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: asText})
	if err != nil {
		panic(fmt.Sprintf("the schema of %v: %v", key, err))
	}
	adjust(schema)
	s, _ := schemas.LoadOrStore(key, schema)
	return s.(*jsonschema.Schema)
}

// inputSchema is In's schema as clients take it best: a closed set is an
// enum (where "" still means "not given", as models send it), and a list
// is an array, never the union with null Go's nil slice suggests (clients
// that read Gemini-style declarations refuse unions).
func inputSchema[In any]() *jsonschema.Schema {
	return schemaFor[In](func(schema *jsonschema.Schema) {
		for name, p := range schema.Properties {
			if i := slices.Index(p.Types, "null"); i >= 0 && len(p.Types) == 2 {
				p.Type, p.Types = p.Types[1-i], nil
			}
			if e, ok := enums[name]; ok {
				p.Enum = append([]any{""}, e...)
			}
		}
	})
}

// outputSchema is the schema of a tool's structured content, Out as memd
// writes it to JSON. The SDK checks every answer against it.
func outputSchema[Out any]() *jsonschema.Schema {
	return schemaFor[Out](func(s *jsonschema.Schema) {
		for _, p := range s.Properties {
			nullMaps(p)
		}
	})
}

// nullMaps lets every map below s be null, as a nil Go map is written:
// `memd mcp` passes on what it decoded from the daemon, where an absent
// map is nil.
func nullMaps(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" && s.AdditionalProperties != nil && len(s.Properties) == 0 {
		s.Type, s.Types = "", []string{"null", "object"}
	}
	for _, p := range s.Properties {
		nullMaps(p)
	}
	nullMaps(s.Items)
	nullMaps(s.AdditionalProperties)
}

const instructions = "memd is your long-term memory, kept as dated facts and Markdown notes in git. " +
	"Call memory_context at the start of a conversation, recall before answering from memory, " +
	"remember what is worth keeping (one fact per call, citing the message it came from), " +
	"and amend notes with edit_note using the revision read_note gave you."

type tools struct {
	svc  memd.Service
	opts Options
}

// add registers a tool whose handler returns the text for the model and
// the structured value for programs, or a memd error.
func add[In, Out any](s *mcp.Server, t *tools, name, desc string, ann *mcp.ToolAnnotations, h func(context.Context, In) (string, Out, error)) {
	tool := &mcp.Tool{Name: name, Description: desc, Annotations: ann, InputSchema: inputSchema[In](), OutputSchema: outputSchema[Out]()}
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if t.opts.Bind != nil {
			ctx = t.opts.Bind(ctx)
		}
		text, out, err := h(ctx, in)
		if err != nil {
			return nil, out, toolError(err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
}

// toolError turns a memd error into the text of a tool error: the code
// first, then the rule that refused (if any) and the message.
func toolError(err error) error {
	code := memd.ErrorCode(err)
	msg := memd.ErrorMessage(err)
	if rule := memd.ErrorRule(err); rule != "" {
		return fmt.Errorf("%s (rule %s): %s", code, rule, msg)
	}
	return fmt.Errorf("%s: %s", code, msg)
}

// declare records the chat kind a call declares on the caller in its
// context (a context without a caller, as with `memd mcp`, gets one that
// carries only the chat kind, which the client sends along).
func (t *tools) declare(ctx context.Context, kind string) (context.Context, error) {
	k, err := memd.ParseChatKind(kind)
	if err != nil {
		return ctx, err
	}
	c, _ := memd.CallerFrom(ctx)
	if c.ChatKind, err = memd.AgreedChatKind(memd.ChatKindFrom{Where: "the call", Kind: k}, memd.ChatKindFrom{Where: "the connection", Kind: t.opts.ChatKind}, memd.ChatKindFrom{Where: "the request", Kind: c.ChatKind}); err != nil {
		return ctx, err
	}
	return memd.NewContext(ctx, c), nil
}

// shardInput is the input of a tool that works on one shard.
type shardInput interface {
	shardArg() string
	chatKind() string
}

// onShard adapts a tool that works on one shard: the call's chat kind is
// declared and its shard resolved before h runs.
func onShard[In shardInput, Out any](t *tools, h func(context.Context, memd.ShardID, In) (string, Out, error)) func(context.Context, In) (string, Out, error) {
	return func(ctx context.Context, in In) (string, Out, error) {
		ctx, err := t.declare(ctx, in.chatKind())
		if err == nil {
			var s memd.ShardID
			if s, err = t.shard(ctx, in.shardArg()); err == nil {
				return h(ctx, s, in)
			}
		}
		var none Out
		return "", none, err
	}
}

// shard parses a tool's shard argument, defaulting to the caller's own.
func (t *tools) shard(ctx context.Context, s string) (memd.ShardID, error) {
	if s != "" {
		return memd.ParseShardID(s)
	}
	if t.opts.Own == nil {
		return memd.ShardID{}, memd.Errorf(memd.EINVALID, "name the shard: agent/<name>, user/<id> or project/<slug>")
	}
	return t.opts.Own(ctx)
}

// Source is where a change came from, as tools take it.
type Source struct {
	SourceMessages []string `json:"source_messages,omitempty" jsonschema:"IDs of the chat messages this comes from; name every one, they let people trace and undo it"`
	SourceChat     string   `json:"source_chat,omitempty" jsonschema:"ID of the chat this comes from"`
	ChatKind       string   `json:"chat_kind,omitempty" jsonschema:"the kind of chat you are in: direct (one person), group, routine (no person present) or api; user memory needs direct"`
}

func (s Source) chatKind() string { return s.ChatKind }

func (s Source) source(ctx context.Context) memd.Source {
	c, _ := memd.CallerFrom(ctx)
	return memd.Source{Messages: s.SourceMessages, Chat: s.SourceChat, ChatKind: c.ChatKind}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
