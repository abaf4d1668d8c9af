package provider

// OrchestrationItem is one locked turn's worth of work for a single instance:
// the messages fetched under LockToken and the history of the current execution.
// Until it is acked or abandoned, or the lock expires, no one else can fetch the
// instance, and messages that arrive meanwhile wait for the next turn.
type OrchestrationItem struct {
	Instance string
	// OrchestrationName and Version are the stored instance's, or, for an instance
	// whose first turn has not been acked, those of its StartOrchestration message
	// (empty when the batch holds none).
	OrchestrationName string
	Version           string
	// ExecutionID is the instance's current execution (1 for a new instance).
	ExecutionID int64
	// Status is the current execution's status; empty for a new instance.
	Status ExecutionStatus
	// Exists reports whether the instance row exists (its first turn was acked).
	Exists         bool
	ParentInstance string
	History        []Event
	Messages       []WorkItem
	LockToken      string
	// AttemptCount is how many times these messages have been fetched, this time
	// included. The runtime poisons the instance when it passes its limit.
	AttemptCount int
	// CustomStatus is the instance's custom status (nil when unset).
	CustomStatus        *string
	CustomStatusVersion int64
	// Cached marks a turn built from a provider's cached history rather than
	// fetched (FetchRequest.FromCache): no lock holds its instance,
	// and it commits only as a TurnCached TurnCommit.
	Cached bool
	// DecodeError is set when a stored event or message could not be decoded.
	// The lock is held and AttemptCount counts, so the runtime can abandon the
	// item with backoff and poison it at the limit instead of crash-looping.
	// History and Messages hold what could be decoded.
	DecodeError error
}

// WorkItemLease is a locked worker-queue item.
type WorkItemLease struct {
	Item      WorkItem
	LockToken string
	// AttemptCount is how many times the item has been fetched, this time included.
	AttemptCount int
	// State is the state of the execution the activity belongs to at fetch time.
	State ExecutionState
	// DecodeError is set when the stored item could not be decoded; Item then
	// holds only Instance, ExecutionID and ID as stored beside the payload.
	DecodeError error
}

// CustomStatus is an instance's user-set status value and its version. The
// version rises by one on every set or clear, so a poller that remembers the
// version it last saw can ask cheaply whether anything changed.
type CustomStatus struct {
	Value   *string
	Version int64
}

// CustomStatusUpdate, when present in an ack, sets (or with Clear, removes) the
// instance's custom status.
type CustomStatusUpdate struct {
	Clear bool
	Value string
}

// ExecutionMetadata is what the runtime computed about a turn and the provider
// stores without interpretation.
type ExecutionMetadata struct {
	// Status, when set, becomes the execution's status; Output is stored with it
	// (result, error message, or the continue-as-new input).
	Status ExecutionStatus
	Output string
	// OrchestrationName and OrchestrationVersion create the instance row on the
	// first turn, and update the version when set later.
	OrchestrationName    string
	OrchestrationVersion string
	// ParentInstance links a sub-orchestration to its parent, for cascade delete.
	ParentInstance string
	CustomStatus   *CustomStatusUpdate
}

// OrchestrationAck is everything one orchestration turn commits.
type OrchestrationAck struct {
	// ExecutionID is the execution the history delta belongs to. It may be one more
	// than the current one (continue-as-new); the provider creates it and makes it current.
	ExecutionID       int64
	HistoryDelta      []Event
	WorkerItems       []WorkItem
	OrchestratorItems []WorkItem
	Metadata          ExecutionMetadata
	// CancelledActivities are removed from the worker queue, locked or not, after
	// WorkerItems are enqueued (so an activity scheduled and cancelled in the same
	// turn never runs).
	CancelledActivities []ActivityRef
	// CancelledTimers are deleted from the acking instance's orchestrator queue
	// (timers nobody waits for any more), whether visible yet or not, unless
	// another turn holds them.
	CancelledTimers []TimerRef
	// Values changes the instance's durable values (see ValuesUpdate); nil
	// changes none.
	Values *ValuesUpdate
}

// StatusChange reports that an instance's status or custom status changed.
// Seq increases with every change a provider records.
type StatusChange struct {
	Instance            string
	ExecutionID         int64
	Status              ExecutionStatus
	CustomStatusVersion int64
	Seq                 int64
}
