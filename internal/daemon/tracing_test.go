package daemon

import (
	"context"
	"io"
	"strings"
	"testing"
)

// An engine run by a program without Extras.Tracing (hashline's) refuses
// the tracing flags, naming the program to run instead, and ignores the
// OTEL_* environment: a harness that traces itself must not stop the
// engine hashline starts for it.
func TestEngineWithoutTracing(t *testing.T) {
	isolate(t)
	for _, flag := range []string{"--otlp-endpoint=http://127.0.0.1:4318", "--otlp-protocol=grpc"} {
		_, err := Embed(context.Background(), "hashline engine", []string{"--root", t.TempDir(), "--listen", "", flag}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "hashline engine exports no traces; run hashlined for them") {
			t.Errorf("%s: %v", flag, err)
		}
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin") // hashlined would refuse it
	stop := embed(t, t.TempDir())
	if err := stop(); err != nil {
		t.Errorf("the engine, under OTEL_* variables: %v", err)
	}
}
