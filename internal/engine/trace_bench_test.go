package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/floor"
	"github.com/hashline/hashline/internal/hashline"
)

// BenchmarkEditTracing is a one-line Edit of a 100-line file, without
// fsync (so that the disk's noise does not hide the engine's own time):
// off, as every engine without WithTracerProvider; and on, each Edit under
// a sampled call span, its spans recorded in memory.
func BenchmarkEditTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			var lines strings.Builder
			for i := range 100 {
				fmt.Fprintf(&lines, "\tvalue%03d := compute(%03d) // line of about forty bytes\n", i, i)
			}
			if err := os.WriteFile(filepath.Join(root, "f.go"), []byte(lines.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			ctx := engine.WithAgent(context.Background(), "bench")
			var opts []engine.Option
			if on {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
				opts = append(opts, engine.WithTracerProvider(tp))
				ctx, _ = tp.Tracer("bench").Start(ctx, "call")
			}
			e, err := engine.Open(engine.Config{Root: root, StateDir: b.TempDir(), NoFsync: true, NoSweep: true, Options: opts})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			r, err := e.Read(ctx, engine.ReadRequest{Path: "f.go"})
			if err != nil {
				b.Fatal(err)
			}
			ref := r.Lines[49].Tag()
			texts := [2]string{"\tvalue049 := 1", "\tvalue049 := 2"}
			zero := 0
			var took []time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				res, err := e.Edit(ctx, &engine.EditRequest{Path: "f.go", Context: &zero, Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref, Text: texts[i%2]}}})
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
				ref = res.Windows[0].Lines[0].Tag()
			}
			b.ReportMetric(float64(floor.Median(took).Microseconds()), "edit-p50-µs")
		})
	}
}
