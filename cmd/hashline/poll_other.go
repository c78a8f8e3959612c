//go:build !unix

package main

import goio "io"

// polled returns r: polling stdin is a Unix optimisation (see poll_unix.go).
func polled(r goio.Reader) (goio.Reader, func()) { return r, func() {} }
