package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

// The server reuses the version and parse of a file whose bytes are the
// snapshot it last read or wrote. These tests check that the shortcut
// answers exactly what a cold read answers, and that a change made outside
// the server is seen even when it keeps the size and the modification time.
func TestRereadAnswersAsAColdRead(t *testing.T) {
	tests := []struct{ name, content string }{
		{"lf", "a\nb\nc\n"},
		{"crlf, no final newline", "a\r\nb\r\nc"},
		{"bom", "\ufeffa\nb\n"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("f.txt", tt.content)
			// Written by the server, then read again: the reread is the
			// shortcut (bytes equal to the snapshot it wrote).
			if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Append("z")}}); err != nil {
				t.Fatal(err)
			}
			warm, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
			if err != nil {
				t.Fatal(err)
			}
			// A second server over the same files has no snapshot.
			cold := newEnvAt(t, e.root)
			want, err := cold.c.Read(cold.ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
			if err != nil {
				t.Fatal(err)
			}
			if warm.GetVersion() != want.GetVersion() || warm.GetText() != want.GetText() || warm.GetBom() != want.GetBom() ||
				warm.GetEol() != want.GetEol() || warm.GetTotalLines() != want.GetTotalLines() || warm.GetEncoding() != want.GetEncoding() {
				t.Errorf("reread = %v\ncold read = %v", warm, want)
			}
			raw, _ := os.ReadFile(filepath.Join(e.root, "f.txt"))
			if warm.GetVersion() != workspace.Version(raw) {
				t.Errorf("version %s is not the version of the bytes on disk (%s)", warm.GetVersion(), workspace.Version(raw))
			}
		})
	}
}

func TestOutsideChangeKeepingSizeAndTimeIsSeen(t *testing.T) {
	e := newEnv(t)
	e.seed("f.txt", "one\ntwo\nthree\n")
	resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag("one\ntwo\nthree\n", 2), "", "TWO")}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(e.root, "f.txt")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// Same length, same inode, same mtime: only the bytes differ.
	if err := os.WriteFile(p, []byte("one\nTWX\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetVersion() == resp.GetVersion() || r.GetLines()[1].GetContent() != "TWX" {
		t.Fatalf("read after an outside change = %s %q, want the new bytes and a new version", r.GetVersion(), r.GetText())
	}
	// An edit from the server's own last tags is checked against the new
	// bytes too. (The agent's view is now the outside version, so the ref
	// is checked, not rebased.)
	_, err = e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(resp.GetWindows()[0].GetLines()[1]), "", "2")}})
	if !errors.Is(err, client.ErrStaleRef) {
		t.Fatalf("edit of a line changed outside = %v, want STALE_REF", err)
	}
	if got := e.read("f.txt"); got != "one\nTWX\nthree\n" {
		t.Errorf("file = %q, want the outside change kept", got)
	}
}
