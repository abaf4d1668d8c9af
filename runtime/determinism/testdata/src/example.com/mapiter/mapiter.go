// Package mapiter tests rule 4: map iteration order.
package mapiter

import (
	"maps"
	"slices"
	"sort"

	"github.com/duroxide/duroxide-go/runtime"
)

// RangeMap schedules activities in random order.
func RangeMap(ctx *runtime.OrchestrationContext, m map[string]int) (int, error) { // want RangeMap:"ranges over a map"
	for name := range m { // want `^range over map in orchestration RangeMap: map iteration order is random, so iterate over sorted keys \(slices\.Sorted\(maps\.Keys\(m\)\)\)$`
		ctx.CallActivity(name, nil)
	}
	for k := range maps.Keys(m) { // want `^range over maps\.Keys in orchestration RangeMap: map iteration order is random`
		ctx.CallActivity(k, nil)
	}
	for _, v := range maps.All(m) { // want `^range over maps\.All in orchestration RangeMap`
		_ = v
	}
	return 0, nil
}

// SortedKeys iterates in a fixed order: no report.
func SortedKeys(ctx *runtime.OrchestrationContext, m map[string]int) (int, error) {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		ctx.CallActivity(name, nil)
	}
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	for _, k := range keys {
		ctx.CallActivity(k, m[k])
	}
	return len(m), nil
}

// total ranges over a map outside orchestration code: no report.
func total(m map[string]int) int { // want total:"ranges over a map"
	sum := 0
	for _, v := range m {
		sum += v
	}
	return sum
}
