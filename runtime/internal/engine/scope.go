package engine

// scope is a cancellation scope: the orchestration's own, one per coroutine
// started with ctx.Go, and detached ones (WithoutCancel). Cancelling a scope
// cancels, in creation order, the futures made in it that are still pending,
// then its child scopes; work started in it afterwards fails at once. The
// order is the code's, so replay cancels the same things the same way.
type scope struct {
	err      *CanceledError
	futures  []*Future
	children []*scope
}

// track remembers a pending future. Done ones are dropped when the list
// would grow, so a long-lived scope stays as large as its pending work.
func (s *scope) track(f *Future) {
	if f.done {
		return
	}
	if len(s.futures) >= 16 && len(s.futures) == cap(s.futures) {
		live := s.futures[:0]
		for _, g := range s.futures {
			if !g.done {
				live = append(live, g)
			}
		}
		clear(s.futures[len(live):])
		s.futures = live
	}
	s.futures = append(s.futures, f)
}

func (s *scope) cancel(reason string) {
	if s.err != nil {
		return
	}
	s.err = &CanceledError{Reason: reason}
	futures := s.futures
	s.futures = nil
	for _, f := range futures {
		f.cancelWith(reason)
	}
	for _, c := range s.children {
		c.cancel(reason)
	}
}
