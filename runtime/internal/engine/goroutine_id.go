package engine

import (
	"bytes"
	rt "runtime"
	"strconv"
	"sync"

	"github.com/petermattis/goid"
)

// goroutineID returns the calling goroutine's ID. The engine asks on every
// call from orchestration code in a live turn (scheduler.caller), so it must
// be cheap: goid reads it from the runtime's goroutine struct in a few
// nanoseconds, where parsing runtime.Stack walks the whole stack (~8 µs at
// the depth orchestration code runs at, ~8% of a fan-out's Go CPU). goid
// mirrors the runtime's struct layout, so a Go release that moves the field
// could make it read garbage: its answers are checked against the stack
// header once, and the slow parse is used if they ever differ.
func goroutineID() uint64 {
	if fastGoroutineIDOK() {
		return uint64(goid.Get())
	}
	return stackGoroutineID()
}

var fastGoroutineIDOK = sync.OnceValue(func() bool {
	const probes = 8
	ok := make(chan bool, probes)
	for range probes {
		go func() { ok <- uint64(goid.Get()) == stackGoroutineID() }()
	}
	all := uint64(goid.Get()) == stackGoroutineID()
	for range probes {
		all = <-ok && all
	}
	return all
})

// stackGoroutineID parses the calling goroutine's ID from its stack header.
func stackGoroutineID() uint64 {
	var buf [64]byte
	b := buf[:rt.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// goroutineStack returns the stack of goroutine id, for error messages.
func goroutineStack(id uint64) string {
	buf := make([]byte, 1<<20)
	all := buf[:rt.Stack(buf, true)]
	header := []byte("goroutine " + strconv.FormatUint(id, 10) + " [")
	for _, g := range bytes.Split(all, []byte("\n\n")) {
		if bytes.HasPrefix(g, header) {
			return string(g)
		}
	}
	return "(stack not found)"
}
