// Package metrics exports the server's metrics to Prometheus. It is a
// package of its own so that only hashlined links Prometheus: the CLI links
// the server for --local and its MCP bridge, and every package it links is
// initialised on every start.
package metrics

import (
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/server"
)

// handlingBuckets suit calls that take from well under a millisecond (a
// cached Read) to seconds (a Grep of a large tree).
var handlingBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics are the server's Prometheus metrics (a server.Metrics): go-grpc-middleware's
// per-method counters and handling-time histograms (grpc_server_*), the
// outcome of every Edit (hashline_edit_outcomes_total{outcome}) and of
// every Delete, Move and Apply (hashline_change_outcomes_total{method,
// outcome}), and, when
// the service reports them, its snapshot cache's counters and size
// (hashline_cache_{hits,misses,evictions}_total, hashline_cache_bytes,
// hashline_cache_entries) and those of its state store
// (hashline_cache_{spills,disk_hits,disk_corrupt,disk_evictions}_total,
// hashline_cache_disk_{bytes,entries}), and what Greps hold
// (hashline_grep_held_bytes, hashline_grep_budget_bytes).
type Metrics struct {
	grpc    *grpcprom.ServerMetrics
	edits   *prometheus.CounterVec
	changes *prometheus.CounterVec
}

// Option configures New.
type Option func(*options)

type options struct {
	cacheStats  func() versions.Stats
	grepMemory  func() engine.GrepMemory
	intentStats func() engine.IntentStats
}

// WithIntentStats exports the failed removals of change sets' intent
// records (a counter) and the records answered for and still on disk (a
// gauge), read at every scrape. Pass (*server.Service).IntentStats.
func WithIntentStats(f func() engine.IntentStats) Option {
	return func(o *options) { o.intentStats = f }
}

// WithGrepMemory exports the bytes all Greps hold and their budget
// (--grep-bytes) as gauges, read at every scrape. Pass
// (*server.Service).GrepMemory.
func WithGrepMemory(f func() engine.GrepMemory) Option {
	return func(o *options) { o.grepMemory = f }
}

// WithCacheStats exports the snapshot cache's statistics, read at every
// scrape: hits, misses and evictions as counters, bytes and entries as
// gauges. Pass (*Service).CacheStats.
func WithCacheStats(f func() versions.Stats) Option {
	return func(o *options) { o.cacheStats = f }
}

// New creates the metrics and registers them with reg. Pass the result in
// server.GRPCConfig.Metrics and serve reg's gatherer (promhttp).
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	m := &Metrics{
		grpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(handlingBuckets))),
		edits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hashline_edit_outcomes_total",
			Help: "Edit calls by outcome: applied, rebased, dry_run, stale, conflict, no_change, no_change_repeated, error.",
		}, []string{"outcome"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hashline_change_outcomes_total",
			Help: "Delete, Move and Apply calls by method and outcome (the outcomes of hashline_edit_outcomes_total; an Apply is rebased when one of its edits was).",
		}, []string{"method", "outcome"}),
	}
	for _, o := range server.Outcomes() {
		m.edits.WithLabelValues(o) // every outcome is exported from the start, at 0
		for _, method := range server.ChangeMethods() {
			m.changes.WithLabelValues(method, o)
		}
	}
	cs := []prometheus.Collector{m.grpc, m.edits, m.changes}
	if f := o.cacheStats; f != nil {
		counter := func(name, help string, v func(versions.Stats) uint64) prometheus.Collector {
			return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v(f())) })
		}
		gauge := func(name, help string, v func(versions.Stats) int64) prometheus.Collector {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(v(f())) })
		}
		cs = append(cs,
			counter("hashline_cache_hits_total", "Snapshot cache lookups that found the version in memory (rebases possible).", func(s versions.Stats) uint64 { return s.Hits }),
			counter("hashline_cache_misses_total", "Snapshot cache lookups that found the version neither in memory nor in the state store (edits with line references refused with STALE_REF).", func(s versions.Stats) uint64 { return s.Misses }),
			counter("hashline_cache_evictions_total", "Snapshots dropped from memory to stay within --cache-bytes (spilled to the state store when there is one).", func(s versions.Stats) uint64 { return s.Evictions }),
			gauge("hashline_cache_bytes", "Bytes of file content held by the snapshot cache.", func(s versions.Stats) int64 { return s.Bytes }),
			gauge("hashline_cache_entries", "Snapshots held by the snapshot cache.", func(s versions.Stats) int64 { return int64(s.Entries) }),
			counter("hashline_cache_spills_total", "Snapshots written to the state store (--state-dir) when memory let them go, or at shutdown.", func(s versions.Stats) uint64 { return s.Disk.Spills }),
			counter("hashline_cache_disk_hits_total", "Snapshot cache lookups that missed memory and found the version in the state store.", func(s versions.Stats) uint64 { return s.Disk.Hits }),
			counter("hashline_cache_disk_corrupt_total", "Damaged snapshot files found in the state store and dropped, each also a miss.", func(s versions.Stats) uint64 { return s.Disk.Corrupt }),
			counter("hashline_cache_disk_evictions_total", "Snapshot files removed from the state store to stay within --state-bytes.", func(s versions.Stats) uint64 { return s.Disk.Evictions }),
			gauge("hashline_cache_disk_bytes", "Bytes of snapshot files held by the state store.", func(s versions.Stats) int64 { return s.Disk.Bytes }),
			gauge("hashline_cache_disk_entries", "Snapshot files held by the state store.", func(s versions.Stats) int64 { return int64(s.Disk.Entries) }),
		)
	}
	if f := o.grepMemory; f != nil {
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hashline_grep_held_bytes", Help: "Bytes of results all Greps hold: found and not yet sent (a Grep whose client does not read holds up to its own bound)."},
				func() float64 { return float64(f().Held) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hashline_grep_budget_bytes", Help: "The bound on hashline_grep_held_bytes (--grep-bytes); Greps that find it spent wait for bytes."},
				func() float64 { return float64(f().Budget) }),
		)
	}
	if f := o.intentStats; f != nil {
		cs = append(cs,
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hashline_intent_remove_failures_total", Help: "Removals of a change set's intent record that failed (each logged at ERROR); while one is left, changes to its set's paths are refused."},
				func() float64 { return float64(f().RemoveFailures) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hashline_intent_records_open", Help: "Intent records of answered change sets still on disk: a change to one of their paths removes them first, or is refused."},
				func() float64 { return float64(f().Open) }),
		)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// UnaryServerInterceptor implements server.Metrics.
func (m *Metrics) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return m.grpc.UnaryServerInterceptor()
}

// StreamServerInterceptor implements server.Metrics.
func (m *Metrics) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return m.grpc.StreamServerInterceptor()
}

// CountEdit implements server.Metrics.
func (m *Metrics) CountEdit(outcome string) { m.edits.WithLabelValues(outcome).Inc() }

// CountChange implements server.Metrics.
func (m *Metrics) CountChange(method, outcome string) {
	m.changes.WithLabelValues(method, outcome).Inc()
}

// InitializeMetrics implements server.Metrics.
func (m *Metrics) InitializeMetrics(gs *grpc.Server) { m.grpc.InitializeMetrics(gs) }

var _ server.Metrics = (*Metrics)(nil)
