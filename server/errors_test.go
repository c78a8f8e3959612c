package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// TestBadInputGetsAClearErrorAndNothingIsLost drives every refusal through
// the real gRPC stack and checks the code, the ErrorInfo reason, the
// per-edit details, and that the workspace is byte-identical afterwards.
func TestBadInputGetsAClearErrorAndNothingIsLost(t *testing.T) {
	const text = "one\ntwo\nthree\n"
	edit := func(edits ...*hashlinev1.FileEdit) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: edits})
			return err
		}
	}
	read := func(path string) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: path})
			return err
		}
	}
	write := func(req *hashlinev1.WriteRequest) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Write(e.ctx, req)
			return err
		}
	}
	grep := func(req *hashlinev1.GrepRequest) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Grep(e.ctx, req, nil)
			return err
		}
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		setup     func(e *env)
		call      func(e *env) error
		code      codes.Code
		reason    string
		editIndex int // -1: no per-edit detail expected
		msg       string
	}{
		{name: "stale ref", call: edit(client.Replace("2:00", "", "x")), code: codes.Aborted, reason: "STALE_REF", editIndex: -1, msg: "line 2 is 2:f4, not 2:00: the reference does not match the line as you read it"},
		{name: "malformed ref", call: edit(client.Append("ok"), client.Replace("two", "", "x")), code: codes.InvalidArgument, reason: "INVALID_REF", editIndex: 1, msg: "LINE:HASH"},
		{name: "line zero", call: edit(client.Delete("0:aa", "")), code: codes.InvalidArgument, reason: "INVALID_REF", editIndex: 0},
		{name: "line past the end", call: edit(client.Delete("9:aa", "")), code: codes.InvalidArgument, reason: "LINE_OUT_OF_RANGE", editIndex: 0, msg: "3 line"},
		{name: "end before start", call: edit(client.Delete(tag(text, 3), tag(text, 1))), code: codes.InvalidArgument, reason: "LINE_OUT_OF_RANGE", editIndex: 0},
		{name: "overlapping edits", call: edit(client.Delete(tag(text, 1), tag(text, 2)), client.Replace(tag(text, 2), "", "x")), code: codes.InvalidArgument, reason: "OVERLAPPING_EDITS", editIndex: 1},
		{name: "same insertion point", call: edit(client.InsertAfter(tag(text, 1), "a"), client.InsertBefore(tag(text, 2), "b")), code: codes.InvalidArgument, reason: "OVERLAPPING_EDITS", editIndex: 1},
		{name: "empty batch", call: edit(), code: codes.InvalidArgument, reason: "EMPTY_EDITS", editIndex: -1},
		{name: "edit with no operation", call: edit(&hashlinev1.FileEdit{}), code: codes.InvalidArgument, reason: "INVALID_EDIT", editIndex: 0},
		{name: "no-op edit", call: edit(client.Replace(tag(text, 2), "", "two")), code: codes.FailedPrecondition, reason: "NO_CHANGE", editIndex: 0, msg: "edit 0"},
		{name: "replaceText not found", call: edit(client.ReplaceText("four", "4", false)), code: codes.FailedPrecondition, reason: "TEXT_NOT_FOUND", editIndex: 0},
		{name: "replaceText ambiguous", call: edit(client.ReplaceText("o", "0", false)), code: codes.InvalidArgument, reason: "AMBIGUOUS_TEXT", editIndex: 0},
		{name: "too many edits", call: func(e *env) error {
			edits := make([]*hashlinev1.FileEdit, engine.DefaultMaxEdits+1)
			for i := range edits {
				edits[i] = client.Append("x")
			}
			return edit(edits...)(e)
		}, code: codes.InvalidArgument, reason: "INVALID_ARGUMENT", editIndex: -1, msg: "split the batch"},
		{name: "edit of a file this agent has not read", setup: func(e *env) { e.write("unread.txt", text) }, call: func(e *env) error {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "unread.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(text, 1), "", "x")}})
			return err
		}, code: codes.FailedPrecondition, reason: "NOT_READ", editIndex: -1, msg: "Read it"},
		{name: "edit of a missing file", call: func(e *env) error {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "missing.txt", Edits: []*hashlinev1.FileEdit{client.Append("x")}})
			return err
		}, code: codes.NotFound, reason: "NOT_FOUND", editIndex: -1, msg: "Write"},
		{name: "read of a missing file", call: read("nope.txt"), code: codes.NotFound, reason: "NOT_FOUND", editIndex: -1},
		{name: "negative offset", call: func(e *env) error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Offset: -1})
			return err
		}, code: codes.InvalidArgument, reason: "INVALID_ARGUMENT", editIndex: -1},
		{name: "offset past the end", call: func(e *env) error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Offset: 10})
			return err
		}, code: codes.InvalidArgument, reason: "LINE_OUT_OF_RANGE", editIndex: -1},
		{name: "binary file", setup: func(e *env) { e.write("bin", "a\x00b") }, call: read("bin"), code: codes.FailedPrecondition, reason: "BINARY_FILE", editIndex: -1},
		{name: "invalid UTF-8", setup: func(e *env) { e.write("latin1.txt", "caf\xe9\n") }, call: read("latin1.txt"), code: codes.FailedPrecondition, reason: "NOT_TEXT", editIndex: -1},
		{name: "dot-dot path", call: read("../f.txt"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT", editIndex: -1},
		{name: "absolute path outside", call: read(filepath.Join(outside, "secret")), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT", editIndex: -1},
		{name: "symlink leading out", setup: func(e *env) {
			if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(e.root, "link")); err != nil {
				t.Fatal(err)
			}
		}, call: read("link"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT", editIndex: -1},
		{name: "write through a symlink leading out", setup: func(e *env) {
			if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(e.root, "link")); err != nil {
				t.Fatal(err)
			}
		}, call: write(&hashlinev1.WriteRequest{Path: "link", Content: "pwned\n"}), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT", editIndex: -1},
		{name: "FIFO", setup: func(e *env) {
			if err := mkfifo(filepath.Join(e.root, "fifo")); err != nil {
				t.Fatal(err)
			}
		}, call: read("fifo"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE", editIndex: -1},
		{name: "directory", setup: func(e *env) { e.write("dir/x", "") }, call: read("dir"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE", editIndex: -1},
		{name: "edit of a read-only file", setup: func(e *env) { chmod(t, e, "f.txt", 0o444) }, call: edit(client.Replace(tag(text, 2), "", "2")), code: codes.PermissionDenied, reason: "NOT_WRITABLE", editIndex: -1, msg: "read-only"},
		{name: "write over a read-only file", setup: func(e *env) { chmod(t, e, "f.txt", 0o444) }, call: write(&hashlinev1.WriteRequest{Path: "f.txt", Content: "x"}), code: codes.PermissionDenied, reason: "NOT_WRITABLE", editIndex: -1, msg: "ask the operator"},
		{name: "delete of a read-only file", setup: func(e *env) { chmod(t, e, "f.txt", 0o444) }, call: func(e *env) error {
			_, err := e.c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: "f.txt"})
			return err
		}, code: codes.PermissionDenied, reason: "NOT_WRITABLE", editIndex: -1, msg: "read-only"},
		{name: "move of a read-only file", setup: func(e *env) { chmod(t, e, "f.txt", 0o444) }, call: func(e *env) error {
			_, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "f.txt", To: "g.txt"})
			return err
		}, code: codes.PermissionDenied, reason: "NOT_WRITABLE", editIndex: -1, msg: "read-only"},
		{name: "move onto a read-only file", setup: func(e *env) { e.write("g.txt", "mine\n"); chmod(t, e, "f.txt", 0o444) }, call: func(e *env) error {
			_, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "g.txt", To: "f.txt", Overwrite: true})
			return err
		}, code: codes.PermissionDenied, reason: "NOT_WRITABLE", editIndex: -1, msg: "read-only"},
		{name: "change set deleting a read-only file", setup: func(e *env) { chmod(t, e, "f.txt", 0o444) }, call: func(e *env) error {
			_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
				{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: "new.txt", Content: "x\n"}}},
				{Change: &hashlinev1.Change_Delete{Delete: &hashlinev1.DeleteRequest{Path: "f.txt"}}},
			}})
			return err
		}, code: codes.PermissionDenied, reason: "NOT_WRITABLE", editIndex: -1, msg: "change 1"},
		{name: "change set moving onto a read-only file", setup: func(e *env) { e.write("g.txt", "mine\n"); chmod(t, e, "f.txt", 0o444) }, call: func(e *env) error {
			_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
				{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: "new.txt", Content: "x\n"}}},
				{Change: &hashlinev1.Change_Move{Move: &hashlinev1.MoveRequest{From: "g.txt", To: "f.txt", Overwrite: true}}},
			}})
			return err
		}, code: codes.PermissionDenied, reason: "NOT_WRITABLE", editIndex: -1, msg: "read-only"},
		{name: "create over existing", call: write(&hashlinev1.WriteRequest{Path: "f.txt", Content: "x", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE}), code: codes.AlreadyExists, reason: "ALREADY_EXISTS", editIndex: -1},
		{name: "replace of a missing file", call: write(&hashlinev1.WriteRequest{Path: "gone.txt", Content: "x", Mode: hashlinev1.WriteMode_WRITE_MODE_REPLACE}), code: codes.NotFound, reason: "NOT_FOUND", editIndex: -1},
		{name: "write with a stale expected version", call: write(&hashlinev1.WriteRequest{Path: "f.txt", Content: "x", ExpectedVersion: "v1-0000"}), code: codes.Aborted, reason: "VERSION_MISMATCH", editIndex: -1},
		{name: "write of binary content", call: write(&hashlinev1.WriteRequest{Path: "new.txt", Content: "a\x00b"}), code: codes.InvalidArgument, reason: "BINARY_CONTENT", editIndex: -1},
		{name: "bad grep pattern", call: grep(&hashlinev1.GrepRequest{Pattern: "(unclosed"}), code: codes.InvalidArgument, reason: "INVALID_PATTERN", editIndex: -1, msg: "RE2"},
		{name: "grep of a missing path", call: grep(&hashlinev1.GrepRequest{Pattern: "x", Path: "nowhere"}), code: codes.NotFound, reason: "NOT_FOUND", editIndex: -1},
		{name: "grep through a symlinked directory leading out", setup: func(e *env) {
			if err := os.Symlink(outside, filepath.Join(e.root, "ld")); err != nil {
				t.Fatal(err)
			}
		}, call: grep(&hashlinev1.GrepRequest{Pattern: "secret", Path: "ld"}), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT", editIndex: -1},
		{name: "grep outside the root", call: grep(&hashlinev1.GrepRequest{Pattern: "x", Path: "../"}), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT", editIndex: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("f.txt", text)
			if tt.setup != nil {
				tt.setup(e)
			}
			before := e.snapshot()
			outsideBefore, _ := os.ReadFile(filepath.Join(outside, "secret"))
			err := tt.call(e)
			var ce *client.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want a server error", err, err)
			}
			if ce.Code != tt.code || ce.Reason != tt.reason {
				t.Errorf("got %v %s, want %v %s: %s", ce.Code, ce.Reason, tt.code, tt.reason, ce.Message)
			}
			if tt.msg != "" && !strings.Contains(ce.Message, tt.msg) {
				t.Errorf("message %q does not mention %q", ce.Message, tt.msg)
			}
			if tt.editIndex >= 0 {
				found := false
				for _, d := range ce.Edits {
					found = found || (int(d.GetEditIndex()) == tt.editIndex && d.GetReason() == tt.reason)
				}
				if !found {
					t.Errorf("no EditError for edit %d with reason %s in %v", tt.editIndex, tt.reason, ce.Edits)
				}
			}
			e.assertUnchanged(before)
			if after, _ := os.ReadFile(filepath.Join(outside, "secret")); string(after) != string(outsideBefore) {
				t.Errorf("file outside the root changed: %q", after)
			}
		})
	}
}

// TestAllProblemsReportedAtOnce checks the batch rule: every bad reference
// of every edit is reported in one error.
func TestAllProblemsReportedAtOnce(t *testing.T) {
	e := newEnv(t)
	e.seed("f.txt", "a\nb\nc\n")
	_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{
		client.Replace("1:00", "", "x"), client.Replace("3:00", "", "y"),
	}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) || len(stale.Refs) != 2 {
		t.Fatalf("err = %v, want two stale refs", err)
	}
	if stale.Refs[0].GetEditIndex() != 0 || stale.Refs[1].GetEditIndex() != 1 {
		t.Errorf("edit indexes %d %d", stale.Refs[0].GetEditIndex(), stale.Refs[1].GetEditIndex())
	}
	// The file did not change since it was read: the hashes are wrong.
	if !strings.HasPrefix(stale.Err.Message, "line 1 is 1:56, not 1:00; line 3 is 3:1b, not 3:00: the references do not match the lines as you read them") {
		t.Errorf("message = %q", stale.Err.Message)
	}
}

// chmod sets the mode of the workspace file rel.
func chmod(t *testing.T, e *env, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(e.root, rel), mode); err != nil {
		t.Fatal(err)
	}
}
