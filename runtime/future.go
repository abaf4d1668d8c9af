package runtime

// Future is the pending result of a durable operation: an activity, a timer,
// an external event or a sub-orchestration. Await blocks the calling
// orchestration goroutine until the result is known.
type Future struct {
	t      *turn
	done   bool
	result string
	err    error
	// order is the position at which the future resolved; Select uses it.
	order int
	// onResolve lets composite futures (retries, WhenAll) react.
	onResolve []func()
}

func newFuture(t *turn) *Future { return &Future{t: t} }

// Done reports whether the result is known. It never blocks.
func (f *Future) Done() bool { return f.done }

// Await blocks until the result is known, then decodes it into out (which may
// be nil) or returns the failure.
func (f *Future) Await(out any) error {
	f.t.sched.block(f.Done)
	if f.err != nil {
		return f.err
	}
	return decodePayload(f.result, out)
}

// Await is the typed form of Future.Await.
func Await[T any](f *Future) (T, error) {
	var v T
	err := f.Await(&v)
	return v, err
}

func (f *Future) resolve(result string, err error) {
	if f.done {
		return
	}
	f.done, f.result, f.err = true, result, err
	f.t.resolved++
	f.order = f.t.resolved
	for _, fn := range f.onResolve {
		fn()
	}
}
