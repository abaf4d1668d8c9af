package determinism

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/types/typeutil"
)

// findRoots lists the units that are orchestration code by themselves rather
// than by being called from it: registered orchestrations first, so that a
// registered literal is named after its registration, then every function and
// literal that takes an OrchestrationContext, in source order.
func (c *checker) findRoots() []*unit {
	return append(c.registeredRoots(), c.signatureRoots()...)
}

// registeredRoots finds the functions passed to the registration calls.
func (c *checker) registeredRoots() []*unit {
	var roots []*unit
	for _, file := range c.pass.Files {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			nameArg, fnArg := c.registrationArgs(call)
			if fnArg == nil {
				return true
			}
			roots = append(roots, c.funcRefs(fnArg, c.registeredName(nameArg))...)
			return true
		})
	}
	return roots
}

// registrationArgs returns the name and function arguments of a call to
// RegisterOrchestration, RegisterOrchestrationVersion or AddOrchestration,
// or nils for any other call.
func (c *checker) registrationArgs(call *ast.CallExpr) (name, fn ast.Expr) {
	callee := typeutil.StaticCallee(c.pass.TypesInfo, call)
	if callee == nil || callee.Pkg() == nil || !isRuntime(callee.Pkg().Path()) {
		return nil, nil
	}
	isMethod := callee.Signature().Recv() != nil
	var nameIndex, fnIndex int
	switch {
	case callee.Name() == "RegisterOrchestration" && !isMethod:
		nameIndex, fnIndex = 1, 2 // (reg, name, fn)
	case callee.Name() == "RegisterOrchestrationVersion" && !isMethod:
		nameIndex, fnIndex = 1, 3 // (reg, name, version, fn)
	case callee.Name() == "AddOrchestration" && isMethod:
		nameIndex, fnIndex = 0, 2 // (name, version, fn)
	default:
		return nil, nil
	}
	if len(call.Args) <= fnIndex {
		return nil, nil
	}
	return call.Args[nameIndex], call.Args[fnIndex]
}

// registeredName is the quoted orchestration name when it is a constant.
func (c *checker) registeredName(e ast.Expr) string {
	tv, ok := c.pass.TypesInfo.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return ""
	}
	return strconv.Quote(constant.StringVal(tv.Value))
}

// funcRefs finds the functions an expression refers to: a literal, a named
// function or a method value, also inside wrappers such as adapt(fn). The
// wrapper itself is called at registration time, so it is not a root.
func (c *checker) funcRefs(e ast.Expr, name string) []*unit {
	var units []*unit
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			units = append(units, c.literalUnit(n, c.literalName(n, name)))
			return false
		case *ast.CallExpr:
			for _, arg := range n.Args {
				units = append(units, c.funcRefs(arg, name)...)
			}
			return false
		case *ast.Ident:
			if fn, ok := c.pass.TypesInfo.Uses[n].(*types.Func); ok {
				if u := c.decls[fn.Origin()]; u != nil {
					units = append(units, u)
				}
			}
		}
		return true
	})
	return units
}

func (c *checker) literalName(lit *ast.FuncLit, registered string) string {
	if registered != "" {
		return registered
	}
	return "func literal at " + c.shortPos(lit.Pos())
}

// signatureRoots finds every function, method and literal whose first
// parameter is an OrchestrationContext.
func (c *checker) signatureRoots() []*unit {
	var roots []*unit
	for _, file := range c.pass.Files {
		for _, decl := range file.Decls {
			roots = append(roots, c.signatureRootsIn(decl)...)
		}
	}
	return roots
}

func (c *checker) signatureRootsIn(decl ast.Decl) []*unit {
	var roots []*unit
	enclosing := enclosingName(decl)
	if fd, ok := decl.(*ast.FuncDecl); ok {
		if u := c.decls[c.declFunc(fd)]; u != nil && takesContext(u.fn.Signature()) {
			roots = append(roots, u)
		}
	}
	ast.Inspect(decl, func(n ast.Node) bool {
		lit, ok := n.(*ast.FuncLit)
		if !ok {
			return true
		}
		if sig, ok := c.pass.TypesInfo.TypeOf(lit).(*types.Signature); ok && takesContext(sig) {
			roots = append(roots, c.literalUnit(lit, "func literal in "+enclosing))
		}
		return true
	})
	return roots
}

func (c *checker) declFunc(fd *ast.FuncDecl) *types.Func {
	fn, _ := c.pass.TypesInfo.Defs[fd.Name].(*types.Func)
	return fn
}

// enclosingName names a declaration for literals declared in it.
func enclosingName(decl ast.Decl) string {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		return declName(d)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			if vs, ok := spec.(*ast.ValueSpec); ok && len(vs.Names) > 0 {
				return vs.Names[0].Name
			}
		}
	}
	return "package scope"
}

// takesContext reports whether sig's first parameter is a
// *runtime.OrchestrationContext.
func takesContext(sig *types.Signature) bool {
	if sig.Params().Len() == 0 {
		return false
	}
	ptr, ok := types.Unalias(sig.Params().At(0).Type()).(*types.Pointer)
	if !ok {
		return false
	}
	named, ok := types.Unalias(ptr.Elem()).(*types.Named)
	if !ok {
		return false
	}
	obj := named.Obj()
	return obj.Name() == "OrchestrationContext" && obj.Pkg() != nil && isRuntime(obj.Pkg().Path())
}
