package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/server"
	"github.com/hashline/hashline/server/metrics"
)

func TestMetricsCountEditOutcomesAndCalls(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.WithCacheStats(func() versions.Stats {
		return versions.Stats{Hits: 7, Misses: 3, Evictions: 2, Bytes: 12345, Entries: 4,
			Disk: versions.DiskStats{Spills: 5, Hits: 6, Corrupt: 1, Evictions: 8, Bytes: 6789, Entries: 9}}
	}), metrics.WithGrepMemory(func() engine.GrepMemory { return engine.GrepMemory{Held: 4321, Peak: 5000, Budget: 1 << 20} }),
		metrics.WithIntentStats(func() engine.IntentStats { return engine.IntentStats{RemoveFailures: 3, Open: 2} }))
	if err != nil {
		t.Fatal(err)
	}
	// Without read-before-edit, so every Edit below reaches the outcome it
	// is there for and Read is called exactly once.
	e := newEnvConfig(t, server.GRPCConfig{Metrics: m}, nil, engine.WithRequireRead(false))
	const text = "a\nb\n"
	e.write("f.txt", text)
	edit := func(dry bool, edits ...*hashlinev1.FileEdit) {
		_, _ = e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: edits, DryRun: dry})
	}
	edit(true, client.Replace(tag(text, 1), "", "A"))      // dry_run
	edit(false, client.Replace(tag(text, 1), "", "A"))     // applied
	edit(false, client.Replace(tag(text, 1), "", "B"))     // stale: line 1 changed
	edit(false, client.Replace(tag("A\nb\n", 2), "", "b")) // no_change
	edit(false, client.Replace(tag("A\nb\n", 2), "", "b")) // no_change_repeated: the same no-op again
	edit(false)                                            // error: empty batch
	_, _ = e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "missing.txt", Edits: []*hashlinev1.FileEdit{client.Append("x")}})
	_, _ = e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"})

	// Rebases: the agent read g.txt, then someone else changed it.
	const g = "x\ny\nz\n"
	e.write("g.txt", g)
	if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "g.txt"}); err != nil {
		t.Fatal(err)
	}
	e.write("g.txt", "new\n"+g) // every line moved down one
	if r, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "g.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(g, 3), "", "Z")}}); err != nil || r.GetRebasedFrom() == "" {
		t.Fatalf("edit across a moved line: %v, rebasedFrom %q", err, r.GetRebasedFrom())
	}
	if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "g.txt"}); err != nil {
		t.Fatal(err)
	}
	const seen = "new\nx\ny\nZ\n"
	e.write("g.txt", "new\nx\nY\nZ\n") // a line inside the range below changed under the agent
	_, _ = e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "g.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(seen, 2), tag(seen, 4), "why")}})

	// Delete, Move and Apply.
	e.write("h.txt", "h\n")
	e.write("i.txt", "i\n")
	_, _ = e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "h.txt", To: "moved/h.txt"})             // applied
	_, _ = e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "h.txt", To: "h2.txt"})                  // error: gone
	_, _ = e.c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: "moved/h.txt"})                      // applied
	_, _ = e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{DryRun: true, Changes: []*hashlinev1.Change{ // dry_run
		{Change: &hashlinev1.Change_Delete{Delete: &hashlinev1.DeleteRequest{Path: "i.txt"}}}}})
	_, _ = e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{ // stale: line 1 is "i"
		{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: "i.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag("x\n", 1), "", "y")}}}}}})

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			got[f.GetName()+labels(mt)] = value(mt)
		}
	}
	want := map[string]float64{
		`hashline_edit_outcomes_total{outcome="dry_run"}`:                   1,
		`hashline_edit_outcomes_total{outcome="applied"}`:                   1,
		`hashline_edit_outcomes_total{outcome="stale"}`:                     1,
		`hashline_edit_outcomes_total{outcome="no_change"}`:                 1,
		`hashline_edit_outcomes_total{outcome="no_change_repeated"}`:        1,
		`hashline_edit_outcomes_total{outcome="error"}`:                     2,
		`hashline_edit_outcomes_total{outcome="rebased"}`:                   1,
		`hashline_edit_outcomes_total{outcome="conflict"}`:                  1,
		`hashline_change_outcomes_total{method="move",outcome="applied"}`:   1,
		`hashline_change_outcomes_total{method="move",outcome="error"}`:     1,
		`hashline_change_outcomes_total{method="delete",outcome="applied"}`: 1,
		`hashline_change_outcomes_total{method="apply",outcome="dry_run"}`:  1,
		`hashline_change_outcomes_total{method="apply",outcome="stale"}`:    1,
		`hashline_change_outcomes_total{method="apply",outcome="applied"}`:  0,
		`hashline_cache_bytes`:                  12345,
		`hashline_cache_entries`:                4,
		`hashline_cache_hits_total`:             7,
		`hashline_cache_misses_total`:           3,
		`hashline_cache_evictions_total`:        2,
		`hashline_cache_spills_total`:           5,
		`hashline_cache_disk_hits_total`:        6,
		`hashline_cache_disk_corrupt_total`:     1,
		`hashline_cache_disk_evictions_total`:   8,
		`hashline_cache_disk_bytes`:             6789,
		`hashline_cache_disk_entries`:           9,
		`hashline_grep_held_bytes`:              4321,
		`hashline_grep_budget_bytes`:            1 << 20,
		`hashline_intent_remove_failures_total`: 3,
		`hashline_intent_records_open`:          2,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Read",grpc_service="hashline.v1.FileService",grpc_type="unary"}`:      3,
		`grpc_server_handled_total{grpc_code="Aborted",grpc_method="Edit",grpc_service="hashline.v1.FileService",grpc_type="unary"}`: 2,
		`grpc_server_handling_seconds{grpc_method="Edit",grpc_service="hashline.v1.FileService",grpc_type="unary"}`:                  9, // sample count
		`grpc_server_started_total{grpc_method="Grep",grpc_service="hashline.v1.FileService",grpc_type="server_stream"}`:             0,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}

	// The same, as Prometheus scrapes it.
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `hashline_edit_outcomes_total{outcome="applied"} 1`) {
		t.Errorf("scrape lacks the applied counter:\n%s", body)
	}
}

func labels(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+`="`+l.GetValue()+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}
