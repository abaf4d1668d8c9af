package inspect

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func TestShownStatusAndAge(t *testing.T) {
	cause := &provider.ErrorDetails{Class: provider.ErrorConfiguration, Message: "nondeterministic"}
	for _, tc := range []struct {
		info provider.InstanceInfo
		want string
	}{
		{provider.InstanceInfo{Status: provider.StatusRunning}, "Running"},
		{provider.InstanceInfo{Status: provider.StatusRunning, LastError: cause}, "Stalled"},
		{provider.InstanceInfo{Status: provider.StatusFailed, LastError: cause}, "Failed"},
		{provider.InstanceInfo{Status: provider.StatusPending}, "Pending"},
	} {
		if got := ShownStatus(tc.info); got != tc.want {
			t.Errorf("status of %+v: %s, want %s", tc.info, got, tc.want)
		}
	}
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 12 * time.Minute: "12m", 5 * time.Hour: "5h", 30 * time.Hour: "30h", 72 * time.Hour: "3d",
	} {
		if got := Age(d); got != want {
			t.Errorf("age(%v) = %s, want %s", d, got, want)
		}
	}
}
