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

// start starts the claimed instance, recording this object as its owner.
// The owner names the start, so a start repeated after a lost status write
// is taken by the store for a retry and does nothing. An ID the store finds
// taken (started by someone else since the claim was checked, or not
// replaceable under spec.idReusePolicy) gives the claim up and is reported
// as InstanceIDInUse; the object never mirrors an instance it did not start.
// The input is read from the API server: the cache keeps Orchestrations
// without it (see cache.go).
func (r *orchestrationReconciler) start(ctx context.Context, o *v1.Orchestration, store *poolStore) error {
	id := o.Status.InstanceID
	input, err := r.readInput(ctx, o)
	if err != nil {
		return err
	}
	opts := []runtime.StartOption{runtime.StartOwner(ownerOf(o)), runtime.StartIDReuse(reusePolicyOf(o))}
	if o.Spec.Version != "" {
		opts = append(opts, runtime.StartVersion(o.Spec.Version))
	}
	err = store.Client.Start(ctx, id, o.Spec.Orchestration, rawJSON(input), opts...)
	var taken *provider.AlreadyExistsError
	if errors.As(err, &taken) {
		o.Status.InstanceID, o.Status.InputDigest = "", ""
		return r.idInUse(o, id, storeHolderOf(taken.Status, taken.Owner, taken.Why), nil)
	}
	if err != nil {
		return fmt.Errorf("start instance %q: %w", id, err)
	}
	o.Status.InputDigest = digestOf(input)
	o.Status.Phase = v1.PhasePending
	return nil
}

// eventKey identifies a spec.events entry: its key, or its name.
func eventKey(ev v1.OrchestrationEvent) string {
	if ev.Key != "" {
		return ev.Key
	}
	return ev.Name
}

// adoptCountedEvents records the keys of an object written before keys
// existed, which only counted its raised entries (EventsRaised): they were
// its first entries, since entries could then only be appended.
func adoptCountedEvents(o *v1.Orchestration) {
	if len(o.Status.RaisedEvents) > 0 {
		return
	}
	for i := 0; i < int(o.Status.EventsRaised) && i < len(o.Spec.Events); i++ {
		o.Status.RaisedEvents = append(o.Status.RaisedEvents, eventKey(o.Spec.Events[i]))
	}
}

// raiseEvents raises every spec.events entry not raised yet, in list order,
// wherever it was inserted. Each carries a key of this object and the entry,
// so the runtime records it once even when a crash or a lost status write
// makes the operator raise it again. An entry the instance can no longer
// take is reported (condition EventsDelivered), not retried.
func (r *orchestrationReconciler) raiseEvents(ctx context.Context, o *v1.Orchestration, store *poolStore) error {
	adoptCountedEvents(o)
	raised := make(map[string]bool, len(o.Status.RaisedEvents))
	for _, k := range o.Status.RaisedEvents {
		raised[k] = true
	}
	var undelivered []string
	for _, ev := range o.Spec.Events {
		key := eventKey(ev)
		if raised[key] {
			continue
		}
		err := store.Client.RaiseEvent(ctx, o.Status.InstanceID, ev.Name, rawJSON(ev.Data), runtime.EventKey(string(o.UID)+"/"+key))
		switch {
		case errors.Is(err, provider.ErrInstanceFinished), errors.Is(err, provider.ErrNotFound):
			undelivered = append(undelivered, key)
			r.Recorder.Eventf(o, nil, "Warning", "EventNotDelivered", "RaiseEvent",
				"event %q was not delivered: %s", key, undeliveredWhy(err))
		case err != nil:
			return fmt.Errorf("raise event %q: %w", key, err)
		default:
			r.Recorder.Eventf(o, nil, "Normal", "EventRaised", "RaiseEvent", "raised event %q", key)
		}
		raised[key] = true
		o.Status.RaisedEvents = append(o.Status.RaisedEvents, key)
	}
	o.Status.EventsRaised = int32(len(o.Status.RaisedEvents))
	markUndelivered(o, undelivered)
	return nil
}

func undeliveredWhy(err error) string {
	if errors.Is(err, provider.ErrNotFound) {
		return "the instance is no longer in the store"
	}
	return "the instance has finished"
}

// terminate asks the instance to terminate once per requested reason.
func (r *orchestrationReconciler) terminate(ctx context.Context, o *v1.Orchestration, store *poolStore) error {
	if o.Spec.Terminate == "" || finished(o.Status.Phase) {
		return nil
	}
	if c := findCondition(o, condTerminating); c != nil && c.Status == metav1.ConditionTrue && c.Message == o.Spec.Terminate {
		return nil
	}
	err := store.Client.Terminate(ctx, o.Status.InstanceID, o.Spec.Terminate)
	if errors.Is(err, provider.ErrInstanceFinished) || errors.Is(err, provider.ErrNotFound) {
		return nil // it ended (or went) first; the next status read mirrors how
	}
	if err != nil {
		return fmt.Errorf("terminate instance: %w", err)
	}
	setCondition(o, condTerminating, metav1.ConditionTrue, "TerminateRequested", o.Spec.Terminate)
	r.Recorder.Eventf(o, nil, "Normal", "Terminating", "Terminate", "termination requested: %s", o.Spec.Terminate)
	return nil
}

// checkInput reports a spec.input edited after the start: CEL cannot compare
// untyped JSON, so the API server lets the edit through, and the instance
// keeps the input it started with.
func checkInput(o *v1.Orchestration) {
	if o.Status.InputDigest == "" || inputDigestOf(o) == o.Status.InputDigest {
		removeCondition(o, condInputChanged)
		return
	}
	setCondition(o, condInputChanged, metav1.ConditionTrue, "InputImmutable",
		"spec.input changed after the instance started; the instance keeps the input it started with")
}

func digestOf(input *apiextensionsv1.JSON) string {
	sum := sha256.Sum256(canonicalJSON(input))
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
