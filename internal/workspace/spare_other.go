//go:build !linux

package workspace

import (
	"io/fs"
	"os"
)

// spares is Linux only; elsewhere every replace writes a temporary file.
type spares struct{}

func newSpares() *spares { return nil }

func (w *Workspace) writeSpare(string, string, string, []byte, fs.FileMode, fs.FileInfo, WriteOptions) (bool, error) {
	return false, nil
}

func (s *spares) close(*Workspace) {}

// SpareInUse is always false where there are no spares.
func SpareInUse(*os.Root, string) bool { return false }
