// Package metrics exposes memd's Prometheus metrics: commits by operation,
// write and recall latency, feed subscribers and drops, index catch-up time,
// and the learner's queue and failures. Timing is a wrapper around the
// service, so no handler measures anything itself.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memd/memd"
)

// Metrics holds memd's collectors on their own registry.
type Metrics struct {
	registry        *prometheus.Registry
	Commits         *prometheus.CounterVec
	WriteSeconds    prometheus.Histogram
	RecallSeconds   prometheus.Histogram
	FeedDrops       prometheus.Counter
	FeedReplayed    prometheus.Counter
	FeedDelivered   prometheus.Counter
	CatchUpSeconds  prometheus.Histogram
	LearnerQueue    prometheus.Gauge
	LearnerFailures prometheus.Counter
	Synthesis       *prometheus.CounterVec
	Reviews         *prometheus.CounterVec
	Requests        *prometheus.HistogramVec // API requests by route and status
	ModelCalls      *prometheus.HistogramVec // model calls by model and result
	// ProposalsPending is set when memd looks at proposals.
	ProposalsPending prometheus.Gauge

	RemotePushes       *prometheus.CounterVec
	RemoteFetches      *prometheus.CounterVec
	RemoteIntegrations *prometheus.CounterVec
	RemoteConflicts    prometheus.Counter

	// EmbeddedFacts counts fact texts sent to the embeddings endpoint, by
	// result (ok or error).
	EmbeddedFacts *prometheus.CounterVec
}

// New registers memd's metrics. subscribers reports the feed's current
// subscriber count; version and goVersion label the build-info gauge.
func New(subscribers func() int, version, goVersion string) *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		registry: r,
		Commits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memd_commits_total",
			Help: "Commits published, by Memory-Op (person for commits memd did not make)."}, []string{"op"}),
		WriteSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memd_write_seconds",
			Help: "Time to remember, forget or revert, until the commit is durable.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		RecallSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memd_recall_seconds",
			Help: "Time to answer a recall.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14)}),
		FeedDrops: prometheus.NewCounter(prometheus.CounterOpts{Name: "memd_feed_drops_total",
			Help: "Feed subscribers cut off for falling behind their buffer."}),
		FeedReplayed: prometheus.NewCounter(prometheus.CounterOpts{Name: "memd_feed_replayed_total",
			Help: "Commits read from history for feed replays (once for every subscriber resuming from them while they are kept)."}),
		FeedDelivered: prometheus.NewCounter(prometheus.CounterOpts{Name: "memd_feed_events_total",
			Help: "Feed events published."}),
		CatchUpSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memd_index_catchup_seconds",
			Help: "Time for the index to catch up with a shard's new commits.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		LearnerQueue: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memd_learner_queue_depth",
			Help: "Exchanges waiting for the learner."}),
		LearnerFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "memd_learner_failures_total",
			Help: "Exchanges the learner gave up on after its retries."}),
		Synthesis: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memd_synthesis_changes_total",
			Help: "Changes synthesis passes proposed, by what became of them: applied, refused (they touched a fact written on purpose, or one forgotten or edited since the pass read it) or rejected (by the approving model)."}, []string{"result"}),
		Requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "memd_http_request_seconds",
			Help: "API requests answered, by route and status, and how long they took (the feed's: until its websocket was set up).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"route", "status"}),
		ModelCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "memd_model_call_seconds",
			Help: "Calls to the learner's models (extraction, episodes, synthesis), by model and result (ok or error).", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, []string{"model", "result"}),
		Reviews: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memd_proposals_reviewed_total",
			Help: "Proposals a person accepted into main or rejected through memd."}, []string{"verdict"}),
		ProposalsPending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "memd_proposals_pending",
			Help: "Proposals waiting for review, over the shards memd has looked at since it started."}),
		RemotePushes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memd_remote_pushes_total",
			Help: "Pushes to shards' remotes: ok, rejected (the remote had moved on; memd fetched and merged) or error."}, []string{"result"}),
		RemoteFetches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memd_remote_fetches_total",
			Help: "Fetches from shards' remotes, ok or error."}, []string{"result"}),
		RemoteIntegrations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memd_remote_integrations_total",
			Help: "What fetches did to main: up-to-date, fast-forward or merge."}, []string{"kind"}),
		RemoteConflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "memd_remote_conflicts_total",
			Help: "Files merges kept with conflict markers (notes edited on both sides)."}),
		EmbeddedFacts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memd_embedded_facts_total",
			Help: "Fact texts sent to the embeddings endpoint for their vectors, by result (ok or error)."}, []string{"result"}),
	}
	r.MustRegister(m.Commits, m.WriteSeconds, m.RecallSeconds, m.FeedDrops, m.FeedReplayed, m.FeedDelivered, m.CatchUpSeconds, m.LearnerQueue, m.LearnerFailures, m.Synthesis, m.Reviews, m.ProposalsPending, m.Requests, m.ModelCalls,
		m.RemotePushes, m.RemoteFetches, m.RemoteIntegrations, m.RemoteConflicts, m.EmbeddedFacts,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memd_feed_subscribers", Help: "Feed subscribers connected."},
			func() float64 { return float64(subscribers()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memd_build_info", Help: "Always 1; the labels name the running build.",
			ConstLabels: prometheus.Labels{"version": version, "goversion": goVersion}}, func() float64 { return 1 }))
	return m
}

// WatchVectors reports, at each scrape, the vectors recall by meaning
// holds and the facts still without one.
func (m *Metrics) WatchVectors(vectors func() (held, pending float64)) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memd_vectors", Help: "Fact texts with a vector, for recall by meaning."},
			func() float64 { h, _ := vectors(); return h }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memd_vectors_pending", Help: "Facts found without a vector at the last look."},
			func() float64 { _, p := vectors(); return p }))
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Instrument wraps a service so that writes and recalls are timed.
func (m *Metrics) Instrument(svc memd.Service) memd.Service {
	return &instrumented{Service: svc, m: m}
}

type instrumented struct {
	memd.Service
	m *Metrics
}

func since(h prometheus.Histogram, start time.Time) { h.Observe(time.Since(start).Seconds()) }

func (i *instrumented) Remember(ctx context.Context, req memd.RememberRequest) (memd.RememberResult, error) {
	defer since(i.m.WriteSeconds, time.Now())
	return i.Service.Remember(ctx, req)
}

func (i *instrumented) Forget(ctx context.Context, req memd.ForgetRequest) (memd.ForgetResult, error) {
	defer since(i.m.WriteSeconds, time.Now())
	return i.Service.Forget(ctx, req)
}

func (i *instrumented) Revert(ctx context.Context, req memd.RevertRequest) (memd.RevertResult, error) {
	defer since(i.m.WriteSeconds, time.Now())
	return i.Service.Revert(ctx, req)
}

func (i *instrumented) Recall(ctx context.Context, q memd.RecallQuery) (memd.RecallResult, error) {
	defer since(i.m.RecallSeconds, time.Now())
	return i.Service.Recall(ctx, q)
}
