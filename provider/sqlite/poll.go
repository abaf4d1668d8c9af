package sqlite

import (
	"context"
	"time"
)

// pollUntil calls try until it finds something or pollTimeout passes. Between
// tries it sleeps until woken by sig, the poll interval passes, or ctx ends.
// try is called at least once; found is false when the time ran out.
func (p *Provider) pollUntil(ctx context.Context, pollTimeout time.Duration, sig *signal, try func() (found bool, err error)) error {
	deadline := time.Now().Add(pollTimeout)
	for {
		woken := sig.wait()
		found, err := try()
		if err != nil || found {
			return err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return nil
		}
		timer := time.NewTimer(min(remaining, p.opts.PollInterval))
		select {
		case <-woken:
		case <-timer.C:
		case <-p.closed:
			timer.Stop()
			return nil
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
		timer.Stop()
	}
}
