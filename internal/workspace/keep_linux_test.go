package workspace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// nobody is the uid and gid the tests give files of another user, and run
// the workspace as, in a re-executed test binary.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving files to another user and running as one needs root")
	}
}

// owned creates root/name holding content, with the owner, group and mode
// given.
func owned(t *testing.T, root, name, content string, uid, gid int, mode fs.FileMode) string {
	t.Helper()
	p := filepath.Join(root, name)
	mustWrite(t, p, content, 0o600)
	if err := os.Chown(p, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// meta describes what a replace must keep of a file: owner, group, mode and
// every extended attribute, with its content.
func meta(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d:%d %v %q xattrs %s", st.Uid, st.Gid, fi.Mode(), b, xattrsOf(t, p))
}

// xattrsOf lists p's extended attributes as name=value, sorted by name as
// the kernel lists them.
func xattrsOf(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	xs, err := readXattrs(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range xs {
		out = append(out, fmt.Sprintf("%s=%q", x.name, x.value))
	}
	return "[" + strings.Join(out, " ") + "]"
}

// needUserXattrs skips the test where the filesystem of dir has no user
// extended attributes.
func needUserXattrs(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "xattr-probe")
	mustWrite(t, p, "", 0o600)
	defer os.Remove(p)
	if err := unix.Setxattr(p, "user.probe", []byte("x"), 0); err != nil {
		t.Skipf("the filesystem of %s has no user extended attributes: %v", dir, err)
	}
}

// TestWriteFileRefusesFilesWithoutAWriteBit: a mode without a write bit is
// the owner's word that the file is not to change; root keeps to it too,
// though the kernel would let it write.
func TestWriteFileRefusesFilesWithoutAWriteBit(t *testing.T) {
	for _, mode := range []fs.FileMode{0o444, 0o400, 0o555, 0o000} {
		t.Run(fmt.Sprintf("a file of mode %04o is left as it is", uint32(mode)), func(t *testing.T) {
			w, root, _ := newWS(t)
			p := filepath.Join(root, "ro.txt")
			mustWrite(t, p, "old\n", mode)
			before := snapshot(t, root)
			for _, m := range []WriteMode{Upsert, ReplaceOnly} {
				_, err := w.WriteFile("ro.txt", []byte("new\n"), WriteOptions{Mode: m})
				assertErr(t, err, ErrNotWritable)
				if !strings.Contains(err.Error(), `"ro.txt"`) || !strings.Contains(err.Error(), "read-only") {
					t.Errorf("message %q does not name the file and say it is read-only", err)
				}
			}
			assertSameSnapshot(t, before, snapshot(t, root))
			assertNoTemp(t, root)
		})
	}
	t.Run("a file with only the group's write bit is replaced", func(t *testing.T) {
		w, root, _ := newWS(t)
		p := filepath.Join(root, "g.txt")
		mustWrite(t, p, "old\n", 0o464)
		if _, err := w.WriteFile("g.txt", []byte("new\n"), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode() != 0o464 {
			t.Errorf("mode after the write: %v, %v; want 0464", fi.Mode(), err)
		}
	})
}

// TestWriteFileRefusesImmutableAndAppendOnlyFiles: the rename would fail on
// either; the write says why, before writing anything.
func TestWriteFileRefusesImmutableAndAppendOnlyFiles(t *testing.T) {
	needRoot(t)
	for _, tt := range []struct {
		name string
		flag uint32
		says string
	}{
		{"an immutable file is left as it is", fsImmutableFl, "immutable"},
		{"an append-only file is left as it is", fsAppendFl, "append-only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, root, _ := newWS(t)
			p := filepath.Join(root, "f.txt")
			mustWrite(t, p, "old\n", 0o644)
			setFlags(t, p, tt.flag, true)
			t.Cleanup(func() { setFlags(t, p, tt.flag, false) }) // or TempDir cannot remove it
			before := snapshot(t, root)
			_, err := w.WriteFile("f.txt", []byte("new\n"), WriteOptions{})
			assertErr(t, err, ErrNotWritable)
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("message %q does not say the file is %s", err, tt.says)
			}
			assertSameSnapshot(t, before, snapshot(t, root))
			assertNoTemp(t, root)
		})
	}
}

// setFlags sets (on) or clears the inode flag of p, leaving the others
// (ext4's extents flag cannot be cleared) as they are.
func setFlags(t *testing.T, p string, flag uint32, on bool) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err == nil {
		if on {
			flags |= flag
		} else {
			flags &^= flag
		}
		err = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
	}
	if err != nil && on {
		t.Skipf("cannot set inode flags here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteFileKeepsOwnerModeAndXattrs: root edits another user's file; the
// new file has the old one's owner, group, mode and extended attributes,
// and an ACL the directory would have given a new file is not added.
func TestWriteFileKeepsOwnerModeAndXattrs(t *testing.T) {
	needRoot(t)
	w, root, _ := newWS(t)
	needUserXattrs(t, root)
	tests := []struct {
		name   string
		uid    int
		gid    int
		mode   fs.FileMode
		xattrs map[string]string
	}{
		{"another user's file keeps its user.test", nobody, nobody, 0o640, map[string]string{"user.test": "xyz"}},
		{"several attributes, an empty and a binary one, are all kept", nobody, 0, 0o604, map[string]string{"user.a": "", "user.b": "\x00\xff\x01", "user.c": strings.Repeat("long value ", 300)}},
		{"trusted attributes are kept for root", 1234, 5678, 0o600, map[string]string{"trusted.test": "t"}},
		{"an access ACL is kept", nobody, nobody, 0o660, map[string]string{aclAccess: string(aclUserRW(1234))}},
		{"a setgid file keeps the bit after the chown", nobody, 1234, 0o755 | fs.ModeSetgid, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("f%d.txt", i)
			p := owned(t, root, name, "old\n", tt.uid, tt.gid, tt.mode)
			for k, v := range tt.xattrs {
				if err := unix.Setxattr(p, k, []byte(v), 0); err != nil {
					t.Skipf("cannot set %s here: %v", k, err)
				}
			}
			want := strings.Replace(meta(t, p), `"old\n"`, `"new\n"`, 1)
			if _, err := w.WriteFile(name, []byte("new\n"), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := meta(t, p); got != want {
				t.Errorf("after the write\n got %s\nwant %s", got, want)
			}
		})
	}
	t.Run("the kernel's integrity attributes of the old content are not copied", func(t *testing.T) {
		p := owned(t, root, "ima.txt", "old\n", nobody, nobody, 0o644)
		if err := unix.Setxattr(p, "security.ima", []byte("hash of old"), 0); err != nil {
			t.Skipf("cannot set security.ima here: %v", err)
		}
		if err := unix.Setxattr(p, "user.kept", []byte("k"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteFile("ima.txt", []byte("new\n"), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := xattrsOf(t, p); got != `[user.kept="k"]` {
			t.Errorf("attributes after the write: %s; want user.kept alone", got)
		}
	})
	t.Run("a default ACL of the directory does not give the new file an ACL", func(t *testing.T) {
		dir := filepath.Join(root, "acl")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Setxattr(dir, "system.posix_acl_default", aclUserRW(1234), 0); err != nil {
			t.Skipf("no ACLs here: %v", err)
		}
		p := owned(t, dir, "plain.txt", "old\n", nobody, nobody, 0o644)
		if err := unix.Removexattr(p, aclAccess); err != nil && !errors.Is(err, unix.ENODATA) {
			t.Fatal(err)
		}
		want := strings.Replace(meta(t, p), `"old\n"`, `"new\n"`, 1)
		if _, err := w.WriteFile("acl/plain.txt", []byte("new\n"), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := meta(t, p); got != want {
			t.Errorf("after the write\n got %s\nwant %s", got, want)
		}
	})
}

// aclUserRW is a POSIX access ACL in the kernel's xattr form (little
// endian) giving uid read and write besides the owner (rw), group (r) and
// others (r), with a mask of rw: the ACL of mode 0664 plus one named user.
func aclUserRW(uid uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 2) // version
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{
		{0x01, 6, 0xffffffff}, // owner
		{0x02, 6, uid},        // named user
		{0x04, 4, 0xffffffff}, // owning group
		{0x10, 6, 0xffffffff}, // mask
		{0x20, 4, 0xffffffff}, // others
	} {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// asUserEnv carries, to a test binary re-executed as another user, the
// root, path and content of the one change TestHelperWriteAsAnotherUser
// makes, and which change it is: "write" (of the content), "delete", or
// "move" (to the path in the content's place, with overwrite).
const asUserEnv = "HASHLINE_TEST_WRITE_AS"

// TestHelperWriteAsAnotherUser is not a test: runAs re-executes the test
// binary as another user to run it, and reads the outcome it prints.
func TestHelperWriteAsAnotherUser(t *testing.T) {
	spec := os.Getenv(asUserEnv)
	if spec == "" {
		t.Skip("run by runAs")
	}
	parts := strings.Split(spec, "\n")
	w, err := Open(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	switch parts[3] {
	case "write":
		_, err = w.WriteFile(parts[1], []byte(parts[2]), WriteOptions{})
	case "delete":
		var rel, target string
		if rel, target, _, err = w.Entry(parts[1]); err == nil {
			err = w.Remove(rel, target)
		}
	case "move":
		var rel, from, to string
		if rel, from, _, err = w.Entry(parts[1]); err == nil {
			if _, to, _, err = w.Entry(parts[2]); err == nil {
				err = w.Rename(rel, from, to, true)
			}
		}
	default:
		t.Fatalf("unknown change %q", parts[3])
	}
	kind := "ok"
	for _, s := range sentinels {
		if errors.Is(err, s) {
			kind = s.Error()
		}
	}
	fmt.Printf("\nRESULT %s\t%v\n", kind, err)
}

// runAs writes content to rel in the workspace at root, from this test
// binary re-executed as uid and gid, and returns the sentinel's text (or
// "ok") and the error.
func runAs(t *testing.T, exe string, uid, gid uint32, root, rel, content string) (kind, msg string) {
	t.Helper()
	return changeAs(t, exe, uid, gid, root, "write", rel, content)
}

// changeAs makes the change op ("write", "delete" or "move", see
// asUserEnv) of rel in the workspace at root, with arg (the content, or
// the path moved to), from this test binary re-executed as uid and gid,
// and returns the sentinel's text (or "ok") and the error.
func changeAs(t *testing.T, exe string, uid, gid uint32, root, op, rel, arg string) (kind, msg string) {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^TestHelperWriteAsAnotherUser$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), asUserEnv+"="+strings.Join([]string{root, rel, arg, op}, "\n"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "RESULT "); ok {
			kind, msg, _ = strings.Cut(rest, "\t")
			return kind, msg
		}
	}
	t.Fatalf("the helper as uid %d printed no result (%v):\n%s", uid, err, out)
	return "", ""
}

// reachable copies the running test binary where uid nobody can run it,
// and returns a directory nobody can reach for the workspace.
func reachable(t *testing.T) (exe, dir string) {
	t.Helper()
	dir = t.TempDir()
	// TempDir makes its directories 0700; the other user must get through.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, "workspace.test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, dir
}

// TestWriteFileAsAnotherUser runs writes as uid nobody in a directory
// anyone may write to, where the rename alone would replace any file:
// only files nobody could open for writing, and whose owner it can keep,
// are replaced.
func TestWriteFileAsAnotherUser(t *testing.T) {
	needRoot(t)
	exe, dir := reachable(t)
	tests := []struct {
		name     string
		uid, gid int
		mode     fs.FileMode
		want     error // nil: replaced
		says     string
	}{
		{"a file the server's user may not write is refused", 0, 0, 0o644, ErrNotWritable, "may not write"},
		{"a file writable by its group but owned by another user is refused, its owner could not be kept", 1234, nobody, 0o664, ErrNotWritable, "belongs to uid 1234"},
		{"a file writable by all but owned by another user is refused", 0, 0, 0o666, ErrNotWritable, "belongs to uid 0"},
		{"the server's user's own file is replaced", nobody, nobody, 0o640, nil, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(root, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, 0o777); err != nil { // past the umask
				t.Fatal(err)
			}
			p := owned(t, root, "f.txt", "old\n", tt.uid, tt.gid, tt.mode)
			before := snapshot(t, root)
			wantMeta := strings.Replace(meta(t, p), `"old\n"`, `"new"`, 1)
			kind, msg := runAs(t, exe, nobody, nobody, root, "f.txt", "new")
			t.Logf("as uid %d: %s %s", nobody, kind, msg)
			assertNoTemp(t, root)
			if tt.want == nil {
				if kind != "ok" {
					t.Fatalf("the write failed: %s", msg)
				}
				if got := meta(t, p); got != wantMeta {
					t.Errorf("after the write\n got %s\nwant %s", got, wantMeta)
				}
				return
			}
			if kind != tt.want.Error() || !strings.Contains(msg, tt.says) || !strings.Contains(msg, `"f.txt"`) || !strings.Contains(msg, "ask the operator") {
				t.Errorf("got %s: %s; want %v saying %q, naming the file and what to do", kind, msg, tt.want, tt.says)
			}
			assertSameSnapshot(t, before, snapshot(t, root))
			if got := meta(t, p); got != strings.Replace(wantMeta, `"new"`, `"old\n"`, 1) {
				t.Errorf("the file changed: %s", got)
			}
		})
	}
}

// TestDeleteAndMoveAsAnotherUser runs deletes and moves as uid nobody in a
// directory anyone may write to, where unlink and rename alone would take
// any file away: a file nobody could not open for writing is neither
// deleted, moved away, nor replaced by a move onto it, as a write would not
// replace it; nobody's own files are.
func TestDeleteAndMoveAsAnotherUser(t *testing.T) {
	needRoot(t)
	exe, dir := reachable(t)
	tests := []struct {
		name    string
		op, arg string
		uid     int // the owner of f.txt (mode 0644); mine.txt is nobody's
		want    error
	}{
		{"a delete of a file the server's user may not write is refused", "delete", "", 0, ErrNotWritable},
		{"a move of a file the server's user may not write is refused", "move", "moved.txt", 0, ErrNotWritable},
		{"a move onto a file the server's user may not write is refused", "move-onto", "", 0, ErrNotWritable},
		{"a delete of the server's user's own file is done", "delete", "", nobody, nil},
		{"a move of the server's user's own file is done", "move", "moved.txt", nobody, nil},
		{"a move onto the server's user's own file is done", "move-onto", "", nobody, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(root, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, 0o777); err != nil { // past the umask
				t.Fatal(err)
			}
			owned(t, root, "f.txt", "theirs\n", tt.uid, tt.uid, 0o644)
			owned(t, root, "mine.txt", "mine\n", nobody, nobody, 0o644)
			before := snapshot(t, root)
			op, rel, arg := tt.op, "f.txt", tt.arg
			if op == "move-onto" {
				op, rel, arg = "move", "mine.txt", "f.txt"
			}
			kind, msg := changeAs(t, exe, nobody, nobody, root, op, rel, arg)
			t.Logf("as uid %d: %s %s", nobody, kind, msg)
			if tt.want == nil {
				if kind != "ok" {
					t.Fatalf("the %s failed: %s", op, msg)
				}
				if _, err := os.Lstat(filepath.Join(root, rel)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is still there after the %s (%v)", rel, op, err)
				}
				return
			}
			if kind != tt.want.Error() || !strings.Contains(msg, "may not write") || !strings.Contains(msg, "ask the operator") {
				t.Errorf("got %s: %s; want %v saying the server's user may not write the file, and what to do", kind, msg, tt.want)
			}
			assertSameSnapshot(t, before, snapshot(t, root))
		})
	}
}
