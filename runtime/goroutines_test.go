package runtime

import rt "runtime"

func countGoroutines() int { return rt.NumGoroutine() }
