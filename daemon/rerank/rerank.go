// Package rerank re-ranks recall's lexical hits by the similarity of their
// embeddings to the query's, from any OpenAI-compatible embeddings endpoint
// (OpenAI, Ollama, vLLM, llama.cpp). A fact's embedding is cached by fact
// ID, so each text is embedded once. Without an endpoint memd never calls
// it and recall stays fully local.
package rerank

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/memd/memd/daemon/search"
)

// Config says where the embeddings come from.
type Config struct {
	BaseURL string        // e.g. https://api.openai.com/v1 or http://localhost:11434/v1
	APIKey  string        // may be empty for local servers
	Model   string        // e.g. text-embedding-3-small, nomic-embed-text
	Timeout time.Duration // per request; 10s when zero
	// Weight is the share of the final score that similarity decides
	// (0..1); 0.5 when zero.
	Weight float64
}

// Cache keeps embeddings by model and fact ID.
type Cache interface {
	Embedding(model, id string) ([]float32, bool)
	PutEmbeddings(model string, vecs map[string][]float32) error
}

// Reranker re-ranks hits by embedding similarity.
type Reranker struct {
	cfg    Config
	cache  Cache
	client openai.Client
}

// New returns a reranker for cfg, caching in cache.
func New(cfg Config, cache Cache) *Reranker {
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Weight == 0 {
		cfg.Weight = 0.5
	}
	client := openai.NewClient(
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithRequestTimeout(cfg.Timeout),
		option.WithMaxRetries(1),
	)
	return &Reranker{cfg: cfg, cache: cache, client: client}
}

// Rerank orders hits by a blend of their lexical score (scaled to the best
// hit's) and the cosine similarity of their embedding to the query's.
func (r *Reranker) Rerank(ctx context.Context, query string, hits []search.Hit) ([]search.Hit, error) {
	if len(hits) < 2 {
		return hits, nil
	}
	vecs := make(map[string][]float32, len(hits))
	var missing []string
	var missingIDs []string
	for _, h := range hits {
		if v, ok := r.cache.Embedding(r.cfg.Model, h.ID); ok {
			vecs[h.ID] = v
		} else if !slices.Contains(missingIDs, h.ID) {
			missing = append(missing, h.Text)
			missingIDs = append(missingIDs, h.ID)
		}
	}
	got, err := r.embed(ctx, append([]string{query}, missing...))
	if err != nil {
		return hits, err
	}
	q := got[0]
	fresh := make(map[string][]float32, len(missing))
	for i, id := range missingIDs {
		vecs[id] = got[i+1]
		fresh[id] = got[i+1]
	}
	if len(fresh) > 0 {
		if err := r.cache.PutEmbeddings(r.cfg.Model, fresh); err != nil {
			return hits, fmt.Errorf("cache embeddings: %w", err)
		}
	}
	best := hits[0].Score
	for _, h := range hits {
		best = math.Max(best, h.Score)
	}
	out := slices.Clone(hits)
	for i := range out {
		lex := out[i].Score / math.Max(best, 1e-9)
		semantic := r.cfg.Weight * cosine(q, vecs[out[i].ID])
		out[i].Score = (1-r.cfg.Weight)*lex + semantic
		if e := out[i].Explain; e != nil {
			// The lexical parts shrink as the lexical score did.
			e.Scale((1 - r.cfg.Weight) / math.Max(best, 1e-9))
			e.Semantic = semantic
		}
	}
	slices.SortStableFunc(out, func(a, b search.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out, nil
}

func (r *Reranker) embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := r.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: openai.EmbeddingModel(r.cfg.Model),
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
	})
	if err != nil {
		return nil, fmt.Errorf("embeddings from %s: %w", r.cfg.BaseURL, err)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings from %s: asked for %d, got %d", r.cfg.BaseURL, len(texts), len(resp.Data))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || int(d.Index) >= len(out) {
			return nil, fmt.Errorf("embeddings from %s: index %d out of range", r.cfg.BaseURL, d.Index)
		}
		v := make([]float32, len(d.Embedding))
		for i, f := range d.Embedding {
			v[i] = float32(f)
		}
		out[d.Index] = v
	}
	return out, nil
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
