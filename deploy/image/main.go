// Command image builds the hashlined container image with no Docker
// engine: a static hashlined (CGO_ENABLED=0) in one layer on an empty
// base (FROM scratch), run as uid 65532, written as an OCI image layout
// directory and as a tarball that docker load, podman load, crane push and
// skopeo read.
//
//	go run ./image -src .. -out ../dist -version v0.1.0 -commit abc123
//
// make image runs it. The image has /hashlined and the empty, writable
// mount points /workspace, /var/lib/hashline and /tmp; its default command
// is the Dockerfile's (serve /workspace on 0.0.0.0:7420 with tokens from
// /etc/hashline/tokens.yaml and the state in /var/lib/hashline).
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the image's user and group: distroless's "nonroot", which the
// Dockerfile's image and the Kubernetes manifests use too.
const User = 65532

// Options say what to build.
type Options struct {
	// Src is the repository's root, whose ./cmd/hashlined is built.
	Src string
	// Bin, when set, is a hashlined already built (static, for Arch),
	// used instead of building one.
	Bin string
	// Arch is the GOARCH of the image (linux only).
	Arch string
	// Version and Commit are stamped into the binary and the image's
	// labels.
	Version, Commit string
	// Created is the time the image says it was made: the commit's, so
	// that the same source gives the same image.
	Created time.Time
}

// Build returns the image.
func Build(o Options) (v1.Image, error) {
	bin := o.Bin
	if bin == "" {
		dir, err := os.MkdirTemp("", "hashlined-image-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "hashlined")
		ldflags := "-s -w -X github.com/hashline/hashline/internal/buildinfo.version=" + o.Version +
			" -X github.com/hashline/hashline/internal/buildinfo.commit=" + o.Commit
		// As the Dockerfile: grpcnotrace leaves out gRPC's tracing
		// (golang.org/x/net/trace), which hashline never turns on, so that
		// less of the binary is resident in each server.
		cmd := exec.Command("go", "build", "-tags", "grpcnotrace", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/hashlined")
		cmd.Dir = o.Src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.Arch)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/hashlined: %v\n%s", err, out)
		}
	}
	if err := checkStatic(bin); err != nil {
		return nil, err
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfs(exe, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: o.Created}, CreatedBy: "deploy/image: hashlined " + o.Version, Comment: "static hashlined, CGO_ENABLED=0",
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: o.Created}
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", User, User),
		Entrypoint: []string{"/hashlined"},
		Cmd: []string{"serve", "--root", "/workspace", "--listen", "0.0.0.0:7420",
			"--tokens", "/etc/hashline/tokens.yaml", "--state-dir", "/var/lib/hashline"},
		WorkingDir:   "/",
		ExposedPorts: map[string]struct{}{"7420/tcp": {}},
		Volumes:      map[string]struct{}{"/workspace": {}, "/var/lib/hashline": {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "hashlined",
			"org.opencontainers.image.version":  o.Version,
			"org.opencontainers.image.revision": o.Commit,
		},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: o.Created})
}

// checkStatic refuses a binary that needs a dynamic loader: the image has
// none, and such a binary would fail only when the container starts.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not a Linux executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}

// rootfs is the image's one layer: /hashlined, and the directories the
// server writes to, owned by its user. Every entry has the same time, so
// that the layer's digest depends on the binary alone.
func rootfs(exe []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []struct {
		name      string
		mode, uid int64
	}{
		{"etc/", 0o755, 0},
		{"etc/hashline/", 0o755, 0},
		{"tmp/", 0o1777, 0},
		{"var/", 0o755, 0},
		{"var/lib/", 0o755, 0},
		{"var/lib/hashline/", 0o700, User},
		{"workspace/", 0o755, User},
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode, Uid: int(d.uid), Gid: int(d.uid), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "hashlined", Mode: 0o755, Size: int64(len(exe)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(exe); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes img as an OCI image layout in dir (replacing what is there)
// and as a tarball at tarPath, both naming it ref.
func Write(img v1.Image, ref, dir, tarPath string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag.TagStr()})); err != nil {
		return err
	}
	return tarball.WriteToFile(tarPath, tag, img)
}

func main() {
	src := flag.String("src", "..", "the repository's root (its ./cmd/hashlined is built)")
	bin := flag.String("bin", "", "a static hashlined already built, instead of building one")
	out := flag.String("out", "../dist", "directory for hashlined-oci/ (an OCI image layout) and hashlined-image.tar")
	arch := flag.String("arch", runtime.GOARCH, "GOARCH of the image")
	version := flag.String("version", "(devel)", "version stamped into the binary and the image")
	commit := flag.String("commit", "", "commit stamped into the binary and the image")
	epoch := flag.Int64("created", 0, "the image's creation time, in Unix seconds (the commit's, for a reproducible image)")
	ref := flag.String("tag", "hashlined:latest", "the name the image is written under")
	flag.Parse()
	if err := run(Options{Src: *src, Bin: *bin, Arch: *arch, Version: *version, Commit: *commit, Created: time.Unix(*epoch, 0).UTC()}, *ref, *out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o Options, ref, out string) error {
	if flag.NArg() > 0 {
		return errors.New("no arguments expected")
	}
	img, err := Build(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	dir, tarPath := filepath.Join(out, "hashlined-oci"), filepath.Join(out, "hashlined-image.tar")
	if err := Write(img, ref, dir, tarPath); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image %s (%s): %s, %s\n", ref, d, dir, tarPath)
	return nil
}
