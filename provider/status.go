package provider

// ExecutionStatus is the state of one execution of an instance.
type ExecutionStatus string

const (
	StatusRunning        ExecutionStatus = "Running"
	StatusCompleted      ExecutionStatus = "Completed"
	StatusFailed         ExecutionStatus = "Failed"
	StatusTerminated     ExecutionStatus = "Terminated"
	StatusContinuedAsNew ExecutionStatus = "ContinuedAsNew"
)

// Terminal reports whether an execution in this status will make no more progress.
// ContinuedAsNew is terminal for its execution; the instance lives on in the next one.
func (s ExecutionStatus) Terminal() bool {
	switch s {
	case StatusCompleted, StatusFailed, StatusTerminated, StatusContinuedAsNew:
		return true
	}
	return false
}

// Valid reports whether s is one of the statuses above.
func (s ExecutionStatus) Valid() bool { return s == StatusRunning || s.Terminal() }

// Statuses an instance has before and beside its executions' own, which
// InstanceInfo and ListRequest use:
//   - StatusPending: a start is queued and no turn of it has run;
//   - StatusStalled: running, and its last turn was handed back with a
//     cause (InstanceInfo.LastError): it makes no progress until that is
//     put right. Only a ListRequest filter; InstanceInfo says Running.
const (
	StatusPending ExecutionStatus = "Pending"
	StatusStalled ExecutionStatus = "Stalled"
)

// ExecutionState is what a worker learns, on fetch and on renew, about the
// execution an activity belongs to. Anything but StateRunning means the result is
// no longer wanted and the activity may be cancelled.
type ExecutionState string

const (
	StateRunning        ExecutionState = "Running"
	StateCompleted      ExecutionState = "Completed"
	StateFailed         ExecutionState = "Failed"
	StateTerminated     ExecutionState = "Terminated"
	StateContinuedAsNew ExecutionState = "ContinuedAsNew"
	// StateMissing means the instance no longer exists (deleted).
	StateMissing ExecutionState = "Missing"
)

// Cancelled reports whether an activity of an execution in this state should stop.
func (s ExecutionState) Cancelled() bool { return s != StateRunning }

// StateOf derives the state of execution executionID, given the instance's
// current execution and its status; exists is false when the instance is gone.
func StateOf(exists bool, executionID, currentExecutionID int64, currentStatus ExecutionStatus) ExecutionState {
	switch {
	case !exists:
		return StateMissing
	case executionID < currentExecutionID:
		return StateContinuedAsNew
	case currentStatus == "" || currentStatus == StatusRunning:
		return StateRunning
	default:
		return ExecutionState(currentStatus)
	}
}
