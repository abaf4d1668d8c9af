//go:build !unix

package telemetry_test

import "time"

// processCPU is not measured here: cpu-µs/op reads 0.
func processCPU() time.Duration { return 0 }
