package grep

import (
	"bytes"
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/hashline/hashline/internal/workspace"
)

// writeTree creates files (slash-separated path -> content) under dir.
func writeTree(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// rootFS opens dir as an os.Root and returns its FS as RootFS (the fast
// path's, on Linux), closed at cleanup.
func rootFS(tb testing.TB, dir string) fs.FS {
	tb.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { root.Close() })
	return RootFS(root)
}

// plainFS hides the type of an os.Root's FS, forcing the generic path, but
// keeps the interfaces it implements.
type plainFS struct{ fs.FS }

func (p plainFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(p.FS, name) }
func (p plainFS) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(p.FS, name) }
func (p plainFS) ReadLink(name string) (string, error)       { return fs.ReadLink(p.FS, name) }
func (p plainFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(p.FS, name) }

// collect runs Search and returns what it emitted.
func collect(tb testing.TB, fsys fs.FS, opts Options) ([]File, Summary, error) {
	tb.Helper()
	var files []File
	sum, err := Search(context.Background(), fsys, opts, func(f File) error {
		files = append(files, f)
		return nil
	})
	return files, sum, err
}

// paths returns the paths of files.
func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// naiveLines splits data the way the package promises: on "\n", without the
// "\r" of "\r\n", without a BOM on line 1, and no line after a final "\n".
func naiveLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	parts := strings.Split(string(data), "\n")
	if strings.HasSuffix(string(data), "\n") {
		parts = parts[:len(parts)-1]
	}
	for i := range parts {
		if i < len(parts)-1 || strings.HasSuffix(string(data), "\n") {
			parts[i] = strings.TrimSuffix(parts[i], "\r")
		}
	}
	parts[0] = strings.TrimPrefix(parts[0], "\uFEFF")
	return parts
}

// naiveMemo holds what naiveMatches and naiveSpans computed, by pattern and
// text: the reference tests search one tree with each pattern under several
// contexts and limits, and the per-line regexp calls are their cost. Under
// -race each call may allocate and free the backtracker's 32 KiB bit vector
// (the race detector's sync.Pool drops a quarter of what is put back), so
// computing each answer once matters. The results are only read.
var naiveMemo sync.Map // naiveKey -> []int or []Span

type naiveKey struct {
	spans      bool
	expr, text string
}

// naiveMatches returns the numbers of the lines of data that re matches.
func naiveMatches(re *regexp.Regexp, data []byte) []int {
	key := naiveKey{expr: re.String(), text: string(data)}
	if v, ok := naiveMemo.Load(key); ok {
		return v.([]int)
	}
	var out []int
	for i, l := range naiveLines(data) {
		if re.MatchString(l) {
			out = append(out, i+1)
		}
	}
	naiveMemo.Store(key, out)
	return out
}

// naiveSpans returns the non-empty matches of re in line.
func naiveSpans(re *regexp.Regexp, line string) []Span {
	key := naiveKey{spans: true, expr: re.String(), text: line}
	if v, ok := naiveMemo.Load(key); ok {
		return v.([]Span)
	}
	var out []Span
	for _, loc := range re.FindAllStringIndex(line, -1) {
		if loc[1] > loc[0] {
			out = append(out, Span{loc[0], loc[1]})
		}
	}
	naiveMemo.Store(key, out)
	return out
}

// naiveContext returns the lines for the matching line numbers ms with
// context and the submatches of re, stopping context before line stop (0:
// none).
func naiveContext(re *regexp.Regexp, data []byte, ms []int, before, after, stop int) []Line {
	lines := naiveLines(data)
	show := map[int]bool{}
	isMatch := map[int]bool{}
	for _, m := range ms {
		isMatch[m] = true
		for n := max(1, m-before); n <= min(len(lines), m+after); n++ {
			if stop == 0 || n < stop {
				show[n] = true
			}
		}
	}
	var out []Line
	for n := 1; n <= len(lines); n++ {
		if show[n] {
			l := Line{Number: n, Content: lines[n-1], Match: isMatch[n]}
			if l.Match {
				l.Submatches = naiveSpans(re, l.Content)
			}
			out = append(out, l)
		}
	}
	return out
}

// naiveSearch is the reference: every file of files (path -> content) in
// path order, every line through the regexp, the limit applied afterwards.
func naiveSearch(tb testing.TB, files map[string][]byte, opts Options) ([]File, Summary) {
	tb.Helper()
	opts = withDefaults(opts)
	expr := opts.Pattern
	if opts.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if opts.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re := regexp.MustCompile(expr)
	var names []string
	for name := range files {
		if naiveSelected(name, opts) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var out []File
	var sum Summary
	remaining := opts.MaxMatches
	for _, name := range names {
		data := files[name]
		if bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0 {
			continue
		}
		sum.FilesScanned++
		sum.BytesScanned += int64(len(data))
		ms := naiveMatches(re, data)
		if len(ms) == 0 || !utf8.Valid(data) {
			continue
		}
		if remaining == 0 {
			sum.Truncated = true
			break
		}
		stop := 0
		if len(ms) > remaining {
			stop = ms[remaining]
			ms = ms[:remaining]
			sum.Truncated = true
		}
		remaining -= len(ms)
		sum.Matches += len(ms)
		sum.FilesMatched++
		out = append(out, File{Path: name, Raw: data, Lines: naiveContext(re, data, ms, opts.Before, opts.After, stop)})
		if stop > 0 {
			break
		}
	}
	return out, sum
}

// treeIgnores are the ignore files randomTree writes; naiveIgnored is
// what they mean, written out by hand.
var treeIgnores = map[string]string{
	".gitignore":   "# func main: ignore rules\n*.md\n!README.md\nb/\n/a-b\r\n",
	"a/.gitignore": "x_test.go*\n!x_test.go7\n",
}

// naiveIgnored reports whether the tree's ignore files exclude name.
func naiveIgnored(name string) bool {
	parts := strings.Split(name, "/")
	base := parts[len(parts)-1]
	switch {
	case slices.Contains(parts[:len(parts)-1], "b"): // b/: directories only
		return true
	case parts[0] == "a-b": // /a-b: anchored to the root
		return true
	case strings.HasSuffix(base, ".md") && base != "README.md":
		return true
	case parts[0] == "a" && strings.HasPrefix(base, "x_test.go") && base != "x_test.go7":
		return true
	}
	return false
}

// naiveGlobs are the globs the reference tests use and what they mean,
// written out by hand.
var naiveGlobs = map[string]func(name string) bool{
	"*.go":    func(name string) bool { return strings.HasSuffix(name, ".go") },
	"a/**":    func(name string) bool { return strings.HasPrefix(name, "a/") },
	"**/c/**": func(name string) bool { return strings.HasPrefix(name, "c/") || strings.Contains(name, "/c/") },
	"*.md":    func(name string) bool { return strings.HasSuffix(name, ".md") },
}

// naiveSelected reports whether the file name is searched under opts'
// filters (Path excepted).
func naiveSelected(name string, opts Options) bool {
	parts := strings.Split(name, "/")
	base := parts[len(parts)-1]
	if slices.ContainsFunc(parts, workspace.IsVCSName) {
		return false
	}
	if !opts.Hidden && slices.ContainsFunc(parts, func(p string) bool { return p[0] == '.' }) {
		return false
	}
	if !opts.NoIgnore && naiveIgnored(name) {
		return false
	}
	anyGlob := func(globs []string) bool {
		return slices.ContainsFunc(globs, func(g string) bool { return naiveGlobs[g](name) })
	}
	if len(opts.Globs) > 0 && !anyGlob(opts.Globs) {
		return false
	}
	if anyGlob(opts.ExcludeGlobs) {
		return false
	}
	if len(opts.Types) > 0 && !slices.ContainsFunc(opts.Types, func(t string) bool {
		globs, _ := TypeGlobs(t)
		return slices.ContainsFunc(globs, func(g string) bool { ok, _ := path.Match(g, base); return ok })
	}) {
		return false
	}
	return true
}

// vocabulary for random files: code-like words, words that exercise case
// folding (the Kelvin sign folds to k, long s to s), multi-byte text.
var vocabulary = []string{
	"func", "main", "func main()", "FUNC MAIN", "Func Main", "package", "return", "nil",
	"Context", "context.Context", "Deadline(", "ctx.Deadline()", "WithContext(", "foo_test",
	"bar_test.go", "_test", "x_testy", "task", "TASK", "ta\u017fk", "\u212aelvin", "kelvin",
	"stra\u00dfe", "STRASSE", "\u00c0B", "\u00e0b", "\u00e9t\u00e9", "\u03b1\u03b2\u03b3",
	"\u03a3\u03c3\u03c2", "color", "colour", "COLOR", "{", "}", "(", ")", ";", "//", "0", "42",
	"1234", "a", "b", "\t", "    ", "x", "y", "z", "==", "!=", "<-", "\u2028", "\u00a0",
}

// randomFile returns random lines of vocabulary with mixed endings.
func randomFile(r *rand.Rand) []byte {
	var b bytes.Buffer
	if r.IntN(20) == 0 {
		b.WriteString("\uFEFF")
	}
	for range r.IntN(60) {
		for range r.IntN(8) {
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocabulary[r.IntN(len(vocabulary))])
		}
		switch r.IntN(10) {
		case 0:
			b.WriteString("\r\n")
		case 1:
			b.WriteString("\r")
		default:
			b.WriteString("\n")
		}
	}
	if r.IntN(4) == 0 && b.Len() > 0 {
		b.Truncate(b.Len() - 1) // no final newline
	}
	return b.Bytes()
}

// randomTree writes n random files under dir, including some binary and
// some invalid UTF-8 ones, with names that test ordering ("a", "a.go",
// "a-b"), hidden files and directories, version-control metadata (a .git
// directory, nested CVS and .hg ones) and the ignore files of treeIgnores,
// and returns them all by path.
func randomTree(tb testing.TB, dir string, seed uint64, n int) map[string][]byte {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	dirs := []string{"", "a/", "a-b/", "a/b/", "a/b/c/", "a.d/", "z/", "z/a/", "\u00e9/", "c/", ".h/", "a/.h/"}
	bases := []string{"a", "a.go", "a-b", "b", "main.go", "x_test.go", "README.md", "notes.md", "\u00e9.txt", "Z", ".env", "run.sh", "x.ts"}
	files := map[string][]byte{
		".git/config": []byte("func main\n"),
		".git/HEAD":   []byte("func main\n"),
		"a/CVS/Root":  []byte("func main\n"),
		"z/.hg/hgrc":  []byte("func main\n"),
	}
	for name, content := range treeIgnores {
		files[name] = []byte(content)
	}
	for len(files) < n {
		name := dirs[r.IntN(len(dirs))] + bases[r.IntN(len(bases))]
		if r.IntN(4) > 0 {
			name += strconv.Itoa(r.IntN(50))
		}
		if _, isDir := files[name]; isDir || hasDirPrefix(files, name) {
			continue
		}
		if slices.ContainsFunc(dirs, func(d string) bool { return d == name+"/" || strings.HasPrefix(d, name+"/") }) {
			continue
		}
		data := randomFile(r)
		switch r.IntN(25) {
		case 0:
			data = append(data[:len(data):len(data)], 0, 1, 2)
		case 1:
			data = append(data[:len(data):len(data)], 0xff, '\n')
		}
		files[name] = data
	}
	m := map[string]string{}
	for k, v := range files {
		m[k] = string(v)
	}
	writeTree(tb, dir, m)
	return files
}

func hasDirPrefix(files map[string][]byte, name string) bool {
	for f := range files {
		if strings.HasPrefix(name, f+"/") || strings.HasPrefix(f, name+"/") {
			return true
		}
	}
	return false
}
