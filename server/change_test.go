package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestDeleteRemovesAFileOrAnEmptyDirectory(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(e *env)
		req      *hashlinev1.DeleteRequest
		wantDir  bool
		wantCode codes.Code
		gone     string // relative to the root
	}{
		{name: "a file is deleted and its version returned", setup: func(e *env) { e.write("a.txt", "a\n") },
			req: &hashlinev1.DeleteRequest{Path: "a.txt"}, gone: "a.txt"},
		{name: "a file of the expected version is deleted", setup: func(e *env) { e.write("a.txt", "a\n") },
			req: &hashlinev1.DeleteRequest{Path: "a.txt", ExpectedVersion: workspace.Version([]byte("a\n"))}, gone: "a.txt"},
		{name: "a file of another version is kept", setup: func(e *env) { e.write("a.txt", "a\n") },
			req: &hashlinev1.DeleteRequest{Path: "a.txt", ExpectedVersion: workspace.Version([]byte("b\n"))}, wantCode: codes.Aborted},
		{name: "an empty directory is deleted", setup: func(e *env) { os.Mkdir(filepath.Join(e.root, "d"), 0o755) },
			req: &hashlinev1.DeleteRequest{Path: "d"}, wantDir: true, gone: "d"},
		{name: "a file in a directory reached through a link inside the root is deleted", setup: func(e *env) {
			e.write("real/a.txt", "a\n")
			os.Symlink("real", filepath.Join(e.root, "alias"))
		}, req: &hashlinev1.DeleteRequest{Path: "alias/a.txt"}, gone: "real/a.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(e)
			before := e.snapshot()
			resp, err := e.c.Delete(e.ctx, tt.req)
			if tt.wantCode != codes.OK {
				if codeOf(err) != tt.wantCode {
					t.Fatalf("got %v, want %v", err, tt.wantCode)
				}
				e.assertUnchanged(before)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetDirectory() != tt.wantDir || (!tt.wantDir && resp.GetVersion() == "") {
				t.Errorf("response %v", resp)
			}
			if exists(t, filepath.Join(e.root, tt.gone)) {
				t.Errorf("%s is still there", tt.gone)
			}
		})
	}
}

func TestMoveRenamesAFileAndItsHistory(t *testing.T) {
	t.Run("a file is moved into a new directory with its version", func(t *testing.T) {
		e := newEnv(t)
		e.write("a.txt", "one\ntwo\n")
		resp, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "a.txt", To: "x/y/b.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetFrom() != "a.txt" || resp.GetTo() != "x/y/b.txt" || resp.GetVersion() != workspace.Version([]byte("one\ntwo\n")) || resp.GetReplacedVersion() != "" {
			t.Errorf("response %v", resp)
		}
		if exists(t, filepath.Join(e.root, "a.txt")) || e.read("x/y/b.txt") != "one\ntwo\n" {
			t.Errorf("disk after the move: a.txt exists=%v", exists(t, filepath.Join(e.root, "a.txt")))
		}
	})
	t.Run("overwrite replaces a file and returns its version", func(t *testing.T) {
		e := newEnv(t)
		e.write("a.txt", "a\n")
		e.write("b.txt", "b\n")
		resp, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "a.txt", To: "b.txt", Overwrite: true})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetReplacedVersion() != workspace.Version([]byte("b\n")) || e.read("b.txt") != "a\n" {
			t.Errorf("response %v, b.txt %q", resp, e.read("b.txt"))
		}
	})
	t.Run("a moved file of another version than expected stays", func(t *testing.T) {
		e := newEnv(t)
		e.write("a.txt", "a\n")
		before := e.snapshot()
		_, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "a.txt", To: "b.txt", ExpectedVersion: workspace.Version([]byte("z\n"))})
		if reasonOf(err) != hashlinev1.ErrorReason_ERROR_REASON_VERSION_MISMATCH {
			t.Fatalf("got %v", err)
		}
		e.assertUnchanged(before)
	})
	t.Run("references read before the move edit the moved file", func(t *testing.T) {
		e := newEnv(t)
		const text = "one\ntwo\nthree\n"
		e.seed("a.txt", text)
		if _, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "a.txt", To: "b.txt"}); err != nil {
			t.Fatal(err)
		}
		// Another agent changes the moved file: the first agent's
		// references, from before the move and the change, are rebased.
		other := client.New(e.conn, client.WithAgentID("other"))
		if _, err := other.Edit(e.ctx, &hashlinev1.EditRequest{Path: "b.txt", Edits: []*hashlinev1.FileEdit{client.Prepend("zero")}}); err != nil {
			t.Fatal(err)
		}
		resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "b.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(text, 2), "", "TWO")}})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.read("b.txt"); got != "zero\none\nTWO\nthree\n" || resp.GetRebasedFrom() == "" {
			t.Errorf("b.txt %q, rebased from %q", got, resp.GetRebasedFrom())
		}
	})
	t.Run("a file deleted is not edited by references to the one that was there", func(t *testing.T) {
		e := newEnv(t)
		const text = "one\ntwo\n"
		e.seed("a.txt", text)
		if _, err := e.c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: "a.txt"}); err != nil {
			t.Fatal(err)
		}
		_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(text, 1), "", "x")}})
		if reasonOf(err) != hashlinev1.ErrorReason_ERROR_REASON_NOT_FOUND {
			t.Fatalf("got %v", err)
		}
	})
}
