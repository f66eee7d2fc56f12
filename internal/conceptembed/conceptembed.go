// Package conceptembed is an OpenAI-compatible embeddings endpoint for
// tests: it embeds a text as the concepts its words belong to, from a fixed
// table, plus a little of each other word (hashed), so "plane ticket" and
// "Booked a flight" land close while unrelated texts stay apart. It is the
// one fake tests use in place of a model; what it measures is memd's
// plumbing (candidates, fusion, storage), not a model's quality.
package conceptembed

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Concepts groups words of like meaning, one dimension per group. Written
// from everyday topics, not from any judged set.
var Concepts = [][]string{
	{"flight", "flights", "plane", "planes", "airplane", "ticket", "tickets", "fly", "flying", "airline", "airport"},
	{"dog", "dogs", "puppy", "puppies", "pet", "pets", "hound"},
	{"hotel", "hotels", "room", "rooms", "accommodation", "lodging", "stay"},
	{"dinner", "restaurant", "meal", "lunch", "venue", "food"},
	{"car", "cars", "sedan", "vehicle", "garage", "mechanic", "repair"},
	{"doctor", "gp", "physician", "checkup", "appointment", "clinic"},
	{"salary", "pay", "wage", "raise", "income", "increase"},
	{"apartment", "flat", "rent", "lease", "landlord"},
	{"wedding", "married", "marry", "anniversary", "spouse"},
	{"birthday", "present", "gift", "party"},
	{"lisbon"}, {"porto"},
}

// hashed is how many dimensions the words of no concept share.
const hashed = 32

// Dim is the dimensions of the vectors served.
var Dim = len(Concepts) + hashed

var conceptOf = func() map[string]int {
	m := map[string]int{}
	for i, ws := range Concepts {
		for _, w := range ws {
			m[w] = i
		}
	}
	return m
}()

// Embed returns a text's vector.
func Embed(text string) []float64 {
	v := make([]float64, Dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if c, ok := conceptOf[w]; ok {
			v[c]++
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[len(Concepts)+int(h.Sum32()%hashed)] += 0.3
	}
	return v
}

// Server serves /v1/embeddings for one model name and records what it
// was asked. Fail makes it answer 503 until called with false.
type Server struct {
	*httptest.Server
	Model string

	mu      sync.Mutex
	inputs  [][]string
	fail    bool
	refuse  string // a request with a text holding it is refused (400)
	garbage string // a text holding it gets a vector out of float32's range
	dims    int    // answer with this many dimensions, when set
	most    int    // texts a request at most (413 beyond), when set
}

// MostTexts makes the server refuse (413) a request of more than n texts,
// as text-embeddings-inference does past its batch size; 0: any number.
func (s *Server) MostTexts(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.most = n
}

// Dims makes the server answer with vectors of their first n dimensions,
// as the same model name behind another deployment might; 0: all.
func (s *Server) Dims(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dims = n
}

// Refuse makes the server refuse (400) any request with a text holding
// word, as a content filter would; Garbage makes it answer such a text
// with a value no float32 holds. "" turns either off.
func (s *Server) Refuse(word string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = word
}

// Garbage: see Refuse.
func (s *Server) Garbage(word string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.garbage = word
}

// New starts a server answering for model.
func New(model string) *Server {
	s := &Server{Model: model}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Fail makes the server refuse every request, or answer again.
func (s *Server) Fail(fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fail
}

// Calls returns the inputs of each request answered, in order.
func (s *Server) Calls() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.inputs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if req.Model != s.Model {
		http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusNotFound)
		return
	}
	s.mu.Lock()
	fail, refuse, garbage, dims := s.fail, s.refuse, s.garbage, s.dims
	if s.most > 0 && len(req.Input) > s.most {
		s.mu.Unlock()
		http.Error(w, `{"error":{"message":"batch size too large"}}`, http.StatusRequestEntityTooLarge)
		return
	}
	refused := refuse != "" && slices.ContainsFunc(req.Input, func(t string) bool { return strings.Contains(t, refuse) })
	if !fail && !refused {
		s.inputs = append(s.inputs, req.Input)
	}
	s.mu.Unlock()
	if fail {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		return
	}
	if refused {
		http.Error(w, `{"error":{"message":"the input was refused by the content filter"}}`, http.StatusBadRequest)
		return
	}
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
		v := Embed(text)
		if garbage != "" && strings.Contains(text, garbage) {
			v[0] = 1e39
		}
		if dims > 0 {
			v = v[:dims]
		}
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}
