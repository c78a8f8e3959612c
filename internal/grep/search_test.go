package grep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSearchErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "x\n"})
	fsys := rootFS(t, dir)
	tests := []struct {
		name    string
		opts    Options
		is      error
		message string
	}{
		{"a pattern that does not compile wraps ErrBadPattern with RE2's message", Options{Pattern: "(a"}, ErrBadPattern, "missing closing )"},
		{"a bad glob wraps ErrBadPattern", Options{Pattern: "x", Globs: []string{"[a"}}, ErrBadPattern, `"[a"`},
		{"a bad exclude glob wraps ErrBadPattern", Options{Pattern: "x", ExcludeGlobs: []string{"a/{b"}}, ErrBadPattern, `"a/{b"`},
		{"a missing path wraps fs.ErrNotExist", Options{Pattern: "x", Path: "nope/a.txt"}, fs.ErrNotExist, "nope"},
		{"a path leading out of the root is refused", Options{Pattern: "x", Path: "../a.txt"}, fs.ErrInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := collect(t, fsys, tt.opts)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want one wrapping %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("err = %q, want it to mention %q", err, tt.message)
			}
		})
	}
}

func TestSearchLines(t *testing.T) {
	tests := []struct {
		name    string
		content string
		opts    Options
		want    []Line
	}{
		{
			name:    "context of nearby matches is merged and never repeats a line",
			content: "1\n2 x\n3\n4 x\n5\n6\n7\n8 x\n9\n",
			opts:    Options{Pattern: "x", Before: 1, After: 1},
			want: []Line{ctx(1, "1"), hit(2, "2 x", 2, 3), ctx(3, "3"), hit(4, "4 x", 2, 3), ctx(5, "5"),
				ctx(7, "7"), hit(8, "8 x", 2, 3), ctx(9, "9")},
		},
		{
			name:    "context is clipped at the start and end of the file",
			content: "x\ny\nx",
			opts:    Options{Pattern: "x", Before: 5, After: 5},
			want:    []Line{hit(1, "x", 0, 1), ctx(2, "y"), hit(3, "x", 0, 1)},
		},
		{
			name:    "the \\r of CRLF is neither content nor matched, so $ anchors before it",
			content: "a x\r\nb\r\nx c\r\n",
			opts:    Options{Pattern: `x$|^x`, After: 1},
			want:    []Line{hit(1, "a x", 2, 3), ctx(2, "b"), hit(3, "x c", 0, 1)},
		},
		{
			name:    "a lone \\r is content",
			content: "x\ry\n",
			opts:    Options{Pattern: `x\ry$`},
			want:    []Line{hit(1, "x\ry", 0, 3)},
		},
		{
			name:    "a BOM is not part of line 1",
			content: "\uFEFFpackage x\n",
			opts:    Options{Pattern: `^package`},
			want:    []Line{hit(1, "package x", 0, 7)},
		},
		{
			name:    "case-insensitive literals fold Unicode: K matches the Kelvin sign, s the long s",
			content: "\u212Aelvin\nta\u017fk\nTASK\nother\n",
			opts:    Options{Pattern: "kelvin|task", CaseInsensitive: true},
			want:    []Line{hit(1, "\u212Aelvin", 0, 8), hit(2, "ta\u017fk", 0, 5), hit(3, "TASK", 0, 4)},
		},
		{
			name:    "Literal quotes regexp syntax",
			content: "a.b\naxb\n",
			opts:    Options{Pattern: "a.b", Literal: true},
			want:    []Line{hit(1, "a.b", 0, 3)},
		},
		{
			name:    "a NUL after the first 8 KiB does not make a file binary",
			content: "x\n" + strings.Repeat("y", binaryProbe) + "\x00\n",
			opts:    Options{Pattern: "^x"},
			want:    []Line{hit(1, "x", 0, 1)},
		},
		{
			name:    "submatches are every non-overlapping match, in bytes of the content",
			content: "\u00e9 foo\u00e9foo foo\r\n",
			opts:    Options{Pattern: `foo`},
			want:    []Line{hit(1, "\u00e9 foo\u00e9foo foo", 3, 6, 8, 11, 12, 15)},
		},
		{
			name:    "empty matches are not submatches",
			content: "ab\n\nxx\n",
			opts:    Options{Pattern: `x*`},
			want:    []Line{hit(1, "ab"), hit(2, ""), hit(3, "xx", 0, 2)},
		},
		{
			name:    "case-insensitive submatches cover the folded text",
			content: "Func MAIN func main\n",
			opts:    Options{Pattern: `func main`, CaseInsensitive: true},
			want:    []Line{hit(1, "Func MAIN func main", 0, 9, 10, 19)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"f": tt.content})
			files, _, err := collect(t, rootFS(t, dir), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 {
				t.Fatalf("got %d files, want 1", len(files))
			}
			if !reflect.DeepEqual(files[0].Lines, tt.want) {
				t.Errorf("lines\n got %+v\nwant %+v", files[0].Lines, tt.want)
			}
			if string(files[0].Raw) != tt.content {
				t.Errorf("Raw = %q, want the file's bytes", files[0].Raw)
			}
		})
	}
}

func TestSearchSkipsFilesThatAreNotText(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"binary":  "x\x00x\n",
		"latin1":  "x caf\xe9\n",
		"big":     "x" + strings.Repeat(" ", 100) + "\n",
		"text":    "x\n",
		"utf8.go": "x caf\u00e9\n",
	})
	for _, single := range []string{"", "binary", "latin1"} {
		files, _, err := collect(t, rootFS(t, dir), Options{Pattern: "x", MaxFileBytes: 50, Path: single})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"text", "utf8.go"}
		if single != "" {
			want = nil
		}
		if got := paths(files); !reflect.DeepEqual(got, want) {
			t.Errorf("Path %q: got %q, want %q", single, got, want)
		}
	}
}

func TestMaxMatches(t *testing.T) {
	dir := t.TempDir()
	// Three files of four matches each, separated by non-matching lines.
	writeTree(t, dir, map[string]string{
		"1": "x\n-\nx\n-\nx\n-\nx\n", "2": "x\n-\nx\n-\nx\n-\nx\n", "3": "x\n-\nx\n-\nx\n-\nx\n",
	})
	tests := []struct {
		limit     int
		files     []string
		lastLines int
		truncated bool
	}{
		{limit: 6, files: []string{"1", "2"}, lastLines: 4, truncated: true},
		{limit: 4, files: []string{"1"}, lastLines: 7, truncated: true},
		{limit: 12, files: []string{"1", "2", "3"}, lastLines: 7, truncated: false},
		{limit: 1, files: []string{"1"}, lastLines: 2, truncated: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("a limit of %d matches", tt.limit), func(t *testing.T) {
			files, sum, err := collect(t, rootFS(t, dir), Options{Pattern: "x", MaxMatches: tt.limit, After: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := paths(files); !reflect.DeepEqual(got, tt.files) {
				t.Fatalf("files %q, want %q", got, tt.files)
			}
			if sum.Matches != tt.limit || sum.Truncated != tt.truncated {
				t.Errorf("summary %+v, want %d matches, truncated %v", sum, tt.limit, tt.truncated)
			}
			last := files[len(files)-1].Lines
			if len(last) != tt.lastLines {
				t.Errorf("last file has lines %+v, want %d (context stops before a cut match)", last, tt.lastLines)
			}
			if l := last[len(last)-1]; l.Match == false && l.Content == "x" {
				t.Errorf("a match left out is shown as context: %+v", l)
			}
		})
	}
}

func TestDefaultMaxMatches(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f": strings.Repeat("x\n", DefaultMaxMatches+1)})
	_, sum, err := collect(t, rootFS(t, dir), Options{Pattern: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Matches != DefaultMaxMatches || !sum.Truncated {
		t.Errorf("summary %+v, want %d matches, truncated", sum, DefaultMaxMatches)
	}
}

// manyFiles writes n matching files.
func manyFiles(t *testing.T, n int) string {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("d%d/f%04d", i%10, i)] = "x\n"
	}
	writeTree(t, dir, files)
	return dir
}

func TestCancelStopsPromptly(t *testing.T) {
	dir := manyFiles(t, 500)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	start := time.Now()
	_, err := Search(ctx, rootFS(t, dir), Options{Pattern: "x", MaxMatches: 1 << 20}, func(File) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("emit called %d times, want 1: nothing after cancellation", calls)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to stop", d)
	}
}

func TestEmitErrorIsReturned(t *testing.T) {
	dir := manyFiles(t, 50)
	boom := errors.New("boom")
	calls := 0
	_, err := Search(context.Background(), rootFS(t, dir), Options{Pattern: "x"}, func(File) error {
		calls++
		return boom
	})
	if err != boom || calls != 1 {
		t.Errorf("err = %v after %d calls, want boom after 1", err, calls)
	}
}

func TestEmitIsNeverConcurrent(t *testing.T) {
	dir := manyFiles(t, 300)
	var inside atomic.Int32
	files, _, err := collect(t, rootFS(t, dir), Options{Pattern: "x", MaxMatches: 1 << 20, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Search(context.Background(), rootFS(t, dir), Options{Pattern: "x", MaxMatches: 1 << 20, Workers: 8}, func(File) error {
		if inside.Add(1) != 1 {
			t.Error("emit called concurrently")
		}
		runtime.Gosched()
		inside.Add(-1)
		return nil
	})
	if err != nil || len(files) != 300 {
		t.Errorf("err = %v, %d files, want 300", err, len(files))
	}
}

func TestSymlinks(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "x\n", "d/y.txt": "x\n"})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"real/a.txt": "x\n"})
	links := map[string]string{
		"out-file":  filepath.Join(outside, "secret.txt"),
		"out-dir":   filepath.Join(outside, "d"),
		"in-file":   "real/a.txt",
		"in-dir":    "real",
		"dangling":  "nowhere",
		"real/loop": "../real",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, fsys := range map[string]fs.FS{"os.Root": rootFS(t, dir), "generic": plainFS{rootFS(t, dir)}} {
		files, _, err := collect(t, fsys, Options{Pattern: "x"})
		if err != nil {
			t.Fatal(err)
		}
		// Links to files inside are followed, links to directories never,
		// and a link leading out is skipped silently.
		want := []string{"in-file", "real/a.txt"}
		if got := paths(files); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	if _, _, err := collect(t, rootFS(t, dir), Options{Pattern: "x", Path: "out-file"}); err == nil {
		t.Error("a link leading out named as Path was searched")
	}
}

func TestFilesOverTheHeldBudgetAreReadAgain(t *testing.T) {
	dir := t.TempDir()
	files := randomTree(t, dir, 3, 200)
	opts := Options{Pattern: `(?i)func|main`, Before: 1, After: 1, MaxMatches: 1 << 20, Hidden: true, MaxHeldBytes: 1}
	want, _ := naiveSearch(t, files, opts)
	var got []File
	_, err := Search(context.Background(), rootFS(t, dir), opts, func(f File) error {
		got = append(got, f)
		time.Sleep(time.Millisecond) // a slow client lets the workers run ahead
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	compareFiles(t, got, want)
}

func TestLargeFiles(t *testing.T) {
	dir := t.TempDir()
	filler := strings.Repeat("abcdefghij\n", 20<<10) // 220 KiB, more than a first read
	writeTree(t, dir, map[string]string{
		"fits":    filler + "x\n",
		"toolong": filler + filler + "x\n",
	})
	for name, fsys := range map[string]fs.FS{"os.Root": rootFS(t, dir), "generic": plainFS{rootFS(t, dir)}} {
		files, sum, err := collect(t, fsys, Options{Pattern: "^x", MaxFileBytes: 300 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || files[0].Path != "fits" || len(files[0].Raw) != len(filler)+2 || files[0].Lines[0].Number != 20<<10+1 {
			t.Errorf("%s: got %q, want fits with its match on its last line", name, paths(files))
		}
		if sum.FilesScanned != 1 {
			t.Errorf("%s: %d files scanned, want 1: the file over MaxFileBytes is skipped", name, sum.FilesScanned)
		}
	}
}

func TestNoDescriptorLeaks(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	openFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	dir := manyFiles(t, 400)
	fsys := rootFS(t, dir)
	before := openFDs()
	stops := map[string]func(cancel context.CancelFunc) error{
		"finished":  func(context.CancelFunc) error { return nil },
		"cancelled": func(cancel context.CancelFunc) error { cancel(); return nil },
		"failed":    func(context.CancelFunc) error { return errors.New("boom") },
	}
	for name, stop := range stops {
		for _, limit := range []int{3, 1 << 20} {
			ctx, cancel := context.WithCancel(context.Background())
			Search(ctx, fsys, Options{Pattern: "x", MaxMatches: limit}, func(File) error { return stop(cancel) })
			cancel()
			if after := openFDs(); after != before {
				t.Errorf("%s, limit %d: %d descriptors open after Search, %d before", name, limit, after, before)
			}
		}
	}
}

// hit is a matching line with submatches given as start, end pairs.
func hit(n int, content string, spans ...int) Line {
	l := Line{Number: n, Content: content, Match: true}
	for i := 0; i+1 < len(spans); i += 2 {
		l.Submatches = append(l.Submatches, Span{spans[i], spans[i+1]})
	}
	return l
}

// ctx is a context line.
func ctx(n int, content string) Line { return Line{Number: n, Content: content} }

// TestWindowAndWorkers checks that results do not depend on how many
// workers there are or how far they may run ahead of emit, down to a window
// of one task (the emitting goroutine then does most tasks itself).
func TestWindowAndWorkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := randomTree(t, dir, 5, 300)
	for _, win := range []int{1, 2, 1024} {
		for _, workers := range []int{1, 2, 7} {
			t.Run(fmt.Sprintf("window %d, %d workers", win, workers), func(t *testing.T) {
				t.Parallel()
				opts := Options{Pattern: `(?i)main|x_test`, Before: 1, After: 1, MaxMatches: 1 << 20, Workers: workers, window: win}
				want, _ := naiveSearch(t, files, opts)
				var got []File
				_, err := Search(context.Background(), rootFS(t, dir), opts, func(f File) error {
					got = append(got, f)
					if len(got)%7 == 0 {
						time.Sleep(time.Millisecond) // a slow client now and then
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				compareFiles(t, got, want)
			})
		}
	}
}
