//go:build !linux

package workspace

import "io/fs"

// spares is Linux only (renameat2 with RENAME_EXCHANGE); elsewhere every
// replace writes a temporary file.
type spares struct{}

func newSpares() *spares { return nil }

func (w *Workspace) writeSpare(string, string, string, []byte, fs.FileMode, fs.FileInfo, WriteOptions) (bool, error) {
	return false, nil
}

func (s *spares) close(*Workspace) {}
