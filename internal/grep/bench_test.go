package grep

import (
	"context"
	"fmt"
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

// BenchmarkList lists a tree of 10,000 files shaped as bench/bench-list's
// (20 files a directory, three levels, a .gitignore'd directory in every
// tenth leaf), as one listing and resumed in pages of 1000 entries.
func BenchmarkList(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 10000 {
		d := filepath.Join(dir, fmt.Sprintf("a%02d/b%02d/c%02d", i/1000, i/100%10, i/20%5))
		if i%50 == 0 {
			d = filepath.Join(d, "ignored")
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), []byte("package x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fsys := rootFS(b, dir)
	ctx := context.Background()
	for _, page := range []int{0, 1000} {
		b.Run(fmt.Sprintf("page=%d", page), func(b *testing.B) {
			entries := 0
			for b.Loop() {
				entries = 0
				after := ""
				for {
					n := 0
					err := List(ctx, fsys, ListOptions{Path: ".", Recursive: true, After: after}, func(e ListEntry) error {
						if page > 0 && n == page {
							return ErrStop
						}
						n++
						after = e.Key()
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					entries += n
					if page == 0 || n < page {
						break
					}
				}
			}
			b.ReportMetric(float64(entries), "entries")
		})
	}
}
