package runtime_test

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestLayers holds the runtime's packages to the imports their package docs
// allow: the engine knows only the provider's types, dispatch the engine
// and the provider, and neither knows the public face or a store.
func TestLayers(t *testing.T) {
	const module = "github.com/duroxide/duroxide-go/"
	for _, tc := range []struct {
		dir     string
		allowed []string
	}{
		{"internal/engine", []string{"provider"}},
		{"internal/dispatch", []string{"provider", "runtime/internal/engine"}},
		{".", []string{"provider", "runtime/internal/engine", "runtime/internal/dispatch"}},
	} {
		pkg, err := build.ImportDir(tc.dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.dir, err)
		}
		var own []string
		for _, imp := range pkg.Imports {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				own = append(own, rest)
				if !slices.Contains(tc.allowed, rest) {
					t.Errorf("runtime/%s imports %s; it may import only %v of the module", tc.dir, rest, tc.allowed)
				}
			}
		}
		if len(own) == 0 {
			t.Errorf("runtime/%s imports nothing of the module: the test reads the wrong directory", tc.dir)
		}
	}
}
