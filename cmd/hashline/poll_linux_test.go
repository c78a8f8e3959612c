package main

import (
	goio "io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// nonblock reports whether f's open file has O_NONBLOCK (without f.Fd,
// which would clear it).
func nonblock(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	if cerr := rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); cerr != nil || err != nil {
		t.Fatal(cerr, err)
	}
	return flags&unix.O_NONBLOCK != 0
}

// pipe is a pipe as a parent process hands it to a child: blocking
// descriptors (os.Pipe would make them non-blocking).
func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	unix.CloseOnExec(fds[0]) // a child started meanwhile must not keep the
	unix.CloseOnExec(fds[1]) // write end open, or the reader never sees EOF
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func TestPolledPipe(t *testing.T) {
	r, w := pipe(t)
	if nonblock(t, r) {
		t.Fatal("the pipe is already non-blocking")
	}
	p, ok, done := polled(r)
	if !ok || p == goio.Reader(r) {
		t.Fatalf("polled returned the pipe itself (ok %v)", ok)
	}
	// A read waiting in the poller gets what is written later, and EOF.
	got := make(chan string)
	go func() {
		b, err := goio.ReadAll(p)
		if err != nil {
			t.Error(err)
		}
		got <- string(b)
	}()
	if _, err := w.Write([]byte("{\"jsonrpc\":\"2.0\"}\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if s := <-got; s != "{\"jsonrpc\":\"2.0\"}\n" {
		t.Fatalf("read %q", s)
	}
	done()
	// The pipe is shared with whoever else holds it: back to blocking,
	// and still open for them.
	if nonblock(t, r) {
		t.Error("done left the pipe non-blocking")
	}
	if _, err := r.Stat(); err != nil {
		t.Errorf("the original descriptor: %v", err)
	}
}

func TestPolledKeepsANonblockingPipeSo(t *testing.T) {
	r, _ := pipe(t)
	if err := unix.SetNonblock(int(r.Fd()), true); err != nil {
		t.Fatal(err)
	}
	_, _, done := polled(r)
	done()
	if !nonblock(t, r) {
		t.Error("done cleared O_NONBLOCK, which the pipe had before")
	}
}

// A socket is left alone: it is often stdout as well, the same open file.
func TestPolledLeavesOtherInputsAlone(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock := os.NewFile(uintptr(fds[0]), "socket") // blocking, as inherited
	defer sock.Close()
	defer unix.Close(fds[1])
	for _, r := range []goio.Reader{f, sock, goio.MultiReader()} {
		p, ok, done := polled(r)
		if ok || p != r {
			t.Errorf("%T: polled replaced it (ok %v)", r, ok)
		}
		done()
	}
	if nonblock(t, f) || nonblock(t, sock) {
		t.Error("a regular file or a socket was made non-blocking")
	}
}
