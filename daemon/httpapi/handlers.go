package httpapi

import (
	"net/http"
	"strings"

	"github.com/memd/memd"
)

// rememberBody is the body of POST /v1/shards/{shard}/facts.
type rememberBody struct {
	Text   string      `json:"text"`
	Tier   memd.Tier   `json:"tier,omitempty"`
	Date   memd.Date   `json:"date,omitzero"`
	Source memd.Source `json:"source,omitzero"`
	Create bool        `json:"create,omitempty"`
}

func (s *Server) remember(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	var b rememberBody
	if err := decode(w, r, &b); err != nil {
		return err
	}
	res, err := s.svc.Remember(r.Context(), memd.RememberRequest{Shard: id, Text: b.Text, Tier: b.Tier, Date: b.Date, Source: b.Source, Create: b.Create})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Existing {
		status = http.StatusOK
	}
	writeJSON(w, status, res)
	return nil
}

func (s *Server) forget(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	src := memd.Source{Messages: q["message"], Chat: q.Get("chat")}
	res, err := s.svc.Forget(r.Context(), memd.ForgetRequest{Shard: id, ID: r.PathValue("id"), Source: src})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// editFactBody is the body of PATCH /v1/shards/{shard}/facts/{id}.
type editFactBody struct {
	Text   string      `json:"text"`
	Source memd.Source `json:"source,omitzero"`
}

func (s *Server) editFact(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	var b editFactBody
	if err := decode(w, r, &b); err != nil {
		return err
	}
	res, err := s.svc.EditFact(r.Context(), memd.EditFactRequest{Shard: id, ID: r.PathValue("id"), Text: b.Text, Source: b.Source})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) facts(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	q := memd.FactsQuery{Shard: id, Tier: memd.Tier(v.Get("tier")), At: v.Get("at"), Text: v.Get("q"),
		LearnedBy: v.Get("learned_by"), Model: v.Get("model"), Agent: v.Get("agent"), Sort: v.Get("sort")}
	if q.From, err = queryDate(r, "from"); err != nil {
		return err
	}
	if q.To, err = queryDate(r, "to"); err != nil {
		return err
	}
	if q.Offset, err = queryInt(r, "offset"); err != nil {
		return err
	}
	if q.Limit, err = queryInt(r, "limit"); err != nil {
		return err
	}
	if q.Origins, err = queryBool(r, "origins"); err != nil {
		return err
	}
	list, err := s.svc.Facts(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) trace(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	tr, err := s.svc.Trace(r.Context(), id, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tr)
	return nil
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	id, err := shardOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	lq := memd.LogQuery{Shard: id, Message: q.Get("message"), Agent: q.Get("agent"), Op: q.Get("op")}
	if lq.Limit, err = queryInt(r, "limit"); err != nil {
		return err
	}
	if lq.Offset, err = queryInt(r, "offset"); err != nil {
		return err
	}
	commits, err := s.svc.Log(r.Context(), lq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"commits": commits})
	return nil
}

func (s *Server) shards(w http.ResponseWriter, r *http.Request) error {
	list, err := s.svc.Shards(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"shards": list})
	return nil
}

func (s *Server) revert(w http.ResponseWriter, r *http.Request) error {
	var req memd.RevertRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	res, err := s.svc.Revert(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) learningStats(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	q := memd.LearningQuery{Agent: v.Get("agent"), Model: v.Get("model"), Prompt: v.Get("prompt")}
	var err error
	if q.From, err = queryDate(r, "from"); err != nil {
		return err
	}
	if q.To, err = queryDate(r, "to"); err != nil {
		return err
	}
	res, err := s.svc.LearningStats(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) growth(w http.ResponseWriter, r *http.Request) error {
	var q memd.GrowthQuery
	if v := r.URL.Query().Get("shard"); v != "" {
		id, err := memd.ParseShardID(v)
		if err != nil {
			return err
		}
		q.Shard = id
	}
	res, err := s.svc.Growth(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) purgeMessage(w http.ResponseWriter, r *http.Request) error {
	res, err := s.svc.PurgeMessage(r.Context(), memd.PurgeRequest{Message: r.PathValue("id"), Chat: r.URL.Query().Get("chat")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

type addAgentBody struct {
	Name     string   `json:"name"`
	Projects []string `json:"projects,omitempty"`
}

func (s *Server) addAgent(w http.ResponseWriter, r *http.Request) error {
	var b addAgentBody
	if err := decode(w, r, &b); err != nil {
		return err
	}
	a, err := s.svc.AddAgent(r.Context(), b.Name, b.Projects)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

func (s *Server) setReview(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		On *bool `json:"on"`
	}
	if err := decode(w, r, &b); err != nil {
		return err
	}
	if b.On == nil {
		return memd.Errorf(memd.EINVALID, `want {"on": true} or {"on": false}`)
	}
	a, err := s.svc.SetReview(r.Context(), r.PathValue("name"), *b.On)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) proposals(w http.ResponseWriter, r *http.Request) error {
	var shard memd.ShardID
	if v := r.URL.Query().Get("shard"); v != "" {
		id, err := memd.ParseShardID(v)
		if err != nil {
			return err
		}
		shard = id
	}
	list, err := s.svc.Proposals(r.Context(), shard)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"proposals": list})
	return nil
}

func (s *Server) review(w http.ResponseWriter, r *http.Request) error {
	var req memd.ReviewRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	res, err := s.svc.Review(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) agents(w http.ResponseWriter, r *http.Request) error {
	list, err := s.svc.Agents(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": list})
	return nil
}

func (s *Server) removeAgent(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RemoveAgent(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	st, err := s.svc.Status(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) remotes(w http.ResponseWriter, r *http.Request) error {
	list, err := s.svc.Remotes(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"remotes": list})
	return nil
}

func (s *Server) syncRemotes(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Shards []memd.ShardID `json:"shards"`
	}
	if r.ContentLength != 0 {
		if err := decode(w, r, &b); err != nil {
			return err
		}
	}
	list, err := s.svc.SyncRemotes(r.Context(), b.Shards)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"remotes": list})
	return nil
}

// list reads a comma-separated or repeated query parameter.
func list(r *http.Request, key string) []string {
	var out []string
	for _, v := range r.URL.Query()[key] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func (s *Server) recall(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rq := memd.RecallQuery{Q: q.Get("q"), Agent: q.Get("agent"), User: q.Get("user"), Projects: list(r, "projects"), At: q.Get("at")}
	var err error
	if rq.K, err = queryInt(r, "k"); err != nil {
		return err
	}
	if rq.Explain, err = queryBool(r, "explain"); err != nil {
		return err
	}
	if rq.IncludeProposed, err = queryBool(r, "include_proposed"); err != nil {
		return err
	}
	res, err := s.svc.Recall(r.Context(), rq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) context(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	cq := memd.ContextQuery{Agent: q.Get("agent"), User: q.Get("user"), Projects: list(r, "projects"), At: q.Get("at"), Since: q.Get("since")}
	var err error
	if cq.IncludeProposed, err = queryBool(r, "include_proposed"); err != nil {
		return err
	}
	res, err := s.svc.Context(r.Context(), cq)
	if err != nil {
		return err
	}
	switch q.Get("format") {
	case "json":
		writeJSON(w, http.StatusOK, res)
	case "", "markdown":
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("Memd-Stamp", res.Stamp)
		for _, sk := range res.Skipped {
			w.Header().Add("Memd-Skipped", sk.Shard.String()+"; rule="+sk.Rule)
		}
		w.Write([]byte(res.Markdown))
	default:
		return memd.Errorf(memd.EINVALID, "format must be markdown or json")
	}
	return nil
}

func (s *Server) learn(w http.ResponseWriter, r *http.Request) error {
	var ex memd.Exchange
	if err := decode(w, r, &ex); err != nil {
		return err
	}
	st, err := s.svc.Learn(r.Context(), ex)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, st)
	return nil
}

func (s *Server) synthesize(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Agent string `json:"agent"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	st, err := s.svc.Synthesize(r.Context(), req.Agent)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, st)
	return nil
}

func (s *Server) exchanges(w http.ResponseWriter, r *http.Request) error {
	list, err := s.svc.Exchanges(r.Context(), r.URL.Query().Get("state"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"exchanges": list})
	return nil
}

func (s *Server) retryExchange(w http.ResponseWriter, r *http.Request) error {
	st, err := s.svc.RetryExchange(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, st)
	return nil
}
