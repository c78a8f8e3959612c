package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// plantRepo writes version-control metadata and a plain file next to it,
// with a link into .git that a walk meets.
func plantRepo(t *testing.T, e *env) {
	t.Helper()
	e.write("main.go", "package main // needle\n")
	e.write(".git/config", "[remote] # needle\n")
	e.write("sub/.git/config", "needle\n")
	e.write("sub/CVS/Root", "needle\n")
	e.write("sub/_darcs/prefs/defaults", "needle\n")
	e.write("vendor/.hg/hgrc", "needle\n")
	if err := os.Symlink(".git/config", filepath.Join(e.root, "cfg")); err != nil {
		t.Fatal(err)
	}
}

// TestGrepWalkSkipsVCSMetadata: a search of the whole workspace never shows
// version-control metadata, nested or reached through a link, even with
// hidden files included.
func TestGrepWalkSkipsVCSMetadata(t *testing.T) {
	e := newEnv(t)
	plantRepo(t, e)
	files, _, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: "needle", Hidden: true, NoIgnore: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := grepPaths(files), []string{"main.go"}; !reflect.DeepEqual(got, want) {
		t.Errorf("grep found %q, want %q", got, want)
	}
}

// TestVCSReadIsAnOperatorsChoice: with reads allowed (hashlined
// --allow-vcs-read), Read and Grep reach the metadata, a walk still skips
// it by name, and writing there is still refused with nothing changed.
func TestVCSReadIsAnOperatorsChoice(t *testing.T) {
	e := newEnvWS(t, []workspace.Option{workspace.WithVCSRead(true)})
	plantRepo(t, e)
	for _, p := range []string{".git/config", "cfg"} {
		r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: p})
		if err != nil || !strings.Contains(r.GetText(), "[remote]") {
			t.Errorf("Read(%q) with reads allowed = %q, %v", p, r.GetText(), err)
		}
	}
	files, _, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: "needle", Path: ".git"})
	if err != nil || !reflect.DeepEqual(grepPaths(files), []string{".git/config"}) {
		t.Errorf("Grep of .git with reads allowed = %q, %v", grepPaths(files), err)
	}
	files, _, err = e.grepAll(&hashlinev1.GrepRequest{Pattern: "needle", Hidden: true})
	if want := []string{"cfg", "main.go"}; err != nil || !reflect.DeepEqual(grepPaths(files), want) {
		t.Errorf("Grep of everything with reads allowed = %q, %v; want %q", grepPaths(files), err, want)
	}

	before := e.snapshot()
	for name, call := range map[string]func() error{
		"write": func() error {
			_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: ".git/config", Content: "[core]\n\tfsmonitor = touch pwned\n"})
			return err
		},
		"edit": func() error {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "cfg", Edits: []*hashlinev1.FileEdit{client.Append("[core]\n\tfsmonitor = touch pwned")}})
			return err
		},
		"write of a hook": func() error {
			_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: ".git/hooks/pre-commit", Content: "#!/bin/sh\ntouch pwned\n"})
			return err
		},
	} {
		if err := call(); codeOf(err) != codes.PermissionDenied || reasonOf(err) != server.ReasonVCSMetadata || !errors.Is(err, client.ErrVCSMetadata) {
			t.Errorf("%s with reads allowed: %v, want PERMISSION_DENIED %s", name, err, server.ReasonVCSMetadata)
		}
	}
	e.assertUnchanged(before)
}

// TestGrepSkipsSymlinkLoopsWhileWalking: a loop met in a directory is
// skipped like any unreadable entry; named as the path, it is refused as
// Read refuses it.
func TestGrepSkipsSymlinkLoopsWhileWalking(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "needle\n")
	e.write("dir/b.txt", "needle\n")
	for target, name := range map[string]string{"loop": "loop", "y": "x", "x": "y", "../dir/self": "dir/self"} {
		if err := os.Symlink(target, filepath.Join(e.root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	files, sum, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: "needle"})
	if err != nil {
		t.Fatalf("grep over a tree with symlink loops: %v", err)
	}
	if got, want := grepPaths(files), []string{"a.txt", "dir/b.txt"}; !reflect.DeepEqual(got, want) || sum.GetMatches() != 2 {
		t.Errorf("grep found %q (%d matches), want %q", got, sum.GetMatches(), want)
	}
	for _, p := range []string{"loop", "x", "dir/self", "dir/self/z"} {
		_, readErr := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: p})
		_, _, grepErr := e.grepAll(&hashlinev1.GrepRequest{Pattern: "needle", Path: p})
		if codeOf(grepErr) != codes.InvalidArgument || reasonOf(grepErr) != server.ReasonInvalidPath {
			t.Errorf("grep of %q: %v, want INVALID_ARGUMENT INVALID_PATH", p, grepErr)
		}
		if codeOf(grepErr) != codeOf(readErr) || reasonOf(grepErr) != reasonOf(readErr) {
			t.Errorf("grep of %q answers %v %s, read %v %s", p, codeOf(grepErr), reasonOf(grepErr), codeOf(readErr), reasonOf(readErr))
		}
	}
}

// TestEditRefusesNUL: a NUL byte in any text an edit puts into the file is
// refused as Write refuses it, naming the edit and the offset, before
// anything is written, over gRPC and in process alike.
func TestEditRefusesNUL(t *testing.T) {
	const text = "one\ntwo\nthree\n"
	tests := []struct {
		name  string
		edits func() []*hashlinev1.FileEdit
		index int32
		field string
		at    string
	}{
		{"a replace", func() []*hashlinev1.FileEdit {
			return []*hashlinev1.FileEdit{client.Replace(tag(text, 2), "", "t\x00wo")}
		}, 0, "text", "offset 1"},
		{"an insert after", func() []*hashlinev1.FileEdit {
			return []*hashlinev1.FileEdit{client.InsertAfter(tag(text, 1), "\x00")}
		}, 0, "text", "offset 0"},
		{"an insert before", func() []*hashlinev1.FileEdit {
			return []*hashlinev1.FileEdit{client.InsertBefore(tag(text, 3), "ok\nbad\x00")}
		}, 0, "text", "offset 6"},
		{"an append after a good edit", func() []*hashlinev1.FileEdit {
			return []*hashlinev1.FileEdit{client.Replace(tag(text, 1), "", "ONE"), client.Append("tail\x00")}
		}, 1, "text", "offset 4"},
		{"a prepend", func() []*hashlinev1.FileEdit { return []*hashlinev1.FileEdit{client.Prepend("\x00head")} }, 0, "text", "offset 0"},
		{"a replaceText's newText", func() []*hashlinev1.FileEdit {
			return []*hashlinev1.FileEdit{client.ReplaceText("two", "tw\x00o", false)}
		}, 0, "newText", "offset 2"},
		{"a dry run", func() []*hashlinev1.FileEdit { return []*hashlinev1.FileEdit{client.Append("\x00")} }, 0, "text", "offset 0"},
	}
	e := newEnv(t)
	conns := map[string]*client.Client{
		"over gRPC": e.c,
	}
	for connName, c := range conns {
		for _, tt := range tests {
			t.Run(tt.name+" "+connName, func(t *testing.T) {
				e.write("f.txt", text)
				if _, err := c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
					t.Fatal(err)
				}
				before := e.snapshot()
				_, err := c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: tt.edits(), DryRun: tt.name == "a dry run"})
				var ce *client.Error
				if !errors.As(err, &ce) || ce.Code != codes.InvalidArgument || ce.Reason != client.ReasonName(server.ReasonBinaryContent) {
					t.Fatalf("err = %v, want INVALID_ARGUMENT %s", err, server.ReasonBinaryContent)
				}
				if !strings.Contains(ce.Message, "edit ") || !strings.Contains(ce.Message, tt.at) {
					t.Errorf("message %q does not name the edit and %q", ce.Message, tt.at)
				}
				if len(ce.Edits) != 1 || ce.Edits[0].GetEditIndex() != tt.index || ce.Edits[0].GetField() != tt.field || ce.Edits[0].GetReason() != client.ReasonName(server.ReasonBinaryContent) {
					t.Errorf("details %v, want one EditError for edit %d field %s", ce.Edits, tt.index, tt.field)
				}
				e.assertUnchanged(before)
				if got := e.read("f.txt"); got != text {
					t.Errorf("f.txt = %q after the refusal", got)
				}
			})
		}
	}
	// A NUL in oldText only looks for one: a file may hold one after its
	// first 8 KiB, and an agent may remove it.
	t.Run("a replaceText can remove a NUL past the first 8 KiB", func(t *testing.T) {
		long := strings.Repeat("x", 9<<10) + "\nbad\x00byte\n"
		e.write("late.txt", long)
		if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "late.txt"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "late.txt", Edits: []*hashlinev1.FileEdit{client.ReplaceText("bad\x00byte", "bad byte", false)}}); err != nil {
			t.Fatal(err)
		}
		if got := e.read("late.txt"); strings.IndexByte(got, 0) >= 0 {
			t.Errorf("the NUL is still there")
		}
	})
}
