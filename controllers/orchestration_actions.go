package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// instanceID is the store ID of the Orchestration's instance.
func instanceID(o *v1.Orchestration) string {
	if o.Spec.InstanceID != "" {
		return o.Spec.InstanceID
	}
	return o.Namespace + "/" + o.Name
}

// start starts the instance. Start is idempotent on the instance ID, so a
// start repeated after a lost status write does nothing.
func (r *OrchestrationReconciler) start(ctx context.Context, o *v1.Orchestration, store *Store) error {
	id := instanceID(o)
	var opts []runtime.StartOption
	if o.Spec.Version != "" {
		opts = append(opts, runtime.StartVersion(o.Spec.Version))
	}
	if err := store.Client.Start(ctx, id, o.Spec.Orchestration, rawJSON(o.Spec.Input), opts...); err != nil {
		return fmt.Errorf("start instance %q: %w", id, err)
	}
	o.Status.InstanceID = id
	o.Status.InputDigest = inputDigest(o)
	o.Status.Phase = v1.PhasePending
	return nil
}

// raiseEvents raises the entries of spec.events not raised yet, in order.
// Each carries a key of this object and the event's name, so the runtime
// records it once even when a crash or a lost status write makes the
// operator raise it again.
func (r *OrchestrationReconciler) raiseEvents(ctx context.Context, o *v1.Orchestration, store *Store) error {
	for i := int(o.Status.EventsRaised); i < len(o.Spec.Events); i++ {
		ev := o.Spec.Events[i]
		key := string(o.UID) + "/" + ev.Name
		err := store.Client.RaiseEvent(ctx, o.Status.InstanceID, ev.Name, rawJSON(ev.Data), runtime.EventKey(key))
		switch {
		case errors.Is(err, provider.ErrInstanceFinished):
			// Nobody will read it: say so rather than retry forever.
			r.Recorder.Eventf(o, nil, "Warning", "EventNotDelivered", "RaiseEvent",
				"event %q was not delivered: the instance has finished", ev.Name)
		case err != nil:
			return fmt.Errorf("raise event %q: %w", ev.Name, err)
		default:
			r.Recorder.Eventf(o, nil, "Normal", "EventRaised", "RaiseEvent", "raised event %q", ev.Name)
		}
		o.Status.EventsRaised = int32(i + 1)
	}
	return nil
}

// terminate asks the instance to terminate once per requested reason.
func (r *OrchestrationReconciler) terminate(ctx context.Context, o *v1.Orchestration, store *Store) error {
	if o.Spec.Terminate == "" || finished(o.Status.Phase) {
		return nil
	}
	if c := findCondition(o, CondTerminating); c != nil && c.Status == metav1.ConditionTrue && c.Message == o.Spec.Terminate {
		return nil
	}
	err := store.Client.Terminate(ctx, o.Status.InstanceID, o.Spec.Terminate)
	if errors.Is(err, provider.ErrInstanceFinished) {
		return nil // it ended first; the next status read mirrors how
	}
	if err != nil {
		return fmt.Errorf("terminate instance: %w", err)
	}
	setCondition(o, CondTerminating, metav1.ConditionTrue, "TerminateRequested", o.Spec.Terminate)
	r.Recorder.Eventf(o, nil, "Normal", "Terminating", "Terminate", "termination requested: %s", o.Spec.Terminate)
	return nil
}

// checkInput reports a spec.input edited after the start: CEL cannot compare
// untyped JSON, so the API server lets the edit through, and the instance
// keeps the input it started with.
func checkInput(o *v1.Orchestration) {
	if o.Status.InputDigest == "" || inputDigest(o) == o.Status.InputDigest {
		removeCondition(o, CondInputChanged)
		return
	}
	setCondition(o, CondInputChanged, metav1.ConditionTrue, "InputImmutable",
		"spec.input changed after the instance started; the instance keeps the input it started with")
}

func inputDigest(o *v1.Orchestration) string {
	sum := sha256.Sum256(canonicalJSON(o.Spec.Input))
	return hex.EncodeToString(sum[:8])
}

// canonicalJSON re-encodes a JSON value so that formatting and key order do
// not count as a change.
func canonicalJSON(j *apiextensionsv1.JSON) []byte {
	if j == nil || len(j.Raw) == 0 {
		return nil
	}
	raw := j.Raw
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, _ := json.Marshal(v)
	return out
}

// rawJSON passes a spec JSON value through to the runtime unchanged; nil
// stays nil (the orchestration receives its input type's zero value).
func rawJSON(j *apiextensionsv1.JSON) any {
	if j == nil || len(j.Raw) == 0 || string(j.Raw) == "null" {
		return nil
	}
	return json.RawMessage(j.Raw)
}
