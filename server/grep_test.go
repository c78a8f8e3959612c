package server_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/floor"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// grepAll runs a Grep and returns the files it streamed and the summary.
func (e *env) grepAll(req *hashlinev1.GrepRequest) ([]*hashlinev1.GrepFile, *hashlinev1.GrepSummary, error) {
	e.t.Helper()
	var files []*hashlinev1.GrepFile
	sum, err := e.c.Grep(e.ctx, req, func(f *hashlinev1.GrepFile) error {
		files = append(files, f)
		return nil
	})
	return files, sum, err
}

func grepPaths(files []*hashlinev1.GrepFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.GetPath())
	}
	return out
}

// TestGrepFilters drives type, hidden, no_ignore and the globs through the
// real gRPC stack. Every file holds "main", so the files streamed are
// exactly the files searched.
func TestGrepFilters(t *testing.T) {
	tree := map[string]string{
		".gitignore":   "# main\ngen/\n",
		".env":         "main=1\n",
		".hidden/x.go": "func main() {}\n",
		".git/config":  "main\n",
		"gen/out.go":   "func main() {}\n",
		"main.go":      "package main\n\nfunc main() {}\n",
		"notes.md":     "the main idea\n",
		"web/app.ts":   "export function main() {}\n",
		"web/run.sh":   "main\n",
	}
	tests := []struct {
		name string
		req  *hashlinev1.GrepRequest
		want []string
	}{
		{"by default hidden, ignored and .git files are skipped", &hashlinev1.GrepRequest{},
			[]string{"main.go", "notes.md", "web/app.ts", "web/run.sh"}},
		{"a type selects its files", &hashlinev1.GrepRequest{Type: []string{"go"}},
			[]string{"main.go"}},
		{"several types add up", &hashlinev1.GrepRequest{Type: []string{"md", "ts"}},
			[]string{"notes.md", "web/app.ts"}},
		{"an alias names the same type", &hashlinev1.GrepRequest{Type: []string{"shell"}},
			[]string{"web/run.sh"}},
		{"hidden adds dot files and directories but not .git", &hashlinev1.GrepRequest{Hidden: true},
			[]string{".env", ".gitignore", ".hidden/x.go", "main.go", "notes.md", "web/app.ts", "web/run.sh"}},
		{"a type combines with hidden", &hashlinev1.GrepRequest{Type: []string{"go"}, Hidden: true},
			[]string{".hidden/x.go", "main.go"}},
		{"no_ignore searches ignored files", &hashlinev1.GrepRequest{Type: []string{"go"}, NoIgnore: true},
			[]string{"gen/out.go", "main.go"}},
		{"a type and a glob must both match", &hashlinev1.GrepRequest{Type: []string{"ts", "go"}, Glob: []string{"web/**"}},
			[]string{"web/app.ts"}},
		{"exclude globs still apply", &hashlinev1.GrepRequest{ExcludeGlob: []string{"*.md", "web/"}},
			[]string{"main.go"}},
	}
	e := newEnv(t)
	for name, content := range tree {
		e.write(name, content)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Pattern = "main"
			files, sum, err := e.grepAll(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := grepPaths(files); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("files %q, want %q", got, tt.want)
			}
			bytes := 0
			for _, p := range tt.want {
				bytes += len(tree[p])
			}
			if int(sum.GetFilesScanned()) != len(tt.want) || sum.GetBytesScanned() != int64(bytes) {
				t.Errorf("scanned %d files, %d bytes; want %d, %d", sum.GetFilesScanned(), sum.GetBytesScanned(), len(tt.want), bytes)
			}
			if sum.GetElapsed().AsDuration() <= 0 {
				t.Errorf("elapsed = %v, want the search's time", sum.GetElapsed())
			}
		})
	}
}

func TestGrepUnknownTypeListsTheKnownOnes(t *testing.T) {
	e := newEnv(t)
	e.write("a.go", "x\n")
	_, _, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: "x", Type: []string{"go", "golang2"}})
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a server error", err)
	}
	if ce.Code != codes.InvalidArgument || ce.Reason != "INVALID_ARGUMENT" || ce.Metadata["field"] != "type" {
		t.Errorf("got %v %s %v, want INVALID_ARGUMENT on field type", ce.Code, ce.Reason, ce.Metadata)
	}
	for _, want := range []string{`"golang2"`, "go, html", "ts", "yaml", "glob"} {
		if !strings.Contains(ce.Message, want) {
			t.Errorf("message %q does not mention %s", ce.Message, want)
		}
	}
}

// TestGrepTagsAndVersionAreReads checks that every tag Grep prints is the
// tag Read prints for that line, and the version is Read's, on a file with a
// BOM, CRLF endings, non-ASCII text and no final newline.
func TestGrepTagsAndVersionAreReads(t *testing.T) {
	const content = "\uFEFFpackage x\r\n\r\n// h\u00e9llo w\u00f6rld \u212a\r\nfunc main() {}\r\n\tx := 1\n}"
	e := newEnv(t)
	e.write("f.go", content)
	files, _, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: "^", MaxMatches: 1000})
	if err != nil {
		t.Fatal(err)
	}
	read, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].GetVersion() != read.GetVersion() {
		t.Fatalf("files %v, want f.go at version %s", files, read.GetVersion())
	}
	if len(files[0].GetLines()) != len(read.GetLines()) {
		t.Fatalf("%d lines, Read has %d", len(files[0].GetLines()), len(read.GetLines()))
	}
	for i, l := range files[0].GetLines() {
		r := read.GetLines()[i]
		if l.GetNumber() != r.GetNumber() || l.GetHash() != r.GetHash() || l.GetContent() != r.GetContent() {
			t.Errorf("grep line %d:%s|%q, read %d:%s|%q", l.GetNumber(), l.GetHash(), l.GetContent(), r.GetNumber(), r.GetHash(), r.GetContent())
		}
	}
}

func TestGrepSubmatches(t *testing.T) {
	long := "foo" + strings.Repeat("-", 10) + "foo" + strings.Repeat("-", 10) + "foo"
	tests := []struct {
		name    string
		content string
		req     *hashlinev1.GrepRequest
		want    [][2]int32
	}{
		{"every match in the line, as byte ranges", "foo bar foo\n", &hashlinev1.GrepRequest{Pattern: "foo"}, [][2]int32{{0, 3}, {8, 11}}},
		{"offsets count bytes of non-ASCII text", "\u00e9\u00e9 foo\n", &hashlinev1.GrepRequest{Pattern: "foo"}, [][2]int32{{5, 8}}},
		{"case-insensitive matches", "Foo FOO\n", &hashlinev1.GrepRequest{Pattern: "foo", CaseInsensitive: true}, [][2]int32{{0, 3}, {4, 7}}},
		{"a regexp's whole match", "(x_test) y\n", &hashlinev1.GrepRequest{Pattern: `\w+_test\b`}, [][2]int32{{1, 7}}},
		{"spans past the cut of a long line, or across it, are left out", long + "\n", &hashlinev1.GrepRequest{Pattern: "foo"}, [][2]int32{{0, 3}}},
		{"empty matches are not spans", "abc\n", &hashlinev1.GrepRequest{Pattern: "x*"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Lines are cut after 15 bytes: the second foo of long spans
			// bytes 13 to 16.
			e := newEnv(t, engine.WithMaxLineBytes(15))
			e.write("f.txt", tt.content)
			files, _, err := e.grepAll(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || len(files[0].GetLines()) != 1 {
				t.Fatalf("files %v, want one line", files)
			}
			l := files[0].GetLines()[0]
			var got [][2]int32
			for _, sp := range l.GetSubmatches() {
				got = append(got, [2]int32{sp.GetStart(), sp.GetEnd()})
				if int(sp.GetEnd()) > len(l.GetContent()) {
					t.Errorf("span %v is past the content %q", sp, l.GetContent())
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("spans %v, want %v (content %q)", got, tt.want, l.GetContent())
			}
		})
	}
}

func TestGrepContextLinesHaveNoSubmatches(t *testing.T) {
	e := newEnv(t)
	e.write("f.txt", "a\nfoo\nb\n")
	files, _, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: "foo", Before: 1, After: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range files[0].GetLines() {
		got = append(got, fmt.Sprintf("%d %v %d", l.GetNumber(), l.GetMatch(), len(l.GetSubmatches())))
	}
	if want := []string{"1 false 0", "2 true 1", "3 false 0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// TestGrepStopsWhenTheClientGoesAway cancels the call on the first file.
// The client's windows are static and small, and the matches are larger
// than them, so the server cannot send its summary before it sees the
// cancellation: with dynamic windows on a fast transport it could finish
// first, and a client reading buffered messages after cancelling could
// then get the summary and no error.
func TestGrepStopsWhenTheClientGoesAway(t *testing.T) {
	root := t.TempDir()
	line := strings.Repeat("x", 1000) + "\n"
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%03d.txt", i)), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	const window = 64 << 10 // the smallest grpc allows; the matches are about 200 KB
	c := serveOverBufconn(t, server.New(ws), grpc.WithStaticStreamWindowSize(window), grpc.WithStaticConnWindowSize(window))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err = c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "x", MaxMatches: 1000}, func(*hashlinev1.GrepFile) error {
		cancel()
		return nil
	})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != codes.Canceled {
		t.Errorf("err = %v, want CANCELED", err)
	}
}

// BenchmarkGrepGoSrc runs Grep over Go's own source tree through the full
// gRPC stack over bufconn, interleaved with the same search in-process, and
// reports both medians and their ratio: the cost of versions, tags,
// submatches and messages on top of the engine.
func BenchmarkGrepGoSrc(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	ws, err := workspace.Open(dir)
	if err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	b.Cleanup(func() { ws.Close() })
	c := serveOverBufconn(b, server.New(ws))
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	ctx := context.Background()
	for _, q := range []*hashlinev1.GrepRequest{
		{Pattern: "func main"},
		{Pattern: `\w+_test\b`},
		{Pattern: "func main", Before: 2, After: 2},
	} {
		q.MaxMatches = math.MaxInt32
		b.Run(fmt.Sprintf("%q-C%d", q.Pattern, q.Before), func(b *testing.B) {
			var rpc, local []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := c.Grep(ctx, q, func(*hashlinev1.GrepFile) error { return nil }); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				_, err := grep.Search(ctx, grep.RootFS(root), grep.Options{Pattern: q.Pattern, Before: int(q.Before), After: int(q.After), MaxMatches: math.MaxInt32},
					func(f grep.File) error {
						for _, l := range f.Lines {
							hashline.Hasher{}.Sum(l.Content)
						}
						return nil
					})
				if err != nil {
					b.Fatal(err)
				}
				rpc, local = append(rpc, t1.Sub(t0)), append(local, time.Since(t1))
			}
			mr, ml := floor.Median(rpc), floor.Median(local)
			b.ReportMetric(float64(mr.Microseconds())/1e3, "grpc-ms")
			b.ReportMetric(float64(ml.Microseconds())/1e3, "local-ms")
			b.ReportMetric(float64(mr)/float64(ml), "ratio")
		})
	}
}

// serveOverBufconn serves svc with the full server stack on an in-memory
// listener and returns a client, closed at cleanup; opts are added to the
// client's connection.
func serveOverBufconn(tb testing.TB, svc *server.Service, opts ...grpc.DialOption) *client.Client {
	gs, _ := server.NewGRPCServer(svc, server.GRPCConfig{DefaultTimeout: time.Minute})
	lis := bufconn.Listen(1 << 20)
	go gs.Serve(lis)
	tb.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return client.New(conn)
}
