package engine

import rt "runtime"

func countGoroutines() int { return rt.NumGoroutine() }
