// Package floor holds the physical baselines that benchmarks compare the
// service against, so every benchmark measures the same floor the same way.
package floor

import (
	"os"
	"path/filepath"
)

// DurableWrite replaces path with data the cheapest way that is still
// atomic and durable: a temp file in the same directory, write, fsync,
// rename, fsync the directory. It is what an Edit cannot beat.
func DurableWrite(path string, data []byte) error { return replace(path, data, true) }

// AtomicWrite is DurableWrite without its two fsyncs: atomic, not durable.
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
