package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Backoff is how the wait between attempts grows.
type Backoff string

const (
	BackoffExponential Backoff = "exponential"
	BackoffLinear      Backoff = "linear"
	BackoffFixed       Backoff = "fixed"
)

// RetryPolicy retries a failed activity. The zero value means one attempt.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt; 0 or 1 means no retry.
	MaxAttempts int
	Backoff     Backoff
	// InitialInterval is the wait after the first failure (default 1s).
	InitialInterval time.Duration
	// MaxInterval caps the wait (default: no cap).
	MaxInterval time.Duration
	// Multiplier grows exponential backoff (default 2).
	Multiplier float64
	// Timeout bounds each attempt; a late attempt counts as failed and its
	// activity is cancelled. Zero means no per-attempt timeout.
	Timeout time.Duration
}

// Delay is the wait after failed attempt number attempt (1-based).
func (p RetryPolicy) Delay(attempt int) time.Duration {
	base := p.InitialInterval
	if base <= 0 {
		base = time.Second
	}
	var d time.Duration
	switch p.Backoff {
	case BackoffFixed:
		d = base
	case BackoffLinear:
		d = base * time.Duration(attempt)
	default:
		m := p.Multiplier
		if m <= 1 {
			m = 2
		}
		d = time.Duration(float64(base) * math.Pow(m, float64(attempt-1)))
	}
	if p.MaxInterval > 0 && d > p.MaxInterval {
		d = p.MaxInterval
	}
	return d
}

// Purposes the runtime records on its own timers (Event.Reason of their
// TimerCreated, followed by the activity's name): tools tell them from the
// orchestration's timers by this prefix.
const (
	TimerRetryBackoff   = "retry backoff of"
	TimerAttemptTimeout = "attempt timeout of"
)

// callWithRetry runs the attempts in a coroutine of their own; its future
// resolves with the first success or the last failure. Cancelling it cancels
// the attempt or backoff timer in flight and stops retrying.
func (c *OrchestrationContext) callWithRetry(name, payload string, p RetryPolicy, call activityCall) *Future {
	attempts := max(p.MaxAttempts, 1)
	return c.goRaw("retry "+name, func(ctx *OrchestrationContext) (string, error) {
		for attempt := 1; ; attempt++ {
			out, err := ctx.attempt(name, payload, p.Timeout, call, attempt)
			if err == nil || attempt >= attempts || ctx.Err() != nil {
				return out, err
			}
			ctx.Logger().Info("activity attempt failed; retrying", "activity", name, "attempt", attempt, "error", err)
			if err := ctx.timer(p.Delay(attempt), fmt.Sprintf("%s %s after attempt %d", TimerRetryBackoff, name, attempt)).Await(nil); err != nil {
				return "", err
			}
		}
	})
}

// attempt runs one activity attempt, bounded by timeout when it is positive.
// A late attempt is cancelled (it lost the Select); an attempt that finishes
// in time deletes its timeout timer the same way. A local attempt runs
// before any timer can fire, so its timeout bounds its context instead.
func (c *OrchestrationContext) attempt(name, payload string, timeout time.Duration, call activityCall, n int) (string, error) {
	act := c.decide(&action{kind: provider.EventActivityScheduled, name: name, input: payload, local: call.local, tag: call.tag,
		session: call.session, timeout: timeout, attempt: n})
	if timeout > 0 && c.Select(act, c.timer(timeout, fmt.Sprintf("%s %s", TimerAttemptTimeout, name))) == 1 {
		return "", &TaskError{Task: "activity", Name: name, Class: ErrorApplication, Kind: FailureTimeout,
			Message: fmt.Sprintf("attempt %v after %v", ErrTimeout, timeout), cause: ErrTimeout}
	}
	if !act.done {
		c.t.sched.park([]*Future{act}, 1)
	}
	return act.result, act.err
}
