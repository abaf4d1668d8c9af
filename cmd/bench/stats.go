package main

import (
	"slices"
	"time"
)

type samples []time.Duration

func (s samples) mean() time.Duration {
	if len(s) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum / time.Duration(len(s))
}

// quantile returns the q-quantile (nearest rank); q=1 is the maximum.
func (s samples) quantile(q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

type result struct {
	n          int
	activities int
	wall       time.Duration
	latency    samples
	extra      string // scenario-specific columns, each with a leading space
}
