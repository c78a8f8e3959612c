//go:build linux

package workspace

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashline/hashline/internal/floor"
)

// The two 4 KiB write benchmarks belong together: the raw one is the floor
// (the same temp, write, fsync, rename and directory fsync, inline), so the
// ratio between them is our overhead, comparable within one run on a noisy
// machine.

var text4K = bytes.Repeat([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"), 64)

func BenchmarkWriteFile4K(b *testing.B) { benchWriteFile(b) }

func benchWriteFile(b *testing.B, opts ...Option) {
	w, err := Open(b.TempDir(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteFile("dir/f.txt", text4K, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text4K)))
	for b.Loop() {
		if _, err := w.WriteFile("dir/f.txt", text4K, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawDurableWrite4K(b *testing.B) {
	target := filepath.Join(b.TempDir(), "f.txt")
	b.SetBytes(int64(len(text4K)))
	for b.Loop() {
		if err := floor.DurableWrite(target, text4K); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFile4KNoFsync shows the CPU and syscall cost of the write
// path without the disk.
func BenchmarkWriteFile4KNoFsync(b *testing.B) { benchWriteFile(b, WithFsync(false)) }

func BenchmarkReadFile4K(b *testing.B) {
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "b", "f.txt"), text4K, 0o644); err != nil {
		b.Fatal(err)
	}
	w, err := Open(root)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.SetBytes(int64(len(text4K)))
	for b.Loop() {
		if _, err := w.ReadFile("a/b/f.txt"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVersion compares the version hash (BLAKE3) with SHA-256, the
// hash of "v1-" versions, in the same run, at the sizes of a small file and
// of the benchmark's 10k- and 100k-line files: the ratio is the reason for
// "v2-".
func BenchmarkVersion(b *testing.B) {
	for _, n := range []int{3_300, 330_000, 2_800_000} {
		data := bytes.Repeat([]byte("\tv000000 := f(1) // note\n"), n/25)
		b.Run(fmt.Sprintf("blake3/%dB", len(data)), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				Version(data)
			}
		})
		b.Run(fmt.Sprintf("sha256/%dB", len(data)), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				sha256.Sum256(data)
			}
		})
	}
}
