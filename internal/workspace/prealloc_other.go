//go:build !linux

package workspace

import "os"

// preallocate is Linux only (see prealloc_linux.go).
func preallocate(*os.File, int) {}
