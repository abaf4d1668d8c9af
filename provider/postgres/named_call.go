package postgres

import (
	"strconv"
	"strings"
)

// namedArg is one argument of a SQL function call, by parameter name.
type namedArg struct {
	name  string
	value any
}

// namedCall returns the query calling function fn with args' names in named
// notation (p_x => $1, ...): the order of args is free, and a name the
// function does not have fails the call, so a long argument list cannot
// shift silently. values binds args in that query.
func namedCall(fn string, args []namedArg) string {
	var b strings.Builder
	b.WriteString("SELECT * FROM ")
	b.WriteString(fn)
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.name)
		b.WriteString(" => $")
		b.WriteString(strconv.Itoa(i + 1))
	}
	b.WriteByte(')')
	return b.String()
}

// values are args' values, in the order namedCall numbers them.
func values(args []namedArg) []any {
	v := make([]any, len(args))
	for i, a := range args {
		v[i] = a.value
	}
	return v
}
