//go:build !linux

package main

import goio "io"

// polled returns r: polling stdin is done on Linux only (see
// poll_linux.go), and so is serving on one P.
func polled(r goio.Reader) (goio.Reader, bool, func()) { return r, false, func() {} }
