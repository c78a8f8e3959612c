package server

import (
	"context"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// Edit outcomes, the values of hashline_edit_outcomes_total's outcome label.
const (
	OutcomeApplied  = "applied"   // written, no rebase needed
	OutcomeRebased  = "rebased"   // written after rebasing over other changes
	OutcomeDryRun   = "dry_run"   // checked and planned, not written
	OutcomeStale    = "stale"     // STALE_REF: a reference no longer matches
	OutcomeConflict = "conflict"  // STALE_REF with a CONFLICT: a rebase met another change
	OutcomeNoChange = "no_change" // NO_CHANGE: the batch would not change the file
	OutcomeError    = "error"     // any other refusal or failure
)

var outcomes = []string{OutcomeApplied, OutcomeRebased, OutcomeDryRun, OutcomeStale, OutcomeConflict, OutcomeNoChange, OutcomeError}

// handlingBuckets suit calls that take from well under a millisecond (a
// cached Read) to seconds (a Grep of a large tree).
var handlingBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics are the server's Prometheus metrics: go-grpc-middleware's
// per-method counters and handling-time histograms (grpc_server_*), the
// outcome of every Edit (hashline_edit_outcomes_total{outcome}), and, when
// the service reports them, its snapshot cache's counters and size
// (hashline_cache_{hits,misses,evictions}_total, hashline_cache_bytes,
// hashline_cache_entries) and those of its state store
// (hashline_cache_{spills,disk_hits,disk_corrupt,disk_evictions}_total,
// hashline_cache_disk_{bytes,entries}), and what Greps hold
// (hashline_grep_held_bytes, hashline_grep_budget_bytes).
type Metrics struct {
	grpc  *grpcprom.ServerMetrics
	edits *prometheus.CounterVec
}

// MetricsOption configures NewMetrics.
type MetricsOption func(*metricsOptions)

type metricsOptions struct {
	cacheStats func() versions.Stats
	grepMemory func() GrepMemory
}

// WithGrepMemory exports the bytes all Greps hold and their budget
// (--grep-bytes) as gauges, read at every scrape. Pass
// (*Service).GrepMemory.
func WithGrepMemory(f func() GrepMemory) MetricsOption {
	return func(o *metricsOptions) { o.grepMemory = f }
}

// WithCacheStats exports the snapshot cache's statistics, read at every
// scrape: hits, misses and evictions as counters, bytes and entries as
// gauges. Pass (*Service).CacheStats.
func WithCacheStats(f func() versions.Stats) MetricsOption {
	return func(o *metricsOptions) { o.cacheStats = f }
}

// NewMetrics creates the metrics and registers them with reg. Pass the
// result in GRPCConfig.Metrics and serve reg's gatherer (promhttp).
func NewMetrics(reg prometheus.Registerer, opts ...MetricsOption) (*Metrics, error) {
	var o metricsOptions
	for _, opt := range opts {
		opt(&o)
	}
	m := &Metrics{
		grpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(handlingBuckets))),
		edits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hashline_edit_outcomes_total",
			Help: "Edit calls by outcome: applied, rebased, dry_run, stale, conflict, no_change, error.",
		}, []string{"outcome"}),
	}
	for _, o := range outcomes {
		m.edits.WithLabelValues(o) // every outcome is exported from the start, at 0
	}
	cs := []prometheus.Collector{m.grpc, m.edits}
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
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// editOutcome classifies a finished Edit call. It is the one place that
// decides what counts as which outcome.
func editOutcome(resp any, err error) string {
	if err == nil {
		r, _ := resp.(*hashlinev1.EditResponse)
		switch {
		case r.GetDryRun():
			return OutcomeDryRun
		case r.GetRebasedFrom() != "":
			return OutcomeRebased
		}
		return OutcomeApplied
	}
	st, ok := status.FromError(err)
	if !ok {
		return OutcomeError
	}
	reason := ""
	conflict := false
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *hashlinev1.ErrorInfo:
			reason = d.GetReason()
		case *hashlinev1.StaleRef:
			conflict = conflict || d.GetReason() == "CONFLICT"
		}
	}
	switch {
	case reason == string(hashline.ReasonStaleRef) && conflict:
		return OutcomeConflict
	case reason == string(hashline.ReasonStaleRef):
		return OutcomeStale
	case reason == string(hashline.ReasonNoChange):
		return OutcomeNoChange
	}
	return OutcomeError
}

// editOutcomes counts every Edit that reached the service by outcome.
func (m *Metrics) editOutcomes() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if info.FullMethod == hashlinev1.FileService_Edit_FullMethodName {
			m.edits.WithLabelValues(editOutcome(resp, err)).Inc()
		}
		return resp, err
	}
}
