// Package floor holds the physical baselines that benchmarks compare the
// service against, so every benchmark measures the same floor the same way.
package floor

import (
	"os"
	"path/filepath"
)

// DurableWrite replaces path with data the plain way that is still atomic
// and durable: a temp file in the same directory, write, fsync, rename,
// fsync the directory. It is the floor the benchmarks' Edit target is set
// against.
func DurableWrite(path string, data []byte) error { return replace(path, data, true, false) }

// AtomicWrite is DurableWrite without its two fsyncs: atomic, not durable.
func AtomicWrite(path string, data []byte) error { return replace(path, data, false, false) }

// DurableWriteHeld is DurableWrite holding the replaced file open across
// the rename and closing it in the background after returning: the rename
// then does not free the old file's
// blocks (on a filesystem with online discard, it waits for the device to
// discard them). The same work is done, after the call instead of in it.
func DurableWriteHeld(path string, data []byte) error { return replace(path, data, true, true) }

// AtomicWriteHeld is AtomicWrite holding the replaced file the same way.
func AtomicWriteHeld(path string, data []byte) error { return replace(path, data, false, true) }

func replace(path string, data []byte, durable, hold bool) error {
	if hold {
		if old, err := os.Open(path); err == nil {
			defer func() { go old.Close() }()
		}
	}
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
