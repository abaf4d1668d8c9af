// Package readme checks that the Go snippets in the repository's Markdown
// compile against the code as it is, and that the README's quick start
// counts the demo's samples.
package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/duroxide/duroxide-go/samples"
)

var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// Every ```go block of README.md and docs/ that is a whole file (it starts
// with a package clause) is built in a module of its own, with a replace to
// this checkout, as a user would build it. Fragments are left out.
func TestSnippetsCompile(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	built := 0
	for _, doc := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range goBlock.FindAllStringSubmatch(string(data), -1) {
			if !strings.HasPrefix(m[1], "package ") {
				continue
			}
			name := filepath.Base(doc) + "#" + string(rune('1'+i))
			t.Run(name, func(t *testing.T) { buildSnippet(t, root, m[1]) })
			built++
		}
	}
	if built < 2 {
		t.Fatalf("built %d snippets; README.md has at least the hello world and the worker", built)
	}
}

func buildSnippet(t *testing.T, root, src string) {
	dir := t.TempDir()
	gomod := "module example.com/snippet\n\ngo 1.26.0\n\nrequire github.com/duroxide/duroxide-go v0.0.0\n\n" +
		"replace github.com/duroxide/duroxide-go => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// -mod=mod lets go add the snippet's requirements from the checkout's go.sum.
	cmd := exec.Command("go", "build", "-mod=mod", "-o", os.DevNull, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("snippet does not build: %v\n%s\n--- snippet ---\n%s", err, out, src)
	}
}

// The README's quick start and the demo output it shows count the samples
// make demo runs.
func TestReadmeCountsTheDemoSamples(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(len(samples.Demos()))
	for _, claim := range []string{`runs the (\d+) sample orchestrations`, `demo: (\d+) samples on SQLite`, `all (\d+) samples completed`} {
		m := regexp.MustCompile(claim).FindSubmatch(data)
		switch {
		case m == nil:
			t.Errorf("README.md has no %q", claim)
		case string(m[1]) != want:
			t.Errorf("README.md says %q; make demo runs %s samples", m[0], want)
		}
	}
}
