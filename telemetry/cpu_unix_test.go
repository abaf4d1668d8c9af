//go:build unix

package telemetry_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system: what
// instrumentation costs shows here, while ns/op is mostly waiting for the
// store.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
