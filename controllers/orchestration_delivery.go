package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
)

const (
	undeliveredPrefix = "not delivered: "
	undeliveredSuffix = " (the instance had finished, or was gone, before taking them)"
)

// markUndelivered adds keys to the EventsDelivered=False condition, after
// the keys it already names.
func markUndelivered(o *v1.Orchestration, keys []string) {
	if len(keys) == 0 {
		return
	}
	all := append(undeliveredKeys(o), keys...)
	setCondition(o, condEventsDelivered, metav1.ConditionFalse, reasonInstanceFinished,
		undeliveredPrefix+strings.Join(all, ", ")+undeliveredSuffix)
}

// undeliveredKeys are the keys the EventsDelivered condition names.
func undeliveredKeys(o *v1.Orchestration) []string {
	c := findCondition(o, condEventsDelivered)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.HasPrefix(c.Message, undeliveredPrefix) {
		return nil
	}
	list := strings.TrimPrefix(c.Message, undeliveredPrefix)
	if i := strings.Index(list, " ("); i >= 0 {
		list = list[:i]
	}
	return strings.Split(list, ", ")
}

// reportUnconsumedEvents runs once, when the mirror first sees the instance
// finished. The store accepts an event that races the instance's final turn
// and never consumes it, so a raise that succeeded proves nothing: every key
// raised and not yet reported must be in the history, and those that are
// not are reported as undelivered.
func (r *orchestrationReconciler) reportUnconsumedEvents(ctx context.Context, o *v1.Orchestration, store *poolStore, view *instanceView) error {
	if view.status == nil || !view.status.Finished() || finished(o.Status.Phase) {
		return nil
	}
	reported := undeliveredKeys(o)
	var raised []string
	for _, k := range o.Status.RaisedEvents {
		if !slices.Contains(reported, k) {
			raised = append(raised, k)
		}
	}
	if len(raised) == 0 {
		return nil
	}
	missing, err := missingFromHistory(ctx, store, o.Status.InstanceID, view.status.ExecutionID, string(o.UID)+"/", raised)
	if err != nil {
		return err
	}
	for _, k := range missing {
		r.Recorder.Eventf(o, nil, "Warning", "EventNotDelivered", "RaiseEvent",
			"event %q was not delivered: the instance finished before taking it", k)
	}
	markUndelivered(o, missing)
	return nil
}

// missingFromHistory returns the keys (raised with prefix) that no execution
// of the instance recorded, reading executions from the last back and
// stopping once every key is found: an instance that continued as new
// recorded earlier events in earlier executions.
func missingFromHistory(ctx context.Context, store *poolStore, id string, lastExecution int64, prefix string, keys []string) ([]string, error) {
	missing := slices.Clone(keys)
	for exec := lastExecution; exec >= 1 && len(missing) > 0; exec-- {
		history, err := store.provider.ReadHistory(ctx, provider.ExecutionRequest{Instance: id, ExecutionID: exec})
		if err != nil {
			return nil, fmt.Errorf("read history of %q (execution %d): %w", id, exec, err)
		}
		missing = slices.DeleteFunc(missing, func(k string) bool { return recordsEvent(history, prefix+k) })
	}
	return missing, nil
}

func recordsEvent(history []provider.Event, key string) bool {
	return slices.ContainsFunc(history, func(ev provider.Event) bool {
		return ev.Kind == provider.EventExternalRaised && ev.Key == key
	})
}
