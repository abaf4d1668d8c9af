package provider

import (
	"fmt"
	"time"
)

// Validate reports whether r is one of the combinations CommitRequest
// lists: nil, or an *Error wrapping ErrInvalidArgument that says what is
// wrong. A store checks it before anything else, so a refused request writes
// nothing; then it commits, or declines the fast paths it does not take.
// It checks the request's shape only, not its lock tokens or acks.
func (r CommitRequest) Validate() error {
	switch {
	case r.Turn == nil && r.Activity == nil:
		return invalidCommit("", "the request carries neither a turn nor an activity's result")
	case r.LockNextFor < 0:
		return invalidCommit("", "LockNextFor must not be negative, got %v", r.LockNextFor)
	case r.Turn == nil:
		return r.Activity.validate(r.LockNextFor)
	}
	t := r.Turn
	switch t.Hold {
	case TurnLocked:
		if r.Activity != nil {
			return invalidCommit(t.Instance, "a locked turn commits without an activity's result")
		}
		if r.LockNextFor > 0 && t.Instance == "" {
			return invalidCommit("", "locking the next turn needs the turn's instance")
		}
		return nil
	case TurnNew:
		if r.Activity != nil || r.LockNextFor > 0 {
			return invalidCommit(t.Instance, "a new instance's first turn commits alone")
		}
		return nil
	case TurnCached:
		return r.validateCached()
	}
	return invalidCommit(t.Instance, "unknown turn hold %d", t.Hold)
}

func (r CommitRequest) validateCached() error {
	t := r.Turn
	switch {
	case t.Cached == nil:
		return invalidCommit(t.Instance, "a cached commit needs the cached turn")
	case r.LockNextFor > 0:
		return invalidCommit(t.Cached.Instance, "a cached turn does not lock its next turn")
	}
	if a := r.Activity; a != nil && (a.Result == nil || a.QuietAfter != 0 || a.LockToken == "") {
		return invalidCommit(t.Cached.Instance, "a cached turn's activity has a result and a lease, and is not quiet")
	}
	return nil
}

// validate checks an activity's result committed without a turn.
func (a *ActivityResult) validate(lockNext time.Duration) error {
	switch {
	case a.QuietAfter != 0 && (a.Result == nil || lockNext > 0 || a.QuietAfter < 0):
		return invalidCommit("", "a quiet ack needs a result, a positive last event and no next turn")
	case lockNext > 0 && a.Result == nil:
		return invalidCommit("", "locking the next turn needs the activity's result")
	}
	return nil
}

func invalidCommit(instance, format string, args ...any) error {
	return invalidRequest("commit", instance, format, args...)
}

// invalidRequest is a request's permanent ErrInvalidArgument error.
func invalidRequest(op, instance, format string, args ...any) error {
	return Permanent(op, instance, fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...))
}
