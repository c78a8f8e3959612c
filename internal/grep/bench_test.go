package grep

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchQueries are the query classes of docs/DESIGN.md §11.
var benchQueries = []struct {
	name string
	opts Options
}{
	{"literal", Options{Pattern: "func main"}},
	{"literal-i", Options{Pattern: "func main", CaseInsensitive: true}},
	{"alternation", Options{Pattern: `(Context|Deadline)\(`}},
	{"class", Options{Pattern: `\w+_test\b`}},
	{"regexp-only", Options{Pattern: `^\s*[a-z]+\(\)$`}},
}

// benchSearch searches fsys with every query, reporting MB/s over the bytes
// scanned. MaxMatches is effectively unlimited so that the whole tree is read.
func benchSearch(b *testing.B, fsys fs.FS) {
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			opts := q.opts
			opts.MaxMatches = 1 << 30
			var sum Summary
			for b.Loop() {
				var err error
				sum, err = Search(context.Background(), fsys, opts, func(File) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(sum.BytesScanned)
			b.ReportMetric(float64(sum.Matches), "matches")
			b.ReportMetric(float64(sum.FilesScanned), "files")
		})
	}
}

// BenchmarkSearch searches a generated tree of 2000 files.
func BenchmarkSearch(b *testing.B) {
	dir := b.TempDir()
	randomTree(b, dir, 7, 2000)
	benchSearch(b, rootFS(b, dir))
}

// BenchmarkGoSrc searches Go's own source tree, the tree docs/DESIGN.md §11 compares
// against ripgrep.
func BenchmarkGoSrc(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	b.Run("root", func(b *testing.B) { benchSearch(b, rootFS(b, dir)) })
	b.Run("generic", func(b *testing.B) { benchSearch(b, plainFS{rootFS(b, dir)}) })
}
