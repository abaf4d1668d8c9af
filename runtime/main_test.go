package runtime_test

import (
	"os"
	"testing"
)

// TestMain lets the crash-recovery test re-run this binary as a worker
// process that it then kills.
func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) != "" {
		os.Exit(runCrashHelper())
	}
	os.Exit(m.Run())
}
