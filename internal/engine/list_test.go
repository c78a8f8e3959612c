package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

var listTree = map[string]string{
	"a.txt":       "one\n",
	"b/c.go":      "package b\n",
	"b/d/e.go":    "package d\n",
	"bin.dat":     "\x00\x01\x02",
	".hidden.txt": "h\n",
}

func TestList(t *testing.T) {
	t.Parallel()
	v := func(p string) string { return workspace.Version([]byte(listTree[p])) }
	for _, tc := range []struct {
		name string
		req  engine.ListRequest
		want *engine.ListResult
	}{
		{"the root's children", engine.ListRequest{}, &engine.ListResult{Path: ".", Entries: []engine.ListEntry{
			{Path: "a.txt", Type: engine.EntryFile, Size: 4},
			{Path: "b", Type: engine.EntryDir},
			{Path: "bin.dat", Type: engine.EntryFile, Size: 3},
			{Path: "link", Type: engine.EntrySymlink, Size: 5}, // its target's name
		}}},
		{"a tree with versions", engine.ListRequest{Path: "b", Recursive: true, IncludeVersions: true}, &engine.ListResult{Path: "b", Entries: []engine.ListEntry{
			{Path: "b/c.go", Type: engine.EntryFile, Size: 10, Version: v("b/c.go")},
			{Path: "b/d", Type: engine.EntryDir},
			{Path: "b/d/e.go", Type: engine.EntryFile, Size: 10, Version: v("b/d/e.go")},
		}}},
		{"a binary file has no version", engine.ListRequest{Globs: []string{"*.dat", "a.txt"}, IncludeVersions: true}, &engine.ListResult{Path: ".", Entries: []engine.ListEntry{
			{Path: "a.txt", Type: engine.EntryFile, Size: 4, Version: v("a.txt")},
			{Path: "bin.dat", Type: engine.EntryFile, Size: 3},
		}}},
		{"globs and hidden files", engine.ListRequest{Globs: []string{"*.txt"}, Hidden: true}, &engine.ListResult{Path: ".", Entries: []engine.ListEntry{
			{Path: ".hidden.txt", Type: engine.EntryFile, Size: 2},
			{Path: "a.txt", Type: engine.EntryFile, Size: 4},
		}}},
		{"a page of two", engine.ListRequest{MaxEntries: 2}, &engine.ListResult{Path: ".", Entries: []engine.ListEntry{
			{Path: "a.txt", Type: engine.EntryFile, Size: 4},
			{Path: "b", Type: engine.EntryDir},
		}, Truncated: true, NextPageToken: "Yi8"}}, // "b/"
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ctx := newEngine(t, listTree)
			if err := os.Symlink("a.txt", filepath.Join(e.Workspace().Dir(), "link")); err != nil {
				t.Fatal(err)
			}
			got, err := e.List(ctx, e.Workspace().Root().FS(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// Pages follow one another through their tokens, each entry once.
func TestListPages(t *testing.T) {
	t.Parallel()
	e, ctx := newEngine(t, listTree)
	var got []string
	req := engine.ListRequest{Recursive: true, MaxEntries: 2}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("the listing never ends")
		}
		res, err := e.List(ctx, e.Workspace().Root().FS(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range res.Entries {
			got = append(got, en.Path)
		}
		if !res.Truncated {
			break
		}
		req.PageToken = res.NextPageToken
	}
	want := []string{"a.txt", "b", "b/c.go", "b/d", "b/d/e.go", "bin.dat"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// The response limit cuts a page by the face's measure of it
// (WithResponseSize) and the entries' encoded sizes; without a measure
// only the entry count cuts it.
func TestListPageAtTheResponseLimit(t *testing.T) {
	t.Parallel()
	const limit = 1000
	for _, tc := range []struct {
		name    string
		measure func(any) int
		entries int
	}{
		{"no measure", nil, 3},
		{"a measure with room for no entry: one each page", func(any) int { return limit }, 1},
		{"a measure with room for some", func(any) int { return limit - 40 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var measured []engine.ListResult
			opts := []engine.Option{engine.WithMaxResponseBytes(limit)}
			if tc.measure != nil {
				opts = append(opts, engine.WithResponseSize(func(r any) int {
					measured = append(measured, *r.(*engine.ListResult))
					return tc.measure(r)
				}))
			}
			e, ctx := newEngine(t, listTree, opts...)
			res, err := e.List(ctx, e.Workspace().Root().FS(), engine.ListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Entries) != tc.entries || res.Truncated != (tc.entries < 3) {
				t.Errorf("%d entries, truncated %t; want %d", len(res.Entries), res.Truncated, tc.entries)
			}
			if tc.measure != nil && !reflect.DeepEqual(measured, []engine.ListResult{{Path: "."}}) {
				t.Errorf("measured %+v; want the page without entries, once", measured)
			}
		})
	}
}

func TestListRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		req    engine.ListRequest
		field  string
		reason hashline.Reason
	}{
		{"a negative maxEntries", engine.ListRequest{MaxEntries: -1}, "maxEntries", engine.ReasonInvalidArgument},
		{"a bad glob", engine.ListRequest{Globs: []string{"[a"}}, "glob", engine.ReasonInvalidPattern},
		{"too many globs", engine.ListRequest{Globs: make([]string, engine.MaxGlobs+1)}, "glob", engine.ReasonInvalidArgument},
		{"a token of no listing", engine.ListRequest{PageToken: "!"}, "pageToken", engine.ReasonInvalidArgument},
		{"a token of another path", engine.ListRequest{Path: "b", PageToken: "YS50eHQ"}, "pageToken", engine.ReasonInvalidArgument}, // "a.txt"
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ctx := newEngine(t, listTree)
			_, err := e.List(ctx, e.Workspace().Root().FS(), tc.req)
			var re *engine.RequestError
			if !errors.As(err, &re) || re.Field != tc.field || re.Reason != tc.reason {
				t.Fatalf("got %v, want a %s refusal of %s", err, tc.reason, tc.field)
			}
		})
	}
	t.Run("a missing path", func(t *testing.T) {
		t.Parallel()
		e, ctx := newEngine(t, nil)
		if _, err := e.List(ctx, e.Workspace().Root().FS(), engine.ListRequest{Path: "none"}); !errors.Is(err, workspace.ErrNotFound) {
			t.Fatalf("got %v, want not found", err)
		}
	})
}
