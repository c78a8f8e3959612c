package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/daemon"
	"github.com/hashline/hashline/server"
	"github.com/hashline/hashline/server/metrics"
)

// serveMetrics starts the Prometheus endpoint on --metrics-listen and
// returns the metrics for the gRPC server, the address it listens on, and
// a func that stops it. With no address it returns nil metrics (a nil
// interface, not a nil *metrics.Metrics, which the server would call).
func serveMetrics(addr string, logger *slog.Logger, svc *server.Service) (server.Metrics, string, func(), error) {
	opts := []metrics.Option{metrics.WithCacheStats(svc.Engine().CacheStats), metrics.WithGrepMemory(svc.Engine().GrepMemory), metrics.WithIntentStats(svc.Engine().IntentStats)}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := metrics.New(reg, opts...)
	if err != nil {
		return nil, "", nil, err
	}
	bi := buildinfo.Get()
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hashline_build_info",
		Help: "Always 1; the labels say which build of hashlined is running.",
	}, []string{"version", "commit", "goversion"})
	info.WithLabelValues(bi.Version, bi.Commit, bi.GoVersion).Set(1)
	reg.MustRegister(info)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", nil, daemon.ListenError("--metrics-listen", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelError)}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics endpoint stopped", "err", err)
		}
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return m, lis.Addr().String(), stop, nil
}
