package engine

import "testing"

func TestStalled(t *testing.T) {
	cause := &Failure{Message: "nondeterministic"}
	for _, tc := range []struct {
		st   Status
		want bool
	}{
		{Status{Status: StatusRunning}, false},
		{Status{Status: StatusRunning, LastError: cause}, true},
		{Status{Status: StatusPending, LastError: cause}, false},
		{Status{Status: StatusFailed, LastError: cause}, false},
	} {
		if got := tc.st.Stalled(); got != tc.want {
			t.Errorf("%s with last error %v: Stalled %v, want %v", tc.st.Status, tc.st.LastError != nil, got, tc.want)
		}
	}
}
