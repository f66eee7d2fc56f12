package learn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/buntdb"
	"github.com/tidwall/gjson"

	"github.com/memd/memd"
	"github.com/memd/memd/provenance"
)

// Limits on what one exchange may teach.
const (
	MaxAdds      = 10 // new facts from one exchange
	MaxRemoves   = 5  // facts one exchange may retire
	EpisodeEvery = 6  // eligible turns per episode
	maxMessages  = 50
	maxMessage   = 20000 // characters of one message
)

// Memory is what the learner reads and writes: the facts it shows the
// model, and single-fact commits with provenance, authored by the agent
// whose exchange taught them. Adding a fact the shard holds, or removing
// one it lacks, changes nothing and is not an error, so a change applied
// twice counts once.
type Memory interface {
	Known(ctx context.Context, ex memd.Exchange) ([]memd.Fact, error)
	Add(ctx context.Context, agent string, shard memd.ShardID, f memd.Fact, p memd.Provenance) (commit string, err error)
	Remove(ctx context.Context, agent string, shard memd.ShardID, id string, p memd.Provenance) (commit string, err error)
}

// Hooks let the daemon see what the learner does.
type Hooks struct {
	Failed func(st memd.ExchangeStatus) // gave up after the last retry
	Done   func(st memd.ExchangeStatus) // learned (the commits are made)
	Queue  func(pending int)            // the number of pending jobs changed
}

// Config configures a Learner.
type Config struct {
	Model     Model
	Memory    Memory
	Retries   int           // tries before an exchange fails; 5 when zero
	RetryBase time.Duration // first backoff, doubling; 2s when zero
	Workers   int           // agents learned from at once, so model calls at once; 2 when zero
	Now       func() time.Time
	Logger    *slog.Logger
	Hooks     Hooks
	// Synthesis, when set, keeps learned exchanges as evidence and runs
	// synthesis passes over agents' own shards.
	Synthesis *Synthesis
	// Keep, when set, stores the text of an eligible exchange before it is
	// queued, so a reviewer can read what a fact was learned from; an
	// error refuses the exchange.
	Keep func(ex memd.Exchange) error
	// Registered, when set, says whether an agent still exists: the jobs
	// of one removed after they were queued fail without a model call and
	// write nothing to its shard.
	Registered func(agent string) bool
}

// Learner learns from exchanges, durably, in order per agent.
type Learner struct {
	cfg Config
	db  *buntdb.DB

	started atomic.Bool // Run is running

	mu   sync.Mutex
	busy map[string]bool // agents being learned from
	// quiet is when a busy model asked to be left alone until (its
	// Retry-After), or until when a full disk pauses learning: no job of
	// any agent starts before.
	quiet   time.Time
	wake    chan struct{}
	running sync.WaitGroup

	// dropMu is held for reading while a job is applied and for writing
	// by DropMessages, which adds to dropped: the messages reverts took
	// back since the start (what is stored of them goes at once).
	dropMu  sync.RWMutex
	dropped reverted
}

// job is one unit of the learner's work, as stored.
type job struct {
	Seq      uint64         `json:"seq"`
	Kind     string         `json:"kind"` // exchange or episode
	Agent    string         `json:"agent"`
	Exchange *memd.Exchange `json:"exchange,omitempty"`
	Turns    []Turn         `json:"turns,omitempty"`
	State    string         `json:"state"`
	Attempts int            `json:"attempts"`
	Error    string         `json:"error,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Accepted time.Time      `json:"accepted"`
	NextTry  time.Time      `json:"next_try,omitzero"`
	Plan     *plan          `json:"plan,omitempty"` // the model's answer, kept before it is applied
	Commits  []string       `json:"commits,omitempty"`
}

// plan is the changes a model answer makes, ready to apply.
type plan struct {
	Model   string `json:"model"`
	Prompt  string `json:"prompt,omitempty"` // the prompt's hash, as the Prompt trailer gives it
	Steps   []step `json:"steps"`
	Ignored int    `json:"ignored"`
	// A synthesis pass's changes, its approving model, and the sequence
	// numbers of the queued exchanges it read.
	Changes  []Change `json:"changes,omitempty"`
	Approver string   `json:"approver,omitempty"`
	Evidence []uint64 `json:"evidence,omitempty"`
}

type step struct {
	Remove bool         `json:"remove,omitempty"`
	Shard  memd.ShardID `json:"shard"`
	Fact   memd.Fact    `json:"fact"`
}

func (j *job) id() string {
	prefix := "ex_"
	switch j.Kind {
	case kindEpisode:
		prefix = "ep_"
	case kindSynthesis:
		prefix = "sy_"
	}
	return prefix + strconv.FormatUint(j.Seq, 10)
}

func (j *job) status() memd.ExchangeStatus {
	st := memd.ExchangeStatus{ID: j.id(), Kind: j.Kind, Agent: j.Agent, State: j.State, Attempts: j.Attempts,
		Error: j.Error, Reason: j.Reason, Accepted: j.Accepted, Commits: j.Commits}
	if j.Plan != nil {
		st.Ignored = j.Plan.Ignored
	}
	if j.Kind == kindSynthesis && j.Plan != nil {
		o := j.Plan.outcome()
		st.Synthesis, st.Ignored = &o, o.Ignored
	}
	return st
}

const (
	kindExchange = "exchange"
	kindEpisode  = "episode"
	seqKey       = "seq"
	jobPrefix    = "job:"
	stateIndex   = "state"
	turnsPrefix  = "turns:"
	doneTTL      = 24 * time.Hour
)

func jobKey(seq uint64) string { return fmt.Sprintf("%s%020d", jobPrefix, seq) }

// Open opens (or creates) the learner's queue at path. Every write is made
// durable before it returns.
func Open(path string, cfg Config) (*Learner, error) {
	if cfg.Retries == 0 {
		cfg.Retries = 5
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = 2 * time.Second
	}
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	db, err := buntdb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open learner queue %s: %w", path, err)
	}
	db.SetConfig(buntdb.Config{SyncPolicy: buntdb.Always, AutoShrinkPercentage: 100, AutoShrinkMinSize: 8 << 20})
	// Jobs by state, so that finding the next pending job does not read
	// the day of finished ones kept beside it.
	if err := db.CreateIndex(stateIndex, jobPrefix+"*", buntdb.IndexJSON("state")); err != nil {
		db.Close()
		return nil, fmt.Errorf("open learner queue %s: %w", path, err)
	}
	return &Learner{cfg: cfg, db: db, busy: make(map[string]bool), wake: make(chan struct{}, 1)}, nil
}

// Close waits for jobs being learned and closes the queue.
func (l *Learner) Close() error {
	l.running.Wait()
	return l.db.Close()
}

// Running reports whether Run is learning.
func (l *Learner) Running() bool { return l.started.Load() }

// ModelName names the model the learner calls.
func (l *Learner) ModelName() string { return l.cfg.Model.Name() }

// Accept validates an exchange and stores it durably; it is learned later.
// An exchange that is not eligible (not a direct or group chat, or small
// talk) is recorded as skipped and never reaches the model.
func (l *Learner) Accept(ex memd.Exchange) (memd.ExchangeStatus, error) {
	if err := validate(&ex, l.cfg.Now); err != nil {
		return memd.ExchangeStatus{}, err
	}
	j := &job{Kind: kindExchange, Agent: ex.Agent, Exchange: &ex, State: memd.ExchangePending, Accepted: l.cfg.Now().UTC()}
	if ok, reason := Eligible(ex); !ok {
		j.State, j.Reason = memd.ExchangeSkipped, reason
	} else if l.cfg.Keep != nil {
		if err := l.cfg.Keep(ex); err != nil {
			return memd.ExchangeStatus{}, err
		}
	}
	if err := l.db.Update(func(tx *buntdb.Tx) error {
		seq, err := nextSeq(tx)
		if err != nil {
			return err
		}
		j.Seq = seq
		j.Exchange.ID = j.id()
		return putJob(tx, j)
	}); err != nil {
		return memd.ExchangeStatus{}, fmt.Errorf("store exchange: %w", err)
	}
	l.poke()
	return j.status(), nil
}

func validate(ex *memd.Exchange, now func() time.Time) error {
	if err := memd.ValidateName(ex.Agent); err != nil {
		return memd.Errorf(memd.EINVALID, "agent: %s", memd.ErrorMessage(err))
	}
	kind, err := memd.ParseChatKind(string(ex.ChatKind))
	if err != nil {
		return err
	}
	if kind == "" {
		return memd.Errorf(memd.EINVALID, "chat_kind is required: direct, group, routine or api")
	}
	if ex.User != "" {
		if err := memd.ValidateName(ex.User); err != nil {
			return memd.Errorf(memd.EINVALID, "user: %s", memd.ErrorMessage(err))
		}
	}
	if err := provenance.CheckSource(memd.Source{Chat: ex.Chat, Messages: ex.MessageIDs()}); err != nil {
		return err
	}
	if ex.Chat == "" {
		return memd.Errorf(memd.EINVALID, "chat is required: the ID of the chat the exchange happened in")
	}
	if len(ex.Messages) == 0 || len(ex.Messages) > maxMessages {
		return memd.Errorf(memd.EINVALID, "an exchange has 1 to %d messages, got %d", maxMessages, len(ex.Messages))
	}
	users := 0
	for _, m := range ex.Messages {
		if m.Role != "user" && m.Role != "agent" {
			return memd.Errorf(memd.EINVALID, "message %s: role must be user or agent, not %q", m.ID, m.Role)
		}
		if m.Role == "user" {
			users++
		}
		if len([]rune(m.Text)) > maxMessage {
			return memd.Errorf(memd.EINVALID, "message %s is longer than %d characters", m.ID, maxMessage)
		}
	}
	if users == 0 {
		return memd.Errorf(memd.EINVALID, "an exchange needs at least one user message")
	}
	if ex.Time.IsZero() {
		ex.Time = now().UTC()
	}
	// Kept and dated in UTC, with a year of four digits (RFC 3339's).
	if y := ex.Time.UTC().Year(); y < 0 || y > 9999 {
		return memd.Errorf(memd.EINVALID, "time %s is outside the years 0000 to 9999 in UTC", ex.Time.Format(time.RFC3339))
	}
	return nil
}

func nextSeq(tx *buntdb.Tx) (uint64, error) {
	v, err := tx.Get(seqKey)
	if err != nil && !errors.Is(err, buntdb.ErrNotFound) {
		return 0, err
	}
	n, _ := strconv.ParseUint(v, 10, 64)
	n++
	_, _, err = tx.Set(seqKey, strconv.FormatUint(n, 10), nil)
	return n, err
}

func putJob(tx *buntdb.Tx, j *job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	var opts *buntdb.SetOptions
	if j.State == memd.ExchangeDone || j.State == memd.ExchangeSkipped {
		opts = &buntdb.SetOptions{Expires: true, TTL: doneTTL} // kept a day for status
	}
	_, _, err = tx.Set(jobKey(j.Seq), string(b), opts)
	return err
}

func (l *Learner) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run learns until ctx ends: at most Workers agents at a time, each
// agent's jobs in the order they were accepted, failed calls retried with
// backoff.
func (l *Learner) Run(ctx context.Context) {
	l.started.Store(true)
	defer l.started.Store(false)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := l.dispatch(ctx)
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			l.running.Wait()
			return
		case <-l.wake:
		case <-timer.C:
		}
	}
}

// dispatch starts the first runnable job of each idle agent, and returns
// when the next retry is due (zero if none is waiting).
func (l *Learner) dispatch(ctx context.Context) time.Time {
	next, pending, err := l.startHeads(ctx)
	if err != nil {
		l.cfg.Logger.Error("learner: reading the queue", "err", err)
		return l.cfg.Now().Add(time.Second)
	}
	if l.cfg.Hooks.Queue != nil {
		l.cfg.Hooks.Queue(pending)
	}
	return next
}

// startHeads starts the jobs dispatch starts, and returns when the next
// retry is due and how many jobs are pending. The queue is read with the
// lock held: read before it, a job a worker finished meanwhile (its agent
// no longer busy) looked pending still, and was learned again (a second
// model call, a second "learned").
func (l *Learner) startHeads(ctx context.Context) (next time.Time, pending int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	heads, pending, err := l.agentHeads()
	if err != nil {
		return next, pending, err
	}
	now := l.cfg.Now()
	if l.quiet.After(now) {
		return l.quiet, pending, nil
	}
	running := len(l.busy)
	for _, j := range heads {
		if l.busy[j.Agent] {
			continue
		}
		if j.NextTry.After(now) {
			if next.IsZero() || j.NextTry.Before(next) {
				next = j.NextTry
			}
			continue
		}
		if running == l.cfg.Workers {
			break
		}
		running++
		l.busy[j.Agent] = true
		l.running.Add(1)
		go func(j *job) {
			defer l.running.Done()
			l.work(ctx, j)
			l.mu.Lock()
			delete(l.busy, j.Agent)
			l.mu.Unlock()
			l.poke()
		}(j)
	}
	return next, pending, nil
}

// agentHeads returns the first pending job of each agent, oldest first
// (a later job of an agent waits for its first), and the number pending.
// Only those jobs are decoded: a backlog costs a field lookup per job.
func (l *Learner) agentHeads() ([]*job, int, error) {
	var heads []*job
	var bad error
	pending := 0
	seen := make(map[string]bool)
	err := l.db.View(func(tx *buntdb.Tx) error {
		return tx.AscendEqual(stateIndex, stateDoc(memd.ExchangePending), func(k, v string) bool {
			pending++
			agent := gjson.Get(v, "agent").String()
			if seen[agent] {
				return true
			}
			seen[agent] = true
			j, err := decodeJob(k, v)
			if err != nil {
				bad = err
				return false
			}
			heads = append(heads, j)
			return true
		})
	})
	if err == nil {
		err = bad
	}
	return heads, pending, err
}

// decodeJob reads the job stored under key k.
func decodeJob(k, v string) (*job, error) {
	var j job
	if err := json.Unmarshal([]byte(v), &j); err != nil {
		return nil, fmt.Errorf("learner queue entry %s: %w", k, err)
	}
	return &j, nil
}

// stateDoc is the pivot that finds jobs in a state through stateIndex.
func stateDoc(state string) string {
	b, _ := json.Marshal(map[string]string{"state": state})
	return string(b)
}

// jobs returns the stored jobs in a state (all when state is ""), oldest
// first.
func (l *Learner) jobs(state string) (out []*job, err error) {
	err = l.db.View(func(tx *buntdb.Tx) error {
		out, err = jobsIn(tx, state)
		return err
	})
	return out, err
}

// jobsIn is jobs, in a transaction.
func jobsIn(tx *buntdb.Tx, state string) ([]*job, error) {
	var out []*job
	var bad error
	each := func(k, v string) bool {
		j, err := decodeJob(k, v)
		if err != nil {
			bad = err
			return false
		}
		out = append(out, j)
		return true
	}
	var err error
	if state == "" {
		err = tx.AscendKeys(jobPrefix+"*", each)
	} else {
		err = tx.AscendEqual(stateIndex, stateDoc(state), each)
	}
	if err == nil {
		err = bad
	}
	return out, err
}

// turnBuffers returns the turns gathering for each agent's next episode.
func turnBuffers(tx *buntdb.Tx) (map[string][]Turn, error) {
	buffers := make(map[string][]Turn)
	err := tx.AscendKeys(turnsPrefix+"*", func(k, v string) bool {
		var turns []Turn
		json.Unmarshal([]byte(v), &turns)
		buffers[strings.TrimPrefix(k, turnsPrefix)] = turns
		return true
	})
	return buffers, err
}

// Waiting reports the messages the learner may still learn from: those of
// exchanges and episodes pending or failed, and the turns gathering for an
// agent's next episode. Their kept text must not be swept yet.
func (l *Learner) Waiting() (func(agent, id string) bool, error) {
	held := make(map[[2]string]bool)
	for _, state := range []string{memd.ExchangePending, memd.ExchangeFailed} {
		js, err := l.jobs(state)
		if err != nil {
			return nil, err
		}
		for _, j := range js {
			if j.Exchange != nil {
				for _, id := range j.Exchange.MessageIDs() {
					held[[2]string{j.Agent, id}] = true
				}
			}
			for _, t := range j.Turns {
				for _, id := range t.Messages {
					held[[2]string{j.Agent, id}] = true
				}
			}
		}
	}
	err := l.db.View(func(tx *buntdb.Tx) error {
		buffers, err := turnBuffers(tx)
		for agent, turns := range buffers {
			for _, t := range turns {
				for _, id := range t.Messages {
					held[[2]string{agent, id}] = true
				}
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the learner's unfinished work: %w", err)
	}
	return func(agent, id string) bool { return held[[2]string{agent, id}] }, nil
}

// work learns one job: ask the model (unless its answer is stored from an
// earlier try), store the answer, apply it, then mark the job done.
func (l *Learner) work(ctx context.Context, j *job) {
	if j.Kind == kindSynthesis && l.cfg.Synthesis == nil {
		l.failed(j, errors.New("synthesis is off: start memd serve with --synthesis to run this pass"))
		return
	}
	if l.gone(j) || l.droppedMeanwhile(j) {
		return
	}
	if j.Plan == nil {
		p, err := l.ask(ctx, j)
		if err != nil {
			if ctx.Err() != nil {
				return // stopping; the job stays pending
			}
			l.failed(j, err)
			return
		}
		j.Plan = p
		if err := l.save(j); errors.Is(err, errEnded) {
			return
		} else if err != nil {
			l.cfg.Logger.Error("learner: storing the model's answer", "job", j.id(), "err", err)
			l.pauseIfFull(err) // or the model is asked again at once
			return
		}
	}
	// The model call may have taken long enough for the agent to go.
	if l.gone(j) {
		return
	}
	// Or for a revert to take back a message the answer read: nothing of
	// it is written, and a revert waits for what is being written.
	l.dropMu.RLock()
	defer l.dropMu.RUnlock()
	if l.endedMeanwhile(j) {
		return
	}
	if dropFrom(j, l.dropped) && j.Kind != kindSynthesis {
		// A pass goes on with its changes that rest on none.
		if err := l.save(j); err != nil && !errors.Is(err, errEnded) {
			l.cfg.Logger.Error("learner: storing a job a revert changed", "job", j.id(), "err", err)
		}
		return
	}
	var commits []string
	var err error
	if j.Kind == kindSynthesis {
		commits, err = l.applySynthesis(ctx, j)
	} else {
		commits, err = l.apply(ctx, j)
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		l.failed(j, err)
		return
	}
	j.Commits, j.State, j.Error, j.NextTry = commits, memd.ExchangeDone, "", time.Time{}
	if err := l.finish(j); err != nil {
		l.cfg.Logger.Error("learner: marking a job done", "job", j.id(), "err", err)
		l.pauseIfFull(err)
		return
	}
	if l.cfg.Hooks.Done != nil {
		l.cfg.Hooks.Done(j.status())
	}
}

// ask calls the model and turns its answer into a plan.
func (l *Learner) ask(ctx context.Context, j *job) (*plan, error) {
	if j.Kind == kindSynthesis {
		return l.askSynthesis(ctx, j)
	}
	if j.Kind == kindEpisode {
		system, user := episodePrompt(j.Agent, j.Turns)
		answer, err := l.cfg.Model.Complete(ctx, system, user)
		if err != nil {
			return nil, err
		}
		if noneLine.MatchString(unwrap(strings.TrimSpace(answer))) {
			// Not offered, but what a model says when it sees no work
			// worth a line: no episode, rather than one reading "NONE".
			return &plan{Model: l.cfg.Model.Name(), Prompt: EpisodePrompt}, nil
		}
		text, err := episodeText(answer)
		if err != nil {
			return nil, fmt.Errorf("episode summary unusable: %s", memd.ErrorMessage(err))
		}
		last := j.Turns[len(j.Turns)-1].Time
		f := memd.Fact{Text: text, Date: memd.DateOf(last.UTC()), Tier: memd.TierEpisode}
		return &plan{Model: l.cfg.Model.Name(), Prompt: EpisodePrompt, Steps: []step{{Shard: memd.AgentShard(j.Agent), Fact: f}}}, nil
	}
	ex := *j.Exchange
	known, err := l.cfg.Memory.Known(ctx, ex)
	if err != nil {
		return nil, fmt.Errorf("read known facts: %w", err)
	}
	system, user := extractionPrompt(j.Agent, ex, known, MaxAdds)
	answer, err := l.cfg.Model.Complete(ctx, system, user)
	if err != nil {
		return nil, err
	}
	a := ParseAnswer(answer, MaxAdds, MaxRemoves)
	if a.Blank() {
		// Asked to say NONE when there is nothing, as an empty answer.
		return nil, fmt.Errorf("model %s answered nothing but code fences", l.cfg.Model.Name())
	}
	p := planOf(ex, known, a, l.cfg.Model.Name())
	p.Prompt = ExtractionPrompt
	return p, nil
}

// planOf turns a parsed answer into changes: removals of shown facts first
// (so a correction is its removal then its addition), then additions.
// user: facts go to the person's memory, and only from direct chats.
func planOf(ex memd.Exchange, known []memd.Fact, a Answer, model string) *plan {
	p := &plan{Model: model, Ignored: a.Ignored}
	date := memd.DateOf(ex.Time.UTC())
	for _, quote := range a.Removes {
		i := quoted(known, quote)
		if i < 0 {
			p.Ignored++ // not a fact it was shown: never guessed at
			continue
		}
		p.Steps = append(p.Steps, step{Remove: true, Shard: known[i].Shard, Fact: known[i]})
	}
	for _, add := range a.Adds {
		f := memd.Fact{Text: add.Text, Date: date}
		shard := memd.AgentShard(ex.Agent)
		switch add.Kind {
		case KindProfile:
			f.Tier = memd.TierProfile
		case KindLog:
			f.Tier = memd.TierLog
		case KindNote:
			f.Tier = memd.TierNote
		case KindUser:
			if ex.ChatKind != memd.ChatDirect || ex.User == "" {
				p.Ignored++ // what is said in a group never becomes user memory
				continue
			}
			f.Tier, shard = memd.TierProfile, memd.UserShard(ex.User)
		}
		p.Steps = append(p.Steps, step{Shard: shard, Fact: f})
	}
	return p
}

// quoted returns the place in known of the fact a removal quotes, -1 if
// none. The same text may be the agent's and the person's: the label the
// prompt shows on the person's says which (a quote without it is the
// agent's, unless only the person holds the text). A quote whose label is
// its own text's start ("[user] x" held by the agent) is found too.
func quoted(known []memd.Fact, q Quote) int {
	id := memd.FactID(q.Text)
	holds := func(user bool) int {
		return slices.IndexFunc(known, func(f memd.Fact) bool { return f.ID == id && (f.Shard.Kind == memd.KindUser) == user })
	}
	if i := holds(q.User); i >= 0 {
		return i
	}
	if q.User {
		labelled := memd.FactID("[user] " + q.Text)
		if i := slices.IndexFunc(known, func(f memd.Fact) bool { return f.ID == labelled }); i >= 0 {
			return i
		}
	}
	return holds(!q.User)
}

// apply commits a plan's steps, one commit each. Steps already applied by
// an earlier try change nothing.
func (l *Learner) apply(ctx context.Context, j *job) ([]string, error) {
	prov := memd.Provenance{LearnedBy: memd.LearnedLearner, Model: j.Plan.Model, Prompt: j.Plan.Prompt, ChatKind: memd.ChatDirect}
	if j.Kind == kindEpisode {
		prov.LearnedBy = memd.LearnedEpisode
		prov.ChatKind = ""
		for _, t := range j.Turns {
			prov.SourceMessages = append(prov.SourceMessages, t.Messages...)
		}
		// Turns of one chat name it, so that a revert by message in
		// another chat, whose IDs may be the same, leaves the episode.
		if chat := j.Turns[0].Chat; !slices.ContainsFunc(j.Turns, func(t Turn) bool { return t.Chat != chat }) {
			prov.SourceChat = chat
		}
	} else {
		prov.SourceMessages = j.Exchange.MessageIDs()
		prov.SourceChat = j.Exchange.Chat
		prov.ChatKind = j.Exchange.ChatKind
	}
	var commits []string
	for _, s := range j.Plan.Steps {
		p := prov
		var commit string
		var err error
		if s.Remove {
			p.Op, p.FactIDs, p.Tier = memd.OpForget, []string{s.Fact.ID}, s.Fact.Tier
			commit, err = l.cfg.Memory.Remove(ctx, j.Agent, s.Shard, s.Fact.ID, p)
		} else {
			p.Op, p.FactIDs, p.Tier = memd.OpRemember, []string{memd.FactID(s.Fact.Text)}, s.Fact.Tier
			commit, err = l.cfg.Memory.Add(ctx, j.Agent, s.Shard, s.Fact, p)
		}
		if err != nil {
			return commits, err
		}
		if commit != "" {
			commits = append(commits, commit)
		}
	}
	return commits, nil
}

// gone fails a job of an agent removed since it was queued, and says so:
// nothing of it is to be written to the agent's shard.
func (l *Learner) gone(j *job) bool {
	if l.cfg.Registered == nil || l.cfg.Registered(j.Agent) {
		return false
	}
	l.giveUp(j, fmt.Errorf("agent %s was removed before this was learned; nothing was written", j.Agent))
	return true
}

// giveUp fails a job for good, without the tries left: what failed would
// fail again.
func (l *Learner) giveUp(j *job, err error) {
	j.Attempts = max(j.Attempts, l.cfg.Retries-1)
	l.failed(j, err)
}

// failed records a failed try: retried later with backoff, or, after the
// last try, failed for good and reported.
func (l *Learner) failed(j *job, err error) {
	// A full disk is no fault of the job's: it waits for room, however
	// long, rather than use up its tries and need a person's retry.
	if !memd.DiskFull(err) {
		j.Attempts++
	}
	j.Error = err.Error()
	if j.Attempts >= l.cfg.Retries {
		j.State, j.NextTry = memd.ExchangeFailed, time.Time{}
		l.cfg.Logger.Warn("learner: giving up on a job", "job", j.id(), "agent", j.Agent, "err", err)
	} else {
		wait := l.cfg.RetryBase << max(j.Attempts-1, 0)
		// A model that says when to come back is not asked before then.
		var busy *Busy
		if errors.As(err, &busy) && busy.After > 0 {
			wait = max(wait, busy.After)
			l.quietFor(busy.After)
		}
		j.NextTry = l.cfg.Now().Add(wait)
		l.cfg.Logger.Info("learner: will retry", "job", j.id(), "attempt", j.Attempts, "err", err)
	}
	l.pauseIfFull(err)
	if serr := l.save(j); errors.Is(serr, errEnded) {
		return
	} else if serr != nil {
		l.cfg.Logger.Error("learner: storing a failure", "job", j.id(), "err", serr)
		l.pauseIfFull(serr)
		return
	}
	if j.State == memd.ExchangeFailed && l.cfg.Hooks.Failed != nil {
		l.cfg.Hooks.Failed(j.status())
	}
}

// fullDiskPause is how long learning pauses, in units of RetryBase, when
// a write found the disk full: every job would meet the same wall, and
// one whose answer could not be stored would ask the model again at once.
const fullDiskPause = 16

// pauseIfFull pauses every job for a while if err is a full disk.
func (l *Learner) pauseIfFull(err error) {
	if !memd.DiskFull(err) {
		return
	}
	l.quietFor(min(l.cfg.RetryBase*fullDiskPause, time.Minute))
}

// quietFor keeps every job from starting for d, unless a pause already
// lasts longer.
func (l *Learner) quietFor(d time.Duration) {
	until := l.cfg.Now().Add(d)
	l.mu.Lock()
	if until.After(l.quiet) {
		l.quiet = until
	}
	l.mu.Unlock()
}

// save stores a job as the worker holds it, unless a revert ended it since
// the worker read it (errEnded): the worker's copy would bring it back.
func (l *Learner) save(j *job) error {
	return l.db.Update(func(tx *buntdb.Tx) error {
		if j.State != memd.ExchangeSkipped {
			if v, err := tx.Get(jobKey(j.Seq)); err == nil && gjson.Get(v, "state").String() == memd.ExchangeSkipped {
				return errEnded
			}
		}
		return putJob(tx, j)
	})
}

// endedMeanwhile reports whether a revert ended the job since the worker
// read it (stored skipped).
func (l *Learner) endedMeanwhile(j *job) bool {
	ended := false
	l.db.View(func(tx *buntdb.Tx) error {
		v, err := tx.Get(jobKey(j.Seq))
		ended = err == nil && gjson.Get(v, "state").String() == memd.ExchangeSkipped
		return nil
	})
	return ended
}

// droppedMeanwhile takes out of a job what a revert took back after the
// job was read, before its model is asked, and reports whether the job is
// to be left (stored as the revert left it, to be picked up again if work
// is left in it).
func (l *Learner) droppedMeanwhile(j *job) bool {
	l.dropMu.RLock()
	defer l.dropMu.RUnlock()
	if j.Plan != nil || !dropFrom(j, l.dropped) {
		return false
	}
	if err := l.save(j); err != nil && !errors.Is(err, errEnded) {
		l.cfg.Logger.Error("learner: storing a job a revert changed", "job", j.id(), "err", err)
	}
	return true
}

// finish marks a job done and, for an exchange, adds its turn to the
// agent's episode buffer, which every EpisodeEvery turns becomes an episode
// job — all in one durable step, so no turn is counted twice or lost.
func (l *Learner) finish(j *job) error {
	return l.db.Update(func(tx *buntdb.Tx) error {
		if err := putJob(tx, j); err != nil {
			return err
		}
		if j.Kind == kindSynthesis {
			return l.finishSynthesis(tx, j)
		}
		if j.Kind != kindExchange {
			return nil
		}
		if err := l.queueEvidence(tx, j); err != nil {
			return err
		}
		var turns []Turn
		if v, err := tx.Get(turnsPrefix + j.Agent); err == nil {
			json.Unmarshal([]byte(v), &turns)
		}
		turns = append(turns, turnOf(*j.Exchange))
		if len(turns) < EpisodeEvery {
			b, _ := json.Marshal(turns)
			_, _, err := tx.Set(turnsPrefix+j.Agent, string(b), nil)
			return err
		}
		seq, err := nextSeq(tx)
		if err != nil {
			return err
		}
		ep := &job{Seq: seq, Kind: kindEpisode, Agent: j.Agent, Turns: turns, State: memd.ExchangePending, Accepted: l.cfg.Now().UTC()}
		if err := putJob(tx, ep); err != nil {
			return err
		}
		_, err = tx.Delete(turnsPrefix + j.Agent)
		if errors.Is(err, buntdb.ErrNotFound) {
			err = nil
		}
		return err
	})
}

// Status lists jobs in a state ("" for all kept).
func (l *Learner) Status(state string) ([]memd.ExchangeStatus, error) {
	jobs, err := l.jobs(state)
	quiet := l.QuietUntil()
	out := make([]memd.ExchangeStatus, 0, len(jobs))
	for _, j := range jobs {
		st := j.status()
		if st.State == memd.ExchangePending {
			next := j.NextTry
			if quiet.After(next) {
				next = quiet
			}
			if next.After(l.cfg.Now()) {
				st.NextTry = next
			}
		}
		out = append(out, st)
	}
	return out, err
}

// QuietUntil returns when a busy model asked to be called again, or when
// learning paused for a full disk resumes; zero when that time has passed.
func (l *Learner) QuietUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.quiet.After(l.cfg.Now()) {
		return l.quiet
	}
	return time.Time{}
}

// Counts returns how many jobs are pending and failed: an agent's, or
// with agent "" all of them. Only a job's agent is read, not the whole
// job: an agent's status asks on each call of a client that names no
// shard, while the queue may hold thousands.
func (l *Learner) Counts(agent string) (pending, failed int, err error) {
	err = l.db.View(func(tx *buntdb.Tx) error {
		for state, n := range map[string]*int{memd.ExchangePending: &pending, memd.ExchangeFailed: &failed} {
			if err := tx.AscendEqual(stateIndex, stateDoc(state), func(_, v string) bool {
				if agent == "" || gjson.Get(v, "agent").String() == agent {
					*n++
				}
				return true
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return pending, failed, err
}

// Retry queues a failed job again, with its tries counted afresh.
func (l *Learner) Retry(id string) (memd.ExchangeStatus, error) {
	seq, ok := parseID(id)
	if !ok {
		return memd.ExchangeStatus{}, memd.Errorf(memd.EINVALID, "%q is not an exchange ID (ex_<n>, ep_<n> or sy_<n>)", id)
	}
	var j job
	err := l.db.Update(func(tx *buntdb.Tx) error {
		v, err := tx.Get(jobKey(seq))
		if errors.Is(err, buntdb.ErrNotFound) {
			return memd.Errorf(memd.ENOTFOUND, "no exchange %s", id)
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(v), &j); err != nil {
			return err
		}
		if j.State != memd.ExchangeFailed {
			return memd.Errorf(memd.ECONFLICT, "exchange %s is %s, not failed", id, j.State)
		}
		j.State, j.Attempts, j.NextTry = memd.ExchangePending, 0, time.Time{}
		return putJob(tx, &j)
	})
	if err != nil {
		return memd.ExchangeStatus{}, err
	}
	l.poke()
	return j.status(), nil
}

func parseID(id string) (uint64, bool) {
	for _, p := range []string{"ex_", "ep_", "sy_"} {
		if rest, ok := strings.CutPrefix(id, p); ok {
			n, err := strconv.ParseUint(rest, 10, 64)
			return n, err == nil && n > 0
		}
	}
	return 0, false
}
