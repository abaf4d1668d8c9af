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

// callNamed returns the query calling function fn with args in named
// notation (p_x => $1, ...) and the values to bind: the order of args is
// free, and a name the function does not have fails the call, so a long
// argument list cannot shift silently.
func callNamed(fn string, args []namedArg) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT * FROM ")
	b.WriteString(fn)
	b.WriteByte('(')
	values := make([]any, len(args))
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.name)
		b.WriteString(" => $")
		b.WriteString(strconv.Itoa(i + 1))
		values[i] = a.value
	}
	b.WriteByte(')')
	return b.String(), values
}
