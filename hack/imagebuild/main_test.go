package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The tarball holds one image: the binary, executable, as its entrypoint,
// run as non-root; building twice gives the same digest.
func TestBuildWritesLoadableImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	if err := build(bin, "duroxide/operator:test", out); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("duroxide/operator:test")
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/manager" || cfg.Config.User != nonRoot || cfg.OS != "linux" {
		t.Fatalf("config %+v", cfg.Config)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(tr)
	if hdr.Name != "manager" || hdr.Mode != 0o755 || string(body) != "#!binary" {
		t.Fatalf("layer entry %s mode %o body %q", hdr.Name, hdr.Mode, body)
	}
	again := filepath.Join(dir, "again.tar")
	if err := build(bin, "duroxide/operator:test", again); err != nil {
		t.Fatal(err)
	}
	img2, _ := tarball.ImageFromPath(again, &tag)
	d1, _ := img.Digest()
	d2, _ := img2.Digest()
	if d1 != d2 {
		t.Fatalf("digests differ: %s %s", d1, d2)
	}
}
