//go:build !unix

package workspace

import (
	"io/fs"
	"os"
)

// openNonblock is zero where there are no FIFOs to block on.
const openNonblock = 0

// keepOwner is a no-op where files have no Unix owner.
func keepOwner(*os.File, fs.FileInfo) {}
