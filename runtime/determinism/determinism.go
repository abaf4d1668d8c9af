package determinism

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// runtimePath is the package users import for OrchestrationContext and the
// registration functions; enginePath is the replay engine that declares them
// (runtime names them with aliases). Both are trusted: their implementation
// uses goroutines and channels to give orchestration code a deterministic API.
const (
	runtimePath = "github.com/duroxide/duroxide-go/runtime"
	enginePath  = "github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// isRuntime reports whether path is the runtime or its engine.
func isRuntime(path string) bool { return path == runtimePath || path == enginePath }

// suppressDirective silences reports on its own line and the line below.
const suppressDirective = "//duroxide:nondeterministic-ok"

// Analyzer reports nondeterministic code in duroxide orchestration functions.
var Analyzer = &analysis.Analyzer{
	Name:      "determinism",
	Doc:       "report nondeterministic code (clock, randomness, I/O, goroutines, channels, map order) in duroxide orchestration functions",
	URL:       "https://pkg.go.dev/github.com/duroxide/duroxide-go/runtime/determinism",
	Run:       run,
	FactTypes: []analysis.Fact{new(nondeterministic)},
}

// nondeterministic is the fact exported on a function that does, or calls
// something that does, a nondeterministic thing. It names the first offence
// so that a report in another package can point at it.
type nondeterministic struct {
	What string // e.g. "calls time.Now"
	Pos  string // e.g. "b/b.go:12"
	Fix  string
}

func (*nondeterministic) AFact() {}

func (f *nondeterministic) String() string {
	return fmt.Sprintf("nondeterministic: %s (%s)", f.What, f.Pos)
}

func run(pass *analysis.Pass) (any, error) {
	if skipPackage(pass) {
		return nil, nil
	}
	c := newChecker(pass)
	c.collectDecls()
	c.summarizeDecls()
	c.propagateVerdicts()
	c.exportFacts()
	c.reportFromRoots(c.findRoots())
	return nil, nil
}

// skipPackage reports whether a package is not checked at all: the trusted
// runtime, and the standard library, whose nondeterminism the rules describe
// at its API (descending into it would flag fmt.Println as I/O).
func skipPackage(pass *analysis.Pass) bool {
	path := pass.Pkg.Path()
	return isRuntime(path) || isStandard(path, pass.Module)
}

// isStandard reports whether path is a standard-library package: one outside
// any module whose first element has no dot. Checking the module too keeps
// packages of a module named without a dot ("myapp/orders") in scope.
func isStandard(path string, module *analysis.Module) bool {
	if module != nil && module.Path != "" {
		return false
	}
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && path != "command-line-arguments"
}

// A unit is a function body analysed on its own: a declared function or
// method, or a func literal that is orchestration code by itself.
type unit struct {
	node     ast.Node // *ast.FuncDecl or *ast.FuncLit
	name     string   // how reports name it
	fn       *types.Func
	findings []finding
	calls    []*unit // static calls to functions of this package
	verdict  *nondeterministic
}

func (u *unit) body() *ast.BlockStmt {
	if d, ok := u.node.(*ast.FuncDecl); ok {
		return d.Body
	}
	return u.node.(*ast.FuncLit).Body
}

// A finding is one nondeterministic construct in a unit's body.
type finding struct {
	pos       token.Pos
	construct string // starts the report: "time.Now", "go statement"
	detail    string // follows the location, for calls into other packages: " is nondeterministic: it ..."
	fix       string
	fact      nondeterministic // what it makes the enclosing function
}

func (f finding) message(where string) string {
	if f.detail != "" {
		return fmt.Sprintf("%s in %s%s; %s", f.construct, where, f.detail, f.fix)
	}
	return fmt.Sprintf("%s in %s: %s", f.construct, where, f.fix)
}

type lineKey struct {
	file *token.File
	line int
}

type checker struct {
	pass       *analysis.Pass
	suppressed map[lineKey]bool
	decls      map[*types.Func]*unit
	units      []*unit // source order: declarations, then literals
	literals   map[*ast.FuncLit]*unit
}

func newChecker(pass *analysis.Pass) *checker {
	return &checker{
		pass:       pass,
		suppressed: suppressedLines(pass),
		decls:      map[*types.Func]*unit{},
		literals:   map[*ast.FuncLit]*unit{},
	}
}

// suppressedLines finds the lines covered by suppression comments.
func suppressedLines(pass *analysis.Pass) map[lineKey]bool {
	lines := map[lineKey]bool{}
	for _, file := range pass.Files {
		for _, group := range file.Comments {
			for _, c := range group.List {
				if !strings.HasPrefix(c.Text, suppressDirective) {
					continue
				}
				tf := pass.Fset.File(c.Slash)
				line := tf.Line(c.Slash)
				lines[lineKey{tf, line}] = true
				lines[lineKey{tf, line + 1}] = true
			}
		}
	}
	return lines
}

func (c *checker) isSuppressed(pos token.Pos) bool {
	tf := c.pass.Fset.File(pos)
	return tf != nil && c.suppressed[lineKey{tf, tf.Line(pos)}]
}

// shortPos renders pos as "dir/file.go:line", short enough for a message.
func (c *checker) shortPos(pos token.Pos) string {
	p := c.pass.Fset.Position(pos)
	return fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(p.Filename)), filepath.Base(p.Filename), p.Line)
}

// propagateVerdicts marks every unit that is nondeterministic, first by its own
// findings, then, until nothing changes, by the calls it makes.
func (c *checker) propagateVerdicts() {
	for _, u := range c.units {
		if len(u.findings) > 0 {
			u.verdict = &u.findings[0].fact
		}
	}
	for changed := true; changed; {
		changed = false
		for _, u := range c.units {
			if u.verdict == nil {
				u.verdict = firstVerdict(u.calls)
				changed = changed || u.verdict != nil
			}
		}
	}
}

func firstVerdict(calls []*unit) *nondeterministic {
	for _, callee := range calls {
		if callee.verdict != nil {
			return callee.verdict
		}
	}
	return nil
}

// exportFacts lets other packages see which of this package's functions are
// nondeterministic.
func (c *checker) exportFacts() {
	for _, u := range c.units {
		if u.fn != nil && u.verdict != nil {
			c.pass.ExportObjectFact(u.fn, u.verdict)
		}
	}
}

// reportFromRoots reports the findings of every root and of everything it
// calls. A function reached from several roots is reported once, named after
// the first.
func (c *checker) reportFromRoots(roots []*unit) {
	visited := map[*unit]bool{}
	reported := map[finding]bool{}
	for _, r := range roots {
		queue := []*unit{r}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			if visited[u] {
				continue
			}
			visited[u] = true
			where := "orchestration " + r.name
			if u != r {
				where = fmt.Sprintf("%s (called from orchestration %s)", u.name, r.name)
			}
			for _, f := range u.findings {
				// Literals nested in a reported function are found twice.
				if !reported[f] {
					reported[f] = true
					c.pass.Reportf(f.pos, "%s", f.message(where))
				}
			}
			queue = append(queue, u.calls...)
		}
	}
}
