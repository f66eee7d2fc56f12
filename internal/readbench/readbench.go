// Package readbench measures memd's read path at scale: rebuilding the
// index from HEAD, catching up after one commit made with the git CLI,
// recall and the memory section. It backs both `go test -bench` and
// `memd bench --read`.
package readbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memd/memd"
	"github.com/memd/memd/daemon"
	"github.com/memd/memd/daemon/access"
	"github.com/memd/memd/daemon/auth"
	"github.com/memd/memd/daemon/index"
	"github.com/memd/memd/daemon/search"
	"github.com/memd/memd/gitstore"
	"github.com/memd/memd/provenance"
)

// Setup is a store holding one agent's memory of n facts (in its own shard
// and a project's), with the index built.
type Setup struct {
	Dir     string
	Store   *gitstore.Store
	Index   *index.Index
	Service memd.Service
	Shard   memd.ShardID
}

// BusyChat is the chat a fifth of the benchmark's facts were learned in.
const BusyChat = "bench-busy-chat"

// Build prepares a store of n facts in dir: 80% in the agent's own shard,
// 20% in a project it belongs to, spread over 16 months. A quarter of the
// agent's facts (a fifth of all) were learned in one chat over the last 30
// days, hundreds a day, the shape that tests context from a conversation.
func Build(dir string, n int) (*Setup, error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := gitstore.Open(dir, gitstore.Options{NoSync: true, RepackAt: -1, Logger: logger})
	if err != nil {
		return nil, err
	}
	today := time.Now()
	agent := memd.AgentShard("bench")
	if err := prefill(store, agent, 0, n*6/10, today); err != nil {
		store.Close()
		return nil, err
	}
	if err := prefillChat(store, agent, n*6/10, n*8/10, today); err != nil {
		store.Close()
		return nil, err
	}
	if err := prefill(store, memd.ProjectShard("bench"), n*8/10, n, today); err != nil {
		store.Close()
		return nil, err
	}
	reg, _, err := auth.Open(dir, nil)
	if err != nil {
		store.Close()
		return nil, err
	}
	if _, err := reg.Add("bench", []string{"bench"}); err != nil {
		store.Close()
		return nil, err
	}
	idx, err := index.Open(filepath.Join(dir, daemon.IndexFile), store, logger)
	if err != nil {
		store.Close()
		return nil, err
	}
	svc := &daemon.Service{Store: store, Index: idx, Registry: reg, Now: time.Now, Logger: logger, Started: time.Now()}
	guarded := access.Guard(svc, access.Rules{Member: reg.IsMember, Projects: reg.Projects})
	return &Setup{Dir: dir, Store: store, Index: idx, Service: guarded, Shard: agent}, nil
}

// Close closes the index and the store.
func (s *Setup) Close() {
	s.Index.Close()
	s.Store.Close()
}

// Rebuild times reading every fact from HEAD into a fresh index (the rest of
// a rebuild, attributing facts to commits, is timed apart).
func (s *Setup) Rebuild() (head, attribution time.Duration, err error) {
	start := time.Now()
	if err := s.Index.Reload(nil); err != nil {
		return 0, 0, err
	}
	head = time.Since(start)
	start = time.Now()
	err = s.Index.AttributeAll(context.Background(), nil)
	return head, time.Since(start), err
}

// BusyChatFacts counts the indexed facts attributed to BusyChat, to check
// the benchmark measures the shape it says.
func (s *Setup) BusyChatFacts() int {
	n := 0
	s.Index.Engine().Walk(s.Shard, false, func(d search.Doc) bool {
		if d.Chat == BusyChat {
			n++
		}
		return true
	})
	return n
}

// CatchUp commits one new fact with the git CLI, rounds times, and times
// how long the index takes to catch up with each.
func (s *Setup) CatchUp(rounds int) ([]time.Duration, error) {
	if err := s.Index.CatchUp(s.Shard); err != nil {
		return nil, err
	}
	dir := s.Store.ShardDir(s.Shard)
	today := memd.DateOf(time.Now())
	sh, err := s.Store.Shard(s.Shard)
	if err != nil {
		return nil, err
	}
	todays, err := sh.FileFor(memd.TierLog, today)
	if err != nil {
		return nil, err
	}
	// Today's file may be a new day's, in a folder that is new too.
	path := filepath.Join(dir, filepath.FromSlash(todays))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := 0; i < rounds; i++ {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(f, "- (%s) A fact a person added by hand, number %d\n", today, i)
		f.Close()
		for _, args := range [][]string{{"add", todays}, {"commit", "-qm", "by hand " + strconv.Itoa(i)}} {
			cmd := exec.Command("git", append([]string{"-c", "user.name=pat", "-c", "user.email=pat@example.com"}, args...)...)
			cmd.Dir = dir
			if b, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git %s: %v: %s", args[0], err, b)
			}
		}
		start := time.Now()
		if err := s.Index.CatchUp(s.Shard); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// The benchmark's memory is made of facts like a team's: who did what to
// which thing, where, with a number, from a vocabulary of a few hundred
// names, places and things. A name or thing is in about one fact in 50, a
// place or verb in one in 30: more often than most words of real memory,
// so at a million facts a query word reaches 20,000 to 33,000 facts, and
// recall scores that many candidates a word.
var (
	people = strings.Fields("Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil Trent Victor Walter Marta " +
		"Pat Sam Lena Omar Priya Diego Yuki Chen Fatima Jonas Ingrid Kwame Lucia Mateo Noor Oskar Rosa Tariq Uma Vera Wei Xavier Yara Zane Amira Bruno Celine Dmitri Elif Farid")
	verbs = strings.Fields("approved booked cancelled reviewed migrated deployed rejected postponed signed paid invoiced hired onboarded tested " +
		"documented scheduled moved renamed archived upgraded patched audited budgeted forecast shortlisted interviewed configured rotated restored benchmarked")
	things = strings.Fields("the Postgres cluster, the SQL Server box, the billing service, the invoicing service, the staging database, the Kubernetes nodes, " +
		"the S3 buckets, the AWS keys, the CI pipeline, the release checklist, the onboarding guide, the travel policy, the expense report, the Q3 budget, " +
		"the Q4 forecast, the vendor contract, the office lease, the hotel booking, the flight to Lisbon, the train to Porto, the rooftop venue, the team dinner, " +
		"the design review, the dashboard redesign, the pricing page, the support rota, the on-call schedule, the data warehouse, the ETL jobs, the dbt models, " +
		"the churn model, the mobile app, the login flow, the payment gateway, the tax filing, the payroll run, the audit findings, the security review, the DNS records, " +
		"the TLS certificates, the backup policy, the incident report, the status page, the sales deck, the partner agreement, the laptop order, the wifi upgrade")
	places = strings.Fields("Lisbon Porto Madrid Berlin Paris London Dublin Amsterdam Toronto NYC Boston Austin Denver Seattle Tokyo Singapore Sydney Nairobi Lagos Cairo " +
		"Oslo Stockholm Helsinki Warsaw Prague Vienna Zurich Milan Rome Athens")
)

func thingList() []string {
	var out []string
	for _, t := range strings.Split(strings.Join(things, " "), ",") {
		out = append(out, strings.TrimSpace(t))
	}
	return out
}

// FactText returns the i-th fact of the benchmark's memory.
func FactText(i int) string {
	ts := thingList()
	r := uint64(i)*2654435761 + 12345
	pick := func(n int) int { r = r*6364136223846793005 + 1442695040888963407; return int(r>>33) % n }
	return fmt.Sprintf("%s %s %s in %s, ref %d", people[pick(len(people))], verbs[pick(len(verbs))], ts[pick(len(ts))], places[pick(len(places))], i)
}

func prefill(store *gitstore.Store, id memd.ShardID, from, to int, today time.Time) error {
	sh, err := store.CreateShard(id)
	if err != nil {
		return err
	}
	edits := make([]gitstore.Edit, 0, to-from)
	for i := from; i < to; i++ {
		tier := memd.TierLog
		if i%50 == 0 {
			tier = memd.TierProfile
		}
		day := today.AddDate(0, 0, -(i*7919)%480)
		edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: FactText(i), Date: memd.DateOf(day), Tier: tier}})
	}
	_, err = sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "import", Email: "import@memd"}, Message: "import: benchmark memory", Edits: edits})
	return err
}

// prefillChat commits facts from..to as learned in BusyChat over the last
// 30 days, a commit a day naming the chat.
func prefillChat(store *gitstore.Store, id memd.ShardID, from, to int, today time.Time) error {
	sh, err := store.CreateShard(id)
	if err != nil {
		return err
	}
	for day := 29; day >= 0; day-- {
		date := memd.DateOf(today.AddDate(0, 0, -day))
		var edits []gitstore.Edit
		for i := from; i < to; i++ {
			if i%30 == day {
				edits = append(edits, gitstore.Edit{Op: gitstore.AddFact, Fact: memd.Fact{Text: FactText(i), Date: date, Tier: memd.TierLog}})
			}
		}
		msg := provenance.Message("learn: a day of the busy chat", memd.Provenance{SourceChat: BusyChat, SourceMessages: []string{"bench-" + date.String()}, LearnedBy: "learner"})
		if _, err := sh.Apply(gitstore.Change{Author: gitstore.Signature{Name: "bench", Email: "bench@memd"}, Message: msg, Edits: edits}); err != nil {
			return err
		}
	}
	return nil
}

// Queries are recall queries over the benchmark's memory: names, short
// tokens, phrases and questions, common and rare, a piece of a word and a
// typo (both found only inside words, if at all: the substring fallback).
var Queries = []string{
	"Postgres", "SQL Server", "Lisbon venue", "Q3 budget", "billing service", "what did Marta approve",
	"rooftop", "Alice", "onboarding guide", "who hired engineers in Berlin", "ref 4242",
	"staging database", "AWS keys rotated", "release checklist", "flight to Lisbon", "vendor contract",
	"design review rejected", "Priya in Tokyo", "ref 99999", "which certificates were patched",
	"kube", "Lisbn",
}

// Messages are queries as agents often send them: a person's whole
// message passed on (30–63 words), most of its words held by many facts
// and related by the thesaurus to many more.
var Messages = []string{
	"Hey, can you remind me what Marta decided about the Q3 budget for the Lisbon offsite? I think she talked with Priya in Tokyo about the vendor contract and the rooftop venue.",
	"I also need to know whether the billing service migration to Postgres was approved before the design review, and who rotated the AWS keys on the staging database last month.",
	"Before I write the release checklist for next week, tell me which certificates were patched, whether the onboarding guide was updated, and if anyone booked the flight to Lisbon for Alice and Omar.",
	"Quick question from the team standup this morning: who hired engineers in Berlin, what happened with the SQL Server cluster, and did Farid ever finish the dashboard redesign for the pricing page?",
	"Please summarise everything we know about Lena, the rooftop venue in Lisbon, the vendor contract renewal, the Q3 budget approval, the travel policy, the expense reports and the payroll run, because I have a meeting with finance in ten minutes and I want to make sure I do not forget anything important that was decided by the team over the last few weeks.",
}

func caller() context.Context {
	return memd.NewContext(context.Background(), memd.Caller{Agent: "bench", ChatKind: memd.ChatGroup})
}

// Recall runs n recall queries and returns each one's latency; with
// explain, each asks for the parts of its hits' scores.
func (s *Setup) Recall(n int, explain bool) ([]time.Duration, error) {
	ctx := caller()
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := s.Service.Recall(ctx, memd.RecallQuery{Q: Queries[i%len(Queries)], Explain: explain}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// Context builds the memory section n times and returns each latency.
func (s *Setup) Context(n int) ([]time.Duration, error) {
	ctx := caller()
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := s.Service.Context(ctx, memd.ContextQuery{Projects: []string{"bench"}}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// Percentile returns the p-th percentile (0..100) of ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p / 100 * float64(len(s)-1))
	return s[i]
}

// ProcessRSS returns the resident memory of a process, in bytes.
func ProcessRSS(pid int) (int64, error) { return processMemory(pid, "VmRSS") }

// ProcessPeakRSS returns the most resident memory a process has had, in
// bytes.
func ProcessPeakRSS(pid int) (int64, error) { return processMemory(pid, "VmHWM") }

// processMemory reads one of the memory figures of /proc/PID/status.
func processMemory(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s for process %d", field, pid)
}
