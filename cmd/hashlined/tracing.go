package main

import (
	"context"

	"google.golang.org/grpc"

	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/daemon"
	"github.com/hashline/hashline/internal/telemetry"
)

// startTracing is hashlined's daemon.Extras.Tracing: OpenTelemetry over
// OTLP (internal/telemetry), which only this binary links.
func startTracing(c daemon.TracingConfig) (*daemon.Tracing, error) {
	t, err := telemetry.New(context.Background(), telemetry.Config{
		Endpoint: c.Endpoint, Protocol: c.Protocol, ServiceVersion: buildinfo.Get().Version, Logger: c.Logger,
	})
	if t == nil || err != nil {
		return nil, err
	}
	return &daemon.Tracing{
		Provider:      t.TracerProvider(),
		ServerOptions: []grpc.ServerOption{t.ServerOption()},
		Describe:      t.String(),
		Shutdown:      t.Shutdown,
	}, nil
}
