package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeletionPolicy says what deleting an Orchestration does to its instance.
// +kubebuilder:validation:Enum=Terminate;Purge;Orphan
type DeletionPolicy string

const (
	// DeletionTerminate terminates a running instance and keeps its history.
	DeletionTerminate DeletionPolicy = "Terminate"
	// DeletionPurge terminates a running instance and deletes its history.
	DeletionPurge DeletionPolicy = "Purge"
	// DeletionOrphan leaves the instance running in the store.
	DeletionOrphan DeletionPolicy = "Orphan"
)

// IDReusePolicy says what starting the instance does when its instance ID is
// already taken in the store.
// +kubebuilder:validation:Enum=Fail;AllowFinished;TerminateRunning
type IDReusePolicy string

const (
	// IDReuseFail starts nothing: the object reports InstanceIDInUse.
	IDReuseFail IDReusePolicy = "Fail"
	// IDReuseAllowFinished replaces an instance that has finished: it is
	// deleted with its history and this object's instance starts.
	IDReuseAllowFinished IDReusePolicy = "AllowFinished"
	// IDReuseTerminateRunning replaces the instance whatever its state: a
	// running one is stopped and deleted with its history.
	IDReuseTerminateRunning IDReusePolicy = "TerminateRunning"
)

// OrchestrationSpec describes the orchestration instance to run.
// +kubebuilder:validation:XValidation:rule="has(self.version) == has(oldSelf.version) && (!has(self.version) || self.version == oldSelf.version)",message="version is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.instanceID) == has(oldSelf.instanceID) && (!has(self.instanceID) || self.instanceID == oldSelf.instanceID)",message="instanceID is immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.events) || (has(self.events) && oldSelf.events.all(e, e in self.events))",message="events can be added (anywhere in the list) but existing entries cannot be changed or removed"
type OrchestrationSpec struct {
	// WorkerPool names the WorkerPool (in this namespace) whose workers run the
	// instance and whose database stores it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="workerPool is immutable"
	WorkerPool string `json:"workerPool"`

	// Orchestration is the registered name of the orchestration to run.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="orchestration is immutable"
	Orchestration string `json:"orchestration"`

	// Version pins the orchestration version, a semantic version such as
	// "1.2.0" or "v2" (as the runtime registers them); the latest registered
	// version when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^v?(0|[1-9][0-9]*)(\\\\.(0|[1-9][0-9]*)(\\\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\\\.[0-9A-Za-z-]+)*)?(\\\\+[0-9A-Za-z-]+(\\\\.[0-9A-Za-z-]+)*)?)?)?$')",message="version must be a semantic version such as 1.2.0 or v1.2.0"
	Version string `json:"version,omitempty"`

	// Input is the orchestration's input, any JSON value. It is not read again
	// after the instance started. (CEL cannot read untyped JSON, so the API
	// server cannot refuse a change; the controller reports one.)
	// +optional
	Input *apiextensionsv1.JSON `json:"input,omitempty"`

	// InstanceID is the instance's ID in the store. By default each object
	// gets its own, "<namespace>/<name>/<uid>", so deleting an Orchestration
	// and applying the same name again starts a new run. An explicit ID that
	// another Orchestration uses, or that an instance already in the store
	// uses and idReusePolicy does not let it replace, is not started
	// (condition InstanceIDInUse).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	InstanceID string `json:"instanceID,omitempty"`

	// Events are external events to raise on the instance. Each entry is
	// raised once, identified by its key (its name unless set), in list order
	// among those not raised yet. Entries may be added anywhere; existing ones
	// cannot change or go away. Two entries with one name need distinct keys.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=200
	// +kubebuilder:validation:XValidation:rule="self.all(e, self.exists_one(f, (has(f.key) ? f.key : f.name) == (has(e.key) ? e.key : e.name)))",message="event keys must be unique (an entry's key is its name unless set): give each repeat of a name its own key"
	Events []OrchestrationEvent `json:"events,omitempty"`

	// Terminate, when set, terminates the instance with this reason.
	// +optional
	Terminate string `json:"terminate,omitempty"`

	// TTLSecondsAfterFinished deletes the Orchestration this long after its
	// instance finished (its deletion policy applies). Kept forever when unset.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// DeletionPolicy says what deleting this object does to the instance.
	// +optional
	// +kubebuilder:default=Terminate
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// IDReusePolicy says what the start does when an instance in the store
	// already has the instance ID (one no Orchestration holds): Fail starts
	// nothing (condition InstanceIDInUse); AllowFinished replaces an instance
	// that has finished, TerminateRunning any; the replaced instance and its
	// history are deleted. A sub-orchestration is never replaced. It applies
	// only until the instance starts.
	// +optional
	// +kubebuilder:default=Fail
	IDReusePolicy IDReusePolicy `json:"idReusePolicy,omitempty"`
}

// OrchestrationEvent is an external event to raise.
type OrchestrationEvent struct {
	// Name is the event name the orchestration waits for (WaitForEvent).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key identifies the entry, so that it is raised exactly once; its name
	// when unset. Set it to raise one name several times.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
	// Data is the event's payload, any JSON value.
	// +optional
	Data *apiextensionsv1.JSON `json:"data,omitempty"`
}

// OrchestrationPhase is where the instance stands. Stalled: running, but
// its last turn was handed back (code that no longer matches its history,
// an unregistered orchestration, a store error) and it makes no progress
// until that is put right; the Stalled condition says why.
// +kubebuilder:validation:Enum=Pending;Running;Stalled;Completed;Failed;Terminated
type OrchestrationPhase string

const (
	PhasePending    OrchestrationPhase = "Pending"
	PhaseRunning    OrchestrationPhase = "Running"
	PhaseStalled    OrchestrationPhase = "Stalled"
	PhaseCompleted  OrchestrationPhase = "Completed"
	PhaseFailed     OrchestrationPhase = "Failed"
	PhaseTerminated OrchestrationPhase = "Terminated"
)

// OrchestrationFailure says why an instance failed or was terminated.
type OrchestrationFailure struct {
	// Class is application, infrastructure or configuration.
	Class string `json:"class,omitempty"`
	// Message describes the failure.
	Message string `json:"message,omitempty"`
	// Kind refines the class where the runtime knows more: Canceled,
	// Timeout, Nondeterminism, Poison, ...
	// +optional
	Kind string `json:"kind,omitempty"`
}

// OrchestrationStatus mirrors the instance's state in the store.
type OrchestrationStatus struct {
	// Phase is the instance's phase.
	// +optional
	Phase OrchestrationPhase `json:"phase,omitempty"`
	// InstanceID is the instance's ID in the store.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
	// InputDigest identifies the input the instance started with, so that a
	// later edit of spec.input can be reported (condition InputChanged).
	// +optional
	InputDigest string `json:"inputDigest,omitempty"`
	// ExecutionID is the current execution (it grows with continue-as-new).
	// +optional
	ExecutionID int64 `json:"executionID,omitempty"`
	// CustomStatus is the status the orchestration published, as JSON text.
	// +optional
	CustomStatus string `json:"customStatus,omitempty"`
	// Output is the result of a completed instance, as JSON text, cut at a
	// bound (see OutputTruncated).
	// +optional
	Output string `json:"output,omitempty"`
	// OutputTruncated is true when Output was cut; read the full result from the store.
	// +optional
	OutputTruncated bool `json:"outputTruncated,omitempty"`
	// Failure says why a failed or terminated instance ended.
	// +optional
	Failure *OrchestrationFailure `json:"failure,omitempty"`
	// StartTime is when the instance was created in the store.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the instance finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Duration is how long the instance ran, start to finish ("1m5s").
	// +optional
	Duration string `json:"duration,omitempty"`
	// HistoryEvents counts the current execution's history events.
	// +optional
	HistoryEvents int64 `json:"historyEvents,omitempty"`
	// EventsRaised counts the entries of spec.events raised so far.
	// +optional
	EventsRaised int32 `json:"eventsRaised,omitempty"`
	// RaisedEvents are the keys of the spec.events entries handled so far
	// (delivered, or refused because the instance had finished: see the
	// condition EventsDelivered).
	// +optional
	// +listType=set
	RaisedEvents []string `json:"raisedEvents,omitempty"`
	// Reason and Message sum up where the object stands, for listings: the
	// reason of the condition that matters now.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// Children are the instance IDs of its sub-orchestrations (at most 100 listed).
	// +optional
	Children []string `json:"children,omitempty"`
	// ObservedGeneration is the generation last acted upon.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: StoreReachable (the pool and its store can be used),
	// InstanceIDInUse (the ID is taken, nothing was started), Running,
	// Stalled (running, its last turn handed back: the reason and message
	// say why), Succeeded, Failed, Terminating, InputChanged, EventsDelivered.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Orchestration is one orchestration instance: applying it starts the
// instance in its WorkerPool's store; its status mirrors the instance.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=orch
// +kubebuilder:selectablefield:JSONPath=`.status.phase`
// +kubebuilder:selectablefield:JSONPath=`.spec.workerPool`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Orchestration",type=string,JSONPath=`.spec.orchestration`
// +kubebuilder:printcolumn:name="Pool",type=string,JSONPath=`.spec.workerPool`
// +kubebuilder:printcolumn:name="Custom Status",type=string,JSONPath=`.status.customStatus`,priority=0
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=`.status.instanceID`,priority=1
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startTime`,priority=1
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.completionTime`,priority=1
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
type Orchestration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OrchestrationSpec   `json:"spec"`
	Status OrchestrationStatus `json:"status,omitempty"`
}

// OrchestrationList is a list of Orchestrations.
// +kubebuilder:object:root=true
type OrchestrationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Orchestration `json:"items"`
}
