//go:build !linux

package workspace

// allocate is Linux only (see its Linux version); elsewhere nothing is
// reserved.
func allocate(uintptr, int) bool { return false }
