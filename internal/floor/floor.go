// Package floor holds what the benchmarks of both modules (the Go
// micro-benchmarks here and make bench in bench/) compare the service
// against, and the median they compare by, so that every benchmark
// measures the same floor the same way. It is test support: nothing that
// ships imports it.
package floor

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// DurableWrite replaces path with data the plain way that is still atomic
// and durable: a temp file in the same directory, write, fsync, rename,
// fsync the directory. With one empty call to the server it is the floor
// of an Edit (docs/DESIGN.md section 11).
func DurableWrite(path string, data []byte) error { return replace(path, data, true) }

// AtomicWrite is DurableWrite without its two fsyncs: atomic, not durable,
// the floor of a server run with --fsync=false.
func AtomicWrite(path string, data []byte) error { return replace(path, data, false) }

func replace(path string, data []byte, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".floor-*.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(f.Name())
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	if !durable {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Median returns the middle of d (of an even count, the lower of the two
// middle values, so always a value that was measured), or 0 if d is
// empty. d is not changed. The bench module's stats.Median agrees.
func Median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
