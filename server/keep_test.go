//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// An Edit by a server running as root of another user's file keeps its
// owner, group, mode and extended attributes.
func TestEditKeepsOwnerModeAndXattrs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	e := newEnv(t)
	e.write("f.txt", "one\ntwo\n")
	p := filepath.Join(e.root, "f.txt")
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.test", []byte("xyz"), 0); err != nil {
		t.Skipf("the filesystem of %s has no user extended attributes: %v", e.root, err)
	}
	r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(r.GetLines()[1]), "", "2")}}); err != nil {
		t.Fatal(err)
	}
	if got := e.read("f.txt"); got != "one\n2\n" {
		t.Fatalf("the file holds %q", got)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 || fi.Mode() != 0o640 {
		t.Errorf("owner %d:%d mode %v; want 65534:65534 -rw-r-----", st.Uid, st.Gid, fi.Mode())
	}
	buf := make([]byte, 16)
	n, err := unix.Getxattr(p, "user.test", buf)
	if err != nil || string(buf[:n]) != "xyz" {
		t.Errorf("user.test = %q, %v; want xyz", buf[:max(n, 0)], err)
	}
}
