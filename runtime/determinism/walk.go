package determinism

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// collectDecls makes a unit of every function and method with a body, so that
// calls between them can be resolved.
func (c *checker) collectDecls() {
	for _, file := range c.pass.Files {
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, ok := c.pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			u := &unit{node: fd, name: declName(fd), fn: fn}
			c.decls[fn] = u
			c.units = append(c.units, u)
		}
	}
}

// declName is "F" for a function and "T.M" for a method.
func declName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		default:
			return fd.Name.Name
		}
	}
}

// summarizeDecls finds what every declared function does directly.
func (c *checker) summarizeDecls() {
	for _, u := range c.units {
		c.summarize(u)
	}
}

// literalUnit returns the unit of a func literal that is orchestration code by
// itself, summarizing it on first use.
func (c *checker) literalUnit(lit *ast.FuncLit, name string) *unit {
	if u, ok := c.literals[lit]; ok {
		return u
	}
	u := &unit{node: lit, name: name}
	c.literals[lit] = u
	c.summarize(u)
	return u
}

func (c *checker) summarize(u *unit) {
	w := &walker{c: c, u: u}
	ast.Inspect(u.body(), w.visit)
}

// A walker records the findings and local calls of one unit's body, including
// the func literals declared in it.
type walker struct {
	c *checker
	u *unit
}

func (w *walker) add(pos token.Pos, construct, what, fix string) {
	if w.c.isSuppressed(pos) {
		return
	}
	w.u.findings = append(w.u.findings, finding{
		pos:       pos,
		construct: construct,
		fix:       fix,
		fact:      nondeterministic{What: what, Pos: w.c.shortPos(pos), Fix: fix},
	})
}

func (w *walker) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.GoStmt:
		w.add(n.Pos(), "go statement", "uses a go statement", fixGo)
	case *ast.SendStmt:
		w.add(n.Arrow, "channel send", "sends on a channel", fixChannel)
	case *ast.UnaryExpr:
		if n.Op == token.ARROW {
			w.add(n.OpPos, "channel receive", "receives from a channel", fixChannel)
		}
	case *ast.SelectStmt:
		w.add(n.Pos(), "select statement", "uses a select statement", fixChannel)
		w.walkSelectClauses(n)
		return false
	case *ast.RangeStmt:
		w.checkRange(n)
	case *ast.CallExpr:
		w.checkCall(n)
	case *ast.Ident:
		w.checkUse(n)
	}
	return true
}

// walkSelectClauses walks a select's cases without reporting their channel
// operations again: the select itself was reported.
func (w *walker) walkSelectClauses(s *ast.SelectStmt) {
	for _, stmt := range s.Body.List {
		clause := stmt.(*ast.CommClause)
		for _, e := range commOperands(clause.Comm) {
			ast.Inspect(e, w.visit)
		}
		for _, st := range clause.Body {
			ast.Inspect(st, w.visit)
		}
	}
}

// commOperands are the expressions a select case evaluates besides its
// channel operation, e.g. time.After(d) in "case <-time.After(d):".
func commOperands(comm ast.Stmt) []ast.Expr {
	switch s := comm.(type) {
	case *ast.SendStmt:
		return []ast.Expr{s.Chan, s.Value}
	case *ast.ExprStmt:
		return receiveOperand(s.X)
	case *ast.AssignStmt:
		return receiveOperand(s.Rhs[0])
	}
	return nil
}

func receiveOperand(e ast.Expr) []ast.Expr {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
		return []ast.Expr{u.X}
	}
	return []ast.Expr{e}
}

func (w *walker) checkRange(r *ast.RangeStmt) {
	if t := w.c.pass.TypesInfo.TypeOf(r.X); t != nil {
		switch t.Underlying().(type) {
		case *types.Map:
			w.add(r.Pos(), "range over map", "ranges over a map", fixMapOrder)
		case *types.Chan:
			w.add(r.Pos(), "range over channel", "ranges over a channel", fixChannel)
		}
	}
	if call, ok := ast.Unparen(r.X).(*ast.CallExpr); ok {
		if fn := typeutil.StaticCallee(w.c.pass.TypesInfo, call); fn != nil && isMapIterator(fn) {
			w.add(r.Pos(), "range over "+fn.FullName(), "ranges over "+fn.FullName(), fixMapOrder)
		}
	}
}

// checkCall records calls to close, to functions of this package (followed
// later) and to nondeterministic functions of other packages (known by fact).
func (w *walker) checkCall(call *ast.CallExpr) {
	info := w.c.pass.TypesInfo
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "close" {
			w.add(call.Pos(), "close of channel", "closes a channel", fixChannel)
			return
		}
	}
	callee := typeutil.StaticCallee(info, call)
	if callee == nil || w.c.isSuppressed(call.Pos()) {
		return
	}
	callee = callee.Origin()
	if callee.Pkg() == w.c.pass.Pkg {
		if u := w.c.decls[callee]; u != nil {
			w.u.calls = append(w.u.calls, u)
		}
		return
	}
	var fact nondeterministic
	if w.c.pass.ImportObjectFact(callee, &fact) {
		w.u.findings = append(w.u.findings, finding{
			pos:       call.Pos(),
			construct: "call to " + qualifiedName(callee),
			detail:    fmt.Sprintf(" is nondeterministic: it %s (%s)", fact.What, fact.Pos),
			fix:       fact.Fix,
			fact:      fact,
		})
	}
}

// checkUse flags standard-library functions by reference, so that passing
// time.Now as a value is caught as well as calling it.
func (w *walker) checkUse(id *ast.Ident) {
	fn, ok := w.c.pass.TypesInfo.Uses[id].(*types.Func)
	if !ok {
		return
	}
	if construct, fix, ok := stdlibRule(fn); ok {
		w.add(id.Pos(), construct, "calls "+fn.FullName(), fix)
	}
}

// qualifiedName is "b.F" or "(*b.T).M": the package by name, not path.
func qualifiedName(fn *types.Func) string {
	qualifier := func(p *types.Package) string { return p.Name() }
	recv := fn.Signature().Recv()
	if recv == nil {
		return fn.Pkg().Name() + "." + fn.Name()
	}
	if _, ok := recv.Type().(*types.Pointer); ok {
		return fmt.Sprintf("(%s).%s", types.TypeString(recv.Type(), qualifier), fn.Name())
	}
	return types.TypeString(recv.Type(), qualifier) + "." + fn.Name()
}
