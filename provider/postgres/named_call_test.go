package postgres

import (
	"slices"
	"testing"
)

func TestNamedCall(t *testing.T) {
	args := []namedArg{{"p_b", 2}, {"p_a", "x"}}
	if got, want := namedCall("dx_f", args), "SELECT * FROM dx_f(p_b => $1, p_a => $2)"; got != want {
		t.Errorf("query %q, want %q", got, want)
	}
	if got := values(args); !slices.Equal(got, []any{2, "x"}) {
		t.Errorf("values %v", got)
	}
}
