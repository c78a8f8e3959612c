package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// newEngine returns an engine over a new workspace holding files (path to
// content), for one agent's calls through ctx.
func newEngine(t *testing.T, files map[string]string, opts ...engine.Option) (*engine.Engine, context.Context) {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root, workspace.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(ws, opts...)
	t.Cleanup(func() {
		e.Shutdown()
		ws.Close()
	})
	return e, engine.WithAgent(context.Background(), "agent")
}

// tags returns the tagged lines from..to of content as Read shows them.
func tags(content string, from, to int) []hashline.TaggedLine {
	lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(content, "\r\n", "\n"), "\n"), "\n")
	var out []hashline.TaggedLine
	for n := from; n <= to; n++ {
		out = append(out, hashline.TaggedLine{Number: n, Hash: hashline.Hasher{}.Sum(lines[n-1]), Content: lines[n-1]})
	}
	return out
}

func text(lines []hashline.TaggedLine) string {
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = l.String()
	}
	return strings.Join(s, "\n")
}

func TestRead(t *testing.T) {
	t.Parallel()
	const five = "one\ntwo\nthree\nfour\nfive\n"
	long := strings.Repeat("x", 40) + "\n"
	for _, tc := range []struct {
		name  string
		file  string
		opts  []engine.Option
		req   engine.ReadRequest
		lines []hashline.TaggedLine
		want  engine.ReadResult // Path, Version, Lines and Text are checked apart
	}{
		{"the whole file", five, nil, engine.ReadRequest{},
			tags(five, 1, 5), engine.ReadResult{TotalLines: 5, EOL: "lf", Encoding: workspace.UTF8}},
		{"a page from an offset", five, nil, engine.ReadRequest{Offset: 2, Limit: 2},
			tags(five, 2, 3), engine.ReadResult{TotalLines: 5, Truncated: true, NextOffset: 4, EOL: "lf", Encoding: workspace.UTF8}},
		{"a limit over the read limit is the read limit", five, []engine.Option{engine.WithReadLimit(3)}, engine.ReadRequest{Limit: 100},
			tags(five, 1, 3), engine.ReadResult{TotalLines: 5, Truncated: true, NextOffset: 4, EOL: "lf", Encoding: workspace.UTF8}},
		{"the last page", five, nil, engine.ReadRequest{Offset: 4, Limit: 10},
			tags(five, 4, 5), engine.ReadResult{TotalLines: 5, EOL: "lf", Encoding: workspace.UTF8}},
		{"the byte budget ends the page", five, []engine.Option{engine.WithReadByteBudget(len(text(tags(five, 1, 2))))}, engine.ReadRequest{},
			tags(five, 1, 2), engine.ReadResult{TotalLines: 5, Truncated: true, NextOffset: 3, EOL: "lf", Encoding: workspace.UTF8}},
		{"crlf endings and a byte order mark", "\ufeffa\r\nb\r\n", nil, engine.ReadRequest{},
			tags("a\r\nb\r\n", 1, 2), engine.ReadResult{TotalLines: 2, EOL: "crlf", BOM: true, Encoding: workspace.UTF8}},
		{"an empty file", "", nil, engine.ReadRequest{},
			nil, engine.ReadResult{TotalLines: 0, EOL: "lf", Encoding: workspace.UTF8}},
		{"omitted lines leave the text", five, nil, engine.ReadRequest{Limit: 2, OmitLines: true},
			nil, engine.ReadResult{TotalLines: 5, Truncated: true, NextOffset: 3, EOL: "lf", Encoding: workspace.UTF8}},
		{"a long line is cut, its hash is the whole line's", long, []engine.Option{engine.WithMaxLineBytes(10)}, engine.ReadRequest{},
			[]hashline.TaggedLine{{Number: 1, Hash: hashline.Hasher{}.Sum(long[:40]), Content: hashline.CutLine(long[:40], 10)}},
			engine.ReadResult{TotalLines: 1, EOL: "lf", Encoding: workspace.UTF8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ctx := newEngine(t, map[string]string{"f.txt": tc.file}, tc.opts...)
			tc.req.Path = "f.txt"
			got, err := e.Read(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != "f.txt" || got.Version != workspace.Version([]byte(tc.file)) {
				t.Errorf("path %q, version %q; want f.txt, %q", got.Path, got.Version, workspace.Version([]byte(tc.file)))
			}
			if !equalLines(got.Lines, tc.lines) {
				t.Errorf("lines %v, want %v", got.Lines, tc.lines)
			}
			wantText := text(tc.lines)
			if tc.req.OmitLines {
				wantText = text(tags(tc.file, 1, 2))
			}
			if got.Text != wantText {
				t.Errorf("text %q, want %q", got.Text, wantText)
			}
			rest := *got
			rest.Path, rest.Version, rest.Lines, rest.Text = "", "", nil, ""
			if !reflect.DeepEqual(rest, tc.want) {
				t.Errorf("got %+v, want %+v", rest, tc.want)
			}
		})
	}
}

func equalLines(a, b []hashline.TaggedLine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		req    engine.ReadRequest
		field  string
		reason hashline.Reason
	}{
		{"a negative offset", engine.ReadRequest{Path: "f.txt", Offset: -1}, "offset", engine.ReasonInvalidArgument},
		{"a negative limit", engine.ReadRequest{Path: "f.txt", Limit: -1}, "limit", engine.ReasonInvalidArgument},
		{"an offset past the end", engine.ReadRequest{Path: "f.txt", Offset: 3}, "offset", engine.ReasonLineOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ctx := newEngine(t, map[string]string{"f.txt": "a\nb\n"})
			_, err := e.Read(ctx, tc.req)
			var re *engine.RequestError
			if !errors.As(err, &re) || re.Field != tc.field || re.Reason != tc.reason {
				t.Fatalf("got %v, want a %s refusal of %s", err, tc.reason, tc.field)
			}
		})
	}
	t.Run("a missing file", func(t *testing.T) {
		t.Parallel()
		e, ctx := newEngine(t, nil)
		if _, err := e.Read(ctx, engine.ReadRequest{Path: "none.txt"}); !errors.Is(err, workspace.ErrNotFound) {
			t.Fatalf("got %v, want not found", err)
		}
	})
}

// A Read's page is what its agent saw: the engine remembers it in the
// agent's view of the file, which edits are checked against.
func TestReadRecordsTheView(t *testing.T) {
	t.Parallel()
	e, ctx := newEngine(t, map[string]string{"f.txt": "a\nb\nc\n"})
	if seen := e.ViewStats(); seen.Entries != 0 {
		t.Fatalf("%d views before any Read", seen.Entries)
	}
	if _, err := e.Read(ctx, engine.ReadRequest{Path: "f.txt", Offset: 2, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if seen := e.ViewStats(); seen.Entries != 1 {
		t.Fatalf("%d views after a Read, want 1", seen.Entries)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	h, err := hashline.NewHasher(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, require := range []bool{false, true} {
		e, ctx := newEngine(t, nil, engine.WithRequireRead(require), engine.WithHasher(h))
		got, err := e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Root != e.Workspace().Dir() || got.HashLen != 4 || got.RequireRead != require || got.Version == "" {
			t.Errorf("got %+v; want root %s, hash length 4, requireRead %t and a version", got, e.Workspace().Dir(), require)
		}
	}
}
