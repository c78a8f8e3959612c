//go:build !linux

package grep

import (
	"errors"
	"io/fs"
)

// Elsewhere every access goes through the fs.FS.

func newSource(fsys fs.FS) *source { return &source{fsys: fsys} }

var errNoFast = errors.New("grep: no fast path on this platform")

func openDirFast(fs.FS, string) (*dir, error) { return nil, nil }

func openSubFast(*dir, string) (*dir, error) { return nil, errNoFast }

func listFast(fs.FS, *dir, string, []byte) ([]entry, []byte, error) { return nil, nil, errNoFast }

func readFast(*dir, string, []byte, int64) ([]byte, []byte, error) { return nil, nil, errNoFast }

func lstatFast(*dir, string) (fs.FileMode, int64, error) { return 0, 0, errNoFast }

func closeFD(int) {}

// fastSupported tells tests whether fastFS can be true here.
const fastSupported = false
