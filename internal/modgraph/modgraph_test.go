package modgraph

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// userMain is a user's program on the library: the runtime and both stores.
const userMain = `package main

import (
	_ "github.com/duroxide/duroxide-go/provider/postgres"
	_ "github.com/duroxide/duroxide-go/provider/sqlite"
	_ "github.com/duroxide/duroxide-go/runtime"
)

func main() {}
`

// operatorModules are what the library must not bring into a user's
// module graph: Kubernetes and gRPC raise the user's own versions of them.
var operatorModules = regexp.MustCompile(`^(k8s\.io/|sigs\.k8s\.io/|google\.golang\.org/grpc)`)

// TestLibraryModuleGraphHasNoKubernetes builds the module graph of a user
// module outside the repository that imports runtime, provider/sqlite and
// provider/postgres: none of its modules is Kubernetes or gRPC (they live
// in the operator's modules: api, controllers, cmd/manager).
func TestLibraryModuleGraphHasNoKubernetes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/user\n\ngo 1.26.0\n\nrequire github.com/duroxide/duroxide-go v0.0.0\n\n" +
		"replace github.com/duroxide/duroxide-go => " + root + "\n"
	for name, content := range map[string]string{"go.mod": gomod, "main.go": userMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd(t, dir, "mod", "tidy")
	modules := strings.Fields(goCmd(t, dir, "list", "-m", "-f", "{{.Path}}", "all"))
	var operator []string
	for _, m := range modules {
		if operatorModules.MatchString(m) {
			operator = append(operator, m)
		}
	}
	if len(operator) > 0 {
		t.Errorf("a user module importing runtime and both stores has %d Kubernetes or gRPC modules in its graph: %v",
			len(operator), operator)
	}
	t.Logf("%d modules in the user's graph, none of them Kubernetes or gRPC", len(modules))
}

// goCmd runs the go command in dir, outside this repository's workspace.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}
