package runtime

import "github.com/duroxide/duroxide-go/provider"

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

// statusOf maps the store's status of an instance's current execution. A
// current execution is never ContinuedAsNew (its successor is current), and
// an instance row without an execution status has started.
func statusOf(s provider.ExecutionStatus) InstanceStatus {
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
