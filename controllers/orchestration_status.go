package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// Condition types of an Orchestration (and condInstanceIDInUse).
const (
	// CondStoreReachable: the pool exists and its store can be used.
	condStoreReachable  = "StoreReachable"
	condRunning         = "Running"
	condStalled         = "Stalled"
	condSucceeded       = "Succeeded"
	condFailed          = "Failed"
	condTerminating     = "Terminating"
	condInputChanged    = "InputChanged"
	condEventsDelivered = "EventsDelivered"
	// condReadyBefore is what StoreReachable was called before: removed
	// from objects written by older operators.
	condReadyBefore = "Ready"
)

// Reasons for an instance that cannot take events or is gone.
const (
	reasonInstanceFinished = "InstanceFinished"
	reasonInstanceNotFound = "InstanceNotFound"
)

// ReasonNotRegistered: no worker of the pool has the orchestration (or the
// pinned version) registered.
const reasonNotRegistered = "OrchestrationNotRegistered"

// instanceView is what the store says about an instance.
type instanceView struct {
	status      *runtime.Status // nil: not created yet (no worker ran its first turn), or gone
	gone        bool            // neither an instance nor a queued start: deleted from the store
	events      int64
	completedAt time.Time
	children    []string
}

// readInstance reads the instance's status, its current execution's size
// and its children: three cheap queries, no history.
func readInstance(ctx context.Context, store *poolStore, id string, maxChildren int) (*instanceView, error) {
	st, err := store.Client.Status(ctx, id)
	if errors.Is(err, provider.ErrNotFound) {
		return &instanceView{gone: true}, nil
	}
	if err == nil && st.Status == runtime.StatusPending {
		return &instanceView{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read instance %q: %w", id, err)
	}
	view := &instanceView{status: st}
	exec, err := store.provider.GetExecutionInfo(ctx, provider.ExecutionRequest{Instance: id, ExecutionID: st.ExecutionID})
	if err != nil && !errors.Is(err, provider.ErrNotFound) {
		return nil, fmt.Errorf("read execution %d of %q: %w", st.ExecutionID, id, err)
	}
	view.events, view.completedAt = exec.EventCount, exec.CompletedAt
	children, err := store.provider.ListChildren(ctx, provider.InstanceRequest{Instance: id})
	if err != nil {
		return nil, fmt.Errorf("list children of %q: %w", id, err)
	}
	if len(children) > maxChildren {
		children = children[:maxChildren]
	}
	view.children = children
	return view, nil
}

// mirror copies the instance's state into o.Status, within the limits.
func (r *orchestrationReconciler) mirror(o *v1.Orchestration, view *instanceView) {
	s := &o.Status
	if view.gone {
		r.mirrorGone(o)
		return
	}
	if view.status == nil {
		s.Phase = v1.PhasePending
		return
	}
	st := view.status
	s.Phase = phaseOf(st)
	s.ExecutionID = st.ExecutionID
	s.HistoryEvents = view.events
	s.Children = view.children
	s.StartTime = timeOrNil(st.CreatedAt)
	s.CustomStatus = ""
	if st.CustomStatus != nil {
		s.CustomStatus, _ = truncate(*st.CustomStatus, r.Limits.CustomStatus)
	}
	s.Output, s.OutputTruncated = "", false
	s.Failure = nil
	s.CompletionTime = nil
	if finished(s.Phase) {
		s.CompletionTime = timeOrNil(view.completedAt)
		if s.CompletionTime == nil {
			s.CompletionTime = timeOrNil(st.UpdatedAt)
		}
	}
	switch s.Phase {
	case v1.PhaseCompleted:
		s.Output, s.OutputTruncated = truncate(st.Output, r.Limits.Output)
	case v1.PhaseFailed, v1.PhaseTerminated:
		if st.Failure != nil {
			msg, _ := truncate(st.Failure.Message, r.Limits.FailureMessage)
			s.Failure = &v1.OrchestrationFailure{Class: string(st.Failure.Class), Message: msg, Kind: string(st.Failure.Kind)}
		}
	}
	setPhaseConditions(o)
	r.setStalled(o, st)
	s.Duration = durationOf(s)
}

// mirrorGone reports an instance that this object started but that is in the
// store no more (deleted by a tool, or its queued start removed): it will not
// come back, so the object fails rather than wait forever.
func (r *orchestrationReconciler) mirrorGone(o *v1.Orchestration) {
	s := &o.Status
	if s.Phase == v1.PhaseFailed && s.Failure != nil && s.Failure.Class == reasonInstanceNotFound {
		return
	}
	msg := fmt.Sprintf("instance %q is no longer in the store: it was deleted outside this object (with the CLI or the API?); "+
		"delete this Orchestration and apply it again to start a new run", s.InstanceID)
	s.Phase = v1.PhaseFailed
	s.Failure = &v1.OrchestrationFailure{Class: reasonInstanceNotFound, Message: msg}
	s.Output, s.OutputTruncated, s.CustomStatus = "", false, ""
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	s.CompletionTime = &now
	s.Duration = durationOf(s)
	setCondition(o, condRunning, metav1.ConditionFalse, reasonInstanceNotFound, msg)
	setCondition(o, condSucceeded, metav1.ConditionFalse, reasonInstanceNotFound, msg)
	setCondition(o, condFailed, metav1.ConditionTrue, reasonInstanceNotFound, msg)
	removeCondition(o, condTerminating)
	removeCondition(o, condActivitiesServed)
}

// durationOf is how long a finished instance ran, for listings.
func durationOf(s *v1.OrchestrationStatus) string {
	if s.StartTime == nil || s.CompletionTime == nil {
		return ""
	}
	return s.CompletionTime.Sub(s.StartTime.Time).Round(time.Second).String()
}

// setPhaseConditions derives Running, Succeeded and Failed from the phase, so
// `kubectl wait --for=condition=Succeeded` works.
// setStalled sets the Stalled condition of a running instance: True, with
// why its last turn was handed back, or False; a finished one has none.
func (r *orchestrationReconciler) setStalled(o *v1.Orchestration, st *runtime.Status) {
	switch {
	case finished(o.Status.Phase):
		removeCondition(o, condStalled)
	case st.Stalled():
		msg, _ := truncate(st.LastError.Message, r.Limits.FailureMessage)
		setCondition(o, condStalled, metav1.ConditionTrue, stalledReason(st.LastError), msg)
	default:
		setCondition(o, condStalled, metav1.ConditionFalse, "Progressing", "its turns commit")
	}
}

// stalledReason names why a turn was handed back, as a condition reason:
// the failure's kind, else its class.
func stalledReason(f *runtime.Failure) string {
	name := string(f.Kind)
	if name == "" {
		name = string(f.Class)
	}
	if name == "" {
		return "Stalled"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

func setPhaseConditions(o *v1.Orchestration) {
	s := &o.Status
	switch s.Phase {
	case v1.PhaseRunning, v1.PhaseStalled:
		setCondition(o, condRunning, metav1.ConditionTrue, "Running", fmt.Sprintf("execution %d is running", s.ExecutionID))
	case v1.PhaseCompleted:
		setCondition(o, condRunning, metav1.ConditionFalse, "Completed", "the instance completed")
		setCondition(o, condSucceeded, metav1.ConditionTrue, "Completed", "the instance completed")
		setCondition(o, condFailed, metav1.ConditionFalse, "Completed", "the instance completed")
	case v1.PhaseFailed, v1.PhaseTerminated:
		reason, msg := failureReason(s)
		setCondition(o, condRunning, metav1.ConditionFalse, string(s.Phase), msg)
		setCondition(o, condSucceeded, metav1.ConditionFalse, string(s.Phase), msg)
		setCondition(o, condFailed, metav1.ConditionTrue, reason, msg)
	}
	if finished(s.Phase) {
		removeCondition(o, condTerminating)
		removeCondition(o, condActivitiesServed)
	}
}

// failureReason names a failure for a condition: an unregistered
// orchestration gets its own reason, because the fix is a deployment.
func failureReason(s *v1.OrchestrationStatus) (reason, message string) {
	if s.Phase == v1.PhaseTerminated {
		msg := "terminated"
		if s.Failure != nil && s.Failure.Message != "" {
			msg = s.Failure.Message
		}
		if !strings.HasPrefix(msg, "terminated") {
			msg = "terminated: " + msg
		}
		return "Terminated", msg
	}
	if s.Failure != nil && s.Failure.Class == reasonInstanceNotFound {
		return reasonInstanceNotFound, s.Failure.Message
	}
	if s.Failure == nil {
		return "Failed", "the instance failed"
	}
	msg := s.Failure.Message
	switch {
	case s.Failure.Class == string(provider.ErrorConfiguration) && strings.Contains(msg, "is not registered"):
		return reasonNotRegistered, msg + " (no worker of the pool registers it: deploy a worker image that does, then recreate this Orchestration)"
	case s.Failure.Class == string(provider.ErrorConfiguration):
		return "ConfigurationError", msg
	case s.Failure.Class == string(provider.ErrorInfrastructure):
		return "InfrastructureError", msg
	}
	return "ApplicationError", msg
}

func phaseOf(st *runtime.Status) v1.OrchestrationPhase {
	if st.Stalled() {
		return v1.PhaseStalled
	}
	switch st.Status {
	case runtime.StatusCompleted:
		return v1.PhaseCompleted
	case runtime.StatusFailed:
		return v1.PhaseFailed
	case runtime.StatusTerminated:
		return v1.PhaseTerminated
	case runtime.StatusPending:
		return v1.PhasePending
	}
	return v1.PhaseRunning
}

// truncate cuts s to at most limit bytes on a UTF-8 boundary.
func truncate(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	// Whole seconds, as metav1.Time serialises, so a re-read is no change.
	mt := metav1.NewTime(t.UTC().Truncate(time.Second))
	return &mt
}

// statusEqual reports whether a status write would change nothing.
func statusEqual(a, b *v1.OrchestrationStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// recordPhaseChange emits a Kubernetes Event when the phase moved.
func (r *orchestrationReconciler) recordPhaseChange(o *v1.Orchestration, from v1.OrchestrationPhase) {
	to := o.Status.Phase
	if to == from || to == "" || to == v1.PhasePending {
		return
	}
	switch to {
	case v1.PhaseRunning:
		r.Recorder.Eventf(o, nil, "Normal", "Running", "Mirror", "instance %q is running", o.Status.InstanceID)
	case v1.PhaseStalled:
		if c := findCondition(o, condStalled); c != nil {
			r.Recorder.Eventf(o, nil, "Warning", "Stalled", "Mirror", "instance %q makes no progress: %s: %s", o.Status.InstanceID, c.Reason, c.Message)
		}
	case v1.PhaseCompleted:
		r.Recorder.Eventf(o, nil, "Normal", "Completed", "Mirror", "instance %q completed", o.Status.InstanceID)
	case v1.PhaseFailed, v1.PhaseTerminated:
		reason, msg := failureReason(&o.Status)
		r.Recorder.Eventf(o, nil, "Warning", reason, "Mirror", "instance %q %s", o.Status.InstanceID, msg)
	}
}

func setCondition(o *v1.Orchestration, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&o.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: message, ObservedGeneration: o.Generation})
}

func removeCondition(o *v1.Orchestration, typ string) {
	meta.RemoveStatusCondition(&o.Status.Conditions, typ)
}

func findCondition(o *v1.Orchestration, typ string) *metav1.Condition {
	return meta.FindStatusCondition(o.Status.Conditions, typ)
}

// summarize sets status.reason and status.message, the listing's view of the
// object: the condition that matters most now.
func summarize(o *v1.Orchestration) {
	order := []struct {
		typ    string
		status metav1.ConditionStatus
	}{
		{condInstanceIDInUse, metav1.ConditionTrue},
		{condStoreReachable, metav1.ConditionFalse},
		{condFailed, metav1.ConditionTrue},
		{condEventsDelivered, metav1.ConditionFalse},
		{condTerminating, metav1.ConditionTrue},
		{condStalled, metav1.ConditionTrue},
		{condActivitiesServed, metav1.ConditionFalse},
		{condSucceeded, metav1.ConditionTrue},
		{condRunning, metav1.ConditionTrue},
		{condRunning, metav1.ConditionFalse},
	}
	o.Status.Reason, o.Status.Message = "", ""
	for _, want := range order {
		if c := findCondition(o, want.typ); c != nil && c.Status == want.status {
			o.Status.Reason = c.Reason
			o.Status.Message, _ = truncate(c.Message, summaryLimit)
			return
		}
	}
}

// summaryLimit bounds status.message, which is a one-line summary.
const summaryLimit = 512
