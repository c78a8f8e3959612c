package engine_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

func grepLine(n int, content string, match bool, spans ...grep.Span) engine.GrepLine {
	return engine.GrepLine{TaggedLine: hashline.TaggedLine{Number: n, Hash: hashline.Hasher{}.Sum(content), Content: content}, Match: match, Submatches: spans}
}

func TestGrep(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"a.txt":   "alpha\nbeta\ngamma beta\n",
		"b/c.txt": "beta\n",
		"d.go":    "package d // beta\n",
	}
	long := strings.Repeat("x", 20) + "beta" + strings.Repeat("y", 20)
	for _, tc := range []struct {
		name  string
		files map[string]string
		opts  []engine.Option
		req   engine.GrepRequest
		want  []engine.GrepFile
		sum   grep.Summary // but Elapsed
	}{
		{"every file in path order", files, nil, engine.GrepRequest{Pattern: "beta"}, []engine.GrepFile{
			{Path: "a.txt", Lines: []engine.GrepLine{grepLine(2, "beta", true, grep.Span{Start: 0, End: 4}), grepLine(3, "gamma beta", true, grep.Span{Start: 6, End: 10})}},
			{Path: "b/c.txt", Lines: []engine.GrepLine{grepLine(1, "beta", true, grep.Span{Start: 0, End: 4})}},
			{Path: "d.go", Lines: []engine.GrepLine{grepLine(1, "package d // beta", true, grep.Span{Start: 13, End: 17})}},
		}, grep.Summary{FilesScanned: 3, FilesMatched: 3, Matches: 4, BytesScanned: int64(len(files["a.txt"]) + len(files["b/c.txt"]) + len(files["d.go"]))}},
		{"context, a path, a literal", files, nil, engine.GrepRequest{Pattern: "a.", Literal: true, Path: "a.txt", Before: 1}, nil,
			grep.Summary{FilesScanned: 1, BytesScanned: int64(len(files["a.txt"]))}},
		{"context lines and a type", files, nil, engine.GrepRequest{Pattern: "^gamma", Types: []string{"txt"}, Before: 1}, []engine.GrepFile{
			{Path: "a.txt", Lines: []engine.GrepLine{grepLine(2, "beta", false), grepLine(3, "gamma beta", true, grep.Span{Start: 0, End: 5})}},
		}, grep.Summary{FilesScanned: 2, FilesMatched: 1, Matches: 1, BytesScanned: int64(len(files["a.txt"]) + len(files["b/c.txt"]))}},
		{"maxMatches truncates", files, nil, engine.GrepRequest{Pattern: "BETA", CaseInsensitive: true, MaxMatches: 1}, []engine.GrepFile{
			{Path: "a.txt", Lines: []engine.GrepLine{grepLine(2, "beta", true, grep.Span{Start: 0, End: 4})}},
		}, grep.Summary{FilesScanned: 1, FilesMatched: 1, Matches: 1, Truncated: true, BytesScanned: int64(len(files["a.txt"]))}},
		{"a cut line keeps the submatches before the cut, and its whole hash", map[string]string{"l.txt": long + "\n"},
			[]engine.Option{engine.WithMaxLineBytes(30)}, engine.GrepRequest{Pattern: "beta|y{3}"}, []engine.GrepFile{
				{Path: "l.txt", Lines: []engine.GrepLine{{
					TaggedLine: hashline.TaggedLine{Number: 1, Hash: hashline.Hasher{}.Sum(long), Content: hashline.CutLine(long, 30)},
					Match:      true, Submatches: []grep.Span{{Start: 20, End: 24}, {Start: 24, End: 27}, {Start: 27, End: 30}}, // not 30-33
				}}},
			}, grep.Summary{FilesScanned: 1, FilesMatched: 1, Matches: 1, BytesScanned: int64(len(long) + 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ctx := newEngine(t, tc.files, tc.opts...)
			var got []engine.GrepFile
			sum, err := e.Grep(ctx, e.Workspace().Root().FS(), tc.req, func(f engine.GrepFile) error {
				got = append(got, f)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].Version = workspace.Version([]byte(tc.files[tc.want[i].Path]))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if sum.Elapsed <= 0 {
				t.Errorf("elapsed %v", sum.Elapsed)
			}
			sum.Elapsed = 0
			if *sum != tc.sum {
				t.Errorf("summary %+v, want %+v", *sum, tc.sum)
			}
			// What Grep showed is what the agent saw.
			if n := e.ViewStats().Entries; n != len(tc.want) {
				t.Errorf("%d views after showing %d files", n, len(tc.want))
			}
		})
	}
}

// A send that fails ends the Grep with its error, and nothing is sent
// after it.
func TestGrepSendError(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, p := range []string{"a", "b", "c", "d"} {
		files[p+".txt"] = "match\n"
	}
	e, ctx := newEngine(t, files)
	gone := errors.New("the client is gone")
	sent := 0
	sum, err := e.Grep(ctx, e.Workspace().Root().FS(), engine.GrepRequest{Pattern: "match"}, func(engine.GrepFile) error {
		sent++
		return gone
	})
	if !errors.Is(err, gone) || sum != nil {
		t.Fatalf("got %+v, %v; want the send's error", sum, err)
	}
	if sent != 1 {
		t.Errorf("%d sends, want 1", sent)
	}
	if n := e.ViewStats().Entries; n != 0 {
		t.Errorf("%d views after a failed send", n)
	}
	if m := e.GrepMemory(); m.Held != 0 {
		t.Errorf("%d bytes still held", m.Held)
	}
}

func TestGrepRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		req   engine.GrepRequest
		field string
	}{
		{"an empty pattern", engine.GrepRequest{}, "pattern"},
		{"a pattern over the limit", engine.GrepRequest{Pattern: strings.Repeat("a", engine.DefaultMaxPatternBytes+1)}, "pattern"},
		{"a negative before", engine.GrepRequest{Pattern: "a", Before: -1}, "before"},
		{"a negative after", engine.GrepRequest{Pattern: "a", After: -1}, "after"},
		{"a negative maxMatches", engine.GrepRequest{Pattern: "a", MaxMatches: -1}, "maxMatches"},
		{"an unknown type", engine.GrepRequest{Pattern: "a", Types: []string{"no-such-type"}}, "type"},
		{"too many excludeGlobs", engine.GrepRequest{Pattern: "a", ExcludeGlobs: make([]string, engine.MaxGlobs+1)}, "excludeGlob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ctx := newEngine(t, map[string]string{"a.txt": "a\n"})
			_, err := e.Grep(ctx, e.Workspace().Root().FS(), tc.req, func(engine.GrepFile) error {
				t.Error("a refused Grep sent a file")
				return nil
			})
			var re *engine.RequestError
			if !errors.As(err, &re) || re.Field != tc.field || re.Reason != engine.ReasonInvalidArgument {
				t.Fatalf("got %v, want a refusal of %s", err, tc.field)
			}
		})
	}
	t.Run("a missing path", func(t *testing.T) {
		t.Parallel()
		e, ctx := newEngine(t, nil)
		_, err := e.Grep(ctx, e.Workspace().Root().FS(), engine.GrepRequest{Pattern: "a", Path: "none"}, func(engine.GrepFile) error { return nil })
		if !errors.Is(err, workspace.ErrNotFound) {
			t.Fatalf("got %v, want not found", err)
		}
	})
}
