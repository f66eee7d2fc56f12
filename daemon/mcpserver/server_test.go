package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/memd/memd"
)

// /mcp builds a server per request: each tool's schema must be the same
// object every time, or the SDK's schema cache, keyed by it, grows with
// every request.
func TestInputSchema_MadeOnce(t *testing.T) {
	if a, b := inputSchema[RecallInput](), inputSchema[RecallInput](); a != b {
		t.Error("the recall tool's schema was made twice")
	}
	if s := inputSchema[RememberInput](); s.Properties["chat_kind"].Enum[0] != "" {
		t.Errorf("chat_kind's enum does not take an empty string: %v", s.Properties["chat_kind"].Enum)
	}
}

// An answer with nothing in it (nil lists and maps, as `memd mcp` decodes
// an empty answer from the daemon) still fits its tool's output schema:
// the SDK refuses a call whose answer does not.
func TestOutputSchema_TakesEmptyAnswers(t *testing.T) {
	for name, check := range map[string]func() error{
		"remember":       zeroFits[memd.RememberResult],
		"forget":         zeroFits[memd.ForgetResult],
		"edit_fact":      zeroFits[memd.EditFactResult],
		"recall":         zeroFits[memd.RecallResult],
		"memory_context": zeroFits[memd.MemoryContext],
		"trace":          zeroFits[memd.Trace],
		"history":        zeroFits[HistoryOutput],
		"list_shards":    zeroFits[ListShardsOutput],
		"list_notes":     zeroFits[ListNotesOutput],
		"read_note":      zeroFits[memd.Note],
		"notes":          zeroFits[memd.NoteResult],
	} {
		if err := check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func zeroFits[Out any]() error {
	resolved, err := outputSchema[Out]().Resolve(nil)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(*new(Out))
	var v any
	json.Unmarshal(b, &v)
	return resolved.Validate(v)
}
