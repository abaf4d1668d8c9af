package engine

import (
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// InstanceStatus is where an instance is in its life, as Client.Status reports it.
type InstanceStatus string

const (
	// StatusPending: the start is queued; no worker has run the first turn yet.
	StatusPending InstanceStatus = "Pending"
	// StatusRunning: the instance has started and not finished. It may be
	// waiting, or stalled (Status.LastError says why).
	StatusRunning    InstanceStatus = "Running"
	StatusCompleted  InstanceStatus = "Completed"
	StatusFailed     InstanceStatus = "Failed"
	StatusTerminated InstanceStatus = "Terminated"
)

// Finished reports whether the status is final.
func (s InstanceStatus) Finished() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusTerminated
}

// StatusOf maps the store's status of an instance's current execution. A
// current execution is never ContinuedAsNew (its successor is current), and
// an instance row without an execution status has started.
func StatusOf(s provider.ExecutionStatus) InstanceStatus {
	switch s {
	case provider.StatusCompleted:
		return StatusCompleted
	case provider.StatusFailed:
		return StatusFailed
	case provider.StatusTerminated:
		return StatusTerminated
	}
	return StatusRunning
}

// Status is an instance's state as last committed.
type Status struct {
	Instance      string
	Orchestration string
	Version       string
	ExecutionID   int64
	// Status is StatusPending until a worker runs the first turn.
	Status InstanceStatus
	// Output is the result (JSON) of a completed instance.
	Output string
	// Failure says why a failed or terminated instance ended.
	Failure *Failure
	// LastError says why a running instance is not making progress: its last
	// turn was handed back to be retried (code that no longer matches its
	// history, an unregistered orchestration, a store error). Nil once a turn
	// commits.
	LastError           *Failure
	CustomStatus        *string
	CustomStatusVersion int64
	ParentInstance      string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Finished reports whether the instance reached a final status.
func (s *Status) Finished() bool { return s.Status.Finished() }

// Stalled reports whether the instance runs but makes no progress: its last
// turn was handed back (LastError says why) and waits to be retried.
func (s *Status) Stalled() bool { return s.Status == StatusRunning && s.LastError != nil }

// DecodeOutput decodes the result of a completed instance into out.
func (s *Status) DecodeOutput(out any) error { return DecodePayload(s.Output, out) }

// DecodeCustomStatus decodes the custom status into out; ok is false, and
// out untouched, when the instance has none.
func (s *Status) DecodeCustomStatus(out any) (ok bool, err error) {
	if s.CustomStatus == nil {
		return false, nil
	}
	return true, DecodePayload(*s.CustomStatus, out)
}

// StatusFromInfo is the Status of an instance the store describes.
func StatusFromInfo(info provider.InstanceInfo) *Status {
	s := &Status{Instance: info.Instance, Orchestration: info.OrchestrationName, Version: info.Version,
		ExecutionID: info.CurrentExecutionID, Status: StatusOf(info.Status), CustomStatus: info.CustomStatus,
		CustomStatusVersion: info.CustomStatusVersion, ParentInstance: info.ParentInstance,
		CreatedAt: info.CreatedAt, UpdatedAt: info.UpdatedAt}
	if info.LastError != nil && !s.Finished() {
		f := failureOf(info.LastError)
		s.LastError = &f
	}
	switch s.Status {
	case StatusCompleted:
		s.Output = info.Output
	case StatusFailed, StatusTerminated:
		s.Failure = DecodeFailure(info.Output)
	}
	return s
}
