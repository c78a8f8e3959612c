package main

import (
	goio "io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// polled returns a reader of the same input as r that waits in Go's network
// poller instead of in a blocked read(2), when r is a pipe, as an MCP
// client's stdin is; ok says whether it is, and done puts things back and
// must be called once reading is over. Otherwise it returns r, false and a
// no-op.
//
// A read blocked in the kernel keeps its thread, and its P until the
// runtime's monitor takes the P back; with GOMAXPROCS=1 (internal/procs)
// nothing else runs until then, so hashline mcp serves on one P only when
// its input is polled. A polled read parks only the goroutine. The
// descriptor is a duplicate, so os.Stdin keeps its own. O_NONBLOCK belongs
// to the open pipe, which both share (and any process that inherited it),
// so done clears it again unless it was set before.
//
// Only pipes: a socket given as stdin is often stdout as well (inetd,
// socat), the same open file, and os.Stdout would then meet EAGAIN on a
// full buffer. Only Linux: that is where it was measured, and elsewhere os
// keeps FIFOs out of kqueue (Go issue 24164).
func polled(r goio.Reader) (_ goio.Reader, ok bool, done func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, false, func() {}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return r, false, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return r, false, func() {}
	}
	orig, dup, flags := -1, -1, 0
	if cerr := rc.Control(func(s uintptr) {
		orig = int(s)
		if flags, err = unix.FcntlInt(s, unix.F_GETFL, 0); err == nil {
			dup, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
		}
	}); cerr != nil || err != nil {
		return r, false, func() {}
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		_ = unix.Close(dup)
		return r, false, func() {}
	}
	p := os.NewFile(uintptr(dup), f.Name()) // non-blocking, so os polls it
	return p, true, func() {
		_ = p.Close() // wakes a read still parked on it
		if flags&unix.O_NONBLOCK == 0 {
			_ = unix.SetNonblock(orig, false)
		}
	}
}
