package determinism_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/duroxide/duroxide-go/runtime/determinism"
)

// Each test analyses one testdata package under testdata/src/example.com. The
// package holds the rule's positive cases (marked "// want") and its negative
// cases: the same construct outside orchestration code, and the deterministic
// alternative inside it. Function facts are checked too ("// want F:...").
func run(t *testing.T, pkgs ...string) {
	t.Helper()
	analysistest.Run(t, analysistest.TestData(), determinism.Analyzer, pkgs...)
}

func TestGoStatement(t *testing.T) { run(t, "example.com/gostmt") }

func TestClock(t *testing.T) { run(t, "example.com/clock") }

func TestRandom(t *testing.T) { run(t, "example.com/random") }

func TestMapIteration(t *testing.T) { run(t, "example.com/mapiter") }

func TestChannels(t *testing.T) { run(t, "example.com/channels") }

func TestIO(t *testing.T) { run(t, "example.com/io") }

// TestRoots covers registered literals, named functions, method values and
// wrapped functions, signature roots, and helpers reached transitively.
func TestRoots(t *testing.T) { run(t, "example.com/roots") }

// TestCrossPackage checks that b's facts are exported and that a reports
// calls to b's nondeterministic functions at the call site.
func TestCrossPackage(t *testing.T) { run(t, "example.com/crosspkg/b", "example.com/crosspkg/a") }

func TestSuppression(t *testing.T) { run(t, "example.com/suppress") }

// TestRuntimeTrusted checks that the runtime package and its engine, whose
// implementation may use goroutines and channels, are neither reported nor
// given facts.
func TestRuntimeTrusted(t *testing.T) {
	run(t, "github.com/duroxide/duroxide-go/runtime", "github.com/duroxide/duroxide-go/runtime/internal/engine")
}

// TestModuleWithoutDot checks that a module named without a dot ("myapp") is
// analysed: only packages outside any module are taken for the standard
// library.
func TestModuleWithoutDot(t *testing.T) {
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "dotless"), determinism.Analyzer, "myapp/orders")
}
