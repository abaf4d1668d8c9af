package engine

// Future is the pending result of a durable operation: an activity, a timer,
// an external event, a sub-orchestration or a coroutine started with ctx.Go.
// Await blocks the calling orchestration goroutine until the result is known.
type Future struct {
	t      *turn
	done   bool
	result string
	err    error
	// order is the position at which the future resolved; Select uses it.
	order int
	// waiters are the parked coroutines this future may wake.
	waiters []*wait
	// onResolve lets composite futures (retries) react.
	onResolve []func()
	// cancel stops the operation behind the future; nil when it has none.
	cancel func(reason string)
	// event is the external event a wait took; until the code reads it
	// (observed), cancelling the wait gives the event back.
	event    *inboxEvent
	observed bool
}

func newFuture(t *turn) *Future { return &Future{t: t} }

// Done reports whether the result is known. It never blocks.
func (f *Future) Done() bool { return f.done }

// Await blocks until the result is known, then decodes it into out (which may
// be nil) or returns the failure.
func (f *Future) Await(out any) error {
	if !f.done {
		f.t.sched.park([]*Future{f}, 1)
	}
	f.observed = true
	if f.err != nil {
		return f.err
	}
	return DecodePayload(f.result, out)
}

// Await is the typed form of Future.Await.
func Await[T any](f *Future) (T, error) {
	var v T
	err := f.Await(&v)
	return v, err
}

// Cancel gives up on the operation: an activity's work item is removed (a
// running attempt sees its context cancelled), a timer is deleted from the
// queue, a sub-orchestration is terminated, an event wait stops waiting and
// will not consume a later event, and a coroutine started with ctx.Go has
// every future it waits for cancelled. The future resolves at once with a
// *CanceledError (errors.Is(err, ErrCanceled)). The cancellation is recorded
// in history, so replay makes the same decision. Cancelling a finished
// future does nothing, except that a wait whose event was never read (a
// Select loser that had its event already) gives the event back, in its
// place, to the next wait for that name.
func (f *Future) Cancel() { f.cancelWith("cancelled by the orchestration") }

func (f *Future) cancelWith(reason string) {
	if f.done {
		if f.t.giveBack(f) {
			// Nobody read the event: the wait ends cancelled, as if it had not had it.
			f.result, f.err = "", &CanceledError{Reason: reason}
		}
		return
	}
	if f.cancel != nil {
		f.cancel(reason)
		return
	}
	f.resolve("", &CanceledError{Reason: reason})
}

func (f *Future) resolve(result string, err error) {
	if f.done {
		return
	}
	f.done, f.result, f.err = true, result, err
	f.t.resolved++
	f.order = f.t.resolved
	for _, w := range f.waiters {
		w.need--
		if w.need <= 0 && w.c.waiting == w {
			f.t.sched.wake(w.c)
		}
	}
	f.waiters = nil
	for _, fn := range f.onResolve {
		fn()
	}
}
