// Command release cross-builds hashlined and hashline for every platform the
// README names and packs each pair, with the LICENSE, README and CHANGELOG,
// into dist/: a .tar.gz per Linux and macOS target, a .zip per Windows one,
// and SHA256SUMS over them. It needs only Go: the archives are written with
// archive/tar, archive/zip and compress/gzip, so no zip binary is required.
//
// Run it through "make release", which passes the version and commit of the
// checkout:
//
//	go run ./scripts/release -version v0.1.0 -commit 1234abc -out dist
//
// Every file in an archive carries the commit's time (-time), so two runs on
// one commit give the same archives.
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// targets are the platforms the binaries ship for.
var targets = []struct{ goos, goarch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// docs go into every archive next to the binaries.
var docs = []string{"LICENSE", "README.md", "CHANGELOG.md", "SECURITY.md"}

const pkg = "github.com/hashline/hashline/internal/buildinfo"

func main() {
	version := flag.String("version", "", "version to stamp and to name the archives (git describe --tags --always --dirty)")
	commit := flag.String("commit", "", "commit to stamp (git rev-parse HEAD)")
	out := flag.String("out", "dist", "output directory; emptied first")
	unix := flag.Int64("time", 0, "modification time of every archived file, seconds since 1970 (the commit's time; 0 = now)")
	flag.Parse()
	if *version == "" || *commit == "" {
		fmt.Fprintln(os.Stderr, "release: -version and -commit are required (run it through make release)")
		os.Exit(2)
	}
	mtime := time.Now().Truncate(time.Second)
	if *unix > 0 {
		mtime = time.Unix(*unix, 0)
	}
	if err := release(*version, *commit, *out, mtime); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func release(version, commit, out string, mtime time.Time) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "hashline-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ldflags := fmt.Sprintf("-s -w -X %s.version=%s -X %s.commit=%s", pkg, version, pkg, commit)
	var archives []string
	for _, t := range targets {
		name := fmt.Sprintf("hashline_%s_%s_%s", strings.TrimPrefix(version, "v"), t.goos, t.goarch)
		bin := filepath.Join(tmp, name)
		fmt.Fprintf(os.Stderr, "building %s/%s\n", t.goos, t.goarch)
		// grpcnotrace: as the Dockerfile, without gRPC's tracing, which
		// hashline never turns on.
		cmd := exec.Command("go", "build", "-tags", "grpcnotrace", "-trimpath", "-ldflags", ldflags, "-o", bin+string(filepath.Separator), "./cmd/hashlined", "./cmd/hashline")
		cmd.Env = append(os.Environ(), "GOOS="+t.goos, "GOARCH="+t.goarch, "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build for %s/%s: %w", t.goos, t.goarch, err)
		}
		exe := ""
		if t.goos == "windows" {
			exe = ".exe"
		}
		files := []file{
			{filepath.Join(bin, "hashlined"+exe), "hashlined" + exe, 0o755},
			{filepath.Join(bin, "hashline"+exe), "hashline" + exe, 0o755},
		}
		for _, d := range docs {
			files = append(files, file{d, d, 0o644})
		}
		archive := name + ".tar.gz"
		write := writeTarGz
		if t.goos == "windows" {
			archive, write = name+".zip", writeZip
		}
		if err := write(filepath.Join(out, archive), name, files, mtime); err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		archives = append(archives, archive)
	}
	return writeSums(out, archives)
}

// file is one archive member: src on disk, stored as dir/name.
type file struct {
	src, name string
	mode      int64
}

func writeTarGz(path, dir string, files []file, mtime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer closeErr(f, &err)
	gz, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	gz.ModTime = mtime
	defer closeErr(gz, &err)
	tw := tar.NewWriter(gz)
	defer closeErr(tw, &err)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	for _, m := range files {
		b, err := os.ReadFile(m.src)
		if err != nil {
			return err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: dir + "/" + m.name, Mode: m.mode, Size: int64(len(b)), ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func writeZip(path, dir string, files []file, mtime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer closeErr(f, &err)
	zw := zip.NewWriter(f)
	defer closeErr(zw, &err)
	for _, m := range files {
		b, err := os.ReadFile(m.src)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: dir + "/" + m.name, Method: zip.Deflate, Modified: mtime.UTC()}
		h.SetMode(os.FileMode(m.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// writeSums writes SHA256SUMS in the format sha256sum -c reads.
func writeSums(out string, archives []string) error {
	slices.Sort(archives)
	var b strings.Builder
	for _, a := range archives {
		f, err := os.Open(filepath.Join(out, a))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), a)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(b.String()), 0o644)
}

func closeErr(c io.Closer, err *error) {
	if cerr := c.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}
