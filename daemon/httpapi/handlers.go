package httpapi

import (
	"net/http"

	"github.com/memd/memd"
)

// The endpoints below answer one JSON value each; replies writes it and
// inShard reads the shard of the /v1/shards/{kind}/{name} paths. The few
// that answer otherwise (remember, context, the feed, removing an agent)
// write their answers themselves.

// rememberBody is the body of POST /v1/shards/{shard}/facts.
type rememberBody struct {
	Text   string      `json:"text"`
	Tier   memd.Tier   `json:"tier,omitempty"`
	Date   memd.Date   `json:"date,omitzero"`
	Source memd.Source `json:"source,omitzero"`
	Create bool        `json:"create,omitempty"`
}

// remember answers 201 for a new fact and 200 for one memory already held.
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

func (s *Server) forget(_ http.ResponseWriter, r *http.Request, id memd.ShardID) (memd.ForgetResult, error) {
	return s.svc.Forget(r.Context(), memd.ForgetRequest{Shard: id, ID: r.PathValue("id"), Source: paramsOf(r).source()})
}

// editFactBody is the body of PATCH /v1/shards/{shard}/facts/{id}.
type editFactBody struct {
	Text   string      `json:"text"`
	Source memd.Source `json:"source,omitzero"`
}

func (s *Server) editFact(w http.ResponseWriter, r *http.Request, id memd.ShardID) (memd.EditFactResult, error) {
	var b editFactBody
	if err := decode(w, r, &b); err != nil {
		return memd.EditFactResult{}, err
	}
	return s.svc.EditFact(r.Context(), memd.EditFactRequest{Shard: id, ID: r.PathValue("id"), Text: b.Text, Source: b.Source})
}

func (s *Server) facts(_ http.ResponseWriter, r *http.Request, id memd.ShardID) (memd.FactList, error) {
	p := paramsOf(r)
	q := memd.FactsQuery{Shard: id, Tier: memd.Tier(p.get("tier")), At: p.get("at"), Text: p.get("q"),
		LearnedBy: p.get("learned_by"), Model: p.get("model"), Agent: p.get("agent"), Sort: p.get("sort"),
		From: p.date("from"), To: p.date("to"), Offset: p.int("offset"), Limit: p.int("limit"), Origins: p.bool("origins")}
	if p.err != nil {
		return memd.FactList{}, p.err
	}
	return s.svc.Facts(r.Context(), q)
}

func (s *Server) trace(_ http.ResponseWriter, r *http.Request, id memd.ShardID) (memd.Trace, error) {
	return s.svc.Trace(r.Context(), id, r.PathValue("id"))
}

func (s *Server) history(_ http.ResponseWriter, r *http.Request, id memd.ShardID) (any, error) {
	p := paramsOf(r)
	q := memd.LogQuery{Shard: id, Message: p.get("message"), Agent: p.get("agent"), Op: p.get("op"), Limit: p.int("limit"), Offset: p.int("offset")}
	if p.err != nil {
		return nil, p.err
	}
	commits, err := s.svc.Log(r.Context(), q)
	return map[string]any{"commits": commits}, err
}

func (s *Server) shards(_ http.ResponseWriter, r *http.Request) (any, error) {
	list, err := s.svc.Shards(r.Context())
	return map[string]any{"shards": list}, err
}

func (s *Server) learningStats(_ http.ResponseWriter, r *http.Request) (memd.LearningStats, error) {
	p := paramsOf(r)
	q := memd.LearningQuery{Agent: p.get("agent"), Model: p.get("model"), Prompt: p.get("prompt"), From: p.date("from"), To: p.date("to")}
	if p.err != nil {
		return memd.LearningStats{}, p.err
	}
	return s.svc.LearningStats(r.Context(), q)
}

func (s *Server) growth(_ http.ResponseWriter, r *http.Request) (memd.Growth, error) {
	p := paramsOf(r)
	q := memd.GrowthQuery{Shard: p.shard("shard")}
	if p.err != nil {
		return memd.Growth{}, p.err
	}
	return s.svc.Growth(r.Context(), q)
}

func (s *Server) purgeMessage(_ http.ResponseWriter, r *http.Request) (memd.PurgeResult, error) {
	return s.svc.PurgeMessage(r.Context(), memd.PurgeRequest{Message: r.PathValue("id"), Chat: paramsOf(r).get("chat")})
}

type addAgentBody struct {
	Name     string   `json:"name"`
	Projects []string `json:"projects,omitempty"`
}

func (s *Server) addAgent(w http.ResponseWriter, r *http.Request) (memd.NewAgent, error) {
	var b addAgentBody
	if err := decode(w, r, &b); err != nil {
		return memd.NewAgent{}, err
	}
	return s.svc.AddAgent(r.Context(), b.Name, b.Projects)
}

func (s *Server) setReview(w http.ResponseWriter, r *http.Request) (memd.Agent, error) {
	var b struct {
		On *bool `json:"on"`
	}
	if err := decode(w, r, &b); err != nil {
		return memd.Agent{}, err
	}
	if b.On == nil {
		return memd.Agent{}, memd.Errorf(memd.EINVALID, `want {"on": true} or {"on": false}`)
	}
	return s.svc.SetReview(r.Context(), r.PathValue("name"), *b.On)
}

func (s *Server) proposals(_ http.ResponseWriter, r *http.Request) (any, error) {
	p := paramsOf(r)
	shard := p.shard("shard")
	if p.err != nil {
		return nil, p.err
	}
	list, err := s.svc.Proposals(r.Context(), shard)
	return map[string]any{"proposals": list}, err
}

func (s *Server) agents(_ http.ResponseWriter, r *http.Request) (any, error) {
	list, err := s.svc.Agents(r.Context())
	return map[string]any{"agents": list}, err
}

func (s *Server) removeAgent(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RemoveAgent(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) status(_ http.ResponseWriter, r *http.Request) (memd.Status, error) {
	return s.svc.Status(r.Context())
}

func (s *Server) remotes(_ http.ResponseWriter, r *http.Request) (any, error) {
	list, err := s.svc.Remotes(r.Context())
	return map[string]any{"remotes": list}, err
}

func (s *Server) syncRemotes(w http.ResponseWriter, r *http.Request) (any, error) {
	var b struct {
		Shards []memd.ShardID `json:"shards"`
	}
	if r.ContentLength != 0 {
		if err := decode(w, r, &b); err != nil {
			return nil, err
		}
	}
	list, err := s.svc.SyncRemotes(r.Context(), b.Shards)
	return map[string]any{"remotes": list}, err
}

func (s *Server) recall(_ http.ResponseWriter, r *http.Request) (memd.RecallResult, error) {
	p := paramsOf(r)
	q := memd.RecallQuery{Q: p.get("q"), Agent: p.get("agent"), User: p.get("user"), Projects: p.list("projects"), At: p.get("at"),
		K: p.int("k"), Explain: p.bool("explain"), IncludeProposed: p.bool("include_proposed")}
	if p.err != nil {
		return memd.RecallResult{}, p.err
	}
	return s.svc.Recall(r.Context(), q)
}

// context answers the memory section as Markdown, or with format=json as
// the whole value.
func (s *Server) context(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(r)
	q := memd.ContextQuery{Agent: p.get("agent"), User: p.get("user"), Projects: p.list("projects"), At: p.get("at"), Since: p.get("since"),
		IncludeProposed: p.bool("include_proposed")}
	if p.err != nil {
		return p.err
	}
	res, err := s.svc.Context(r.Context(), q)
	if err != nil {
		return err
	}
	switch p.get("format") {
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

func (s *Server) synthesize(w http.ResponseWriter, r *http.Request) (memd.ExchangeStatus, error) {
	var req struct {
		Agent string `json:"agent"`
	}
	if err := decode(w, r, &req); err != nil {
		return memd.ExchangeStatus{}, err
	}
	return s.svc.Synthesize(r.Context(), req.Agent)
}

func (s *Server) exchanges(_ http.ResponseWriter, r *http.Request) (any, error) {
	list, err := s.svc.Exchanges(r.Context(), paramsOf(r).get("state"))
	return map[string]any{"exchanges": list}, err
}

func (s *Server) retryExchange(_ http.ResponseWriter, r *http.Request) (memd.ExchangeStatus, error) {
	return s.svc.RetryExchange(r.Context(), r.PathValue("id"))
}
