package server_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

// listTree is the tree of the List tests: nested .gitignore files, hidden
// files, version-control metadata, a temp file, and links of every kind.
func listTree(t *testing.T, e *env) {
	t.Helper()
	for p, content := range map[string]string{
		".gitignore":       "gen/\n*.log\n",
		".env":             "X=1\n",
		".hidden/x.go":     "package x\n",
		".git/config":      "[core]\n",
		"gen/out.go":       "package gen\n",
		"debug.log":        "log\n",
		"a-b":              "ab\n",
		"a.go":             "package a\n",
		"a/x.go":           "package a\n",
		"a/sub/.gitignore": "*.tmp\n!keep.tmp\n",
		"a/sub/y.tmp":      "y\n",
		"a/sub/keep.tmp":   "keep\n",
		"a/sub/z.go":       "package sub\n",
		"vendor/.git/HEAD": "ref\n",
		"vendor/v.go":      "package v\n",
		"bin.dat":          "\x00\x01\x02",
		".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp": "half written",
	} {
		e.write(p, content)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"linkdir":  "a",
		"linkfile": "a.go",
		"out":      outside,
		"dangling": "missing",
		"gitlink":  ".git",
		"loop":     "loop",
	} {
		if err := os.Symlink(target, filepath.Join(e.root, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// listed renders entries as the CLI does: "/" after a directory, "@"
// after a link.
func listed(entries []*hashlinev1.Entry) []string {
	out := []string{}
	for _, en := range entries {
		s := en.GetPath()
		switch en.GetType() {
		case hashlinev1.EntryType_ENTRY_TYPE_DIR:
			s += "/"
		case hashlinev1.EntryType_ENTRY_TYPE_SYMLINK:
			s += "@"
		}
		out = append(out, s)
	}
	return out
}

func TestListFollowsGrepsRules(t *testing.T) {
	e := newEnv(t)
	listTree(t, e)
	tests := []struct {
		name string
		req  *hashlinev1.ListRequest
		want []string
	}{
		{"the root lists its direct entries, links as links, without hidden, ignored or VCS entries",
			&hashlinev1.ListRequest{},
			[]string{"a-b", "a.go", "a/", "bin.dat", "dangling@", "linkdir@", "linkfile@", "loop@", "out@", "vendor/"}},
		{"recursive walks into directories but not through links",
			&hashlinev1.ListRequest{Recursive: true},
			[]string{"a-b", "a.go", "a/", "a/sub/", "a/sub/keep.tmp", "a/sub/z.go", "a/x.go", "bin.dat", "dangling@", "linkdir@", "linkfile@", "loop@", "out@", "vendor/", "vendor/v.go"}},
		{"hidden adds dot files but never .git nor temp files, nor a link into .git",
			&hashlinev1.ListRequest{Recursive: true, Hidden: true},
			[]string{".env", ".gitignore", ".hidden/", ".hidden/x.go", "a-b", "a.go", "a/", "a/sub/", "a/sub/.gitignore", "a/sub/keep.tmp", "a/sub/z.go", "a/x.go", "bin.dat", "dangling@", "linkdir@", "linkfile@", "loop@", "out@", "vendor/", "vendor/v.go"}},
		{"no_ignore adds what .gitignore files hide, at every level",
			&hashlinev1.ListRequest{Recursive: true, NoIgnore: true, Glob: []string{"*.log", "*.tmp", "gen/**"}},
			[]string{"a/sub/keep.tmp", "a/sub/y.tmp", "debug.log", "gen/", "gen/out.go"}},
		{"a glob selects files; directories are walked but listed only if they match",
			&hashlinev1.ListRequest{Recursive: true, Glob: []string{"*.go"}},
			[]string{"a.go", "a/sub/z.go", "a/x.go", "vendor/v.go"}},
		{"a glob with a slash matches paths from the root (\"**\" matches the directory itself too)",
			&hashlinev1.ListRequest{Recursive: true, Glob: []string{"a/**"}},
			[]string{"a/", "a/sub/", "a/sub/keep.tmp", "a/sub/z.go", "a/x.go"}},
		{"a subdirectory lists paths from the root, with the .gitignore files above it",
			&hashlinev1.ListRequest{Path: "a", Recursive: true},
			[]string{"a/sub/", "a/sub/keep.tmp", "a/sub/z.go", "a/x.go"}},
		{"a directory reached through a link is listed under the link's path",
			&hashlinev1.ListRequest{Path: "linkdir"},
			[]string{"linkdir/sub/", "linkdir/x.go"}},
		{"an ignored directory named explicitly is listed",
			&hashlinev1.ListRequest{Path: "gen"},
			[]string{"gen/out.go"}},
		{"a file path lists that one file",
			&hashlinev1.ListRequest{Path: "a/x.go"},
			[]string{"a/x.go"}},
		{"a link to a file named explicitly is followed, as Read follows it",
			&hashlinev1.ListRequest{Path: "linkfile"},
			[]string{"linkfile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := e.c.List(e.ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := listed(resp.GetEntries()); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if resp.GetTruncated() || resp.GetNextPageToken() != "" {
				t.Errorf("truncated %v, token %q; want a single page", resp.GetTruncated(), resp.GetNextPageToken())
			}
		})
	}
}

func TestListEntriesCarrySizesAndVersionsAsReadSeesThem(t *testing.T) {
	e := newEnv(t)
	listTree(t, e)
	resp, err := e.c.List(e.ctx, &hashlinev1.ListRequest{IncludeVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*hashlinev1.Entry{}
	for _, en := range resp.GetEntries() {
		byPath[en.GetPath()] = en
	}
	read, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "a.go"})
	if err != nil {
		t.Fatal(err)
	}
	if got := byPath["a.go"]; got.GetVersion() != read.GetVersion() || got.GetSize() != int64(len("package a\n")) || got.GetType() != hashlinev1.EntryType_ENTRY_TYPE_FILE {
		t.Errorf("a.go = %v, want version %s and size %d", got, read.GetVersion(), len("package a\n"))
	}
	for p, want := range map[string]*hashlinev1.Entry{
		"bin.dat":  {Type: hashlinev1.EntryType_ENTRY_TYPE_FILE, Size: 3}, // Read refuses it: no version
		"a":        {Type: hashlinev1.EntryType_ENTRY_TYPE_DIR},
		"linkfile": {Type: hashlinev1.EntryType_ENTRY_TYPE_SYMLINK, Size: int64(len("a.go"))},
		"dangling": {Type: hashlinev1.EntryType_ENTRY_TYPE_SYMLINK, Size: int64(len("missing"))},
	} {
		got := byPath[p]
		if got.GetType() != want.GetType() || got.GetSize() != want.GetSize() || got.GetVersion() != "" {
			t.Errorf("%s = %v, want type %v size %d and no version", p, got, want.GetType(), want.GetSize())
		}
	}
	// Without include_versions nothing is read.
	resp, err = e.c.List(e.ctx, &hashlinev1.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range resp.GetEntries() {
		if en.GetVersion() != "" {
			t.Errorf("%s has version %q without include_versions", en.GetPath(), en.GetVersion())
		}
	}
}

// A listing shows no lines, so it is not a read: an agent that only
// listed a file still may not edit its lines.
func TestListDoesNotCountAsSeeingAFile(t *testing.T) {
	e := newEnv(t)
	const text = "one\ntwo\n"
	e.write("f.txt", text)
	if _, err := e.c.List(e.ctx, &hashlinev1.ListRequest{IncludeVersions: true}); err != nil {
		t.Fatal(err)
	}
	before := e.snapshot()
	_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(text, 1), "", "ONE")}})
	if !errors.Is(err, client.ErrNotRead) {
		t.Errorf("edit after a List: %v, want NOT_READ", err)
	}
	e.assertUnchanged(before)
}

// bigTree writes n files spread over nested directories and returns every
// entry's rendering, sorted as List sorts.
func bigTree(t *testing.T, e *env, n int) []string {
	t.Helper()
	var want []string
	dirs := map[string]bool{}
	for i := range n {
		d := fmt.Sprintf("d%d/e%d", i%7, i%13)
		p := fmt.Sprintf("%s/f%04d.txt", d, i)
		if i%5 == 0 {
			p = fmt.Sprintf("d%d/f%04d-x", i%7, i) // sorts among its directory's subdirectories
		}
		e.write(p, "x\n")
		want = append(want, p)
		for dd := parentDir(p); dd != "."; dd = parentDir(dd) {
			dirs[dd] = true
		}
	}
	for d := range dirs {
		want = append(want, d+"/")
	}
	sort.Strings(want)
	return want
}

func parentDir(p string) string { return filepath.ToSlash(filepath.Dir(p)) }

func TestListPagesThroughATreeSeeingEveryEntryOnce(t *testing.T) {
	e := newEnv(t)
	want := bigTree(t, e, 2500)
	// Each page walks the tree up to its token, so pages of one entry would
	// cost the square of the tree; seven still make hundreds of pages.
	for _, size := range []int32{7, 97, 1000} {
		t.Run(fmt.Sprintf("pages of %d", size), func(t *testing.T) {
			var got []string
			pages := 0
			err := e.c.ListAll(e.ctx, &hashlinev1.ListRequest{Recursive: true, MaxEntries: size}, func(entries []*hashlinev1.Entry) error {
				pages++
				if len(entries) > int(size) {
					t.Fatalf("a page of %d entries, over max_entries %d", len(entries), size)
				}
				got = append(got, listed(entries)...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d entries, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			if wantPages := (len(want) + int(size) - 1) / int(size); pages != wantPages {
				t.Errorf("%d pages, want %d", pages, wantPages)
			}
		})
	}
	t.Run("ListAll without max_entries asks for the largest pages", func(t *testing.T) {
		pages, n := 0, 0
		err := e.c.ListAll(e.ctx, &hashlinev1.ListRequest{Recursive: true}, func(entries []*hashlinev1.Entry) error {
			pages++
			n += len(entries)
			return nil
		})
		if err != nil || pages != 1 || n != len(want) {
			t.Errorf("%d entries in %d pages (%v), want %d in one", n, pages, err, len(want))
		}
	})
	t.Run("the default page is 1000 entries", func(t *testing.T) {
		resp, err := e.c.List(e.ctx, &hashlinev1.ListRequest{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetEntries()) != 1000 || !resp.GetTruncated() || resp.GetNextPageToken() == "" {
			t.Errorf("%d entries, truncated %v", len(resp.GetEntries()), resp.GetTruncated())
		}
	})
	t.Run("a max_entries over the limit is taken as the limit", func(t *testing.T) {
		resp, err := e.c.List(e.ctx, &hashlinev1.ListRequest{Recursive: true, MaxEntries: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetEntries()) != len(want) || resp.GetTruncated() {
			t.Errorf("%d entries, truncated %v; want all %d", len(resp.GetEntries()), resp.GetTruncated(), len(want))
		}
	})
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Pages are stateless: entries removed before the token and added after it
// between two pages neither repeat an entry nor skip one that stayed.
func TestListPagesSurviveChangesBetweenPages(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"a/1", "a/2", "b/1", "b/2", "c/1"} {
		e.write(p, "x\n")
	}
	first, err := e.c.List(e.ctx, &hashlinev1.ListRequest{Recursive: true, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := listed(first.GetEntries()); !slices.Equal(got, []string{"a/", "a/1", "a/2", "b/"}) {
		t.Fatalf("first page %q", got)
	}
	// The last entry returned goes away, one is added before it and one
	// after it.
	if err := os.RemoveAll(filepath.Join(e.root, "b")); err != nil {
		t.Fatal(err)
	}
	e.write("a/0", "x\n")
	e.write("bb/1", "x\n")
	next, err := e.c.List(e.ctx, &hashlinev1.ListRequest{Recursive: true, PageToken: first.GetNextPageToken()})
	if err != nil {
		t.Fatal(err)
	}
	if got := listed(next.GetEntries()); !slices.Equal(got, []string{"bb/", "bb/1", "c/", "c/1"}) {
		t.Errorf("second page %q", got)
	}
}

func TestListRefusesBadRequests(t *testing.T) {
	e := newEnv(t)
	listTree(t, e)
	e.write("many/1", "")
	e.write("many/2", "")
	page, err := e.c.List(e.ctx, &hashlinev1.ListRequest{Path: "many", MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		req    *hashlinev1.ListRequest
		target error
	}{
		{"a negative max_entries", &hashlinev1.ListRequest{MaxEntries: -1}, client.ErrInvalidArgument},
		{"a page token that is not base64", &hashlinev1.ListRequest{PageToken: "not a token!"}, client.ErrInvalidArgument},
		{"a page token climbing out of the root", &hashlinev1.ListRequest{PageToken: tok("../x")}, client.ErrInvalidArgument},
		{"an absolute page token", &hashlinev1.ListRequest{PageToken: tok("/etc")}, client.ErrInvalidArgument},
		{"a page token that is not clean", &hashlinev1.ListRequest{PageToken: tok("a//b")}, client.ErrInvalidArgument},
		{"an empty key as a token", &hashlinev1.ListRequest{PageToken: tok("/")}, client.ErrInvalidArgument},
		{"a page token of another path", &hashlinev1.ListRequest{Path: "a", PageToken: page.GetNextPageToken()}, client.ErrInvalidArgument},
		{"a page token of invalid UTF-8", &hashlinev1.ListRequest{PageToken: tok("a\xff")}, client.ErrInvalidArgument},
		{"a huge page token", &hashlinev1.ListRequest{PageToken: strings.Repeat("A", 1<<16)}, client.ErrInvalidArgument},
		{"a bad glob", &hashlinev1.ListRequest{Glob: []string{"[a-"}}, client.ErrInvalidPattern},
		{"too many globs", &hashlinev1.ListRequest{Glob: make([]string, 1000)}, client.ErrInvalidArgument},
		{"a missing directory", &hashlinev1.ListRequest{Path: "missing"}, client.ErrNotFound},
		{"a symlink loop", &hashlinev1.ListRequest{Path: "loop"}, client.ErrInvalidPath},
		{"a link out of the root", &hashlinev1.ListRequest{Path: "out"}, client.ErrOutsideRoot},
		{"version-control metadata", &hashlinev1.ListRequest{Path: ".git"}, client.ErrVCSMetadata},
		{"a link into version-control metadata", &hashlinev1.ListRequest{Path: "gitlink"}, client.ErrVCSMetadata},
		{"a nested repository's metadata", &hashlinev1.ListRequest{Path: "vendor/.git"}, client.ErrVCSMetadata},
		{"a temp file", &hashlinev1.ListRequest{Path: ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp"}, client.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := e.c.List(e.ctx, tt.req)
			if !errors.Is(err, tt.target) {
				t.Fatalf("got %v, %v; want %v", listed(resp.GetEntries()), err, tt.target)
			}
			var ce *client.Error
			if errors.As(err, &ce) && (ce.Message == "" || strings.Contains(ce.Message, "secret")) {
				t.Errorf("message %q", ce.Message)
			}
		})
	}
}

// tok makes a page token of a key as the server does (the tests forge
// tokens a server never returns).
func tok(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

func TestListWithAScopedTokenShowsOnlyItsPrefixes(t *testing.T) {
	e := newAuthEnv(t, server.GRPCConfig{})
	ctx := withToken(e.ctx, scopedToken)
	tests := []struct {
		name string
		req  *hashlinev1.ListRequest
		want []string
	}{
		{"the root shows only what leads to the prefixes", &hashlinev1.ListRequest{Recursive: true},
			[]string{"docs/", "docs/api/", "docs/api/x.md", "src/", "src/a.go"}},
		{"a directory above a prefix", &hashlinev1.ListRequest{Path: "docs"},
			[]string{"docs/api/"}},
		{"inside a prefix, links out of it are left out", &hashlinev1.ListRequest{Path: "src"},
			[]string{"src/a.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := e.c.List(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := listed(resp.GetEntries()); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	for _, p := range []string{"secret", "src/outdir", "docs/other.md"} {
		t.Run("a listing of "+p+" is refused", func(t *testing.T) {
			_, err := e.c.List(ctx, &hashlinev1.ListRequest{Path: p})
			if !errors.Is(err, client.ErrPathNotAllowed) {
				t.Errorf("got %v, want PATH_NOT_ALLOWED", err)
			}
		})
	}
	t.Run("a read-only token may list", func(t *testing.T) {
		resp, err := e.c.List(withToken(e.ctx, readerToken), &hashlinev1.ListRequest{Path: "secret"})
		if err != nil || !slices.Equal(listed(resp.GetEntries()), []string{"secret/key.txt"}) {
			t.Errorf("got %v, %v", resp, err)
		}
	})
}
