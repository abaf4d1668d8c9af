package provider

import (
	"fmt"
	"strings"
)

// IDReusePolicy says what a start does when its instance ID is taken: an
// instance with that ID exists, or a start of it is queued (StartInstance).
// A store keeps one instance per ID, so reusing an ID replaces the instance:
// the old one, its sub-orchestrations, their histories, queued messages and
// locks are deleted in the transaction that queues the new start. Nothing of
// the old run is kept; keep distinct IDs to keep runs apart.
type IDReusePolicy string

const (
	// IDReuseFail refuses the start with ErrAlreadyExists. The zero value
	// means the same.
	IDReuseFail IDReusePolicy = "Fail"
	// IDReuseAllowFinished replaces an instance that has finished
	// (Completed, Failed or Terminated) and whose sub-orchestrations have
	// too; anything else is refused as with IDReuseFail.
	IDReuseAllowFinished IDReusePolicy = "AllowFinished"
	// IDReuseTerminateRunning replaces the instance whatever its state: a
	// running one (or a queued start) is deleted with its
	// sub-orchestrations, whose turns and activities in flight then fail to
	// commit. No Terminated status is recorded: the history goes with it.
	IDReuseTerminateRunning IDReusePolicy = "TerminateRunning"
)

// Valid reports whether p is one of the policies above or empty.
func (p IDReusePolicy) Valid() bool {
	switch p {
	case "", IDReuseFail, IDReuseAllowFinished, IDReuseTerminateRunning:
		return true
	}
	return false
}

// OrDefault returns p, or IDReuseFail when p is empty.
func (p IDReusePolicy) OrDefault() IDReusePolicy {
	if p == "" {
		return IDReuseFail
	}
	return p
}

// AlreadyExistsError is the ErrAlreadyExists a refused start returns: what
// holds the ID, so that the caller can tell whose it is.
type AlreadyExistsError struct {
	Instance string
	// Status is the current execution's status, or "" while the instance is
	// only a queued start.
	Status ExecutionStatus
	// Owner is the owner the instance's start recorded (WorkItem.Owner), if any.
	Owner string
	// Why says why the policy could not replace it, when the policy allows
	// reuse: the instance is a sub-orchestration, or some of its
	// sub-orchestrations still run.
	Why string
}

func (e *AlreadyExistsError) Error() string {
	status := string(e.Status)
	if status == "" {
		status = "Pending"
	}
	details := []string{status}
	if e.Owner != "" {
		details = append(details, "started by "+e.Owner)
	}
	if e.Why != "" {
		details = append(details, e.Why)
	}
	return fmt.Sprintf("%s (%s)", ErrAlreadyExists, strings.Join(details, "; "))
}

func (e *AlreadyExistsError) Unwrap() error { return ErrAlreadyExists }
