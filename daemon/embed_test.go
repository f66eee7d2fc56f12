package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/memd/memd"
	"github.com/memd/memd/client"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/rerank"
)

// embeddingServer is a local OpenAI-compatible embeddings endpoint. It
// embeds a text as the concepts its words belong to, so "plane ticket" and
// "flight" land close together, and it records what it was asked.
type embeddingServer struct {
	*httptest.Server
	mu     sync.Mutex
	inputs [][]string
}

var concepts = map[string]int{
	"flight": 0, "flights": 0, "plane": 0, "ticket": 0, "fly": 0, "booked": 5,
	"hotel": 1, "rooms": 1, "room": 1, "accommodation": 1,
	"dinner": 2, "venue": 2, "restaurant": 2,
	"lisbon": 3, "porto": 4,
}

func newEmbeddingServer(t *testing.T) *embeddingServer {
	s := &embeddingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-embed" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.inputs = append(s.inputs, req.Input)
		s.mu.Unlock()
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		resp := struct {
			Object string         `json:"object"`
			Data   []item         `json:"data"`
			Model  string         `json:"model"`
			Usage  map[string]int `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
		for i, text := range req.Input {
			v := make([]float64, 8)
			for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
				if c, ok := concepts[w]; ok {
					v[c]++
				} else {
					v[7] += 0.1
				}
			}
			resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *embeddingServer) calls() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.inputs...)
}

func TestRecall_SemanticRerankingWithACache(t *testing.T) {
	es := newEmbeddingServer(t)
	dir := t.TempDir()
	d, err := daemon.Open(daemon.Config{DataDir: dir, Listen: "127.0.0.1:0", NoSync: true,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Embeddings: &rerank.Config{BaseURL: es.URL + "/v1", Model: "test-embed"}})
	if err != nil {
		t.Fatal(err)
	}
	go d.Serve()
	defer d.Shutdown(context.Background())
	token, _ := auth.ReadAdminToken(dir)
	admin := client.New(d.URL(), token)
	ctx := context.Background()
	a, _ := admin.AddAgent(ctx, "alice", nil)
	alice := client.New(d.URL(), a.Token)

	remember(t, alice, "agent/alice", "Booked a flight to Lisbon", memd.TierLog, memd.Source{})
	remember(t, alice, "agent/alice", "Booked a hotel in Lisbon", memd.TierLog, memd.Source{})
	remember(t, alice, "agent/alice", "Booked the dinner venue in Lisbon", memd.TierLog, memd.Source{})

	res, err := alice.Recall(ctx, memd.RecallQuery{Q: "plane ticket Lisbon"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 3 || res.Hits[0].Text != "Booked a flight to Lisbon" {
		t.Fatalf("re-ranked hits: %v", hitTexts(res))
	}
	res, _ = alice.Recall(ctx, memd.RecallQuery{Q: "accommodation in Lisbon"})
	if res.Hits[0].Text != "Booked a hotel in Lisbon" {
		t.Errorf("re-ranked hits: %v", hitTexts(res))
	}
	// Each fact was embedded once; later calls embed only the query.
	calls := es.calls()
	if len(calls) != 2 || len(calls[0]) != 4 || len(calls[1]) != 1 {
		t.Errorf("embedding requests: %v", calls)
	}
	st, _ := admin.Status(ctx)
	if st.Reranking != "test-embed" {
		t.Errorf("status reranking %q", st.Reranking)
	}

	// An endpoint that fails leaves recall working, lexically.
	es.Close()
	res, err = alice.Recall(ctx, memd.RecallQuery{Q: "Porto flight"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Text != "Booked a flight to Lisbon" {
		t.Errorf("recall with the endpoint down: %v %v", hitTexts(res), err)
	}
}
