package postgres

import (
	"slices"
	"testing"
)

func TestCallNamed(t *testing.T) {
	query, values := callNamed("dx_f", []namedArg{{"p_b", 2}, {"p_a", "x"}})
	if want := "SELECT * FROM dx_f(p_b => $1, p_a => $2)"; query != want {
		t.Errorf("query %q, want %q", query, want)
	}
	if !slices.Equal(values, []any{2, "x"}) {
		t.Errorf("values %v", values)
	}
}
