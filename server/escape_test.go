package server_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/server"
)

// escapeCase is one hostile request: the setup that prepares the trap
// (outside is a directory next to the root, holding "secret"), the call,
// and the refusal it must get.
type escapeCase struct {
	name   string
	setup  func(t *testing.T, e *env, outside string)
	call   func(e *env) error
	code   codes.Code
	reason string // "" when grpc itself refuses, before our code runs
	cfg    server.GRPCConfig
}

// TestEscapesAndBadInputAreRefused extends errors_test.go's table with the
// attacks of a caller trying to leave the root, reach special files, or
// break the server with malformed input. Each case asserts the code, the
// reason, and that nothing changed on disk, inside the root or next to it.
// Cases already in TestBadInputGetsAClearErrorAndNothingIsLost are not
// repeated.
func TestEscapesAndBadInputAreRefused(t *testing.T) {
	const text = "one\ntwo\nthree\n"
	read := func(p string) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: p})
			return err
		}
	}
	write := func(p string) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: p, Content: "pwned\n"})
			return err
		}
	}
	edit := func(p string, edits ...*hashlinev1.FileEdit) func(e *env) error {
		if len(edits) == 0 {
			edits = []*hashlinev1.FileEdit{client.Append("pwned")}
		}
		return func(e *env) error {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: p, Edits: edits})
			return err
		}
	}
	grep := func(p string) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: "secret", Path: p}, nil)
			return err
		}
	}
	list := func(p string) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.List(e.ctx, &hashlinev1.ListRequest{Path: p, Recursive: true})
			return err
		}
	}
	del := func(p string) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: p})
			return err
		}
	}
	move := func(from, to string, overwrite bool) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: from, To: to, Overwrite: overwrite})
			return err
		}
	}
	apply := func(changes ...*hashlinev1.Change) func(e *env) error {
		return func(e *env) error {
			_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: changes})
			return err
		}
	}
	cWrite := func(p string) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: p, Content: "pwned\n"}}}
	}
	cEdit := func(p string) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: p, Edits: []*hashlinev1.FileEdit{client.Append("pwned")}}}}
	}
	cDelete := func(p string) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Delete{Delete: &hashlinev1.DeleteRequest{Path: p}}}
	}
	cMove := func(from, to string) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Move{Move: &hashlinev1.MoveRequest{From: from, To: to}}}
	}
	manyWrites := func(n int) []*hashlinev1.Change {
		out := make([]*hashlinev1.Change, n)
		for i := range out {
			out[i] = cWrite(fmt.Sprintf("many/%d.txt", i))
		}
		return out
	}
	link := func(target, name string) func(t *testing.T, e *env, outside string) {
		return func(t *testing.T, e *env, outside string) {
			target := strings.ReplaceAll(target, "OUT", outside)
			if strings.Contains(target, "REL") {
				rel, err := filepath.Rel(e.root, outside)
				if err != nil {
					t.Fatal(err)
				}
				target = strings.ReplaceAll(target, "REL", rel)
			}
			p := filepath.Join(e.root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	fifo := func(t *testing.T, e *env, _ string) {
		if err := mkfifo(filepath.Join(e.root, "fifo")); err != nil {
			t.Fatal(err)
		}
	}
	sock := func(t *testing.T, e *env, _ string) {
		// A socket file; the listener is closed but the file stays.
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(e.root, "sock"), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		l.SetUnlinkOnClose(false)
		l.Close()
	}
	// repo plants version-control metadata: a git repository's, a nested
	// one's, a worktree's .git file and Mercurial's. links adds symlinks
	// (target, name pairs) to it.
	repo := func(links ...string) func(t *testing.T, e *env, outside string) {
		return func(t *testing.T, e *env, outside string) {
			e.write(".git/config", "[core]\n\tbare = false\n")
			e.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n")
			e.write("sub/.git/config", "[core]\n")
			e.write("wt/.git", "gitdir: ../.git/worktrees/wt\n")
			e.write(".hg/hgrc", "[ui]\n")
			for i := 0; i+1 < len(links); i += 2 {
				link(strings.ReplaceAll(links[i], "ROOT", e.root), links[i+1])(t, e, outside)
			}
		}
	}
	fsmonitor := client.Append("[core]\n\tfsmonitor = touch pwned")
	long := strings.Repeat("a", 300)                           // one component over NAME_MAX
	deep := strings.Repeat("d/", 2100) + "f"                   // over PATH_MAX
	tooDeep := strings.Repeat("d/", server.MaxPathDepth) + "f" // short, but too deep
	hugeLine := fmt.Sprint(int64(1) << 40)

	tests := []escapeCase{
		// Climbing out with "..".
		{name: "write with .. ", call: write("../secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "edit with .. ", call: edit("../secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "write climbing out from a subdirectory", call: write("a/b/../../../secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "read of .. through a missing directory", call: read("missing/../../secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		// Absolute paths.
		{name: "write to an absolute path outside", call: func(e *env) error { return write(filepath.Join(filepath.Dir(e.root), "x"))(e) }, code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "edit of an absolute path outside", call: edit("/etc/hostname"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "read of /etc/passwd", call: read("/etc/passwd"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		// Symlinks out of the root: files and directories, relative and
		// absolute targets, and chains.
		{name: "read through a file link with a relative target", setup: link("REL/secret", "l"), call: read("l"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "edit through a file link with a relative target", setup: link("REL/secret", "l"), call: edit("l"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "write through a file link with a relative target", setup: link("REL/secret", "l"), call: write("l"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "edit through a file link with an absolute target", setup: link("OUT/secret", "l"), call: edit("l"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "write through a link to a missing file outside", setup: link("OUT/new", "l"), call: write("l"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "read through a directory link with a relative target", setup: link("REL", "d"), call: read("d/secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "write a new file through a directory link with a relative target", setup: link("REL", "d"), call: write("d/new.txt"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "write a new file through a directory link with an absolute target", setup: link("OUT", "d"), call: write("d/sub/new.txt"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "edit through a directory link with an absolute target", setup: link("OUT", "d"), call: edit("d/secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "grep through a directory link with a relative target", setup: link("REL", "d"), call: grep("d"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "read through a chain of links that ends outside", setup: func(t *testing.T, e *env, outside string) {
			link("REL/secret", "c")(t, e, outside)
			link("c", "b")(t, e, outside)
			link("b", "a")(t, e, outside)
		}, call: read("a"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "read through a link to /", setup: link("/", "slash"), call: read("slash/etc/passwd"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "read through a link that climbs with .. from a subdirectory", setup: link("../../REL/secret", "sub/dir/l"), call: read("sub/dir/l"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a symlink loop", setup: func(t *testing.T, e *env, outside string) {
			link("loop2", "loop1")(t, e, outside)
			link("loop1", "loop2")(t, e, outside)
		}, call: read("loop1"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		// Version-control metadata: writing a config or a hook is running
		// a command as whoever runs git next, so it is refused however it
		// is named, and read only if the operator allows it.
		{name: "an edit appending an fsmonitor command to .git/config", setup: repo(), call: edit(".git/config", fsmonitor), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write of a new hook", setup: repo(), call: write(".git/hooks/pre-commit"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write over .git/config", setup: repo(), call: write(".git/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write of a new repository's config, creating no directory", call: write("newrepo/.git/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write over the .git directory itself", setup: repo(), call: write(".git"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a read of .git/config", setup: repo(), call: read(".git/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a read of a missing file in .git", setup: repo(), call: read(".git/nothing"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a grep of .git", setup: repo(), call: grep(".git"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a grep of .git/config", setup: repo(), call: grep(".git/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write through a link to .git/config", setup: repo(".git/config", "cfg"), call: write("cfg"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "an edit through a link to .git/config", setup: repo(".git/config", "cfg"), call: edit("cfg", fsmonitor), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a read through a link to .git/config", setup: repo(".git/config", "cfg"), call: read("cfg"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a grep through a link to .git/config", setup: repo(".git/config", "cfg"), call: grep("cfg"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write through an absolute link to .git/config", setup: repo("ROOT/.git/config", "cfg"), call: write("cfg"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write of a hook through a link to .git", setup: repo(".git", "g"), call: write("g/hooks/post-checkout"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "an edit of the config through a link to .git", setup: repo(".git", "g"), call: edit("g/config", fsmonitor), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a grep through a link to .git", setup: repo(".git", "g"), call: grep("g"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write of a hook through a chain of links", setup: repo(".git", "g", "g/hooks", "h"), call: write("h/pre-push"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write to .git/config spelled through .git/..", setup: repo(), call: write("./.git/../.git/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write to an absolute path in .git", setup: repo(), call: func(e *env) error { return write(filepath.Join(e.root, ".git", "config"))(e) }, code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write to a nested repository's config", setup: repo(), call: write("sub/.git/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write to a nested repository through a linked directory", setup: repo("sub", "s"), call: write("s/.git/hooks/pre-commit"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "an edit of a worktree's .git file", setup: repo(), call: edit("wt/.git", client.Append("gitdir: /tmp/evil")), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write to .GIT/config, which is .git/config on a case-insensitive disk", setup: repo(), call: write(".GIT/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a write to Mercurial's hgrc", setup: repo(), call: write(".hg/hgrc"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		// List resolves its path as Read and Grep do.
		{name: "a list with ..", call: list(".."), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a list of an absolute path outside", call: list("/etc"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a list through a directory link out of the root", setup: link("OUT", "l"), call: list("l"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a list of /proc through a link", setup: link("/proc/self", "p"), call: list("p"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a list of .git", setup: repo(), call: list(".git"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a list through a link to .git", setup: repo(".git", "g"), call: list("g/hooks"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a list of a nested repository's metadata", setup: repo(), call: list("sub/.git"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a list of a symlink loop", setup: link("self", "self"), call: list("self"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "NUL byte in a list path", call: list("a\x00"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a list path over PATH_MAX", call: list(deep), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a list of a missing directory", call: list("missing"), code: codes.NotFound, reason: "NOT_FOUND"},
		{name: "a list with a forged page token", call: func(e *env) error {
			_, err := e.c.List(e.ctx, &hashlinev1.ListRequest{PageToken: "Li4vc2VjcmV0"}) // "../secret"
			return err
		}, code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		// Symlink loops: Grep resolves its path as Read does.
		{name: "a grep of a symlink loop", setup: func(t *testing.T, e *env, outside string) {
			link("loop2", "loop1")(t, e, outside)
			link("loop1", "loop2")(t, e, outside)
		}, call: grep("loop1"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a grep of a link to itself", setup: link("self", "self"), call: grep("self"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a grep of a path through a symlink loop", setup: link("self", "self"), call: grep("self/x"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		// Special files: /proc and devices through links, FIFOs, sockets.
		{name: "read of /proc through a link", setup: link("/proc/self/environ", "env"), call: read("env"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "write to /proc through a directory link", setup: link("/proc/self", "p"), call: write("p/comm"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "read of /dev/zero through a link", setup: link("/dev/zero", "zero"), call: read("zero"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "write to /dev/null through a link", setup: link("/dev/null", "null"), call: write("null"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "edit of a FIFO does not hang", setup: fifo, call: edit("fifo"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "write over a FIFO does not hang", setup: fifo, call: write("fifo"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "read of a FIFO through a link does not hang", setup: func(t *testing.T, e *env, outside string) {
			fifo(t, e, outside)
			link("fifo", "lf")(t, e, outside)
		}, call: read("lf"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "read of a socket", setup: sock, call: read("sock"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "write over a socket", setup: sock, call: write("sock"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "write over a directory", setup: func(t *testing.T, e *env, _ string) { e.write("dir/x", "") }, call: write("dir"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "write to the root itself", call: write("."), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		// Bad paths.
		{name: "NUL byte in a read path", call: read("f.txt\x00.png"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "NUL byte in a write path", call: write("new\x00.txt"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "NUL byte in a grep path", call: grep("a\x00"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "empty path", call: read(""), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a path component over NAME_MAX", call: write(long), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a path over PATH_MAX", call: write(deep), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a path too many directories deep", call: write(tooDeep), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a grep path over PATH_MAX", call: grep(deep), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		// Malformed references and line numbers.
		{name: "ref without a hash", call: edit("f.txt", client.Replace("1", "", "x")), code: codes.InvalidArgument, reason: "INVALID_REF"},
		{name: "ref with a non-hex hash", call: edit("f.txt", client.Replace("1:zz", "", "x")), code: codes.InvalidArgument, reason: "INVALID_REF"},
		{name: "ref with no line", call: edit("f.txt", client.Replace(":ab", "", "x")), code: codes.InvalidArgument, reason: "INVALID_REF"},
		{name: "ref with a negative line", call: edit("f.txt", client.Replace("-1:ab", "", "x")), code: codes.InvalidArgument, reason: "INVALID_REF"},
		{name: "ref with a line past int64", call: edit("f.txt", client.Replace("99999999999999999999999:ab", "", "x")), code: codes.InvalidArgument, reason: "INVALID_REF"},
		{name: "ref with a huge line", call: edit("f.txt", client.Delete(hugeLine+":ab", "")), code: codes.InvalidArgument, reason: "LINE_OUT_OF_RANGE"},
		{name: "range end past the end", call: edit("f.txt", client.Delete(tag(text, 1), "2147483647:ab")), code: codes.InvalidArgument, reason: "LINE_OUT_OF_RANGE"},
		{name: "ref with invalid UTF-8 is refused by the client's encoder", call: edit("f.txt", client.Replace("1:\xff\xfe", "", "x")), code: codes.Internal, reason: ""},
		{name: "read from a huge offset", call: func(e *env) error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Offset: 1 << 30})
			return err
		}, code: codes.InvalidArgument, reason: "LINE_OUT_OF_RANGE"},
		{name: "negative read limit", call: func(e *env) error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Limit: -1})
			return err
		}, code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		{name: "negative edit context", call: func(e *env) error {
			n := int32(-1)
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Context: &n, Edits: []*hashlinev1.FileEdit{client.Append("x")}})
			return err
		}, code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		{name: "negative grep context", call: func(e *env) error {
			_, err := e.c.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: "x", Before: -1}, nil)
			return err
		}, code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		{name: "a path with invalid UTF-8 sent as raw bytes", call: func(e *env) error {
			req := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("f\xff.txt"))
			return e.conn.Invoke(e.ctx, hashlinev1.FileService_Read_FullMethodName, &rawMsg{b: req}, &rawMsg{}, grpc.ForceCodec(rawCodec{}))
		}, code: codes.Internal, reason: ""},
		// Unknown and empty oneof cases and enums.
		{name: "an edit whose operation is a field this server does not know", call: func(e *env) error {
			unknown := &hashlinev1.FileEdit{}
			unknown.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), []byte("future op")))
			return edit("f.txt", unknown)(e)
		}, code: codes.InvalidArgument, reason: "INVALID_EDIT"},
		{name: "a replace with its oneof set but empty", call: edit("f.txt", &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Replace{}}), code: codes.InvalidArgument, reason: "INVALID_REF"},
		{name: "an unknown write mode", call: func(e *env) error {
			_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "new.txt", Content: "x", Mode: 99})
			return err
		}, code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		// Invalid UTF-8 in files.
		{name: "edit of a file that is not UTF-8", setup: func(t *testing.T, e *env, _ string) { e.write("latin1.txt", "caf\xe9\n") }, call: edit("latin1.txt"), code: codes.FailedPrecondition, reason: "NOT_TEXT"},
		{name: "edit of a UTF-16 file with an odd byte count", setup: func(t *testing.T, e *env, _ string) { e.write("u16.txt", "\xff\xfea\x00b") }, call: edit("u16.txt"), code: codes.FailedPrecondition, reason: "NOT_TEXT"},
		// Deletes: of the root, of what is not a file or an empty
		// directory, of metadata and temp files, through links out.
		{name: "a delete climbing out with ..", call: del("../secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a delete of an absolute path outside", call: func(e *env) error { return del(filepath.Join(filepath.Dir(e.root), "x"))(e) }, code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a delete of the root", call: del("."), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a delete of the root by its absolute path", call: func(e *env) error { return del(e.root)(e) }, code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a delete of a directory that is not empty", setup: func(t *testing.T, e *env, _ string) { e.write("dir/x", "") }, call: del("dir"), code: codes.FailedPrecondition, reason: "DIRECTORY_NOT_EMPTY"},
		{name: "a delete of a temp file", setup: func(t *testing.T, e *env, _ string) { e.write(".hashline-AAAAAAAAAAAAAAAAAAAAAAAAAA.tmp", "x") }, call: del(".hashline-AAAAAAAAAAAAAAAAAAAAAAAAAA.tmp"), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a delete of .git/config", setup: repo(), call: del(".git/config"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a delete of the .git directory", setup: repo(), call: del(".git"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a delete of a hook through a link to .git", setup: repo(".git", "g"), call: del("g/hooks/pre-commit.sample"), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a delete through a directory link out of the root", setup: link("REL", "d"), call: del("d/secret"), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a delete of a link to a file outside", setup: link("REL/secret", "l"), call: del("l"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "a delete of a FIFO", setup: fifo, call: del("fifo"), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "a delete of a missing file", call: del("missing.txt"), code: codes.NotFound, reason: "NOT_FOUND"},
		// Moves: out of the root, onto a directory, onto itself, of the
		// root, through links, into metadata.
		{name: "a move out of the root with ..", call: move("f.txt", "../stolen", false), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a move of a file outside into the root", call: move("../secret", "mine", false), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a move to an absolute path outside", call: func(e *env) error { return move("f.txt", filepath.Join(filepath.Dir(e.root), "stolen"), false)(e) }, code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a move into a directory link out of the root", setup: link("REL", "d"), call: move("f.txt", "d/stolen", false), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a move over a file outside through a directory link", setup: link("OUT", "d"), call: move("f.txt", "d/secret", true), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a move of a file outside through a directory link", setup: link("REL", "d"), call: move("d/secret", "mine", false), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a move of a link to a file outside", setup: link("REL/secret", "l"), call: move("l", "m", false), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "a move over a link to a file outside", setup: link("REL/secret", "l"), call: move("f.txt", "l", true), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "a move onto a directory", setup: func(t *testing.T, e *env, _ string) { e.write("dir/x", "") }, call: move("f.txt", "dir", true), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "a move onto itself", call: move("f.txt", "f.txt", true), code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		{name: "a move onto itself spelled another way", call: move("f.txt", "./sub/../f.txt", true), code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		{name: "a move onto itself through a directory link", setup: link(".", "here"), call: move("f.txt", "here/f.txt", true), code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		{name: "a move of the root", call: move(".", "elsewhere", false), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a move of a directory", setup: func(t *testing.T, e *env, _ string) { e.write("dir/x", "") }, call: move("dir", "dir2", false), code: codes.FailedPrecondition, reason: "NOT_REGULAR_FILE"},
		{name: "a move into .git as a hook", setup: repo(), call: move("f.txt", ".git/hooks/pre-commit", false), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a move of .git/config out of .git", setup: repo(), call: move(".git/config", "config", false), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a move onto a temp file's name", call: move("f.txt", ".hashline-AAAAAAAAAAAAAAAAAAAAAAAAAA.tmp", false), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a move over an existing file without overwrite", setup: func(t *testing.T, e *env, _ string) { e.write("g.txt", "g\n") }, call: move("f.txt", "g.txt", false), code: codes.AlreadyExists, reason: "ALREADY_EXISTS"},
		{name: "a move of a missing file", call: move("missing.txt", "x.txt", false), code: codes.NotFound, reason: "NOT_FOUND"},
		// Change sets: every change is checked before anything is written.
		{name: "a change set that touches one path twice", call: apply(cEdit("f.txt"), cWrite("f.txt")), code: codes.InvalidArgument, reason: "CONFLICTING_CHANGES"},
		{name: "a change set that moves a file and edits its old path", call: apply(cMove("f.txt", "g.txt"), cEdit("f.txt")), code: codes.InvalidArgument, reason: "CONFLICTING_CHANGES"},
		{name: "a change set that moves a file and writes its new path", call: apply(cMove("f.txt", "g.txt"), cWrite("g.txt")), code: codes.InvalidArgument, reason: "CONFLICTING_CHANGES"},
		{name: "a change set that touches one file by two names", setup: link("f.txt", "alias"), call: apply(cEdit("f.txt"), cEdit("alias")), code: codes.InvalidArgument, reason: "CONFLICTING_CHANGES"},
		{name: "a change set that deletes a directory and writes in it", setup: func(t *testing.T, e *env, _ string) { e.write("dir/.keep", "") }, call: apply(cDelete("dir"), cWrite("dir/new.txt")), code: codes.InvalidArgument, reason: "CONFLICTING_CHANGES"},
		{name: "a change set of 10,000 changes", call: apply(manyWrites(10000)...), code: codes.ResourceExhausted, reason: "TOO_LARGE"},
		{name: "a change set whose last write climbs out", call: apply(cWrite("new.txt"), cEdit("f.txt"), cWrite("../secret")), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a change set whose last change writes a hook", setup: repo(), call: apply(cWrite("new.txt"), cWrite(".git/hooks/pre-commit")), code: codes.PermissionDenied, reason: "VCS_METADATA"},
		{name: "a change set whose move leaves the root through a link", setup: link("REL", "d"), call: apply(cWrite("new.txt"), cMove("f.txt", "d/stolen")), code: codes.PermissionDenied, reason: "OUTSIDE_ROOT"},
		{name: "a change set that deletes the root", call: apply(cWrite("new.txt"), cDelete(".")), code: codes.InvalidArgument, reason: "INVALID_PATH"},
		{name: "a change set with a change of no kind", call: apply(cWrite("new.txt"), &hashlinev1.Change{}), code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		{name: "an empty change set", call: apply(), code: codes.InvalidArgument, reason: "INVALID_ARGUMENT"},
		// Oversized messages: grpc refuses them before any of our code,
		// so they carry no ErrorInfo.
		{name: "a request over the message limit", cfg: server.GRPCConfig{MaxRecvBytes: 1 << 10}, call: func(e *env) error {
			_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "big.txt", Content: strings.Repeat("x", 2<<10)})
			return err
		}, code: codes.ResourceExhausted, reason: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.DefaultTimeout == 0 {
				cfg.DefaultTimeout = 10 * time.Second
			}
			e := newEnvConfig(t, cfg, nil)
			e.write("f.txt", text)
			// Edits need a Read first (--require-read); read it so every
			// case reaches the check it is about.
			if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, e, outside)
			}
			out := &env{t: t, root: outside}
			before, outBefore := e.snapshot(), out.snapshot()

			err := tt.call(e)
			code, reason := codeOf(err), errorInfo(err).GetReason()
			if code != tt.code || reason != tt.reason {
				t.Errorf("got %v %q, want %v %q: %v", code, reason, tt.code, tt.reason, err)
			}
			e.assertUnchanged(before)
			out.assertUnchanged(outBefore)
		})
	}
}

// TestDeviceFileInsideTheRoot needs CAP_MKNOD (root in CI containers): a
// character device planted under the root is refused without being opened.
func TestDeviceFileInsideTheRoot(t *testing.T) {
	e := newEnv(t)
	dev := filepath.Join(e.root, "null")
	if err := mknull(dev); err != nil {
		t.Skipf("cannot create a device file here: %v", err)
	}
	before := e.snapshot()
	for name, call := range map[string]func() error{
		"read": func() error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "null"})
			return err
		},
		"write": func() error {
			_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "null", Content: "x"})
			return err
		},
		"edit": func() error {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "null", Edits: []*hashlinev1.FileEdit{client.Append("x")}})
			return err
		},
	} {
		if err := call(); codeOf(err) != codes.FailedPrecondition || errorInfo(err).GetReason() != "NOT_REGULAR_FILE" {
			t.Errorf("%s of a device: %v", name, err)
		}
	}
	e.assertUnchanged(before)
}

// TestSymlinkSwappedDuringEditsNeverWritesOutside races a goroutine that
// flips links between a target inside the root and one outside against a
// stream of edits and writes through them. Calls may fail (OUTSIDE_ROOT,
// STALE_REF, ...), but nothing outside the root may ever change, and Read
// may never return what is outside.
func TestSymlinkSwappedDuringEditsNeverWritesOutside(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	const secret = "secret\n"
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write("inside.txt", "one\n")
	e.write("realdir/keep.txt", "keep\n")
	out := &env{t: t, root: outside}
	outBefore := out.snapshot()

	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		defer func() { swapped <- n }()
		flip := func(name, in, outTarget string) {
			p := filepath.Join(e.root, name)
			target := in
			if n%2 == 1 {
				target = outTarget
			}
			tmp := p + ".new"
			_ = os.Remove(tmp)
			if err := os.Symlink(target, tmp); err == nil {
				_ = os.Rename(tmp, p) // atomic swap of the link
			}
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			flip("link", "inside.txt", filepath.Join(outside, "secret"))
			flip("dlink", "realdir", outside)
			n++
		}
	}()

	deadline := time.Now().Add(2 * time.Second)
	var calls, ok int
	for time.Now().Before(deadline) {
		calls++
		r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "link"})
		if err == nil {
			if strings.Contains(r.GetText(), "secret") {
				t.Fatalf("Read through the swapped link returned the outside file: %q", r.GetText())
			}
			_, err = e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "link", Edits: []*hashlinev1.FileEdit{client.Append(fmt.Sprint("edit ", calls))}})
			if err == nil {
				ok++
			}
		}
		if _, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "link", Content: fmt.Sprintf("write %d\n", calls)}); err == nil {
			ok++
		}
		if _, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: fmt.Sprintf("dlink/new-%d.txt", calls), Content: "x\n"}); err == nil {
			ok++
		}
	}
	close(stop)
	n := <-swapped
	t.Logf("%d rounds of calls against %d link swaps; %d calls succeeded", calls, n, ok)
	out.assertUnchanged(outBefore)
	if ok == 0 || n < 10 {
		t.Errorf("the race did not run: %d successes, %d swaps", ok, n)
	}
	// The link itself must still be a link (writes go to its target).
	if fi, err := os.Lstat(filepath.Join(e.root, "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link is no longer a symlink: %v %v", fi, err)
	}
}

// TestGrepNeverReadsOutsideTheRoot: links out of the root are skipped while
// walking (not an error: a tree may hold such links), never followed.
func TestGrepNeverReadsOutsideTheRoot(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("needle outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write("in.txt", "needle inside\n")
	for name, target := range map[string]string{"abs": filepath.Join(outside, "secret"), "dir": outside, "proc": "/proc/self/environ", "dev": "/dev/zero"} {
		if err := os.Symlink(target, filepath.Join(e.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := mkfifo(filepath.Join(e.root, "fifo")); err != nil {
		t.Fatal(err)
	}
	var paths []string
	sum, err := e.c.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: "needle|PATH", Hidden: true}, func(f *hashlinev1.GrepFile) error {
		paths = append(paths, f.GetPath())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || paths[0] != "in.txt" || sum.GetMatches() != 1 {
		t.Errorf("grep found %v (%d matches), want only in.txt", paths, sum.GetMatches())
	}
}

// TestVeryLongLinesAndLargeBatches: inputs at the limits that must work.
func TestVeryLongLinesAndLargeBatches(t *testing.T) {
	e := newEnv(t)
	longLine := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes
	e.write("long.txt", "short\n"+longLine+"\nend\n")
	r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "long.txt"})
	if err != nil {
		t.Fatal(err)
	}
	l := r.GetLines()[1]
	if len(l.GetContent()) > engine.DefaultMaxLineBytes+64 || !strings.HasPrefix(longLine, strings.TrimRightFunc(l.GetContent(), func(r rune) bool { return r != 'é' })) {
		t.Errorf("long line shown as %d bytes", len(l.GetContent()))
	}
	// The cut line is still addressed by its full hash.
	if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "long.txt", Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(l), "", "was long")}}); err != nil {
		t.Fatal(err)
	}
	if got := e.read("long.txt"); got != "short\nwas long\nend\n" {
		t.Errorf("after replacing the long line: %q", got)
	}

	// A batch at the 10,000-edit limit: every line of a 10,000-line file.
	var b strings.Builder
	for i := range engine.DefaultMaxEdits {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	e.write("many.txt", b.String())
	r, err = e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "many.txt", Limit: engine.DefaultMaxEdits})
	if err != nil {
		t.Fatal(err)
	}
	var edits []*hashlinev1.FileEdit
	for _, l := range r.GetLines() {
		edits = append(edits, client.Replace(client.Ref(l), "", "L"+l.GetContent()))
	}
	for len(edits) < engine.DefaultMaxEdits { // the byte budget may cut the page
		edits = append(edits, client.Append("more"))
	}
	zero := int32(0)
	if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "many.txt", Edits: edits, Context: &zero}); err != nil {
		t.Fatalf("10,000-edit batch: %v", err)
	}
	if got := e.read("many.txt"); !strings.HasPrefix(got, "Lline 0\nLline 1\n") {
		t.Errorf("after the batch: %.40q", got)
	}

	// 10,000 stale references: all reported, in one error that fits.
	before := e.snapshot()
	_, err = e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "many.txt", Edits: edits[:len(r.GetLines())]})
	var stale client.StaleRefError
	if !errors.As(err, &stale) {
		t.Fatalf("stale batch: %v", err)
	}
	if len(stale.Refs) == 0 {
		t.Errorf("no stale refs in the error")
	}
	t.Logf("%d stale references reported for %d edits; error message %d bytes, %d details bytes",
		len(stale.Refs), len(r.GetLines()), len(stale.Err.Message), detailsSize(stale.Refs))
	e.assertUnchanged(before)
}

func detailsSize(refs []*hashlinev1.StaleRef) int {
	n := 0
	for _, r := range refs {
		n += proto.Size(r)
	}
	return n
}

// rawMsg and rawCodec send hand-made protobuf bytes, to get past the
// encoder's own checks (it refuses invalid UTF-8 in string fields).
type rawMsg struct{ b []byte }

type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.(*rawMsg).b, nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	v.(*rawMsg).b = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }
