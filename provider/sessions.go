package provider

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// Activity sessions route every activity of one session (WorkItem.Session)
// to the one worker that owns it, so an activity can keep a process-local
// resource (a model loaded, a connection, a temp dir) across the calls of
// an orchestration:
//   - a worker fetching with a SessionConfig takes an unowned session's
//     item and owns the session for SessionConfig.LockFor; the session's
//     later items go only to it (to any process sharing its WorkerID)
//     while it owns it;
//   - the owner renews its sessions (RenewSessions) while they see work;
//     an idle session is not renewed and lapses, as does the session of a
//     worker that died; then any worker may take it over;
//   - items without a session go to any worker; a fetch without a
//     SessionConfig never takes a session's item.

// MaxSessionIDBytes is the longest session ID.
const MaxSessionIDBytes = 256

// ValidateSessionID reports whether id is a valid session ID: 1 to
// MaxSessionIDBytes bytes of UTF-8.
func ValidateSessionID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("session ID is empty")
	case len(id) > MaxSessionIDBytes:
		return fmt.Errorf("session ID %.20q… is %d bytes; the limit is %d", id, len(id), MaxSessionIDBytes)
	case !utf8.ValidString(id):
		return fmt.Errorf("session ID %q is not UTF-8", id)
	}
	return nil
}

// SessionConfig makes a worker fetch take session items
// (FetchWorkRequest.Sessions).
type SessionConfig struct {
	// WorkerID owns the sessions the fetch takes: processes sharing it
	// share their sessions.
	WorkerID string
	// LockFor is a session's lease when the fetch takes it, or takes an
	// item of a session it owns.
	LockFor time.Duration
	// MaxSessions is how many live sessions the worker may own; at the cap
	// it takes only items of its sessions and items without one. The
	// check is not atomic with other fetches of the same worker: several
	// fetching at once may overshoot it by their number.
	MaxSessions int
}

// Validate reports a config a fetch cannot use.
func (c *SessionConfig) Validate() error {
	switch {
	case c == nil:
		return nil
	case c.WorkerID == "":
		return fmt.Errorf("sessions: a worker ID is required")
	case c.LockFor <= 0:
		return fmt.Errorf("sessions: the session lease must be positive, got %v", c.LockFor)
	case c.MaxSessions < 1:
		return fmt.Errorf("sessions: max sessions must be at least 1, got %d", c.MaxSessions)
	}
	return nil
}

// Sessions is the part of a provider that keeps activity sessions' leases.
type Sessions interface {
	// RenewSessions extends to now+req.ExtendFor the live sessions of
	// req.WorkerID that saw work (a fetch, renewal or ack of one of their
	// items) within req.IdleAfter, and returns how many it extended. A
	// session past its lease is not renewed: another worker may own it.
	RenewSessions(ctx context.Context, req RenewSessionsRequest) (int, error)
	// ReleaseSessions ends every session of req.ID at once (a worker
	// shutting down), so other workers take them over without waiting for
	// their leases; it returns how many.
	ReleaseSessions(ctx context.Context, req WorkerRequest) (int, error)
	// CleanupSessions forgets sessions whose lease lapsed and that have no
	// item queued, and returns how many.
	CleanupSessions(ctx context.Context) (int, error)
}

// RenewSessionsRequest says whose sessions to renew, and for how long.
type RenewSessionsRequest struct {
	WorkerID  string
	ExtendFor time.Duration
	// IdleAfter: a session without work for this long is left to lapse.
	IdleAfter time.Duration
}

// Validate reports a request a store cannot honour.
func (r RenewSessionsRequest) Validate() error {
	switch {
	case r.WorkerID == "":
		return invalidRequest("renew sessions", "", "a worker ID is required")
	case r.ExtendFor <= 0 || r.IdleAfter <= 0:
		return invalidRequest("renew sessions", "", "ExtendFor and IdleAfter must be positive, got %v and %v", r.ExtendFor, r.IdleAfter)
	}
	return nil
}
