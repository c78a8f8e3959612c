package syntax_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/hashline/hashline/internal/syntax"
)

// BenchmarkCheck: one line of a function changed, the common case (the
// edit leaves the file parsing clean), and an edit that breaks it, which
// parses the whole file before and after.
func BenchmarkCheck(b *testing.B) {
	for _, size := range []int{100, 10_000} {
		for _, lang := range []struct {
			name, src, old, new, broken string
		}{
			{"go", goFile(size), "if x > 5 {", "if x >= 5 {", "if (x > 5 {"},
			{"ts", tsFile(size), "if (x > 5) {", "if (x >= 5) {", "if ((x > 5) {"},
		} {
			before := []byte(lang.src)
			for _, e := range []struct{ name, new string }{{"clean", lang.new}, {"broken", lang.broken}} {
				after := []byte(strings.Replace(lang.src, lang.old, e.new, 1))
				for _, mode := range []struct {
					name string
					opts syntax.Options
				}{{"chunked", syntax.Options{}}, {"whole", syntax.Options{ChunkBytes: -1}}} {
					if size == 100 && mode.name == "whole" {
						continue // under ChunkBytes: the same
					}
					b.Run(fmt.Sprintf("%s/%dlines/%s/%s", lang.name, size, e.name, mode.name), func(b *testing.B) {
						b.SetBytes(int64(len(after)))
						cpu := cpuTime()
						for b.Loop() {
							r := syntax.Check("f."+lang.name, before, after, mode.opts)
							if r.Status != syntax.Checked || (len(r.Diagnostics) > 0) != (e.name == "broken") {
								b.Fatalf("%+v", r)
							}
						}
						reportCPU(b, cpu)
					})
				}
			}
		}
	}
}

// BenchmarkWholeParse: one parse of a whole Go file by size, for the size
// bound (a broken edit costs two).
func BenchmarkWholeParse(b *testing.B) {
	for _, lines := range []int{10_000, 20_000} {
		src := []byte(goFile(lines))
		after := []byte(strings.Replace(string(src), "if x > 5 {", "if (x > 5 {", 1))
		b.Run(fmt.Sprintf("go/%dKiB", len(src)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				syntax.Check("f.go", src, after, syntax.Options{ChunkBytes: -1, MaxBytes: 1 << 30})
			}
		})
	}
}

// BenchmarkBalance: a one-line edit of a 10k-line C file.
func BenchmarkBalance(b *testing.B) {
	src := goFile(10_000)
	before := []byte(src)
	after := []byte(strings.Replace(src, "if x > 5 {", "if (x > 5 {", 1))
	b.SetBytes(int64(len(after)))
	for b.Loop() {
		syntax.Check("f.c", before, after, syntax.Options{})
	}
}

// reportCPU adds the CPU time per operation since start (all threads: the
// garbage collector's share included) as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkESBuildFloor: esbuild's Transform of one seven-line function,
// the least a JavaScript or TypeScript check of a piece costs.
func BenchmarkESBuildFloor(b *testing.B) {
	src := []byte("export function f500(x: number): number {\n  if (x > 500) {\n    return x * 2;\n  }\n  const s: string[] = [\"a\", \"b(\"];\n  return x + s.length;\n}\n")
	after := []byte(strings.Replace(string(src), "x * 2", "x * 3", 1))
	cpu := cpuTime()
	for b.Loop() {
		syntax.Check("f.ts", src, after, syntax.Options{})
	}
	reportCPU(b, cpu)
}

// BenchmarkESBuildFixed: esbuild's Transform of a lone top-level "break",
// which it reports as an error once the source is parsed and visited, so
// it stops there as it does for a piece with the sentinel after it: the
// part of every JavaScript and TypeScript check that no piece, however
// small, avoids (its build's setup, the source of its runtime built anew
// and the runtime's parse looked up in its cache, the goroutines it parses
// on, and the garbage all that leaves).
func BenchmarkESBuildFixed(b *testing.B) {
	cpu := cpuTime()
	for b.Loop() {
		r := api.Transform("break\n", api.TransformOptions{Loader: api.LoaderTS, LogLevel: api.LogLevelSilent})
		if len(r.Errors) != 1 {
			b.Fatalf("%+v", r.Errors)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkBrokenAgain: edits of a 10k-line file that was broken and
// stays broken, each undoing the last (the content before each is the
// content after the one before), with and without a Cache: with it, the
// content before is not parsed again.
func BenchmarkBrokenAgain(b *testing.B) {
	for _, lang := range []struct{ name, src, old, a, b string }{
		{"go", goFile(10_000), "if x > 5 {", "if (x > 5 {", "if ((x > 5 {"},
		{"ts", tsFile(10_000), "if (x > 5) {", "if ((x > 5) {", "if (((x > 5) {"},
	} {
		texts := [2][]byte{[]byte(strings.Replace(lang.src, lang.old, lang.a, 1)), []byte(strings.Replace(lang.src, lang.old, lang.b, 1))}
		for _, cached := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/cache=%v", lang.name, cached), func(b *testing.B) {
				opts := syntax.Options{}
				if cached {
					opts.Cache = syntax.NewCache(0)
				}
				cpu := cpuTime()
				for k := 0; b.Loop(); k++ {
					r := syntax.Check("f."+lang.name, texts[k%2], texts[(k+1)%2], opts)
					if r.Status != syntax.Checked {
						b.Fatalf("%+v", r)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}
