// Command imagebuild packs one static binary into a FROM-scratch OCI image
// and writes it as an image tarball (`docker load`, `ctr images import`,
// `kind load image-archive` read it). No Docker daemon or registry needed.
//
//	go run ./hack/imagebuild -binary bin/manager -tag duroxide/operator:dev -out bin/images/operator.tar
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	goruntime "runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRoot is the user the image runs as (the distroless "nonroot" ID).
const nonRoot = "65532:65532"

func main() {
	binary := flag.String("binary", "", "static binary to pack (required)")
	tag := flag.String("tag", "", "image reference, e.g. duroxide/operator:dev (required)")
	out := flag.String("out", "", "image tarball to write (required)")
	flag.Parse()
	if *binary == "" || *tag == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: imagebuild -binary FILE -tag REF -out FILE.tar")
		os.Exit(2)
	}
	if err := build(*binary, *tag, *out); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
	fmt.Printf("%s -> %s (%s)\n", *binary, *out, *tag)
}

func build(binary, tag, out string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	img, err := image(binary)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(path.Dir(out), 0o755); err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// image is scratch plus one layer holding the binary at /<its name>, which is
// the entrypoint, run as a non-root user.
func image(binary string) (v1.Image, error) {
	content, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	entry := "/" + path.Base(binary)
	layer, err := binaryLayer(entry, content)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", goruntime.GOARCH
	cfg.Config.Entrypoint = []string{entry}
	cfg.Config.User = nonRoot
	cfg.Created = v1.Time{Time: time.Unix(0, 0)} // reproducible: same binary, same digest
	return mutate.ConfigFile(img, cfg)
}

// binaryLayer is a layer with one executable file; archive/tar writes it.
func binaryLayer(file string, content []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: file[1:], Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg,
		Uid: 0, Gid: 0, ModTime: time.Unix(0, 0)}
	if err := w.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := w.Write(content); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}
