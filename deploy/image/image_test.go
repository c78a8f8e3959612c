package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/binarytest"
)

// The image is built from the source, read back from both files it is
// written as, unpacked, and the binary from its layer is run: --version,
// then serving a workspace, as the container's user would, with no home
// directory (as in the image) and its temporary directory of its own.
func TestImageRunsTheStaticBinaryFromItsLayer(t *testing.T) {
	out := t.TempDir()
	created := time.Unix(1700000000, 0).UTC()
	img, err := Build(Options{Src: filepath.Join("..", ".."), Arch: "amd64", Version: "v9.9.9-test", Commit: "abc", Created: created})
	if err != nil {
		t.Fatal(err)
	}
	dir, tarPath := filepath.Join(out, "oci"), filepath.Join(out, "image.tar")
	if err := Write(img, "hashlined:test", dir, tarPath); err != nil {
		t.Fatal(err)
	}

	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "test" {
		t.Fatalf("OCI layout index: %+v, %v", m, err)
	}
	fromLayout, err := p.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("hashlined:test")
	fromTar, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := fromLayout.Digest()
	d2, _ := img.Digest()
	if d1 != d2 {
		t.Errorf("the layout holds %s, the image is %s", d1, d2)
	}

	for what, im := range map[string]v1.Image{"layout": fromLayout, "tarball": fromTar} {
		cf, err := im.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if c.User != "65532:65532" || len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/hashlined" || cf.OS != "linux" || cf.Architecture != "amd64" {
			t.Errorf("%s: config %+v (os %s, arch %s)", what, c, cf.OS, cf.Architecture)
		}
		if !cf.Created.Time.Equal(created) {
			t.Errorf("%s: created %v", what, cf.Created)
		}
		layers, _ := im.Layers()
		if len(layers) != 1 {
			t.Errorf("%s: %d layers, want 1 on an empty base", what, len(layers))
		}
	}

	// Unpack the file system and check its entries.
	bin := filepath.Join(t.TempDir(), "hashlined")
	rc := mutate.Extract(fromTar)
	defer rc.Close()
	tr := tar.NewReader(rc)
	seen := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[strings.TrimSuffix(h.Name, "/")] = h
		if h.Name == "hashlined" {
			f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	for path, uid := range map[string]int{"hashlined": 0, "workspace": User, "var/lib/hashline": User, "tmp": 0} {
		h := seen[path]
		if h == nil || h.Uid != uid {
			t.Errorf("%s in the layer: %+v, want owner %d", path, h, uid)
		}
	}
	if h := seen["tmp"]; h != nil && h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp mode %o", h.Mode)
	}
	if err := checkStatic(bin); err != nil {
		t.Fatal(err)
	}

	v, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "hashlined v9.9.9-test") {
		t.Fatalf("hashlined --version from the image: %v\n%s", err, v)
	}

	root, tmp := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("from the image\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proc, err := binarytest.Start(bin, binarytest.Options{
		Args: []string{"--root", root, "--listen", "127.0.0.1:0", "--workspace", "alpha", "--state-dir", filepath.Join(tmp, "state")},
		Env:  []string{"HOME=", "XDG_STATE_HOME=", "TMPDIR=" + tmp},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop(10 * time.Second)
	c, err := client.Dial(proc.Addr, client.WithWorkspace("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Status(t.Context())
	if err != nil || st.GetWorkspace() != "alpha" || st.GetVersion() != "v9.9.9-test" {
		t.Fatalf("Status of the image's hashlined = %v, %v", st, err)
	}
}

func TestCheckStaticRefusesADynamicBinary(t *testing.T) {
	// The test binary of this package links the race detector's runtime
	// through cgo when -race is on; build a small cgo program otherwise.
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\n// #include <stdlib.h>\nimport \"C\"\n\nfunc main() { C.abs(1) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dyn")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("no cgo toolchain to build a dynamic binary: %v\n%s", err, out)
	}
	if err := checkStatic(bin); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("checkStatic(dynamic binary) = %v", err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	binarytest.Cleanup()
	os.Exit(code)
}
